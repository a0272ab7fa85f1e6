"""The local-corpus search adapter: a folder of .md/.txt/.html/.pdf files, or the Python docs.

Documents are indexed in SQLite FTS5 (ranked by BM25) in one file beside the run state
(``<state>/corpora/<label>-<key>.sqlite``), with no server. Indexing is incremental: a file whose
size and mtime are unchanged is not read again, and one whose extracted text hashes the same is
not re-indexed.

Each document has a stable identity ``file://<corpus label>/<path inside the corpus>`` and an
owner for independence: a declared author (``author:`` in a leading ``---`` block), else the
top-level folder, else the corpus label. Retaining a hit writes ``corpus/<hash>.txt`` and a 2xx
fetch-log entry exactly as the web fetcher does, so every gate reads local documents unchanged.

Which files of a folder are read, and how, is :mod:`deep_research.run.corpusfolder`'s: only
regular files inside the folder, never through a link that leaves it, each name escaped.
"""

from __future__ import annotations

import functools
import hashlib
import multiprocessing
import os
import re
import sqlite3
import sys
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from deep_research.brief.layout import Brief
from deep_research.errors import InputError, MissingArtifact
from deep_research.fetch.corpus import retain_document
from deep_research.fetch.extract import decode, extract, pdf_text
from deep_research.gates.vocabulary import STOP_WORDS
from deep_research.run.answering import identifiers
from deep_research.run.corpusfolder import (
    Admitted,
    LeftOut,
    escaped,
    pseudo_root,
    read_admitted,
    walk,
)
from deep_research.run.interface import Capacity, Hit, Retained, SurveyDoc

PYTHON_DOCS = "python-docs"
#: The built-in corpus's publisher: every topic is one owner (the same voice, for independence).
PYTHON_DOCS_OWNER = "docs.python.org"
#: Where the library's module documents sit inside python-docs (``library/json``).
LIBRARY = "library"
#: Part of the python-docs index key: a change to what the corpus holds (v2: the library's
#: module documentation beside the language reference; v3: rendered without the process
#: environment) builds a new index, never reuses one.
PYTHON_DOCS_CONTENT = "reference+library-v3"
#: Earlier keys whose index is deleted when this one is built: v2's rendering held the whole
#: process environment (see :mod:`deep_research.run.pydocs`), so it is not left on disk.
PYTHON_DOCS_LEAKED = ("reference+library-v2",)
#: Largest local file indexed; a bigger one is skipped (and counted), never half-read.
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_HEADINGS = 12
#: Identifiers of one query looked up as declared names, and the documents naming one that
#: are read to find where it is declared.
MAX_KEYS = 4
MAX_DECLARING_SCAN = 200

_WORD = re.compile(r"\w+")  # any script's letters and digits, as FTS5's unicode61 reads them
_NAME = re.compile(r"[A-Za-z_]\w*")
_LABEL_CHARS = re.compile(r"[^a-z0-9-]+")
_MD_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$")
_UNDERLINE = re.compile(r"^(=+|\*+|-+|~+)$")
_AUTHOR = re.compile(r"^author:\s*(.+?)\s*$", re.IGNORECASE)
_TITLE = re.compile(r"^title:\s*(.+?)\s*$", re.IGNORECASE)

#: Where indexing reports how far it is: (phase, message), as :class:`~.progress.Progress` takes.
Report = Callable[[str, str], None]


@dataclass(frozen=True)
class LocalDoc:
    """One document as indexed: identity, text (as it will be retained), title, owner."""

    url: str
    title: str | None
    text: str
    owner: str
    path: str = ""
    mtime_ns: int = 0
    size: int = 0

    @property
    def content_hash(self) -> str:
        return "sha256:" + hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Unread:
    """A listed file that could not be read: its escaped path and why."""

    relative: str
    reason: str


