"""The skeptic panel: up to three votes per claim, aggregated by code (docs/contracts.md §7).

A vote that errored or is malformed abstains — an infrastructure failure is never evidence, so
it neither refutes nor confirms — and every vote not counted is reported with the reason: a
panel whose votes all abstain in silence looks exactly like one that ran. With ``k`` =
``kill_votes`` and ``v`` = ``survive_valid_votes``:

* **killed** iff at least ``k`` valid votes refute;
* **survives** iff at least ``v`` votes are valid and fewer than ``k`` refute;
* **unverified** otherwise (too many abstentions to decide — reported as such).

A vote also says whether the evidence answers the claim's sub-question; those words are counted
by :mod:`deep_research.decide.relevance_votes` (``off_question``).

:func:`settled` says whether the votes cast so far already fix the outcome whatever the
remaining votes turn out to be, so the panel can stop early; the tests prove over every vote
sequence that stopping early never changes an outcome. Only claims that passed the trace gate
may go to the panel: the panel must never be what "confirms" an untraceable quote.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations_with_replacement
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import ValidationError

from deep_research.brief.readers import parse_json, read_text
from deep_research.brief.record import (
    load_trace_or_empty,
    open_brief,
    record_phase,
    save,
    writes_brief,
)
from deep_research.brief.trace_phases import DiscardedVote, VotesPhase
from deep_research.decide import relevance_votes
from deep_research.errors import InputError, SchemaViolation
from deep_research.models import ClaimsFile, SkepticVote, VoteRecord, Votes
from deep_research.settings import Settings, require_run_settings

Outcome = Literal["survives", "killed", "unverified"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
#: Evidence text kept per vote; longer model output is cut here, not trusted in full.
MAX_EVIDENCE_CHARS = 2000

#: A vote's possible values: refuting, upholding, abstaining.
REFUTE = VoteRecord(refuted=True, status="valid")
UPHOLD = VoteRecord(refuted=False, status="valid")
ABSTAIN = VoteRecord(status="abstained")


def check_vote(raw: object) -> SkepticVote | str:
    """One vote as cast — its confidence clamped, its evidence cut — or why it abstains."""
    if raw is None:
        return "null: the skeptic returned no vote"
    if not isinstance(raw, Mapping):
        return f"not a JSON object but {type(raw).__name__}"
    if "error" in raw:
        return f"the skeptic call errored: {str(raw['error'])[:200]}"
    payload = dict(raw)
    # Whether the evidence answers the sub-question is read on its own: a malformed value
    # abstains on that alone, the rest of the vote still counts.
    payload[relevance_votes.FIELD] = relevance_votes.read_answers(raw)
    confidence = payload.get("confidence")
    if isinstance(confidence, int | float) and not isinstance(confidence, bool):
        # A model-provided number is clamped, not trusted: confidence lives in [0, 1].
        payload["confidence"] = min(1.0, max(0.0, float(confidence)))
    if isinstance(payload.get("evidence"), str):
        payload["evidence"] = payload["evidence"][:MAX_EVIDENCE_CHARS]
    try:
        return SkepticVote.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "vote"
        given = f" (got {first['input']!r:.60})" if first["type"] != "missing" else ""
        hint = " — a number from 0 to 1" if field == "confidence" else ""
        return f"{field}: {first['msg']}{given}{hint}"


def read_vote(raw: object) -> tuple[VoteRecord, str | None]:
    """One vote as cast, and why it abstains (None when it counts)."""
    vote = check_vote(raw)
    if isinstance(vote, str):
        return ABSTAIN, vote
    record = VoteRecord(
        refuted=vote.refuted,
        evidence=vote.evidence,
        confidence=vote.confidence,
        counter_source=vote.counter_source,
        status="valid",
        answers=vote.answers,
    )
    return record, None


def parse_vote(raw: object) -> VoteRecord:
    """One vote as cast; anything that is not a well-formed vote abstains."""
    return read_vote(raw)[0]


def outcome(votes: Sequence[VoteRecord], settings: Settings) -> Outcome:
    valid = [vote for vote in votes if vote.status == "valid" and vote.refuted is not None]
    refuted = sum(1 for vote in valid if vote.refuted)
    if refuted >= settings.kill_votes:
        return "killed"
    if len(valid) >= settings.survive_valid_votes:
        return "survives"
    return "unverified"


def settled(votes: Sequence[VoteRecord], settings: Settings) -> Outcome | None:
    """The outcome if no remaining vote can change it nor whether the claim is off its
    question (:mod:`~deep_research.decide.relevance_votes`), else None (cast another vote)."""
    if not relevance_votes.settled([vote.answers for vote in votes], settings):
        return None
    remaining = max(0, settings.panel_size - len(votes))
    # An outcome counts votes, never their order: each multiset of remaining votes once.
    outcomes = {
        outcome([*votes, *rest], settings)
        for rest in combinations_with_replacement((REFUTE, UPHOLD, ABSTAIN), remaining)
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
    return Votes(
        tally=tally(records),
        outcome=outcome(records, settings),
        records=records,
        off_question=relevance_votes.off_question([r.answers for r in records], settings),
    )


def discarded_votes(raw: Mapping[str, Sequence[object]], settings: Settings) -> list[DiscardedVote]:
    """Every vote in ``raw`` that does not count, each with its reason (as ``phases.votes``
    records it)."""
    found = []
    for claim_id, votes in raw.items():
        for number, vote in enumerate(votes, start=1):
            reason = (
                f"beyond panel_size ({settings.panel_size}): not read"
                if number > settings.panel_size
                else read_vote(vote)[1]
            )
            if reason is not None:
                found.append(DiscardedVote(claim=claim_id, vote=number, reason=reason))
    return found


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


@writes_brief
def run_votes(root: Path, input_path: Path, settings: Settings) -> dict[str, Any]:
    brief = open_brief(root)
    require_run_settings(brief.root, settings)
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
    discarded = discarded_votes(raw, settings)
    entry = VotesPhase(
        raw=raw,
        outcomes=outcomes,
        survives=summary["survives"],
        killed=summary["killed"],
        unverified=summary["unverified"],
        discarded=discarded,
    )
    save(brief, updated, record_phase(trace, "votes", entry, settings))
    return {
        "outcomes": outcomes,
        **summary,
        "discarded": [item.model_dump() for item in discarded],
    }
