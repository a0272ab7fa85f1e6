"""Applying a CIBER diagnosis: the agent finds re-framings a claim does not survive; code mutates.

For each consistency failure (at most ``ciber_max_failures_per_claim`` per claim): a ``high``
claim becomes ``medium-contested`` (every severity), its ``dissemination_score`` rises by
``ciber_penalty`` (capped at 1.0) and the contradicting sources join its ``contests``. A
``negation_supported`` or ``paraphrase_split`` failure is listed in ``unresolved_contradictions``
and fails the gate; a ``temporal_scope_shift`` is no contradiction — the sources speak of another
period — so it goes to ``ciber_timeline`` instead and changes the verdict only through the
demotion. ``ciber_passed`` is decided here from the severities, whatever the agent said.

A skip is recorded instead only for one of three reasons, each checked against the brief.
The agent's output is recorded verbatim in trace.json; malformed output changes nothing.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Literal, get_args

from deep_research.brief.readers import parse_json, read_text
from deep_research.brief.record import (
    load_trace_or_empty,
    open_brief,
    record_phase,
    save,
    writes_brief,
)
from deep_research.brief.trace_phases import CiberPhase
from deep_research.errors import InputError
from deep_research.models import (
    CiberOutput,
    ClaimsFile,
    Contradiction,
    SourceRow,
    TimelineEntry,
    validate_model,
)
from deep_research.settings import Settings, require_run_settings

SkipReason = Literal["depth-quick", "insufficient-high-confidence-claims", "refetch-hard-fail"]
SKIP_REASONS: tuple[str, ...] = get_args(SkipReason)
GATE_FAILING = frozenset({"negation_supported", "paraphrase_split"})
CONTRADICTION_TOPIC = "CIBER consistency failure"


def gate_passed(output: CiberOutput) -> bool:
    """The severity contract: only temporal scope shifts leave the gate passed."""
    return not any(f.severity in GATE_FAILING for f in output.consistency_failures)


def skip_problem(reason: str, document: ClaimsFile, settings: Settings) -> str | None:
    """Why ``reason`` is not a valid CIBER skip for this brief, or None when it is."""
    if reason not in SKIP_REASONS:
        return f"{reason!r} is not a CIBER skip reason (valid: {', '.join(SKIP_REASONS)})"
    if reason == "depth-quick" and document.depth != "quick":
        return "depth-quick is valid only for a quick-depth brief"
    if reason == "insufficient-high-confidence-claims":
        high = sum(1 for claim in document.claims if claim.confidence == "high")
        if high >= settings.ciber_min_high_claims:
            return f"the brief has {high} high-confidence claims; CIBER must run"
    if reason == "refetch-hard-fail":
        rate = document.refetch_pass_rate
        if rate is None or rate >= settings.refetch_fail:
            return f"refetch_pass_rate is {rate}, not below {settings.refetch_fail}"
    return None


def apply_ciber(
    document: ClaimsFile, output: CiberOutput, sources: list[SourceRow], settings: Settings
) -> tuple[ClaimsFile, dict[str, int]]:
    """claims.json with the demotions applied, and the failures counted per claim."""
    if document.depth == "quick":
        raise InputError("CIBER does not run at quick depth; record the skip with --skip")
    by_id = {claim.id: claim for claim in document.claims}
    known_sources = {source.id for source in sources}
    for failure in output.consistency_failures:
        if failure.claim_id not in by_id:
            raise InputError(
                f"CIBER names {failure.claim_id}, which is not in claims.json; re-run CIBER on "
                "this brief's claims"
            )
        unknown = [s for s in failure.contradicting_source_ids if s not in known_sources]
        if unknown:
            raise InputError(
                f"CIBER cites {', '.join(unknown)} for {failure.claim_id}, not in sources.jsonl; "
                "CIBER reads the existing corpus only"
            )
    counted: Counter[str] = Counter()
    contradictions = list(document.unresolved_contradictions)
    timeline = list(document.ciber_timeline)
    claims = dict(by_id)
    for failure in output.consistency_failures:
        if counted[failure.claim_id] >= settings.ciber_max_failures_per_claim:
            continue  # more failures than re-framings asked for: the excess is not counted
        counted[failure.claim_id] += 1
        claim = claims[failure.claim_id]
        contests = list(dict.fromkeys([*claim.contests, *failure.contradicting_source_ids]))
        claims[claim.id] = claim.model_copy(
            update={
                "confidence": "medium-contested"
                if claim.confidence == "high"
                else claim.confidence,
                "dissemination_score": round(
                    min(1.0, claim.dissemination_score + settings.ciber_penalty), 4
                ),
                "contests": contests,
            }
        )
        if failure.severity in GATE_FAILING:
            contradictions.append(
                Contradiction(
                    ids=[claim.id], topic=CONTRADICTION_TOPIC, description=failure.failed_reframing
                )
            )
        else:
            timeline.append(
                TimelineEntry(
                    claim=claim.id,
                    reading=failure.failed_reframing,
                    sources=failure.contradicting_source_ids,
                )
            )
    updated = document.model_copy(
        update={
            "claims": [claims[claim.id] for claim in document.claims],
            "unresolved_contradictions": contradictions,
            "ciber_timeline": timeline,
            "ciber_passed": gate_passed(output),
            "ciber_skipped": None,
        }
    )
    return updated, dict(counted)


def run_ciber_apply(
    root: Path, input_path: Path | None, skip: str | None, settings: Settings
) -> dict[str, Any]:
    """``deep-research ciber apply``: a diagnosis file (``--input``) or a skip reason."""
    if (input_path is None) == (skip is None):
        raise InputError("give exactly one of --input ciber.json or --skip <reason>")
    raw = None
    if input_path is not None:
        raw = parse_json(read_text(input_path, what="CIBER output"), what=str(input_path))
    return apply_diagnosis(root, raw, skip, settings, what=str(input_path))


@writes_brief
def apply_diagnosis(
    root: Path, raw: Any, skip: str | None, settings: Settings, *, what: str = "CIBER output"
) -> dict[str, Any]:
    """Apply the CIBER agent's diagnosis ``raw`` (parsed JSON), or record ``skip``."""
    brief = open_brief(root)
    require_run_settings(brief.root, settings)
    document = brief.load_claims()
    trace = load_trace_or_empty(brief)
    if "ciber" in trace.phases or document.ciber_passed is not None:
        raise InputError(
            "CIBER was already applied to this brief (trace.json phases.ciber); a brief takes "
            "one diagnosis — start again from the synthesized claims to apply another"
        )
    if skip is not None:
        problem = skip_problem(skip, document, settings)
        if problem is not None:
            raise InputError(f"invalid CIBER skip: {problem}")
        updated = document.model_copy(update={"ciber_skipped": skip, "ciber_passed": None})
        entry = CiberPhase(ciber_skipped=skip)
        result: dict[str, Any] = {"ciber_skipped": skip}
    else:
        output = validate_model(CiberOutput, raw, what=what)
        updated, counted = apply_ciber(document, output, brief.load_sources(), settings)
        passed = gate_passed(output)
        entry = CiberPhase(
            raw=raw,
            agent_ciber_passed=output.ciber_passed,
            ciber_passed=passed,
            failures_per_claim=dict(counted),
        )
        result = {
            "ciber_passed": passed,
            "agent_ciber_passed": output.ciber_passed,
            "failures_per_claim": dict(counted),
            "demoted": sorted(
                c.id for c in document.claims if c.confidence == "high" and counted.get(c.id, 0) > 0
            ),
        }
    save(brief, updated, record_phase(trace, "ciber", entry, settings))
    return result