@dataclass(frozen=True)
class SyncReport:
    added: int
    updated: int
    removed: int
    unchanged: int
    skipped: int

    @property
    def total(self) -> int:
        return self.added + self.updated + self.unchanged


# --- reading documents ----------------------------------------------------------------------


def corpus_label(name: str) -> str:
    """A folder name → a label usable as the host of ``file://`` identities."""
    label = _LABEL_CHARS.sub("-", name.lower()).strip("-")[:40].strip("-")
    return label or "corpus"


def title_of(text: str) -> str | None:
    """A document's title: a ``title:`` in its leading ``---`` block, else its first heading or
    first line after that block — never a metadata line such as ``author:``."""
    lines = text.splitlines()[:80]
    start = 0
    if lines and lines[0].strip() == "---":
        end = next((i for i, line in enumerate(lines[1:], 1) if line.strip() == "---"), None)
        if end is not None:
            for line in lines[1:end]:
                if match := _TITLE.match(line.strip()):
                    return match.group(1).strip("\"'")[:200] or None
            start = end + 1
    for line in lines[start : start + 40]:
        stripped = line.strip()
        if match := _MD_HEADING.match(stripped):
            return match.group(1)
        if stripped and not _UNDERLINE.match(stripped):
            return stripped[:200]
    return None


def headings_of(text: str) -> tuple[str, ...]:
    """Markdown ``#`` headings and reST-style underlined headings, in order, de-duplicated."""
    lines = text.splitlines()
    found: list[str] = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        heading = None
        if match := _MD_HEADING.match(stripped):
            heading = match.group(1)
        elif index > 0 and _UNDERLINE.match(stripped) and lines[index - 1].strip():
            previous = lines[index - 1].strip()
            if len(stripped) >= len(previous) and not _UNDERLINE.match(previous):
                heading = previous
        if heading and heading not in found:
            found.append(heading)
        if len(found) >= MAX_HEADINGS:
            break
    return tuple(found)


def declared_author(text: str) -> str | None:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:40]:
        if line.strip() == "---":
            return None
        if match := _AUTHOR.match(line.strip()):
            return match.group(1).strip("\"'") or None
    return None


def document_text(body: bytes, suffix: str) -> tuple[str, str | None] | None:
    """The text a local file of type ``suffix`` contributes (HTML through the fetcher's
    extractor) and the title it declares (an HTML page's ``<title>``), or None."""
    if suffix.lower() in {".html", ".htm"}:
        extracted = extract(body, "text/html", None)
        return (extracted.text, extracted.title) if extracted else None
    if suffix.lower() == ".pdf":
        extracted = pdf_text(body)
        return (extracted.text, extracted.title) if extracted else None
    text = decode(body, "utf-8").replace("\r\n", "\n").replace("\x00", "")
    return (text, None) if text.strip() else None


def folder_documents(
    root: Path, label: str, known: dict[str, tuple[int, int]], *, report: Report | None = None
) -> Iterator[tuple[str, LocalDoc | None, int, int]]:
    """(relative path, document or None when unchanged since ``known``, mtime_ns, size), in path
    order. Changed files are read in a process pool when there are many (:func:`read_changed`);
    ``report`` hears how far reading is when it takes long.

    A file over :data:`MAX_FILE_BYTES` is not read; once the walk ends, one warning names them,
    and one more for each other reason a file was left out (:mod:`.corpusfolder`).
    """
    left = LeftOut()
    listed = list(_listed(root, known, left))
    return read_changed(listed, label, report=report, root=root, left=left)


