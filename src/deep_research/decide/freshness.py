"""How old a brief's evidence is, and whether a brief may be reused (docs/contracts.md §11).

A brief is as old as its oldest supporting evidence: ``freshness`` is the earliest, over the
sources that support kept claims, of each source's latest successful fetch (a re-fetch renews a
source). A brief is reused only when its verdict is READY or PARTIAL, it was researched at full
depth, and its freshness is younger than ``freshness_days``; everything else is regenerated.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from deep_research.errors import InconsistentArtifacts
from deep_research.fetch.fetchlog import succeeded
from deep_research.models import ClaimsFile, FetchLogEntry, SourceRow
from deep_research.settings import Settings, require_run_settings
from deep_research.urls import canonical_or_none, source_urls
from deep_research.verdict_meanings import is_reusable

Decision = Literal["reuse", "regenerate"]


def successes_by_url(log: Sequence[FetchLogEntry]) -> dict[str, date]:
    """Each canonical URL's latest dated 2xx fetch (by its URL or final URL), read once."""
    latest: dict[str, date] = {}
    for entry in log:
        if not succeeded(entry) or entry.retrieved_at is None:
            continue
        day = entry.retrieved_at.date()
        for url in (canonical_or_none(entry.url), canonical_or_none(entry.final_url)):
            if url is not None and (url not in latest or day > latest[url]):
                latest[url] = day
    return latest


def last_success(source: SourceRow, successes: dict[str, date]) -> date | None:
    """The latest 2xx fetch of any of the source's URLs (``successes``: from
    :func:`successes_by_url`), else its recorded retrieval date."""
    dates = [successes[url] for url in source_urls(source) if url in successes]
    if dates:
        return max(dates)
    return source.retrieved_at.date() if source.retrieved_at else None


def evidence_freshness(
    supporting: Iterable[str], sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]
) -> date | None:
    """The oldest latest-success date among ``supporting`` source ids (None if none is dated)."""
    by_id = {source.id: source for source in sources}
    successes = successes_by_url(log)
    dates = [
        day
        for source_id in sorted(set(supporting))
        if source_id in by_id and (day := last_success(by_id[source_id], successes)) is not None
    ]
    return min(dates) if dates else None


@dataclass(frozen=True)
class FreshnessDecision:
    decision: Decision
    reason: str
    verdict: str | None
    freshness: date | None
    age_days: int | None

    def as_dict(self) -> dict[str, object]:
        return {
            "decision": self.decision,
            "reason": self.reason,
            "verdict": self.verdict,
            "freshness": self.freshness.isoformat() if self.freshness else None,
            "age_days": self.age_days,
        }


def decide(document: ClaimsFile, today: date, settings: Settings) -> FreshnessDecision:
    """Reuse or regenerate, with the reason in one line."""
    verdict, fresh = document.verdict, document.freshness
    age = (today - fresh).days if fresh is not None else None
    if age is not None and age < 0:
        raise InconsistentArtifacts(
            f"claims.json freshness {fresh} is after today ({today}); fix the clock or the brief"
        )

    def regenerate(reason: str) -> FreshnessDecision:
        return FreshnessDecision("regenerate", reason, verdict, fresh, age)

    if verdict is None:
        return regenerate("no verdict yet (run deep-research verdict)")
    if verdict == "PARTIAL_QUICK" or document.depth == "quick":
        return regenerate(
            f"a quick-depth brief ({verdict}) is never reused (only a full-depth READY or "
            "PARTIAL one is)"
        )
    if not is_reusable(verdict):
        return regenerate(f"verdict {verdict} is not reusable (only READY or PARTIAL are)")
    if fresh is None or age is None:
        return regenerate("freshness is unknown (no dated supporting source)")
    if age >= settings.freshness_days:
        return regenerate(f"evidence is {age} days old (limit {settings.freshness_days})")
    return FreshnessDecision(
        "reuse",
        f"verdict {verdict}, evidence {age} days old (< {settings.freshness_days})",
        verdict,
        fresh,
        age,
    )


def run_fresh(root: Path, today: date | None, settings: Settings) -> FreshnessDecision:
    from deep_research.brief.record import open_brief

    brief = open_brief(root)
    require_run_settings(brief.root, settings)
    return decide(brief.load_claims(), today or datetime.now(UTC).date(), settings)
