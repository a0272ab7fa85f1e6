"""Offline re-verification: re-derive everything a consumer reads from a stored brief, compare.

``deep-research verify BRIEF --offline`` switches the network off for the whole process (every
fetch is refused before a socket exists; see :func:`deep_research.fetch.netpolicy.offline`),
validates every artifact against its schema and decides again, from sources.jsonl,
fetch-log.jsonl, the retained corpus and the raw agent outputs trace.json records, everything
the gates wrote that a consumer reads:

* per claim, the trace gate's class, pass flag, violations and each evidence item whole (quote,
  span, checks);
* the skeptic panel's record of each claim, from the votes trace.json holds;
* triangulation: supporting sources, independent count and groups, dissemination, confidence,
  and the brief's τ, source count, freshness, stripped claims and coverage gaps;
* the work counters, as ``deep-research counters`` computes them (a plugin run), or the ones
  the artifacts fix (any brief);
* the verdict, its reasons and floors, under the settings trace.json records — in claims.json
  and in trace.json's record of the verdict phase;
* audit.json, and report.md against the report rendered from the brief;
* the records themselves where code derived them: each web source's owner from its URL, each
  corpus metadata file from the logged fetch that stored its text
  (:mod:`deep_research.decide.provenance`), and the fetch log and sources.jsonl against the
  digests the verdict sealed them with (:mod:`deep_research.decide.seal`).

Nothing is written. A brief whose stored values cannot be reproduced from its files is not
auditable, and each difference is named.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic_core import to_jsonable_python

from deep_research.brief.layout import Brief, sha256_text
from deep_research.brief.readers import parse_json, read_text
from deep_research.brief.trace_phases import CountersPhase, RefetchPhase, VerdictPhase, VotesPhase
from deep_research.decide.audit import bodies_of, build_audit, urls_quoting_text
from deep_research.decide.counters import RoundSearches, compute, load_plan
from deep_research.decide.provenance import corpus_meta_mismatches, owner_mismatches
from deep_research.decide.seal import seal_mismatches
from deep_research.decide.triangulate import Corpus, triangulate_claims
from deep_research.decide.verdict import decide
from deep_research.decide.votes import apply_votes
from deep_research.errors import InputError, MissingArtifact
from deep_research.fetch.netpolicy import offline as network_off
from deep_research.gates.answer import check_answer
from deep_research.gates.trace import retrace_mismatches
from deep_research.models import (
    AuditFile,
    ClaimsFile,
    FetchLogEntry,
    PhaseT,
    SourceRow,
    TraceEntryName,
    TraceFile,
)
from deep_research.render import render_brief
from deep_research.schemas import validate_brief
from deep_research.settings import Settings

#: Differences named per artifact; past this one line says how many more there are.
MAX_NAMED = 8
#: Claim fields triangulation decides.
TRIANGULATED = (
    "supporting",
    "independent_count",
    "independence_groups",
    "dissemination_score",
    "confidence",
)
#: Brief fields triangulation decides.
TRIANGULATED_BRIEF = ("triangulation_score", "source_count", "freshness", "coverage_gaps")


@dataclass
class VerifyReport:
    claims: int
    offline: bool
    mismatches: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.mismatches and not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {
            "claims": self.claims,
            "offline": self.offline,
            "identical": self.identical,
            "mismatches": self.mismatches,
            "problems": self.problems,
        }


@dataclass(frozen=True)
class _Stored:
    """The brief's artifacts, read once."""

    brief: Brief
    document: ClaimsFile
    trace: TraceFile
    sources: list[SourceRow]
    log: list[FetchLogEntry]
    settings: Settings