def _listed(
    root: Path, known: dict[str, tuple[int, int]], left: LeftOut | None = None
) -> Iterator[tuple[str, Admitted | None, int, int]]:
    """(escaped relative path, the file to read or None when unchanged, mtime_ns, size). What
    the walk leaves out is added to ``left``, or, without one, warned about here."""
    root = root.resolve()
    warn, left = left is None, left or LeftOut()
    oversize: list[tuple[str, int]] = []
    for listed in walk(root, left):
        relative, mtime_ns, size = listed.relative, listed.mtime_ns, listed.size
        if size > MAX_FILE_BYTES:
            oversize.append((relative, size))
            continue
        unchanged = known.get(relative) == (mtime_ns, size)
        yield relative, None if unchanged else listed.file, mtime_ns, size
    if warn:
        left.warn(escaped(str(root)))
    if oversize:
        shown = ", ".join(f"{name} ({size / 2**20:.1f} MB)" for name, size in oversize[:5])
        more = f" and {len(oversize) - 5} more" if len(oversize) > 5 else ""
        cap = MAX_FILE_BYTES // 2**20
        warnings.warn(
            f"{len(oversize)} file(s) of {escaped(str(root))} over the {cap} MB cap are not "
            f"searched: {shown}{more}; split each into smaller files to search it",
            stacklevel=2,
        )


def local_document(
    file: Admitted, label: str, relative: str, mtime_ns: int, size: int
) -> LocalDoc | Unread | None:
    """One file as indexed, :class:`Unread` when it cannot be read (or is no longer the file
    listed), or None when it has no text."""
    try:
        body = read_admitted(file, MAX_FILE_BYTES)
    except OSError as error:
        return Unread(relative, (error.strerror or type(error).__name__).lower())
    if len(body) > MAX_FILE_BYTES:
        return Unread(relative, f"grew past the {MAX_FILE_BYTES // 2**20} MB cap")
    # The type the listed name says: a link's own name, not its target's.
    read = document_text(body, Path(relative).suffix)
    if read is None:
        return None
    text, declared = read
    parts = relative.split("/")
    owner = declared_author(text) or (parts[0] if len(parts) > 1 else label)
    url = f"file://{label}/{relative}"
    title = declared or title_of(text)
    return LocalDoc(url, title, text, owner, relative, mtime_ns, size)


#: Changed files below this many are read in this process (a pool costs its start-up).
POOL_MIN_FILES = 16
#: Most processes a pool uses, whatever the machine has.
MAX_POOL = 8
#: Seconds of reading before progress is reported, and between reports.
REPORT_EVERY_S = 2.0


def pool_size() -> int:
    """The CPUs this process may run on (``os.process_cpu_count``), at most :data:`MAX_POOL`."""
    counted = getattr(os, "process_cpu_count", None)
    if counted is not None:
        cpus = counted()
    elif hasattr(os, "sched_getaffinity"):
        cpus = len(os.sched_getaffinity(0))
    else:
        cpus = os.cpu_count()
    return max(1, min(MAX_POOL, cpus or 1))


def read_changed(
    listed: list[tuple[str, Admitted | None, int, int]],
    label: str,
    *,
    workers: int | None = None,
    report: Report | None = None,
    root: Path | None = None,
    left: LeftOut | None = None,
) -> Iterator[tuple[str, LocalDoc | None, int, int]]:
    """The documents of ``listed`` (files of the folder ``root``) in its order, each changed
    file read by :func:`local_document` — in a pool of ``workers`` processes (default
    :func:`pool_size`) when there are at least :data:`POOL_MIN_FILES` of them, which gives the
    same documents as reading them here. A file without text is left out, as when read here; one
    that could not be read is left out too, added to ``left`` (what the walk left out), and once
    reading ends one warning per reason names them."""
    jobs = [(path, label, relative, mtime, size) for relative, path, mtime, size in listed if path]
    workers = pool_size() if workers is None else workers
    if workers > 1 and len(jobs) >= POOL_MIN_FILES:
        documents = pooled(jobs, workers)
    else:
        documents = (local_document(*job) for job in jobs)
    progress = _Progress(len(jobs), report)
    left = left or LeftOut()
    for relative, path, mtime, size in listed:
        if path is None:
            yield relative, None, mtime, size
            continue
        doc = next(documents)
        progress.read()
        if isinstance(doc, Unread):
            left.unreadable.append(f"{doc.relative} ({doc.reason})")
        elif doc is not None:
            yield relative, doc, mtime, size
    progress.done()
    left.warn(escaped(str(root)) if root is not None else f"corpus {label}")


