"""Phase 6b, the decision: are the quotes a brief cites still on the pages it cites them from?

:mod:`deep_research.fetch.refetch_sample` chooses the sample and re-fetches each source (live,
else one archive try); here each fresh text is checked (docs/contracts.md §8). The source
*passes* when every cited quote is located (:func:`~deep_research.gates.locate.locate`) in the
fresh text, and *fails* when fresh text no longer holds one — whatever its length: a short page
(an outage notice of 66 words) is checked like a long one, since the quote is on it or it is not.
No text at all (every fetch failed, or nothing was extracted) makes it *unreachable*: excluded
from the rate, never counted as a failure (an outage is not evidence). ``refetch_pass_rate =
passed / (sampled − excluded)``, or null when nothing could be checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deep_research.brief.layout import Brief
from deep_research.brief.trace_phases import RefetchedSource, RefetchPhase
from deep_research.brief.writers import atomic_write_json, atomic_write_text, model_dump
from deep_research.errors import InputError, MissingArtifact
from deep_research.fetch.archive import archive_base
from deep_research.fetch.fetcher import Fetcher, FetchPolicy, policy_from_env
from deep_research.fetch.fetchlog import fetched_page_urls
from deep_research.fetch.refetch_sample import (
    Cited,
    Refetched,
    brief_id,
    choose_sample,
    cited_sources,
    refetch_source,
)
from deep_research.gates.locate import locate
from deep_research.models import TraceFile
from deep_research.urls import source_urls


@dataclass
class RefetchReport:
    records: list[RefetchedSource]
    cited: int
    archive_base: str

    @property
    def passed(self) -> int:
        return sum(record.outcome == "pass" for record in self.records)

    @property
    def excluded(self) -> int:
        return sum(record.outcome == "unreachable" for record in self.records)

    @property
    def pass_rate(self) -> float | None:
        checked = len(self.records) - self.excluded
        return round(self.passed / checked, 4) if checked else None

    def record(self) -> RefetchPhase:
        """The phase's trace.json record: the sample's outcome and each source's record."""
        return RefetchPhase(
            cited_sources=self.cited,
            sampled=len(self.records),
            passed=self.passed,
            failed=sum(record.outcome == "fail" for record in self.records),
            excluded=self.excluded,
            refetch_pass_rate=self.pass_rate,
            archive_base=self.archive_base,
            records=self.records,
        )

    def summary(self) -> dict[str, Any]:
        """What ``deep-research refetch`` prints: the record without its per-source records."""
        summary = self.record().entry()
        del summary["records"]
        return summary


def recheck(item: Cited, fetched: Refetched) -> RefetchedSource:
    """One sampled source's outcome: are its cited quotes still in the text that came back?"""
    source = item.source
    record = RefetchedSource(
        source=source.id,
        url=source.url,
        outcome="unreachable",
        live=fetched.live,
        archive=fetched.archive,
    )
    if fetched.result is None:
        return record
    text = fetched.result.text or ""
    record.words = len(text.split())
    record.tier = fetched.result.entry.tier
    record.content_hash = fetched.result.entry.content_hash
    if not record.words:
        return record
    for finding_id, quote in item.quotes.items():
        (record.located if locate(quote, text) is not None else record.missing).append(finding_id)
    record.outcome = "fail" if record.missing else "pass"
    return record


def refetchable(brief: Brief) -> list[Cited]:
    """The cited sources the re-fetch may request: those this run fetched (a source row naming
    a URL nothing fetched must not make the re-fetch phase request it)."""
    fetched = fetched_page_urls(brief.load_fetch_log())
    document = brief.load_claims()
    return [
        c for c in cited_sources(document, brief.load_sources()) if source_urls(c.source) & fetched
    ]


def run_refetch(
    root: Path, *, policy: FetchPolicy | None = None, archive: str | None = None
) -> RefetchReport:
    """``deep-research refetch``: sample, re-fetch, re-locate; write the rate and the details."""
    if not root.is_dir():
        raise MissingArtifact(f"brief directory not found: {root}")
    brief = Brief(root)
    with brief.lock():
        document = brief.load_claims()
        trace = brief.load_trace() if brief.trace_path.exists() else TraceFile()
        cited = refetchable(brief)
        if not cited:
            raise InputError(
                f"{brief.claims_path} cites no source with a quote; nothing to re-fetch"
            )
        base = archive_base(archive)
        with Fetcher(brief, policy or policy_from_env(), use_brief_hosts=False) as fetcher:
            records = [
                recheck(item, refetch_source(fetcher, item.source, base))
                for item in choose_sample(brief_id(brief), cited)
            ]
        report = RefetchReport(records, len(cited), base)
        updated = document.model_copy(update={"refetch_pass_rate": report.pass_rate})
        atomic_write_text(
            brief.claims_path, updated.model_dump_json(by_alias=True, indent=2) + "\n"
        )
        trace.counters.refetch_sample = len(records)
        refetched = trace.with_phase("refetch", report.record())
        atomic_write_json(brief.trace_path, model_dump(refetched))
    return report