def run_verify(
    root: Path,
    *,
    offline: bool = True,
    fetcher_rounds: Sequence[int] | None = None,
    searched: Sequence[RoundSearches] = (),
) -> VerifyReport:
    """``fetcher_rounds``, ``searched``: the plugin run's fetcher dispatch rounds and its
    rounds' searches, as ``counters`` takes them."""
    if not root.is_dir():
        raise MissingArtifact(f"brief directory not found: {root}")
    with network_off() if offline else contextlib.nullcontext():
        brief = Brief(root)
        # Before the claims are loaded: a large brief's parsed claims.json and its models
        # are never in memory together.
        problems = validate_brief(root).problems
        document = brief.load_claims()
        if document.claims and all(claim.verify_passed is None for claim in document.claims):
            raise InputError(
                f"{brief.claims_path} holds no stored verdicts; run deep-research trace first"
            )
        report = VerifyReport(claims=len(document.claims), offline=offline)
        report.problems.extend(problems)
        trace = brief.load_trace() if brief.trace_path.exists() else TraceFile()
        try:
            settings = Settings.model_validate(trace.settings) if trace.settings else Settings()
        except ValidationError:
            report.mismatches.append(
                "trace.json records settings this version cannot read; re-run the gates"
            )
            return report
        stored = _Stored(
            brief, document, trace, brief.load_sources(), brief.load_fetch_log(), settings
        )
        retraced = retrace_mismatches(brief, document)
        report.mismatches.extend(retraced)
        report.mismatches.extend(_compare_provenance(stored))
        report.mismatches.extend(_compare_votes(stored))
        if document.triangulation_score is not None:
            report.mismatches.extend(_compare_triangulation(stored))
        if document.verdict is not None:  # counters reach a consumer through the verdict
            report.mismatches.extend(_compare_counters(stored, fetcher_rounds, searched))
            quoting = urls_quoting_text(
                bodies_of(brief, document, stored.sources), stored.sources, stored.log
            )
            report.mismatches.extend(_compare_verdict(stored, retraced, quoting))
            report.mismatches.extend(_compare_audit(stored, quoting))
        report.mismatches.extend(_compare_verdict_record(stored))
        if (root / "report.md").exists():
            report.mismatches.extend(_compare_report(stored))
    return report


# --- what each gate decided ------------------------------------------------------------------

_UNREADABLE_VERDICT = "trace.json phases.verdict: {}"


def _recorded(
    stored: _Stored, name: TraceEntryName, record: type[PhaseT], unreadable: str
) -> tuple[PhaseT | None, list[str]]:
    """The phase trace.json records (None when it records none) and, when that record cannot be
    read, the one problem ``unreadable`` states (``{}`` stands for why)."""
    try:
        return stored.trace.phase(name, record), []
    except InputError as exc:
        return None, [unreadable.format(exc)]


def _compare_votes(stored: _Stored) -> list[str]:
    """Each claim's panel, recorded again from the raw votes trace.json holds."""
    unreadable = "votes: the recorded panel cannot be read ({})"
    recorded, problems = _recorded(stored, "votes", VotesPhase, unreadable)
    if recorded is None:
        return problems
    # Claims the panel refuted were stripped since: only the kept ones carry a panel record.
    kept = {claim.id for claim in stored.document.claims}
    raw = {key: value for key, value in recorded.raw.items() if key in kept}
    try:
        recomputed = apply_votes(stored.document, raw, stored.settings)
    except InputError as exc:
        return [f"votes: the recorded panel cannot be applied again ({exc})"]
    found: list[str] = []
    for old, new in zip(stored.document.claims, recomputed.claims, strict=True):
        if old.id in raw:
            found += _differences(f"{old.id}: votes", _plain(old.votes), _plain(new.votes))
    return _capped("votes", found)


