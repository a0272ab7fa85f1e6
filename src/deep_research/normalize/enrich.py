"""How each new row's text was obtained, from the brief's own record, never from the model.

A fetcher agent reports what a page says; how the page was fetched is already written down by
code: the fetch log holds each attempt's tier, status, final URL, time and content hash, and the
corpus metadata beside the retained text holds the title and publication date the page declares.
So ``normalize --brief`` fills those fields of every row it creates from that record
(docs/contracts.md §2):

* the row's fetches are the brief's successful page fetches (``fetchlog.succeeded``) of its URL
  or an alias — canonical, as the trace gate matches them; a final URL the agent wrote is not
  used to find them;
* its text is the content hash the agent named when one of those fetches logged it, else the one
  text they all logged; fetches that logged several texts, none of them named, leave none;
* ``tier``, ``status``, ``final_url`` and ``retrieved_at`` come from the first fetch that logged
  that text, ``title`` and ``published_at`` from its ``corpus/<hash>.meta.json``.

A value the agent gave for any of these fields is overridden; one no fetch stands behind is
dropped with a warning, so a row nothing was fetched for stays a snippet. Existing rows keep
their fields, as the merge keeps them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deep_research.brief.layout import Brief
from deep_research.brief.readers import parse_json, read_text
from deep_research.errors import InputError
from deep_research.fetch.corpus import meta_path
from deep_research.fetch.fetchlog import succeeded
from deep_research.models import CorpusMeta, FetchLogEntry, SourceRow
from deep_research.normalize.dates import as_utc
from deep_research.normalize.results import NormalizeResult
from deep_research.urls import canonical_or_none

#: The fields of a row that describe its fetch, each with its value when nothing was fetched.
FETCH_FIELDS: dict[str, Any] = {
    "content_hash": None,
    "tier": "snippet",
    "status": None,
    "final_url": None,
    "retrieved_at": None,
    "title": None,
    "published_at": None,
}
NOT_FETCHED = "no successful fetch of this URL in the brief's fetch log"
NOT_STATED = "the fetch log and the retained page's metadata state no such value"
AMBIGUOUS = (
    "the URL was fetched as different texts and the fetcher named none of them; give the "
    "content_hash that fetch printed"
)


def _canonical(urls: Sequence[str | None]) -> set[str]:
    return {found for url in urls if url and (found := canonical_or_none(url)) is not None}


class FetchRecord:
    """A brief's successful page fetches, in log order, and the metadata of its corpus."""

    def __init__(self, brief: Brief, log: Sequence[FetchLogEntry]) -> None:
        self.brief = brief
        self.fetched = [
            (entry, _canonical([entry.url, entry.final_url]))
            for entry in log
            if entry.purpose == "page" and succeeded(entry) and entry.content_hash
        ]

    def fetches(self, row: SourceRow) -> list[FetchLogEntry]:
        """The fetches of the row's URL or one of its aliases that kept a text."""
        urls = _canonical([row.url, *row.aliases])
        return [entry for entry, logged in self.fetched if logged & urls]

    def meta(self, content_hash: str) -> CorpusMeta | None:
        path = meta_path(self.brief, content_hash)
        if not path.is_file():
            return None
        try:
            raw = parse_json(read_text(path, what="corpus metadata"), what=str(path))
            return CorpusMeta.model_validate(raw)
        except (InputError, ValidationError):
            return None  # unreadable metadata states nothing; the text and the log still stand


def enrich(
    result: NormalizeResult, record: FetchRecord, existing: Sequence[SourceRow]
) -> NormalizeResult:
    """``result`` with every row it created filled from ``record``, and a warning for each
    value of the agent's that nothing in the record stands behind."""
    known = {row.id for row in existing}
    warnings = list(result.warnings)
    rows = []
    for row in result.rows:
        if row.id in known:
            rows.append(row)
            continue
        facts, why = fetch_facts(row, record)
        dropped = [name for name in FETCH_FIELDS if facts[name] == FETCH_FIELDS[name]]
        dropped = [name for name in dropped if _stated(row, name)]
        if dropped or why == AMBIGUOUS:
            tail = f"; dropped {', '.join(dropped)}" if dropped else ""
            warnings.append(f"{row.id} ({row.url}): {why}{tail}")
        elif row.content_hash not in (None, facts["content_hash"]):
            warnings.append(
                f"{row.id} ({row.url}): content_hash {row.content_hash} is no text fetched from "
                f"this URL; the one that was, {facts['content_hash']}, is kept"
            )
        rows.append(row.model_copy(update=facts))
    return replace(result, rows=rows, warnings=warnings)


def _stated(row: SourceRow, name: str) -> bool:
    return bool(getattr(row, name) != FETCH_FIELDS[name])


def fetch_facts(row: SourceRow, record: FetchRecord) -> tuple[dict[str, Any], str]:
    """The row's fetch fields from ``record``, and why any left empty is empty."""
    fetches = record.fetches(row)
    texts = list(dict.fromkeys(entry.content_hash for entry in fetches))
    if not texts:
        return dict(FETCH_FIELDS), NOT_FETCHED
    if row.content_hash in texts:
        chosen = row.content_hash
    elif len(texts) == 1:
        chosen = texts[0]
    else:
        return dict(FETCH_FIELDS), AMBIGUOUS
    assert chosen is not None  # every fetch in the record kept a text
    entry = next(entry for entry in fetches if entry.content_hash == chosen)
    meta = record.meta(chosen)
    facts: dict[str, Any] = {
        "content_hash": chosen,
        "tier": entry.tier or (meta.tier if meta else None) or FETCH_FIELDS["tier"],
        "status": entry.status,
        "final_url": entry.final_url,
        "retrieved_at": as_utc(entry.retrieved_at) if entry.retrieved_at else None,
        "title": meta.title if meta else None,
        "published_at": meta.published_at if meta else None,
    }
    return facts, NOT_STATED


@dataclass(frozen=True)
class FillFromBrief:
    """What ``normalize --brief`` does after :func:`normalize_payload`: every new row filled
    from the brief's fetch record, read when it runs (under the brief's lock)."""

    root: Path

    def __call__(self, result: NormalizeResult, existing: Sequence[SourceRow]) -> NormalizeResult:
        brief = Brief(self.root)
        return enrich(result, FetchRecord(brief, brief.load_fetch_log()), existing)
