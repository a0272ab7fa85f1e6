"""The records a verdict was decided on, sealed in trace.json so a later edit to them shows.

Most of what the fetch log and sources.jsonl hold is re-derived by ``deep-research verify`` or
reaches a consumer through something it re-derives (audit.json, triangulation, the verdict).
Some of it nothing derives: the policy a fetch ran under (the private networks it was allowed,
its purpose, why it was refused), a local document's declared owner. The verdict therefore
records, beside its decision, a digest of both files as it read them; verify compares.

The fetch log is append-only (``fetch/fetchlog.py``), so the seal covers the complete lines the
log held, by count: an edit or a removal among them is named here, and a line appended since is
named by the audit.json comparison (the record lists every attempt). A torn last line, left by
a fetch killed after the verdict, is no line at all: readers skip it, and the append that cuts
it off leaves the sealed lines as they were. sources.jsonl is rewritten whole by ``normalize``;
after a verdict it has no reason to change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deep_research.brief.layout import Brief, sha256_bytes

_LOG = "fetch-log.jsonl"
_SOURCES = "sources.jsonl"
_NEWLINE = b"\n"


def seal(brief: Brief) -> dict[str, Any]:
    """Digests of the fetch log's complete lines and of sources.jsonl, as they are now (kept in
    ``phases.verdict.sealed``: :class:`deep_research.brief.trace_phases.VerdictPhase`)."""
    log = _read(brief.fetch_log_path)
    complete = log[: log.rfind(_NEWLINE) + 1]
    return {
        _LOG: {"lines": complete.count(_NEWLINE), "sha256": sha256_bytes(complete)},
        _SOURCES: {"sha256": sha256_bytes(_read(brief.sources_path))},
    }


def seal_mismatches(brief: Brief, recorded: Any) -> list[str]:
    """How the sealed records differ from the files now; nothing for a verdict recorded without
    a seal (an earlier version's)."""
    if not isinstance(recorded, dict):
        return []
    found = []
    log_seal = recorded.get(_LOG)
    if isinstance(log_seal, dict) and isinstance(log_seal.get("lines"), int):
        lines = log_seal["lines"]
        log = _read(brief.fetch_log_path)
        prefix = _first_lines(log, lines)
        if prefix is None:
            found.append(
                f"{_LOG}: held {lines} lines when the verdict was decided, now "
                f"{log.count(_NEWLINE)}; logged attempts were removed"
            )
        elif sha256_bytes(prefix) != log_seal.get("sha256"):
            found.append(
                f"{_LOG}: the {lines} lines the verdict was decided on were edited since "
                "(a logged attempt's URL, outcome, policy or any other field)"
            )
    sources_seal = recorded.get(_SOURCES)
    if isinstance(sources_seal, dict) and sources_seal.get("sha256") != sha256_bytes(
        _read(brief.sources_path)
    ):
        found.append(f"{_SOURCES}: edited since the verdict was decided on it")
    return found


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return b""


def _first_lines(data: bytes, count: int) -> bytes | None:
    """The first ``count`` newline-ended lines of ``data``, or None when it holds fewer."""
    end = 0
    for _ in range(count):
        newline = data.find(_NEWLINE, end)
        if newline < 0:
            return None
        end = newline + 1
    return data[:end]