def _compare_triangulation(stored: _Stored) -> list[str]:
    """Triangulation again, over the stored claims: it reads only what the earlier gates and
    the sources fix, so an untouched brief triangulates to exactly what it holds."""
    brief = stored.brief
    try:
        again, _ = triangulate_claims(
            stored.document,
            stored.sources,
            stored.log,
            Corpus(brief, stored.sources),
            stored.trace,
            stored.settings,
        )
    except InputError as exc:
        return [f"triangulation cannot be decided again: {exc}"]
    found: list[str] = []
    recomputed = {claim.id: claim for claim in again.claims}
    for claim in stored.document.claims:
        new = recomputed.get(claim.id)
        if new is None:
            found.append(f"{claim.id}: kept in claims, but triangulation strips it")
            continue
        for name in TRIANGULATED:
            found += _differences(
                f"{claim.id}: {name}", _plain(getattr(claim, name)), _plain(getattr(new, name))
            )
    for name in TRIANGULATED_BRIEF:
        found += _differences(
            name, _plain(getattr(stored.document, name)), _plain(getattr(again, name))
        )
    found += _differences("stripped", _plain(stored.document.stripped), _plain(again.stripped))
    return _capped("triangulation", found)


def _compare_counters(
    stored: _Stored, fetcher_rounds: Sequence[int] | None, searched: Sequence[RoundSearches]
) -> list[str]:
    """The counters the floors read, as ``deep-research counters`` computes them when it wrote
    them (a plugin run: run.json and plan.json); otherwise the ones the artifacts fix."""
    counters = stored.trace.counters
    plan_path = stored.brief.root / "plan.json"
    unreadable = "counters cannot be computed again: {}"
    computed, problems = _recorded(stored, "counters", CountersPhase, unreadable)
    if problems:
        return problems
    if computed is None or not plan_path.exists():
        return _capped(
            "counters",
            _differences(
                "counters.distinct_sources", counters.distinct_sources, len(stored.sources)
            )
            + _refetch_sample_differences(stored),
        )
    try:
        moment = computed.computed_at
        run = stored.brief.load_run()
        again = compute(
            load_plan(plan_path),
            stored.sources,
            stored.log,
            stored.trace,
            run.started_at,
            moment,
            fetcher_rounds,
            searched,
        ).counters
    except (InputError, ValueError, TypeError) as exc:
        return [f"counters cannot be computed again: {exc}"]
    old, new = _plain(counters), _plain(again)
    # The record keeps the moment to the second; the clock was read to the microsecond.
    if 0 <= old["wall_clock_seconds"] - new["wall_clock_seconds"] < 1:
        new["wall_clock_seconds"] = old["wall_clock_seconds"]
    return _capped("counters", _differences("counters", old, new))


def _refetch_sample_differences(stored: _Stored) -> list[str]:
    unreadable = "counters.refetch_sample cannot be checked: {}"
    refetch, problems = _recorded(stored, "refetch", RefetchPhase, unreadable)
    if refetch is None:
        return problems
    return _differences(
        "counters.refetch_sample", stored.trace.counters.refetch_sample, len(refetch.records)
    )


def _compare_verdict(stored: _Stored, retraced: list[str], quoting: list[str]) -> list[str]:
    """Decide the verdict again from the stored artifacts under the settings they record
    (``quoting``: the fetched URLs holding page text, which the record withholds)."""
    try:
        decided = decide(
            stored.document,
            stored.trace,
            stored.sources,
            stored.log,
            stored.settings,
            retraced,
            quoting,
        )
    except InputError as exc:  # artifacts that contradict one another (inflated counters, …)
        return [f"verdict cannot be decided again: {exc}"]
    document = stored.document
    found = []
    if decided.verdict != document.verdict:
        found.append(f"verdict: stored {document.verdict}, recomputed {decided.verdict}")
    stored_reasons, reasons = document.verdict_reasons, decided.verdict_reasons
    if reasons != stored_reasons:
        found.append(f"verdict_reasons: stored {stored_reasons!r}, recomputed {reasons!r}")
    found += _differences("floors", _plain(document.floors), _plain(decided.floors))
    recorded, problems = _recorded(stored, "verdict", VerdictPhase, _UNREADABLE_VERDICT)
    if recorded is not None:
        # trace.json's record of the phase is read as the verdict's too (by a reader, an audit).
        entry = recorded.entry()
        as_decided = {key: entry.get(key) for key in decided.as_dict()}
        found += _differences("trace.json phases.verdict", as_decided, decided.as_dict())
    return found + problems