_Job = tuple[Admitted, str, str, int, int]
_Read = LocalDoc | Unread | None


def pooled(
    jobs: list[_Job], workers: int, read: Callable[..., _Read] = local_document
) -> Iterator[_Read]:
    """``read`` (:func:`local_document`) of each job, in order, from a pool of ``workers``
    processes (``read`` must be importable by name there); a few
    jobs per worker are in flight, so memory holds a window of documents, not the corpus. A pool
    that breaks (a worker killed) leaves the rest to this process."""
    done = 0
    try:
        # Spawned, not forked: the parent may run threads (the progress line's ticker).
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            pending: deque[Future[_Read]] = deque()
            for job in jobs:
                pending.append(pool.submit(read, *job))
                if len(pending) >= 4 * workers:
                    yield pending.popleft().result()
                    done += 1
            while pending:
                yield pending.popleft().result()
                done += 1
    except BrokenProcessPool:
        for job in jobs[done:]:
            yield read(*job)


class _Progress:
    """Reports reading on ``report`` once it has taken :data:`REPORT_EVERY_S`, and then every
    as long again; a last line when it was reported at all."""

    def __init__(self, total: int, report: Report | None) -> None:
        self.total, self.report = total, report
        self.count = 0
        self.started = self.last = time.monotonic()
        self.reported = False

    def read(self) -> None:
        self.count += 1
        now = time.monotonic()
        if self.report is not None and now - self.last >= REPORT_EVERY_S:
            self.last, self.reported = now, True
            self.report("index", f"{self.count}/{self.total} files read")

    def done(self) -> None:
        if self.report is not None and self.reported:
            elapsed = time.monotonic() - self.started
            self.report("index", f"{self.count}/{self.total} files read in {elapsed:.1f} s")


@functools.cache
def python_doc_documents() -> tuple[LocalDoc, ...]:
    """The documentation that ships with the interpreter: one document per language-reference
    topic (``pydoc_data``, as ``help("TOPIC")`` shows it), then one per standard-library module
    as pydoc renders it (:mod:`deep_research.run.pydocs`), under ``library/<module>``.

    Rendered once per process (it takes seconds): a process that opens python-docs under
    several state folders indexes the same documents into each."""
    from pydoc_data.topics import topics

    from deep_research.run.pydocs import render_library

    docs = []
    for name in sorted(topics):
        text = topics[name].strip() + "\n"
        docs.append(
            LocalDoc(f"file://{PYTHON_DOCS}/{name}", title_of(text), text, PYTHON_DOCS_OWNER, name)
        )
    for module in render_library():
        path = f"{LIBRARY}/{module.name}"
        title = f"{module.name} — {module.synopsis}" if module.synopsis else module.name
        docs.append(
            LocalDoc(f"file://{PYTHON_DOCS}/{path}", title, module.text, PYTHON_DOCS_OWNER, path)
        )
    return tuple(docs)


# --- the index ------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS docs (
    path TEXT PRIMARY KEY, url TEXT NOT NULL UNIQUE, title TEXT, owner TEXT NOT NULL,
    content_hash TEXT NOT NULL, mtime_ns INTEGER NOT NULL, size INTEGER NOT NULL,
    body TEXT NOT NULL
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
    url UNINDEXED, title, body, tokenize = 'porter unicode61'
);
"""


def match_expression(query: str) -> str | None:
    """An FTS5 query that ORs the query's words (quoted: user text is never FTS syntax)."""
    words = [
        word
        for word in dict.fromkeys(word.lower() for word in _WORD.findall(query))
        if len(word) > 1 and word not in STOP_WORDS
    ]
    return " OR ".join(f'"{word}"' for word in words) if words else None


