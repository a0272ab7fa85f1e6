"""Phase 6b: re-fetch a deterministic sample of cited sources and re-locate their quotes.

The sample (docs/contracts.md §8) is max(3, ⌈10% of cited sources⌉), capped at all of them: sources
cited by a central claim (or through a central finding) first, then the rest, each group ordered
by a hash of the brief's id and the source id — the same brief always samples the same sources.

Per sampled source: one live fetch through the guarded fetcher; if it fails (refused, network,
timeout, non-2xx, robots), one archive try (:mod:`deep_research.fetch.archive`, tier ``degraded``).
The source *passes* when every cited quote is located (:func:`~deep_research.gates.locate.locate`)
in
the fresh text, and *fails* when fresh text of at least :data:`MIN_WORDS` words no longer holds
one. Text under :data:`MIN_WORDS` words, or no text at all, makes it *unreachable*: excluded
from the rate, never counted as a failure (an outage is not evidence).
``refetch_pass_rate = passed / (sampled − excluded)``, or null when nothing could be checked.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from deep_research.brief import Brief, atomic_write_json, atomic_write_text, model_dump
from deep_research.errors import InputError, MissingArtifact
from deep_research.fetch.archive import archive_base, fetch_archived
from deep_research.fetch.fetcher import Fetcher, FetchPolicy, FetchResult, policy_from_env
from deep_research.gates.locate import locate
from deep_research.models import ClaimsFile, SourceRow, TraceFile
from deep_research.urls import is_web

MIN_SAMPLE = 3
SAMPLE_FRACTION = 0.10
MIN_WORDS = 500

Outcome = Literal["pass", "fail", "unreachable"]


@dataclass
class Cited:
    source: SourceRow
    quotes: dict[str, str] = field(default_factory=dict)  # finding id → quote
    central: bool = False


@dataclass
class Record:
    source: str
    url: str
    outcome: Outcome
    tier: str | None = None
    live: str = ""
    archive: str | None = None
    words: int | None = None
    content_hash: str | None = None
    located: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


@dataclass
class RefetchReport:
    records: list[Record]
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

    def summary(self) -> dict[str, Any]:
        return {
            "cited_sources": self.cited,
            "sampled": len(self.records),
            "passed": self.passed,
            "failed": sum(record.outcome == "fail" for record in self.records),
            "excluded": self.excluded,
            "refetch_pass_rate": self.pass_rate,
            "archive_base": self.archive_base,
        }

    def as_dict(self) -> dict[str, Any]:
        return self.summary() | {"records": [asdict(record) for record in self.records]}


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


def _judge(record: Record, item: Cited, result: FetchResult) -> Record:
    text = result.text or ""
    record.words = len(text.split())
    record.tier = result.entry.tier
    record.content_hash = result.entry.content_hash
    if record.words < MIN_WORDS:
        record.outcome = "unreachable"
        return record
    for finding_id, quote in item.quotes.items():
        (record.located if locate(quote, text) is not None else record.missing).append(finding_id)
    record.outcome = "fail" if record.missing else "pass"
    return record


def refetch_one(fetcher: Fetcher, item: Cited, base: str) -> Record:
    """One live try, then (only if it failed) one archive try. Never loops."""
    source = item.source
    record = Record(source=source.id, url=source.url, outcome="unreachable")
    live = fetcher.fetch(source.url)
    record.live = live.entry.outcome if live.ok else f"{live.entry.outcome}: {live.entry.reason}"
    if live.ok:
        return _judge(record, item, live)
    archived, what = fetch_archived(fetcher, source.url, source.retrieved_at, base)
    record.archive = what
    if archived is not None and archived.ok:
        return _judge(record, item, archived)
    return record


def brief_id(brief: Brief) -> str:
    return brief.root.resolve().name


def run_refetch(
    root: Path, *, policy: FetchPolicy | None = None, archive: str | None = None
) -> RefetchReport:
    """``deep-research refetch``: sample, re-fetch, re-locate; write the rate and the details."""
    if not root.is_dir():
        raise MissingArtifact(f"brief directory not found: {root}")
    brief = Brief(root)
    with brief.lock():
        document = brief.load_claims()
        sources = brief.load_sources()
        trace = brief.load_trace() if brief.trace_path.exists() else TraceFile()
        cited = cited_sources(document, sources)
        if not cited:
            raise InputError(
                f"{brief.claims_path} cites no source with a quote; nothing to re-fetch"
            )
        base = archive_base(archive)
        with Fetcher(brief, policy or policy_from_env(), use_brief_hosts=False) as fetcher:
            records = [
                refetch_one(fetcher, item, base) for item in choose_sample(brief_id(brief), cited)
            ]
        report = RefetchReport(records, len(cited), base)
        updated = document.model_copy(update={"refetch_pass_rate": report.pass_rate})
        atomic_write_text(
            brief.claims_path, updated.model_dump_json(by_alias=True, indent=2) + "\n"
        )
        trace.counters.refetch_sample = len(records)
        trace.phases["refetch"] = report.as_dict()
        atomic_write_json(brief.trace_path, model_dump(trace))
    return report