def _compare_verdict_record(stored: _Stored) -> list[str]:
    """The fetch log and sources.jsonl against the seal the verdict recorded, and a verdict
    phase recorded for a brief that holds no verdict."""
    if "verdict" not in stored.trace.phases:
        return []
    if stored.document.verdict is None:
        return ["trace.json phases.verdict: recorded, but claims.json holds no verdict"]
    recorded, problems = _recorded(stored, "verdict", VerdictPhase, _UNREADABLE_VERDICT)
    return problems or seal_mismatches(
        stored.brief, recorded.sealed if recorded is not None else None
    )


def _compare_provenance(stored: _Stored) -> list[str]:
    """Owners and corpus metadata, derived again from the URLs and the fetch log."""
    return _capped("sources.jsonl", owner_mismatches(stored.sources)) + _capped(
        "corpus metadata", corpus_meta_mismatches(stored.brief, stored.log)
    )


def _compare_audit(stored: _Stored, quoting: list[str]) -> list[str]:
    """audit.json against the record the verdict writes from these artifacts."""
    path = stored.brief.root / "audit.json"
    expected = _plain(build_audit(stored.document, stored.sources, stored.log, quoting))
    if not path.exists():
        return ["audit.json: missing, but the brief has a verdict; re-run deep-research verdict"]
    try:
        on_disk = parse_json(read_text(path, what="audit.json"), what=str(path))
        AuditFile.model_validate(on_disk)
    except (InputError, ValidationError):
        return ["audit.json: not a valid audit record; re-run deep-research verdict"]
    return _capped("audit.json", _differences("audit.json", on_disk, expected))


def _compare_report(stored: _Stored) -> list[str]:
    """report.md against the report rendered from the brief as it stands."""
    path = stored.brief.root / "report.md"
    try:
        # Only a forced render writes a FAIL brief's report; a forced one is what it must be.
        forced = stored.document.verdict == "FAIL"
        _, markdown = render_brief(
            stored.brief, check_answer=check_answer, force=forced, document=stored.document
        )
    except InputError as exc:
        return [f"report.md: the brief no longer renders ({exc})"]
    written = sha256_text(read_text(path, what="report.md"))
    rendered = sha256_text(markdown)
    if written == rendered:
        return []
    return [f"report.md: stored {written}, rendered {rendered}; re-run deep-research render"]


# --- comparing -------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    """A value (models included) as the JSON it is written as."""
    return to_jsonable_python(value, by_alias=True)


def _differences(where: str, stored: Any, recomputed: Any) -> list[str]:
    """One line per leaf that differs, named by its path under ``where``."""
    return list(_walk(where, stored, recomputed))


def _walk(where: str, stored: Any, recomputed: Any) -> Iterator[str]:
    if isinstance(stored, dict) and isinstance(recomputed, dict):
        for key in sorted(set(stored) | set(recomputed), key=str):
            yield from _walk(f"{where}.{key}", stored.get(key), recomputed.get(key))
    elif (
        isinstance(stored, list) and isinstance(recomputed, list) and len(stored) == len(recomputed)
    ):
        for index, (old, new) in enumerate(zip(stored, recomputed, strict=True)):
            yield from _walk(f"{where}[{index}]", old, new)
    elif stored != recomputed:
        yield f"{where}: stored {_short(stored)}, recomputed {_short(recomputed)}"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "..."


def _capped(what: str, lines: list[str]) -> list[str]:
    if len(lines) <= MAX_NAMED:
        return lines
    return [*lines[:MAX_NAMED], f"{what}: {len(lines) - MAX_NAMED} more difference(s)"]