class CorpusIndex:
    """One corpus's FTS5 index file. Safe to search from several threads (one connection each)."""

    def __init__(self, db_path: Path, label: str) -> None:
        self.db_path = db_path
        self.label = label

    @contextmanager
    def connect(self) -> Iterator[sqlite3.Connection]:
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.db_path, timeout=30)) as connection:
            # What is deleted is overwritten, not left in free pages: a file that leaves the
            # index may be one that never belonged in it (a link out of the folder).
            connection.execute("PRAGMA secure_delete = ON")
            connection.executescript(_SCHEMA)
            with connection:
                yield connection

    def known(self) -> dict[str, tuple[int, int]]:
        with self.connect() as db:
            rows = db.execute("SELECT path, mtime_ns, size FROM docs").fetchall()
        return {str(path): (int(mtime), int(size)) for path, mtime, size in rows}

    def sync(self, items: Iterable[tuple[str, LocalDoc | None, int, int]]) -> SyncReport:
        """Bring the index in line with ``items`` (every document of the corpus, once)."""
        added = updated = unchanged = 0
        seen: set[str] = set()
        with self.connect() as db:
            current = {
                str(path): str(digest)
                for path, digest in db.execute("SELECT path, content_hash FROM docs")
            }
            for path, doc, mtime_ns, size in items:
                seen.add(path)
                if doc is None or current.get(path) == doc.content_hash:
                    unchanged += 1
                    db.execute(
                        "UPDATE docs SET mtime_ns = ?, size = ? WHERE path = ?",
                        (mtime_ns, size, path),
                    )
                    continue
                if path in current:
                    updated += 1
                    self._delete(db, path)
                else:
                    added += 1
                db.execute(
                    "INSERT INTO docs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        path,
                        doc.url,
                        doc.title,
                        doc.owner,
                        doc.content_hash,
                        mtime_ns,
                        size,
                        doc.text,
                    ),
                )
                db.execute(
                    "INSERT INTO fts (url, title, body) VALUES (?, ?, ?)",
                    (doc.url, doc.title or "", doc.text),
                )
            gone = [path for path in current if path not in seen]
            for path in gone:
                self._delete(db, path)
            if gone:
                # FTS5 deletes by marker; merging the segments drops the words themselves.
                db.execute("INSERT INTO fts (fts) VALUES ('optimize')")
        return SyncReport(added, updated, len(gone), unchanged, 0)

    @staticmethod
    def _delete(db: sqlite3.Connection, path: str) -> None:
        row = db.execute("SELECT url FROM docs WHERE path = ?", (path,)).fetchone()
        if row is not None:
            db.execute("DELETE FROM fts WHERE url = ?", (row[0],))
        db.execute("DELETE FROM docs WHERE path = ?", (path,))

    def count(self) -> int:
        with self.connect() as db:
            return int(db.execute("SELECT count(*) FROM docs").fetchone()[0])

    def search(self, query: str, limit: int) -> list[Hit]:
        """Documents matching ``query``'s words by BM25; first, when it writes code
        (``os.path.join``, ``max()``, ``lru_cache``), the documents that declare that name
        (:meth:`declaring`): an identifier is an exact key, not one word among others."""
        expression = match_expression(query)
        if expression is None or limit <= 0:
            return []
        with self.connect() as db:
            rows = db.execute(
                "SELECT url, title, bm25(fts, 0.0, 2.0, 1.0) AS rank FROM fts WHERE fts MATCH ? "
                "ORDER BY rank, url LIMIT ?",
                (expression, limit),
            ).fetchall()
        # bm25() is lower-is-better and negative; the hit score is its negation.
        hits = [
            Hit(str(url), str(title) or None, round(-float(rank), 6)) for url, title, rank in rows
        ]
        declared = self.declaring(identifiers(query), limit)
        if not declared:
            return hits
        top = max((hit.score for hit in hits), default=0.0) + 1.0
        first = [Hit(hit.url, hit.title, round(top + hit.score, 6)) for hit in declared]
        seen = {hit.url for hit in first}
        return (first + [hit for hit in hits if hit.url not in seen])[:limit]

    def declaring(self, keys: Sequence[str], limit: int) -> list[Hit]:
        """Documents that declare one of ``keys`` — a line opening with its name and "(" as
        pydoc writes a signature, or a heading naming it — those whose path holds one of its
        qualifiers (``functools`` of ``functools.lru_cache``) first, then by BM25."""
        found: dict[str, tuple[int, float, str | None]] = {}
        with self.connect() as db:
            for key in keys[:MAX_KEYS]:
                *qualifiers, name = key.split(".")
                if not _NAME.fullmatch(name):
                    continue  # an operator is no declared name
                declaration = re.compile(
                    rf"^(?:async\s+|class\s+)?(?:[\w.]+\.)?{re.escape(name)}\(|"
                    rf"^#{{1,6}}\s.*(?<![\w.]){re.escape(name)}(?!\w)",
                    re.MULTILINE,
                )
                rows = db.execute(
                    "SELECT fts.url, fts.title, bm25(fts, 0.0, 2.0, 1.0) AS rank, docs.body "
                    "FROM fts JOIN docs ON docs.url = fts.url WHERE fts MATCH ? "
                    "ORDER BY rank, fts.url LIMIT ?",
                    (f'"{name}"', MAX_DECLARING_SCAN),
                ).fetchall()
                for url, title, rank, body in rows:
                    if declaration.search(str(body)) is None:
                        continue
                    path = str(url).rsplit("/", 1)[-1].lower()
                    # A bare name is looked up as Python looks it up: builtins first; a
                    # qualifier is a module the path names or a class the page declares
                    # (dict.get is documented under "class dict" in builtins).
                    scope = qualifiers or ["builtins"]
                    qualified = any(q.lower() in path for q in scope if len(q) > 1) or any(
                        re.search(rf"^class {re.escape(q)}\(", str(body), re.MULTILINE)
                        for q in qualifiers
                    )
                    order = (0 if qualified else 1, float(rank), title)
                    if str(url) not in found or order < found[str(url)]:
                        found[str(url)] = order
        ranked = sorted(found.items(), key=lambda item: (item[1][0], item[1][1], item[0]))
        return [
            Hit(url, str(title) or None, round(-rank, 6))
            for url, (_, rank, title) in ranked[:limit]
        ]

    def document(self, url: str) -> LocalDoc | None:
        with self.connect() as db:
            row = db.execute(
                "SELECT url, title, body, owner, path FROM docs WHERE url = ?", (url,)
            ).fetchone()
        if row is None:
            return None
        return LocalDoc(str(row[0]), row[1], str(row[2]), str(row[3]), str(row[4]))


