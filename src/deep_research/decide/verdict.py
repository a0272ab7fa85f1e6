"""The brief's verdict: eight rules in precedence plus work-budget floors (docs/contracts.md §10).

Every rule is evaluated, not just the first that fires: ``verdict_reasons`` starts with the rule
that decided and lists every other rule that would have fired, so a reader sees all that is
wrong at once. Precedence, highest first:

1. ``refetch_pass_rate`` < refetch_fail → FAIL
2. a verifier violation stands (a kept Supported claim still cites a source that failed, or a
   claim was never traced), or claims.json's trace verdicts do not reproduce from the retained
   text (an edit after the trace gate ran) → HOLD
3. full depth and CIBER neither ran nor was validly skipped → HOLD
F. any work-budget floor unmet → HOLD (the offending phase should be re-run); a floor that
   counts documents asks no more than a local corpus holds
E. no claim can be emitted → HOLD: the sources did not answer the question (the brief's
   coverage gaps say what was not found); an empty brief never reads as a usable answer
4. ``ciber_passed`` is false → PARTIAL
5. refetch_fail ≤ ``refetch_pass_rate`` < refetch_ready → PARTIAL
6. τ < tau_threshold, or unresolved contradictions → PARTIAL
R. full depth and the headless run's reasoner declared it cannot sit the skeptic panel or
   re-frame claims for CIBER → PARTIAL, one plain line saying what READY would need (it
   replaces rule 3's HOLD for a CIBER the reasoner cannot run, and rule P's per-claim "no
   votes": re-running would change neither)
P. full depth and a load-bearing claim the skeptic panel has not upheld (no votes, or
   ``unverified``) → PARTIAL, naming each such claim: a panel that never sat upheld nothing
I. the run was stopped by a cap (trace.json ``phases.run.incomplete``) → PARTIAL, one
   ``run incomplete: <cap>`` line per cap
7. full depth, every gate passed, CIBER passed → READY
8. quick depth, every available gate passed → PARTIAL_QUICK

A full-depth brief whose CIBER was validly skipped for too few high claims passes no READY gate
and fires no PARTIAL rule; it is PARTIAL (``ciber_not_run``), since READY requires a CIBER pass.

A capped run is PARTIAL at best because its floors and gates judge only what it gathered: the
gates prove every emitted claim, not that the question was covered. Rule I keeps such a run from
ever reading READY (at quick depth it is listed beside PARTIAL_QUICK).

Counters come from trace.json. Counters that contradict the other artifacts (more distinct
sources than sources.jsonl holds, a re-fetch rate without a re-fetch sample, …) are an input
error: deciding on them would be guessing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deep_research.decide.audit import build_audit, prove_audit, write_audit
from deep_research.decide.ciber import skip_problem
from deep_research.decide.counters import fetched_sources
from deep_research.decide.triangulate import awaiting_panel
from deep_research.errors import InconsistentArtifacts, InputError
from deep_research.gates.trace import emitted_claims, retrace_mismatches
from deep_research.models import (
    ClaimsFile,
    Counters,
    FetchLogEntry,
    Floor,
    SettingChange,
    SourceRow,
    TraceFile,
    Verdict,
)
from deep_research.record import load_trace_or_empty, open_brief, record_phase, save, writes_brief
from deep_research.settings import (
    Settings,
    changed_settings,
    describe_changes,
    require_run_settings,
    settings_hash,
)
from deep_research.trace_phases import RefetchPhase, RunRecord, TriangulatePhase, VerdictPhase
from deep_research.urls import is_web

RANK: dict[str, int] = {"FAIL": 0, "HOLD": 1, "PARTIAL": 2, "READY": 3, "PARTIAL_QUICK": 3}


@dataclass(frozen=True)
class Fired:
    """One rule that fires: its name, the verdict it forces, and why."""

    rule: str
    verdict: Verdict
    why: str

    def line(self) -> str:
        return f"{self.rule} → {self.verdict}: {self.why}"


# --- floors ---------------------------------------------------------------------------------


def _per_sub_question(values: dict[str, int], expected: int) -> int:
    # A sub-question absent from the map ran no query at all.
    counts = list(values.values()) + [0] * max(0, expected - len(values))
    return min(counts) if counts else 0


def cited_sources(document: ClaimsFile) -> set[str]:
    return {
        s
        for claim in document.claims
        if claim.support_class == "Supported"
        for s in claim.supporting
    }


def refetch_required(document: ClaimsFile, sources: Sequence[SourceRow], settings: Settings) -> int:
    """The re-fetch sample floor: over cited *web* sources only (a local document cannot be
    re-fetched), and never more than there are to sample."""
    web = {row.id for row in sources if is_web(row.url)}
    cited = len(cited_sources(document) & web)
    return min(cited, settings.refetch_floor(cited))


#: The floors that count documents, in plain words: a corpus of N documents caps each of them.
DOCUMENT_FLOORS = {
    "round1_fetches": "round-1 fetches",
    "distinct_sources": "distinct sources",
    "round2_fetches": "sources new in round 2",
}


def corpus_caps(counters: Counters, sources: Sequence[SourceRow]) -> dict[str, int]:
    """The most each document-counting floor can ask of a run whose source declared how many
    documents it holds (none for the web): N documents give at most N sources and N fetched
    in round 1, and round 2 can find only those round 1 did not."""
    held = counters.corpus_documents
    if held is None:
        return {}
    first = sum(1 for source in sources if source.round == 1)
    return {
        "round1_fetches": held,
        "distinct_sources": held,
        "round2_fetches": max(0, held - first),
    }


def scaled_floors(
    document: ClaimsFile, counters: Counters, sources: Sequence[SourceRow], settings: Settings
) -> str | None:
    """The verdict's line saying which floors the corpus lowered, and to what (None: none)."""
    if document.depth != "full":
        return None
    caps = corpus_caps(counters, sources)
    lowered = [
        f"{plain} ≥ {caps[name]} (not {getattr(settings, 'full_' + name)})"
        for name, plain in DOCUMENT_FLOORS.items()
        if caps.get(name, math.inf) < getattr(settings, "full_" + name)
    ]
    if not lowered:
        return None
    return (
        f"floors scaled to the corpus: it holds {counters.corpus_documents} document(s) and "
        f"cannot give more, so the run owed {', '.join(lowered)}"
    )


