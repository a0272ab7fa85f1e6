"""The brief directory: its name, where each artifact lives, how each is loaded, and its lock
(docs/contracts.md §1)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from deep_research.brief.readers import (
    acyclic_build,
    complete_lines,
    load_sources,
    parse_json,
    read_text,
)
from deep_research.errors import (
    BriefBusy,
    InputError,
    MissingArtifact,
    NotACorpusFile,
    UnreadableInput,
)

if TYPE_CHECKING:
    # Imported where used: building the models costs more than the hook guard's whole decision,
    # and the guard reads paths and small JSON files only.

    from deep_research.brief.start_record import StartRecord
    from deep_research.models import ClaimsFile, FetchLogEntry, SourceRow, TraceFile


# --- naming ---------------------------------------------------------------------------------

#: Words of the question kept in a slug, at most this many characters before the digest.
SLUG_WORDS_MAX = 48
SLUG_DIGEST_CHARS = 8


def question_key(question: str) -> str:
    """The question as compared for reuse: NFKC, case-folded, whitespace collapsed, no end mark."""
    folded = " ".join(unicodedata.normalize("NFKC", question).casefold().split())
    return folded.rstrip("?!. ") or folded


def slugify(question: str) -> str:
    """The brief's name for a question — one definition for the plugin and the headless driver.

    Readable words (ASCII-folded, ``[a-z0-9-]``, cut at a word boundary) and a short digest of
    the whole :func:`question_key`, so questions that differ only past the cut never share a
    brief, and the same question asked again (any case or spacing) finds its own.
    """
    key = question_key(question)
    if not key:
        raise InputError("the question has no words to name a brief after; give the question")
    folded = unicodedata.normalize("NFKD", key).encode("ascii", "ignore").decode("ascii")
    words = "".join(ch if ch.isalnum() else " " for ch in folded).split()
    readable = ""
    for word in words:
        candidate = f"{readable}-{word}" if readable else word
        if len(candidate) > SLUG_WORDS_MAX:
            break
        readable = candidate
    if not readable and words:
        readable = words[0][:SLUG_WORDS_MAX]
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:SLUG_DIGEST_CHARS]
    return f"{readable or 'topic'}-{digest}"


def brief_dir(state: Path, slug: str) -> Path:
    """Where a brief named ``slug`` lives under a state folder."""
    return state / "briefs" / slug


def supersede(root: Path) -> Path:
    """Move a brief aside (``briefs/.superseded/<slug>-<UTC stamp>``) so a new one starts clean;
    nothing is deleted. Both drivers regenerate through this."""
    from datetime import UTC, datetime

    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    target = root.parent / ".superseded" / f"{root.name}-{stamp}"
    target.parent.mkdir(parents=True, exist_ok=True)
    root.rename(target)
    return target


# --- the brief ------------------------------------------------------------------------------


def sha256_bytes(data: bytes) -> str:
    """The content-hash form used across a brief: ``sha256:<hex>``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))


#: A plugin run's record, written by ``deep-research start``
#: (:mod:`deep_research.brief.start_record`).
RUN_FILE = "run.json"