# --- the adapter ----------------------------------------------------------------------------


class LocalCorpus:
    """The :class:`~deep_research.run.interface.SearchAdapter` over one indexed local corpus."""

    def __init__(self, index: CorpusIndex, description: str) -> None:
        self.index = index
        self.description = description

    @property
    def name(self) -> str:
        return f"local:{self.index.label}"

    def is_web(self) -> bool:
        return False

    def capacity(self) -> Capacity:
        # N documents cannot give more than N distinct sources, however often they are searched.
        return Capacity(documents=self.index.count())

    def search(self, query: str, limit: int) -> list[Hit]:
        return self.index.search(query, limit)

    def survey(self, question: str, limit: int) -> list[SurveyDoc]:
        docs = []
        for hit in self.index.search(question, limit):
            doc = self.index.document(hit.url)
            if doc is not None:
                docs.append(SurveyDoc(doc.url, doc.title, headings_of(doc.text)))
        return docs

    def retain(self, hit: Hit, brief: Brief) -> Retained | None:
        doc = self.index.document(hit.url)
        if doc is None:
            return None
        # The same 2xx record a web fetch leaves: the trace gate's stage 1 reads exactly this.
        stored, _ = retain_document(
            brief,
            doc.url,
            doc.text,
            extractor="local-corpus",
            adapter=self.name,
            retrieved_at=datetime.now(UTC).replace(microsecond=0),
            duration_ms=0,
        )
        return Retained(doc.url, doc.title, doc.text, stored.content_hash, doc.owner)