def floors(
    document: ClaimsFile,
    counters: Counters,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    settings: Settings,
) -> dict[str, Floor]:
    """Each floor for the brief's depth: required, actual, met. Every floor counts work done —
    queries, fetches, sources, rounds — never time spent, which waiting alone would meet; a
    floor that counts documents never asks for more than the corpus holds (:func:`corpus_caps`)."""
    sq = counters.sub_questions
    caps = corpus_caps(counters, sources)
    rows: dict[str, tuple[float, float]]
    if document.depth == "quick":
        rows = {
            "sub_questions": (settings.quick_sub_questions, sq),
            "queries_per_sub_question": (
                settings.quick_queries_per_sub_question,
                _per_sub_question(counters.queries_per_sub_question, sq),
            ),
            "rounds": (settings.quick_rounds, counters.rounds),
        }
    else:
        rows = {
            "sub_questions": (settings.full_sub_questions, sq),
            "queries_per_sub_question": (
                settings.full_queries_per_sub_question,
                _per_sub_question(counters.queries_per_sub_question, sq),
            ),
            "round1_fetches": (
                min(settings.full_round1_fetches, caps.get("round1_fetches", math.inf)),
                counters.round1_fetches,
            ),
            "distinct_sources": (
                min(settings.full_distinct_sources, caps.get("distinct_sources", math.inf)),
                len(sources),
            ),
            "rounds": (settings.full_rounds, counters.rounds),
            "counter_queries_per_sub_question": (
                settings.full_counter_queries_per_sub_question,
                _per_sub_question(counters.counter_queries_per_sub_question, sq),
            ),
            "refetch_sample": (
                refetch_required(document, sources, settings),
                counters.refetch_sample,
            ),
            "round2_fetches": (
                min(settings.full_round2_fetches, caps.get("round2_fetches", math.inf)),
                sum(1 for s in fetched_sources(sources, log) if s.round >= 2),
            ),
        }
    return {
        name: Floor(required=float(required), actual=float(actual), met=actual >= required)
        for name, (required, actual) in rows.items()
    }


