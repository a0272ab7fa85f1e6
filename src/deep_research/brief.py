"""The brief directory: where each artifact lives, how it is read, and how it is written.

Every write is atomic (temp file in the same directory, fsync, rename), so a crash leaves either
the old file or the new one — never half of either. Every read turns a malformed file into an
:class:`~deep_research.errors.InputError` that names the file and says what to do.
"""

from __future__ import annotations

import fcntl
import gc
import hashlib
import json
import os
import re
import tempfile
import threading
import unicodedata
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from deep_research.errors import (
    BriefBusy,
    InputError,
    MissingArtifact,
    NotACorpusFile,
    SchemaViolation,
    UnreadableInput,
)

if TYPE_CHECKING:
    # Imported where used: building the models costs more than the hook guard's whole decision,
    # and the guard reads paths and small JSON files only.
    from pydantic import BaseModel

    from deep_research.models import ClaimsFile, FetchLogEntry, SourceRow, TraceFile
    from deep_research.start_record import StartRecord

#: Largest artifact we read whole. Bigger files are refused rather than exhausting memory.
MAX_ARTIFACT_BYTES = 512 * 1024 * 1024

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


# --- atomic writes --------------------------------------------------------------------------


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so readers see the old file or the new one, never a mix."""
    with atomic_writer(path) as handle:
        handle.write(data)


@contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """A file to write ``path``'s new content into as it is made: a temporary file beside it,
    renamed over ``path`` when the block ends, removed if it raises (``path`` is then untouched)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


#: Where the claims go in claims.json as a model with none writes it: the document's only
#: line that opens with two spaces and its ``"claims"`` key (a string cannot hold a newline).
_NO_CLAIMS = '\n  "claims": []'


def claims_chunks(document: ClaimsFile) -> Iterator[str]:
    """claims.json's text — exactly ``model_dump_json(by_alias=True, indent=2)`` and a newline
    — in pieces: the document around its claims, then each claim. Writing a brief of 50,000
    claims then holds one claim's JSON at a time, not the whole file's twice (text and bytes)."""
    shell = document.model_copy(update={"claims": []}).model_dump_json(by_alias=True, indent=2)
    if not document.claims:
        yield shell + "\n"
        return
    before, found, after = shell.partition(_NO_CLAIMS)
    if not found:  # pragma: no cover - only if the serializer's layout changed
        raise AssertionError("claims.json's layout has no top-level claims list")
    yield before + '\n  "claims": ['
    for position, claim in enumerate(document.claims):
        item = claim.model_dump_json(by_alias=True, indent=2).replace("\n", "\n    ")
        yield ("\n    " if position == 0 else ",\n    ") + item
    yield "\n  ]" + after + "\n"


def write_claims(path: Path, document: ClaimsFile) -> None:
    """claims.json written atomically, claim by claim (:func:`claims_chunks`)."""
    with atomic_writer(path) as handle:
        for chunk in claims_chunks(document):
            handle.write(chunk.encode("utf-8"))


