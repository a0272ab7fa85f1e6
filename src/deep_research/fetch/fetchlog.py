"""fetch-log.jsonl: one line per fetch attempt, appended and flushed, never rewritten.

The log is the ground truth of what a run fetched: the trace gate accepts a source only when the
log holds a 2xx entry for it. Every attempt is recorded — refusals and errors included — so a
refused or failed URL is visibly *not* evidence rather than silently absent.

Each line is written with one ``write`` call under an exclusive ``flock``, then fsynced, so
parallel fetchers of one brief never interleave lines. A crash can tear only the line being
written; the next append cuts that torn tail off first (it was never a complete record), so a
torn line can only ever be the last one, which readers skip with a warning.
"""

from __future__ import annotations

import fcntl
import logging
import os
from collections.abc import Iterable
from pathlib import Path

from deep_research.brief.layout import Brief
from deep_research.brief.writers import escape_line_breaks
from deep_research.models import FetchLogEntry, logged_urls
from deep_research.urls import canonical_or_none

log = logging.getLogger(__name__)


def succeeded(entry: FetchLogEntry) -> bool:
    """The attempt fetched the page: outcome ``ok`` with a 2xx status — the only entry that makes
    a source evidence."""
    return entry.outcome == "ok" and entry.status is not None and 200 <= entry.status < 300


def fetched_page_urls(log: Iterable[FetchLogEntry]) -> set[str]:
    """The canonical URLs of every page the log shows fetched (see :func:`succeeded`)."""
    pages = logged_urls(log, lambda entry: entry.purpose == "page" and succeeded(entry))
    return {canonical for url in pages if (canonical := canonical_or_none(url)) is not None}


def entry_line(entry: FetchLogEntry) -> bytes:
    return (escape_line_breaks(entry.model_dump_json(exclude_none=True)) + "\n").encode("utf-8")


def append(brief: Brief, entry: FetchLogEntry) -> None:
    """Append ``entry`` durably: one line, flushed and fsynced before returning."""
    path = brief.fetch_log_path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _cut_torn_tail(fd, path)
        os.write(fd, entry_line(entry))
        os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the flock


def _cut_torn_tail(fd: int, path: Path) -> None:
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    # Find the end of the last complete line; everything after it is a torn write.
    block = 4096
    end = size
    keep = 0
    while end > 0:
        start = max(0, end - block)
        chunk = os.pread(fd, end - start, start)
        newline = chunk.rfind(b"\n")
        if newline >= 0:
            keep = start + newline + 1
            break
        end = start
    log.warning("%s: dropping a torn last line (%d bytes) left by a crash", path, size - keep)
    os.ftruncate(fd, keep)