def check_consistency(
    document: ClaimsFile,
    trace: TraceFile,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
) -> None:
    """Raise on artifacts that contradict one another (one line, saying which and how)."""
    c = trace.counters
    problems = []
    if trace.depth != document.depth:
        problems.append(f"trace.json depth {trace.depth} ≠ claims.json depth {document.depth}")
    if c.distinct_sources > len(sources):
        problems.append(
            f"counters.distinct_sources {c.distinct_sources} > {len(sources)} rows in sources.jsonl"
        )
    for name in ("queries_per_sub_question", "counter_queries_per_sub_question"):
        if len(getattr(c, name)) > c.sub_questions:
            problems.append(
                f"counters.{name} names {len(getattr(c, name))} sub-questions, "
                f"counters.sub_questions is {c.sub_questions}"
            )
    if document.sub_questions and len(document.sub_questions) != c.sub_questions:
        problems.append(
            f"claims.json lists {len(document.sub_questions)} sub-questions, "
            f"counters.sub_questions is {c.sub_questions}"
        )
    if c.corpus_documents is not None and len(sources) > c.corpus_documents:
        problems.append(
            f"sources.jsonl has {len(sources)} rows but counters.corpus_documents says the "
            f"corpus holds {c.corpus_documents}"
        )
    if c.round1_fetches > len(log):
        problems.append(f"counters.round1_fetches {c.round1_fetches} > {len(log)} fetch-log lines")
    top_round = max((source.round for source in sources), default=0)
    if top_round > c.rounds:
        problems.append(f"sources.jsonl has round {top_round} rows, counters.rounds is {c.rounds}")
    if document.refetch_pass_rate is not None and c.refetch_sample == 0:
        problems.append("refetch_pass_rate is set but counters.refetch_sample is 0")
    refetched = trace.phase("refetch", RefetchPhase)
    # A sample whose every page was unreachable (short, gone) has no rate (docs/contracts.md §8).
    all_excluded = refetched is not None and refetched.excluded == c.refetch_sample
    if document.refetch_pass_rate is None and c.refetch_sample > 0 and not all_excluded:
        problems.append(
            f"counters.refetch_sample is {c.refetch_sample} but refetch_pass_rate is missing"
        )
    if document.ciber_passed is not None and document.ciber_skipped is not None:
        problems.append("claims.json has both ciber_passed and ciber_skipped")
    refuted = [c.id for c in document.claims if c.votes is not None and c.votes.outcome == "killed"]
    if refuted:
        # Votes recorded after triangulate: the refuted claims were never stripped.
        problems.append(
            f"{', '.join(refuted)} refuted by the skeptic panel but still in claims "
            "(votes recorded after triangulate: re-run triangulate)"
        )
    if problems:
        raise InconsistentArtifacts(
            "; ".join(problems) + " — re-run the phase that wrote the wrong value"
        )


# --- the rules ------------------------------------------------------------------------------


def standing_violations(document: ClaimsFile) -> list[str]:
    """Violations the brief still asserts: a kept Supported claim citing a failed source."""
    found = []
    for claim in document.claims:
        if claim.verify_passed is None:
            found.append(f"{claim.id} was never traced")
            continue
        if claim.support_class != "Supported":
            continue
        for violation in claim.violations:
            if violation.source in claim.supporting:
                found.append(f"{claim.id} cites {violation.source} ({violation.reason})")
    return found


def run_incomplete(trace: TraceFile) -> list[str]:
    """The caps that stopped the run early, as the runner recorded them (none for a brief
    built without the runner)."""
    run = trace.phase("run", RunRecord)
    return list(run.incomplete) if run is not None else []


def reasoner_unable(trace: TraceFile) -> dict[str, str]:
    """The steps the headless run's reasoner declared it cannot do (``panel``, ``ciber``) and
    its reason for each, as the runner recorded them (none for a plugin run: there a model sits
    both, and CIBER not run is rule 3's HOLD)."""
    run = trace.phase("run", RunRecord)
    unable = run.unable if run is not None else {}
    return {step: why for step, why in unable.items() if step in ("panel", "ciber")}