def dump_json(value: Any) -> str:
    """The one JSON style of every artifact: UTF-8, two-space indent, trailing newline."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def atomic_write_json(path: Path, value: Any) -> None:
    atomic_write_text(path, dump_json(value))


# --- JSON Lines -----------------------------------------------------------------------------

#: Line boundaries of ``str.splitlines()`` that JSON leaves raw inside a string. The others
#: (\r, \x0b, \x0c, \x1c–\x1e) are control characters every JSON encoder escapes already. A raw
#: one would split a record for any reader that splits lines the way Python does.
_RAW_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def escape_line_breaks(json_text: str) -> str:
    """``json_text`` with every raw line boundary escaped; the JSON value is unchanged, because
    outside a string these characters are not valid JSON at all."""
    return json_text.translate(_RAW_LINE_BREAKS)


def jsonl_line(value: Any, *, sort_keys: bool = False) -> str:
    """The one JSON Lines record style: compact UTF-8 JSON on exactly one line, newline-ended.

    Every ``.jsonl`` artifact is written through here (or :func:`escape_line_breaks` for JSON
    already serialized), so no reader's line splitting can cut a record in two.
    """
    return escape_line_breaks(json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)) + "\n"


def jsonl_records(text: str) -> list[str]:
    """The lines of a JSON Lines text, split at ``\n`` only (JSON Lines' one separator), so a
    record holding a raw U+2028 or U+0085 written by another tool stays one record."""
    return text.split("\n")


def model_dump(model: BaseModel) -> Any:
    """JSON-ready dict of a model, by alias, without unset-equivalent noise."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=False)


# --- reads ----------------------------------------------------------------------------------


def read_text(path: Path, *, what: str) -> str:
    """Text of a UTF-8 file, or an InputError that says which file and why."""
    if not path.exists():
        raise MissingArtifact(f"{what} not found: {path}")
    if not path.is_file():
        raise UnreadableInput(f"{what} is not a regular file: {path}")
    size = path.stat().st_size
    if size > MAX_ARTIFACT_BYTES:
        raise UnreadableInput(
            f"{what} is {size} bytes, over the {MAX_ARTIFACT_BYTES}-byte limit: {path}"
        )
    return decode_utf8(path.read_bytes(), what=f"{what} {path}")


def decode_utf8(data: bytes, *, what: str) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableInput(
            f"{what} is not UTF-8 text (byte {exc.start}); pass the JSON file, not a binary"
        ) from None
    if "\x00" in text:
        raise UnreadableInput(f"{what} contains NUL bytes; it looks binary, not JSON")
    return text


@contextmanager
def acyclic_build() -> Iterator[None]:
    """The cyclic collector paused while a JSON value or its models are built.

    Parsed JSON is a tree, and the models validated from it hold no cycles either, so a
    collection can find nothing in them — yet the collector's full passes over the growing tree
    were a third of the time a 20 MB claims.json took to load. Collection resumes afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_json(text: str, *, what: str) -> Any:
    if not text.strip():
        raise UnreadableInput(f"{what} is empty; expected a JSON document")
    try:
        with acyclic_build():
            return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UnreadableInput(
            f"{what} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise UnreadableInput(f"{what} nests too deeply to be a brief artifact") from None


def iter_jsonl(text: str, *, what: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) for every non-blank line; a bad line raises with its number."""
    for number, line in enumerate(jsonl_records(text), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise UnreadableInput(
                f"{what} line {number} is not valid JSON (column {exc.colno}: {exc.msg})"
            ) from None
        except RecursionError:
            raise UnreadableInput(f"{what} line {number} nests too deeply") from None


def lone_surrogate_at(value: Any, where: str = "$") -> str | None:
    """Path of the first string (or key) in a parsed JSON value holding a lone surrogate.

    JSON's ``\\ud800`` escapes decode to code points that are not text: no UTF-8 file can hold
    them, so a value carrying one is refused where it enters, never written.
    """
    if isinstance(value, str):
        return where if _has_surrogate(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if _has_surrogate(key):
                return where
            if (found := lone_surrogate_at(item, f"{where}.{key}")) is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            if (found := lone_surrogate_at(item, f"{where}[{index}]")) is not None:
                return found
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


#: Characters that change how the text around them shows without being seen: C0 and C1
#: controls but tab and newline, bidirectional overrides, embeddings and isolates (U+202E makes
#: "txt.exe" read "exe.txt"), zero-width spaces and joiners of words, line separators, the BOM.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff]"
)


def printable_text(text: str) -> str:
    """``text`` safe to print or write in a report: lone surrogates as ``?``, and every
    invisible control or direction override as its visible code point (``\\u202e``)."""
    cleaned = text.encode("utf-8", "replace").decode("utf-8")
    return _INVISIBLE.sub(lambda found: f"\\u{ord(found.group()):04x}", cleaned)


# --- the brief ------------------------------------------------------------------------------


def sha256_bytes(data: bytes) -> str:
    """The content-hash form used across a brief: ``sha256:<hex>``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def sha256_text(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))


#: A plugin run's record, written by ``deep-research start`` (:mod:`deep_research.start_record`).
RUN_FILE = "run.json"


@dataclass(frozen=True)
class Brief:
    """One research run's directory and the paths of its artifacts (docs/contracts.md §1)."""

    root: Path

    @property
    def run_path(self) -> Path:
        return self.root / RUN_FILE

    @property
    def claims_path(self) -> Path:
        return self.root / "claims.json"

    @property
    def sources_path(self) -> Path:
        return self.root / "sources.jsonl"

    @property
    def trace_path(self) -> Path:
        return self.root / "trace.json"

    @property
    def fetch_log_path(self) -> Path:
        return self.root / "fetch-log.jsonl"

    @property
    def corpus_dir(self) -> Path:
        return self.root / "corpus"

    @property
    def lock_path(self) -> Path:
        return self.root / ".lock"

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
        from deep_research.start_record import StartRecord

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
                for number, value in _complete_lines(text, what=what)
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


def load_sources(path: Path) -> list[SourceRow]:
    from deep_research.models import SourceRow, validate_model

    what = str(path)
    # An empty file is a search that found nothing: a legitimate, reportable outcome.
    text = read_text(path, what="sources.jsonl")
    with acyclic_build():
        rows = [
            validate_model(SourceRow, value, what=what, prefix=f"line {number}: $")
            for number, value in iter_jsonl(text, what=what)
        ]
    seen: set[str] = set()
    for row in rows:
        if row.id in seen:
            raise SchemaViolation(f"duplicate source id {row.id}", source=what)
        seen.add(row.id)
    return rows


def _complete_lines(text: str, *, what: str) -> Iterator[tuple[int, Any]]:
    # The fetch log is append-only: a crash may truncate the last line and nothing else.
    complete, _, torn = text.rpartition("\n")
    if torn:
        warnings.warn(
            f"{what}: skipping a torn last line ({len(torn)} chars) left by a crash",
            stacklevel=3,
        )
    yield from iter_jsonl(complete, what=what)
