"""Phase 6b, the fetch side: which cited sources to re-fetch, and re-fetching one of them.

The sample (docs/contracts.md §8) is max(3, ⌈10% of cited sources⌉), capped at all of them: sources
cited by a central claim (or through a central finding) first, then the rest, each group ordered
by a hash of the brief's id and the source id — the same brief always samples the same sources.

Per sampled source: one live fetch through the guarded fetcher; if it fails (refused, network,
timeout, non-2xx, robots), one archive try (:mod:`deep_research.fetch.archive`, tier ``degraded``).
What comes back is the re-fetched text; whether the cited quotes are still in it is decided by
:mod:`deep_research.decide.refetch_rate`.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

from deep_research.brief.layout import Brief
from deep_research.fetch.archive import fetch_archived
from deep_research.fetch.fetcher import Fetcher, FetchResult
from deep_research.models import ClaimsFile, SourceRow
from deep_research.urls import is_web

MIN_SAMPLE = 3
SAMPLE_FRACTION = 0.10


@dataclass
class Cited:
    source: SourceRow
    quotes: dict[str, str] = field(default_factory=dict)  # finding id → quote
    central: bool = False


@dataclass(frozen=True)
class Refetched:
    """How one re-fetch went: the live try, the archive try (None when the live try was
    enough), and the fetch whose text came back (None when neither try brought text)."""

    live: str
    archive: str | None
    result: FetchResult | None


def cited_sources(document: ClaimsFile, sources: list[SourceRow]) -> list[Cited]:
    """Every source a claim cites that offers a quote, with the quotes cited from it."""
    by_id = {source.id: source for source in sources}
    cited: dict[str, Cited] = {}
    for claim in document.claims:
        named = {finding.split(".", 1)[0] for finding in claim.findings}
        for source_id in dict.fromkeys([*claim.supporting, *sorted(named)]):
            source = by_id.get(source_id)
            if source is None or source.content_hash is None or not is_web(source.url):
                continue
            findings = {finding.id: finding for finding in source.findings}
            chosen = [fid for fid in claim.findings if fid in findings] or list(findings)
            if not chosen:
                continue
            item = cited.setdefault(source_id, Cited(source))
            for fid in chosen:
                item.quotes[fid] = findings[fid].quote
            item.central = (
                item.central
                or claim.importance == "central"
                or any(findings[fid].importance == "central" for fid in chosen)
            )
    return list(cited.values())


def sample_size(cited: int) -> int:
    return min(cited, max(MIN_SAMPLE, math.ceil(SAMPLE_FRACTION * cited)))


def choose_sample(brief_id: str, cited: list[Cited]) -> list[Cited]:
    def key(item: Cited) -> tuple[bool, str]:
        digest = hashlib.sha256(f"{brief_id}\x00{item.source.id}".encode()).hexdigest()
        return (not item.central, digest)

    return sorted(cited, key=key)[: sample_size(len(cited))]


def brief_id(brief: Brief) -> str:
    return brief.root.resolve().name


def refetch_source(fetcher: Fetcher, source: SourceRow, base: str) -> Refetched:
    """One live try, then (only if it failed) one archive try. Never loops."""
    live = fetcher.fetch(source.url)
    tried = live.entry.outcome if live.ok else f"{live.entry.outcome}: {live.entry.reason}"
    if live.ok:
        return Refetched(tried, None, live)
    archived, what = fetch_archived(fetcher, source.url, source.retrieved_at, base)
    return Refetched(tried, what, archived if archived is not None and archived.ok else None)