def _reasoner_line(unable: dict[str, str]) -> str:
    """Rule R's one plain sentence: what READY would need that this run's reasoner lacks."""
    needs = []
    if "panel" in unable:
        needs.append("sit the skeptic panel")
    if "panel" in unable or "ciber" in unable:
        needs.append("re-frame claims for CIBER")
    said = "; ".join(dict.fromkeys(unable.values()))
    return (
        f"READY needs a reasoner that can {' and '.join(needs)}; this run's reasoner cannot "
        f"({said}), so the brief is PARTIAL at best — run again with a model reasoner "
        "(--reasoner) to reach READY"
    )


def evaluate(
    document: ClaimsFile,
    floor_table: dict[str, Floor],
    settings: Settings,
    incomplete: Sequence[str] = (),
    retraced: Sequence[str] = (),
    unable: dict[str, str] | None = None,
) -> list[Fired]:
    """Every rule that fires, highest precedence first. ``incomplete``: the caps that stopped
    the run (see :func:`run_incomplete`); ``retraced``: where a fresh trace of the retained text
    disagrees with claims.json (:func:`deep_research.gates.trace.retrace_mismatches`);
    ``unable``: the steps the run's reasoner declared it cannot do (:func:`reasoner_unable`)."""
    fired: list[Fired] = []
    unable = (unable or {}) if document.depth == "full" else {}
    rate = document.refetch_pass_rate
    full = document.depth == "full"
    if rate is not None and rate < settings.refetch_fail:
        fired.append(Fired("rule 1", "FAIL", f"refetch_pass_rate {rate} < {settings.refetch_fail}"))
    violations = standing_violations(document)
    if violations:
        more = f" (+{len(violations) - 3} more)" if len(violations) > 3 else ""
        fired.append(
            Fired("rule 2", "HOLD", "verifier violations: " + "; ".join(violations[:3]) + more)
        )
    if retraced:
        more = f" (+{len(retraced) - 1} more)" if len(retraced) > 1 else ""
        fired.append(
            Fired(
                "rule 2",
                "HOLD",
                f"claims.json does not reproduce from the retained text: "
                f"{retraced[0]}{more}; re-run deep-research trace",
            )
        )
    if full and document.ciber_passed is None:
        problem = (
            "CIBER neither ran nor was skipped"
            if document.ciber_skipped is None
            else skip_problem(document.ciber_skipped, document, settings)
        )
        # A reasoner that declared it cannot re-frame: re-running changes nothing, so this is
        # rule R's PARTIAL with what READY needs, not a HOLD the user cannot act on.
        if problem is not None and "ciber" not in unable:
            fired.append(Fired("rule 3", "HOLD", problem))
    for name, floor in floor_table.items():
        if not floor.met:
            fired.append(
                Fired(f"floor {name}", "HOLD", f"{floor.actual:g} < required {floor.required:g}")
            )
    if not emitted_claims(document):
        fired.append(
            Fired("rule E", "HOLD", "no verified claim: the sources do not answer the question")
        )
    if unable:
        # First among the PARTIAL reasons: the one a re-run with this reasoner cannot change.
        fired.append(Fired("rule R", "PARTIAL", _reasoner_line(unable)))
    if document.ciber_passed is False:
        fired.append(
            Fired("rule 4", "PARTIAL", "CIBER consistency failure (negation or paraphrase split)")
        )
    if rate is not None and settings.refetch_fail <= rate < settings.refetch_ready:
        fired.append(
            Fired("rule 5", "PARTIAL", f"refetch_pass_rate {rate} < {settings.refetch_ready}")
        )
    tau = document.triangulation_score
    if tau is not None and tau < settings.tau_threshold:
        fired.append(Fired("rule 6", "PARTIAL", f"τ {tau} < {settings.tau_threshold}"))
    if document.unresolved_contradictions:
        count = len(document.unresolved_contradictions)
        fired.append(Fired("rule 6", "PARTIAL", f"{count} unresolved contradiction(s)"))
    awaiting = awaiting_panel(document.claims, document.depth)
    if "panel" in unable:
        # Said once by rule R rather than once per claim.
        awaiting = [c for c in awaiting if c.votes is not None]
    if awaiting:
        named = ", ".join(
            f"{c.id} ({'no votes' if c.votes is None else f'{c.votes.outcome} {c.votes.tally}'})"
            for c in awaiting
        )
        fired.append(Fired("rule P", "PARTIAL", f"the skeptic panel has not upheld {named}"))
    for reason in incomplete:
        fired.append(Fired("rule I", "PARTIAL", f"run incomplete: {reason}"))
    if not fired:
        if full and document.ciber_passed:
            fired.append(Fired("rule 7", "READY", "every gate passed at full depth"))
        elif full:
            fired.append(
                Fired(
                    "ciber_not_run",
                    "PARTIAL",
                    f"CIBER skipped ({document.ciber_skipped}); READY needs a pass",
                )
            )
        else:
            fired.append(
                Fired("rule 8", "PARTIAL_QUICK", "every available gate passed at quick depth")
            )
    ranked = sorted(fired, key=lambda item: RANK[item.verdict])
    if not full and ranked[0].verdict == "PARTIAL":
        # PARTIAL is a full-depth verdict (it presumes the adversarial second round). A quick
        # brief that would be PARTIAL stays PARTIAL_QUICK, never reused, with the reasons listed.
        ranked.insert(
            0, Fired("rule 8", "PARTIAL_QUICK", "quick depth; the PARTIAL findings below stand")
        )
    return ranked