class _InBrief:
    """An artifact's path, named once in the table of :class:`Brief`: ``Brief(root).trace_path``
    is ``root / "trace.json"``."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, brief: Brief, owner: type[Brief]) -> Path:
        return brief.root / self.name


@dataclass(frozen=True)
class Brief:
    """One research run's directory and the paths of its artifacts (docs/contracts.md §1)."""

    root: Path

    run_path = _InBrief(RUN_FILE)
    claims_path = _InBrief("claims.json")
    sources_path = _InBrief("sources.jsonl")
    trace_path = _InBrief("trace.json")
    fetch_log_path = _InBrief("fetch-log.jsonl")
    corpus_dir = _InBrief("corpus")
    lock_path = _InBrief(".lock")

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the brief for writing; a second writer refuses instead of interleaving.

        The one lock of a brief: every command that writes claims.json, trace.json,
        sources.jsonl, audit.json or report.md takes it before its first read and keeps it past
        its last write; the headless driver holds it for the whole run. Re-entrant within the
        process that holds it, so the driver's gate calls nest inside its hold while any other
        process gets :class:`~deep_research.errors.BriefBusy`.

        The proof that a holder is alive is the kernel's: ``.lock`` is ``flock``-ed for the whole
        hold, and the kernel drops that lock the moment its process dies. So a lock file left
        by a killed writer — whatever it holds: nothing, garbage, or a PID that now names some
        other process — is taken over, and no PID reuse can make it look held. Taking the lock
        also removes the temp files a killed writer left (:data:`LOCKED_ARTIFACTS`).
        """
        self.root.mkdir(parents=True, exist_ok=True)
        key = self.lock_path.resolve()
        with _HELD_GUARD:
            hold = _HELD.get(key)
            if hold is None:
                hold = _Hold(_acquire(self.lock_path))
                _remove_stale_temps(self.root)
                _HELD[key] = hold
            hold.depth += 1
        try:
            yield
        finally:
            with _HELD_GUARD:
                hold.depth -= 1
                if hold.depth == 0:
                    del _HELD[key]
                    _release(self.lock_path, hold.fd)

    def corpus_path(self, content_hash: str) -> Path:
        return self.corpus_dir / f"{content_hash.removeprefix('sha256:')}.txt"

    def load_sources(self, path: Path | None = None) -> list[SourceRow]:
        return load_sources(path or self.sources_path)

    def load_claims(self, path: Path | None = None) -> ClaimsFile:
        from deep_research.models import ClaimsFile, validate_model

        target = path or self.claims_path
        raw = parse_json(read_text(target, what="claims.json"), what=str(target))
        with acyclic_build():
            return validate_model(ClaimsFile, raw, what=str(target))

    def load_trace(self) -> TraceFile:
        from deep_research.models import TraceFile, validate_model

        raw = parse_json(read_text(self.trace_path, what="trace.json"), what=str(self.trace_path))
        return validate_model(TraceFile, raw, what=str(self.trace_path))

    def load_run(self) -> StartRecord:
        """The plugin run's record — the one reader of run.json: its caps re-clamped to the
        hard limits, any fault a one-line InputError. Light (no models): the hook guard reads
        it on every tool call of a run."""
        from deep_research.brief.start_record import StartRecord

        path = self.run_path
        if not path.exists():
            raise MissingArtifact(
                f"{RUN_FILE} not found: {path}; a plugin run starts with `deep-research start`"
            )
        raw = parse_json(read_text(path, what=RUN_FILE), what=str(path))
        return StartRecord.from_json(raw, source=str(path))

    def load_fetch_log(self) -> list[FetchLogEntry]:
        """Every attempt in fetch-log.jsonl; an absent log means nothing was fetched."""
        from deep_research.models import FetchLogEntry, validate_model

        if not self.fetch_log_path.exists():
            return []
        what = str(self.fetch_log_path)
        text = read_text(self.fetch_log_path, what="fetch-log.jsonl")
        with acyclic_build():
            return [
                validate_model(FetchLogEntry, value, what=what, prefix=f"line {number}: $")
                for number, value in complete_lines(text, what=what)
            ]

    def read_corpus(self, content_hash: str) -> str:
        """The retained text for ``content_hash``, refused unless it is that exact corpus file."""
        path = self.corpus_path(content_hash)
        if not path.is_file():
            raise MissingArtifact(f"corpus file for {content_hash} not found: {path}")
        data = path.read_bytes()
        # The hash covers the bytes as stored (UTF-8, no BOM stripped), so hash before decoding.
        if sha256_bytes(data) != content_hash:
            raise NotACorpusFile(
                f"{path} does not hash to {content_hash}; the corpus was edited — re-fetch it"
            )
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise UnreadableInput(f"{path} is not UTF-8 text; re-fetch it") from None

    def require_corpus_file(self, candidate: Path) -> str:
        """Summary-substitution guard: accept only a file inside corpus/ whose name is its hash."""
        resolved = candidate.resolve()
        corpus = self.corpus_dir.resolve()
        if resolved.parent != corpus or resolved.suffix != ".txt":
            raise NotACorpusFile(
                f"{candidate} is not a corpus file of this brief; verify against "
                f"{self.corpus_dir}/<hash>.txt as fetched, never a summary"
            )
        return self.read_corpus("sha256:" + resolved.stem)


#: What is written only under the brief's lock, so a temp file of one of these found while
#: holding the lock belongs to a writer that was killed mid-write. (Files written outside the
#: lock — run.json, allowed-hosts.json, corpus/ — may have a live writer and are left alone.)
LOCKED_ARTIFACTS = ("claims.json", "trace.json", "sources.jsonl", "audit.json", "report.md")


@dataclass
class _Hold:
    fd: int
    depth: int = 0


#: Locks this process holds, by resolved path.
_HELD: dict[Path, _Hold] = {}
_HELD_GUARD = threading.Lock()


def _acquire(lock: Path) -> int:
    """The open, flock-ed lock file, or BriefBusy while a live process holds it."""
    for _ in range(3):
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("utf-8", "replace").strip() or "unknown"
            os.close(fd)
            raise BriefBusy(
                f"{lock.parent} is being written by another run (process {holder}); wait for it "
                "to finish"
            ) from None
        if _names(lock, fd):
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
            return fd
        # The holder released (and removed) the file between our open and our flock: the lock
        # we got is on a file nobody else will ever open. Take the current one instead.
        os.close(fd)
    raise BriefBusy(f"could not take {lock}; other runs keep taking it")


#: The state folder's run lock: one headless run at a time per state folder.
STATE_LOCK = ".run.lock"
_STATE_HOLDS: dict[Path, tuple[threading.RLock, list[int]]] = {}


@contextmanager
def state_lock(state: Path, waiting: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold a state folder for one run; another run on it waits its turn instead of failing.

    Runs share what lives at the state's top — the corpus indexes, ``briefs/`` and
    ``briefs/.superseded/`` — so two at once could index the same documents twice or move the
    same brief aside twice. The second run waits (``waiting`` is told once, with the holder's
    process id) and then sees the first one's finished work. Held through ``flock``: the kernel
    drops it when its holder dies, so a killed run never leaves the folder locked. Re-entrant in
    the thread that holds it; other threads of the process wait like another process would.
    """
    path = (state / STATE_LOCK).resolve()
    with _HELD_GUARD:
        rlock, fds = _STATE_HOLDS.setdefault(path, (threading.RLock(), []))
    if not rlock.acquire(blocking=False):
        if waiting is not None:
            waiting(f"another run holds {state} (process {os.getpid()})")
        waiting = None
        rlock.acquire()
    try:
        if fds:
            fds.append(fds[0])
        else:
            fds.append(_flock_waiting(path, state, waiting))
        try:
            yield
        finally:
            held = fds.pop()
            if not fds:
                os.close(held)  # closing the last descriptor releases the flock
    finally:
        rlock.release()


def _flock_waiting(path: Path, state: Path, waiting: Callable[[str], None] | None) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                holder = os.pread(fd, 64, 0).decode("utf-8", "replace").strip()
                waiting(f"another run holds {state} (process {holder or 'unknown'})")
            fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode("ascii"), 0)
    return fd


def _names(path: Path, fd: int) -> bool:
    try:
        return os.stat(path).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _release(lock: Path, fd: int) -> None:
    # Remove the file while still holding it, so a waiter that opened it sees it is gone.
    if _names(lock, fd):
        lock.unlink(missing_ok=True)
    os.close(fd)


def _remove_stale_temps(root: Path) -> None:
    for name in LOCKED_ARTIFACTS:
        for stale in root.glob(f".{name}.*.tmp"):
            stale.unlink(missing_ok=True)
