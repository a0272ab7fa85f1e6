"""The skeptic panel: up to three votes per claim, aggregated by code (docs/contracts.md §7).

A vote that errored or is malformed abstains — an infrastructure failure is never evidence, so
it neither refutes nor confirms. With ``k`` = ``kill_votes`` and ``v`` = ``survive_valid_votes``:

* **killed** iff at least ``k`` valid votes refute;
* **survives** iff at least ``v`` votes are valid and fewer than ``k`` refute;
* **unverified** otherwise (too many abstentions to decide — reported as such).

:func:`settled` says whether the votes cast so far already fix the outcome whatever the
remaining votes turn out to be, so the panel can stop early; the tests prove over every vote
sequence that stopping early never changes an outcome. Only claims that passed the trace gate
may go to the panel: the panel must never be what "confirms" an untraceable quote.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import product
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import ValidationError

from deep_research.brief import parse_json, read_text
from deep_research.errors import InputError, SchemaViolation
from deep_research.models import ClaimsFile, SkepticVote, VoteRecord, Votes
from deep_research.record import load_trace_or_empty, open_brief, record_phase, save
from deep_research.settings import Settings

Outcome = Literal["survives", "killed", "unverified"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
#: Evidence text kept per vote; longer model output is cut here, not trusted in full.
MAX_EVIDENCE_CHARS = 2000

#: A vote's possible values: refuting, upholding, abstaining.
REFUTE = VoteRecord(refuted=True, status="valid")
UPHOLD = VoteRecord(refuted=False, status="valid")
ABSTAIN = VoteRecord(status="abstained")


def parse_vote(raw: object) -> VoteRecord:
    """One vote as cast; anything that is not a well-formed vote abstains."""
    if not isinstance(raw, Mapping) or "error" in raw:
        return ABSTAIN
    payload = dict(raw)
    if isinstance(payload.get("confidence"), int | float):
        # A model-provided number is clamped, not trusted: confidence lives in [0, 1].
        payload["confidence"] = min(1.0, max(0.0, float(payload["confidence"])))
    if isinstance(payload.get("evidence"), str):
        payload["evidence"] = payload["evidence"][:MAX_EVIDENCE_CHARS]
    try:
        vote = SkepticVote.model_validate(payload)
    except ValidationError:
        return ABSTAIN
    return VoteRecord(
        refuted=vote.refuted,
        evidence=vote.evidence,
        confidence=vote.confidence,
        counter_source=vote.counter_source,
        status="valid",
    )


def outcome(votes: Sequence[VoteRecord], settings: Settings) -> Outcome:
    valid = [vote for vote in votes if vote.status == "valid" and vote.refuted is not None]
    refuted = sum(1 for vote in valid if vote.refuted)
    if refuted >= settings.kill_votes:
        return "killed"
    if len(valid) >= settings.survive_valid_votes:
        return "survives"
    return "unverified"


def settled(votes: Sequence[VoteRecord], settings: Settings) -> Outcome | None:
    """The outcome if no remaining vote can change it, else None (cast another vote)."""
    remaining = max(0, settings.panel_size - len(votes))
    outcomes = {
        outcome([*votes, *rest], settings)
        for rest in product((REFUTE, UPHOLD, ABSTAIN), repeat=remaining)
    }
    return outcomes.pop() if len(outcomes) == 1 else None


def tally(votes: Sequence[VoteRecord]) -> str:
    """``upheld-refuted`` over valid votes, e.g. ``"2-0"`` or ``"1-2"``."""
    valid = [vote for vote in votes if vote.status == "valid" and vote.refuted is not None]
    refuted = sum(1 for vote in valid if vote.refuted)
    return f"{len(valid) - refuted}-{refuted}"


def panel(raw_votes: Sequence[object], settings: Settings) -> Votes:
    """Aggregate the votes cast for one claim (at most ``panel_size`` are read)."""
    records = [parse_vote(raw) for raw in raw_votes[: settings.panel_size]]
    return Votes(tally=tally(records), outcome=outcome(records, settings), records=records)


# --- recording a panel's votes in a brief ---------------------------------------------------


def _votes_input(path: Path) -> dict[str, list[Any]]:
    value = parse_json(read_text(path, what="votes file"), what=str(path))
    if not isinstance(value, dict) or not all(isinstance(v, list) for v in value.values()):
        raise SchemaViolation(
            'expected {"C1": [vote, vote, vote], …} (a vote may be null or {"error": …})',
            source=str(path),
        )
    return value


def apply_votes(
    document: ClaimsFile, raw: Mapping[str, Sequence[object]], settings: Settings
) -> ClaimsFile:
    """claims.json with each named claim's panel recorded; only traced-Supported claims vote."""
    by_id = {claim.id: claim for claim in document.claims}
    for claim_id in raw:
        claim = by_id.get(claim_id)
        if claim is None:
            raise InputError(f"votes name {claim_id}, which is not in claims.json; fix the input")
        if claim.support_class != "Supported":
            raise InputError(
                f"{claim_id} is {claim.support_class}: only claims that passed the trace gate "
                "go to the skeptic panel"
            )
    claims = [
        claim.model_copy(update={"votes": panel(raw[claim.id], settings)})
        if claim.id in raw
        else claim
        for claim in document.claims
    ]
    return document.model_copy(update={"claims": claims})


def run_votes(root: Path, input_path: Path, settings: Settings) -> dict[str, Any]:
    brief = open_brief(root)
    raw = _votes_input(input_path)
    document = brief.load_claims()
    trace = load_trace_or_empty(brief)
    updated = apply_votes(document, raw, settings)
    outcomes = {
        claim.id: claim.votes.outcome
        for claim in updated.claims
        if claim.votes is not None and claim.id in raw
    }
    summary: dict[str, int] = {
        name: sum(1 for o in outcomes.values() if o == name) for name in OUTCOMES
    }
    entry: dict[str, Any] = {"raw": raw, "outcomes": outcomes, **summary}
    with brief.lock():
        save(brief, updated, record_phase(trace, "votes", entry, settings))
    return {"outcomes": outcomes, **summary}