# --- the command ----------------------------------------------------------------------------


@dataclass(frozen=True)
class VerdictReport:
    verdict: Verdict
    reasons: list[str]
    floors: dict[str, Floor]
    settings_hash: str
    non_default_settings: dict[str, SettingChange]

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "verdict_reasons": self.reasons,
            "floors": {name: floor.model_dump() for name, floor in self.floors.items()},
            "settings_hash": self.settings_hash,
            "non_default_settings": {
                name: change.model_dump() for name, change in self.non_default_settings.items()
            },
        }


def decide(
    document: ClaimsFile,
    trace: TraceFile,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    settings: Settings,
    retraced: Sequence[str] = (),
) -> VerdictReport:
    """Pure: the verdict from already-read artifacts (``retraced``: see :func:`evaluate`)."""
    if document.triangulation_score is None:
        raise InputError("claims.json has no triangulation_score; run deep-research triangulate")
    digest = settings_hash(settings)
    triangulated = trace.phase("triangulate", TriangulatePhase)
    if triangulated is not None and triangulated.settings_hash not in (None, digest):
        raise InconsistentArtifacts(
            "triangulate ran under other settings than this verdict; re-run triangulate with "
            "the same settings (or the same --set overrides)"
        )
    check_consistency(document, trace, sources, log)
    table = floors(document, trace.counters, sources, log, settings)
    fired = evaluate(
        document, table, settings, run_incomplete(trace), retraced, reasoner_unable(trace)
    )
    reasons = [item.line() for item in fired]
    scaled = scaled_floors(document, trace.counters, sources, settings)
    if scaled is not None:
        reasons.append(scaled)
    changed = describe_changes(settings)
    if changed is not None:
        # A lowered floor or threshold must be as visible as the verdict it allowed.
        reasons.append(f"non-default settings: {changed}")
    non_default = {
        name: SettingChange(value=value, default=default)
        for name, (value, default) in changed_settings(settings).items()
    }
    return VerdictReport(fired[0].verdict, reasons, table, digest, non_default)


@writes_brief
def run_verdict(root: Path, settings: Settings) -> VerdictReport:
    brief = open_brief(root)
    require_run_settings(brief.root, settings)
    document = brief.load_claims()
    trace = load_trace_or_empty(brief)
    sources = brief.load_sources()
    log = brief.load_fetch_log()
    # The verdict rests on claims.json's trace results only after they reproduce from the text.
    report = decide(document, trace, sources, log, settings, retrace_mismatches(brief, document))
    updated = document.model_copy(
        update={
            "verdict": report.verdict,
            "verdict_reasons": report.reasons,
            "floors": report.floors,
            "settings_hash": report.settings_hash,
            "non_default_settings": report.non_default_settings,
        }
    )
    audit = build_audit(updated, sources, log)
    prove_audit(brief, audit, updated, sources)
    decided = VerdictPhase(
        verdict=report.verdict,
        verdict_reasons=report.reasons,
        floors=report.floors,
        settings_hash=report.settings_hash,
        non_default_settings=report.non_default_settings,
    )
    save(brief, updated, record_phase(trace, "verdict", decided, settings))
    write_audit(brief, audit)
    return report
