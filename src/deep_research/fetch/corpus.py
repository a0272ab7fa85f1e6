"""The retained corpus: ``corpus/<sha256>.txt`` plus ``corpus/<sha256>.meta.json``.

Quotes are located in these files and nowhere else, so a corpus file is written once, atomically,
under the hash of its exact bytes, and never changed. Identical text fetched twice (two URLs,
or a re-fetch of an unchanged page) is stored once: the first writer's metadata stays, and the
fetch log records every URL that produced it. The metadata is written before the text, so a
text file under its final name always has its metadata beside it.

Every way text enters a brief — a web page, a local-corpus document, an MCP tool's result — goes
through :func:`retain`: the text is stored, then the 2xx fetch-log line the trace gate's stage 1
accepts a source by is appended, in that order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from deep_research.brief.layout import Brief, sha256_bytes
from deep_research.brief.writers import atomic_write_bytes, atomic_write_text
from deep_research.fetch import fetchlog
from deep_research.models import CorpusMeta, FetchLogEntry


@dataclass(frozen=True)
class Stored:
    content_hash: str
    path: Path
    created: bool  # False when identical text was already in the corpus


def meta_path(brief: Brief, content_hash: str) -> Path:
    return brief.corpus_dir / f"{content_hash.removeprefix('sha256:')}.meta.json"


def store_text(brief: Brief, text: str, meta: CorpusMeta) -> Stored:
    """Retain ``text`` under the hash of its UTF-8 bytes (the hash :meth:`Brief.read_corpus`
    checks), with ``meta`` beside it; a second copy of the same text is not written."""
    data = text.encode("utf-8")
    content_hash = sha256_bytes(data)
    path = brief.corpus_path(content_hash)
    meta_file = meta_path(brief, content_hash)
    if not meta_file.exists():
        atomic_write_text(meta_file, meta.model_dump_json(indent=2, exclude_none=True) + "\n")
    if path.is_file():
        return Stored(content_hash, path, created=False)
    atomic_write_bytes(path, data)
    return Stored(content_hash, path, created=True)


def retain(
    brief: Brief, text: str, meta: CorpusMeta, log_line: Callable[[str], FetchLogEntry]
) -> tuple[Stored, FetchLogEntry]:
    """Store ``text`` with ``meta``, then log the successful attempt that produced it; what was
    stored and the line logged.

    ``log_line`` builds that attempt's fetch-log entry from the stored text's content hash. It is
    called only once the text is under its final name — so a crash in between leaves a text no
    line vouches for, never a line naming text that is not there — and a page fetch's duration
    still covers storing what it read.
    """
    stored = store_text(brief, text, meta)
    entry = log_line(stored.content_hash)
    fetchlog.append(brief, entry)
    return stored, entry


def retain_document(
    brief: Brief,
    identity: str,
    text: str,
    *,
    extractor: str,
    adapter: str,
    retrieved_at: datetime,
    duration_ms: int,
) -> tuple[Stored, FetchLogEntry]:
    """Retain text that was read, not fetched over HTTP — a local-corpus document, an MCP tool's
    result — as a ``200 text/plain`` fetch of its ``identity``, so every gate reads it as it
    reads a page."""
    meta = CorpusMeta(
        url=identity,
        final_url=identity,
        status=200,
        content_type="text/plain",
        extractor=extractor,
        extractor_version="1",
        retrieved_at=retrieved_at,
        tier="raw",
    )

    def log_line(content_hash: str) -> FetchLogEntry:
        return FetchLogEntry(
            url=identity,
            final_url=identity,
            outcome="ok",
            status=200,
            content_hash=content_hash,
            tier="raw",
            retrieved_at=retrieved_at,
            bytes=len(text.encode("utf-8")),
            duration_ms=duration_ms,
            content_type="text/plain",
            adapter=adapter,
        )

    return retain(brief, text, meta, log_line)