def index_path(state: Path, label: str, key: str) -> Path:
    # surrogateescape: a folder's name is bytes, and one that is not UTF-8 still has a key.
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return state / "corpora" / f"{label}-{digest}.sqlite"


def _delete_index(path: Path) -> None:
    """An index file and SQLite's files beside it, gone."""
    for name in (path.name, f"{path.name}-journal", f"{path.name}-wal", f"{path.name}-shm"):
        (path.parent / name).unlink(missing_ok=True)


def _is_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # the file system decoder's stand-ins for undecodable bytes
        return False
    return True


def corpus_folder(spec: str) -> Path:
    """``--corpus DIR`` as an absolute folder; a missing one, or one in the kernel's pseudo
    file systems (``/proc``, ``/sys``, ``/dev``: live state, not documents), is an input error."""
    root = Path(spec).expanduser()
    if not root.is_dir():
        raise MissingArtifact(
            f"corpus folder not found: {escaped(str(root))}; pass a folder of "
            ".md/.txt/.html/.pdf or python-docs"
        )
    root = root.resolve()
    if not _is_utf8(str(root)):
        # The brief records its corpus by this path, as JSON text, and reopens it by it: bytes
        # that are not UTF-8 can be neither written there nor read back.
        raise InputError(
            f"corpus folder {escaped(str(root))} has a name that is not UTF-8 (shown escaped); "
            "rename it, or copy its files to a folder that has one"
        )
    if (pseudo := pseudo_root(root)) is not None:
        raise InputError(
            f"corpus folder {escaped(str(root))} is under {pseudo}, which holds the system's "
            "live state, not documents; pass a folder of .md/.txt/.html/.pdf"
        )
    return root


def open_corpus(spec: str, state: Path, report: Report | None = None) -> LocalCorpus:
    """``python-docs`` or a folder path → a synced corpus; empty or missing is an input error.
    ``report`` hears how far indexing a folder is when it takes long."""
    if spec == PYTHON_DOCS:
        # What the interpreter ships is fixed for its version: the key names both, and a
        # built index (synced in one transaction, so never half-built) is not rendered again.
        key = f"{PYTHON_DOCS}:{PYTHON_DOCS_CONTENT}:{sys.version}"
        index = CorpusIndex(index_path(state, PYTHON_DOCS, key), PYTHON_DOCS)
        if index.count() == 0:
            index.sync((doc.path, doc, 0, len(doc.text)) for doc in python_doc_documents())
            for content in PYTHON_DOCS_LEAKED:
                leaked = f"{PYTHON_DOCS}:{content}:{sys.version}"
                _delete_index(index_path(state, PYTHON_DOCS, leaked))
        corpus = LocalCorpus(
            index, "the Python documentation shipped with Python (language reference and library)"
        )
    else:
        root = corpus_folder(spec)
        label = corpus_label(root.name)
        index = CorpusIndex(index_path(state, label, str(root)), label)
        index.sync(folder_documents(root, label, index.known(), report=report))
        corpus = LocalCorpus(index, f"the folder {escaped(str(root))}")
    if index.count() == 0:
        raise InputError(
            f"corpus {escaped(spec)} holds no .md/.txt/.html/.pdf document with text; add "
            "documents or "
            "point --corpus at another folder (no web fallback is made)"
        )
    return corpus
