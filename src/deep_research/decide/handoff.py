"""The handoff a consumer reads: where the brief is, how far to trust it, and what to use how.

The metadata block keeps the consumer's field names. The consumption split is decided here, not
by the consumer: Supported claims with confidence high or medium go to ``context``; Partially
Supported or medium-contested claims go to ``constraints`` with every other position on the same
question; a PARTIAL brief names the sub-questions it left without a verified claim. Every claim
an unresolved contradiction names is contested (docs/contracts.md §6.4 rule 1) — a constraint,
whatever confidence claims.json records, since the contradiction may have been recorded after
triangulation — so every position of a contested fact is handed off, each with its confidence
and votes. A HOLD or FAIL brief hands off no claims at all (``usable`` is false). A load-bearing
claim the skeptic panel has not upheld is never handed off as ``high``, whatever claims.json
says (docs/contracts.md §6.4).
"""

from __future__ import annotations

from pathlib import Path

from deep_research.brief.record import open_brief
from deep_research.decide.triangulate import awaiting_panel
from deep_research.errors import InputError
from deep_research.models import (
    Claim,
    ClaimsFile,
    Confidence,
    Handoff,
    HandoffClaim,
    HandoffPosition,
    HandoffVotes,
)
from deep_research.verdict_meanings import is_usable

CONTEXT_CONFIDENCE = frozenset({"high", "medium"})
HANDED_OFF = frozenset({"Supported", "Partially Supported"})


class _Split:
    """What the split reads about every claim: who contests whom, whose panel has not sat."""

    def __init__(self, document: ClaimsFile) -> None:
        self.document = document
        self.by_id = {claim.id: claim for claim in document.claims}
        self.unheard = {claim.id for claim in awaiting_panel(document.claims, document.depth)}
        # Every claim an unresolved contradiction names holds a position on a contested fact,
        # whenever the contradiction was recorded (docs/contracts.md §6.4 rule 1).
        self.contested = {cid for entry in document.unresolved_contradictions for cid in entry.ids}

    def held(self, claim: Claim) -> bool:
        """A position still held: handed-off class, not refuted by the panel."""
        killed = claim.votes is not None and claim.votes.outcome == "killed"
        return claim.support_class in HANDED_OFF and not killed

    def confidence(self, claim: Claim) -> Confidence:
        if claim.id in self.contested:
            return "medium-contested"
        if claim.id in self.unheard and claim.confidence == "high":
            return "medium"
        return claim.confidence

    def positions(self, claim: Claim) -> list[HandoffPosition]:
        """Every other position recorded against ``claim``: each rival claim still held, with
        its confidence and votes; a CIBER counter-reading; a reading for another period."""
        found: list[HandoffPosition] = []
        for entry in self.document.unresolved_contradictions:
            if claim.id not in entry.ids:
                continue
            others = [cid for cid in dict.fromkeys(entry.ids) if cid != claim.id]
            for other in others:
                rival = self.by_id.get(other)
                if rival is not None and self.held(rival):
                    found.append(
                        HandoffPosition(
                            id=rival.id,
                            claim=rival.claim,
                            supporting=list(rival.supporting),
                            confidence=self.confidence(rival),
                            support_class=rival.support_class,
                            votes=_votes(rival),
                        )
                    )
            if not others:
                found.append(
                    HandoffPosition(
                        claim=entry.description or entry.topic,
                        supporting=list(claim.contests),
                        kind="counter-reading",
                    )
                )
        for note in self.document.ciber_timeline:
            if note.claim == claim.id:
                found.append(
                    HandoffPosition(
                        claim=note.reading, supporting=list(note.sources), kind="another period"
                    )
                )
        return found

    def view(self, claim: Claim, positions: list[HandoffPosition]) -> HandoffClaim:
        return HandoffClaim(
            id=claim.id,
            claim=claim.claim,
            sq=claim.sq,
            confidence=self.confidence(claim),
            support_class=claim.support_class,
            supporting=list(claim.supporting),
            votes=_votes(claim),
            other_positions=[_text(position) for position in positions],
            positions=positions,
        )


def _votes(claim: Claim) -> HandoffVotes | None:
    if claim.votes is None:
        return None
    return HandoffVotes(tally=claim.votes.tally, outcome=claim.votes.outcome)


def _text(position: HandoffPosition) -> str:
    """A position as text with its ``[S#]`` markers: ``C9: <claim> [S5]``."""
    cites = "".join(f"[{s}]" for s in position.supporting)
    if position.kind == "another period":
        return f"for another period: {position.claim} {cites}".strip()
    label = f"{position.id}: " if position.id else ""
    return f"{label}{position.claim} {cites}".strip()


def _sub_question_ids(document: ClaimsFile) -> list[str]:
    ids = []
    for item in document.sub_questions:
        if isinstance(item, str):
            ids.append(item)
        elif isinstance(item, dict) and isinstance(item.get("id"), str):
            ids.append(str(item["id"]))
    return ids


def project_relative(path: Path, project: Path) -> str:
    """``path`` relative to the project when it lies inside it (a path a prompt can carry from
    machine to machine), else absolute."""
    absolute, base = path.resolve(), project.resolve()
    return str(absolute.relative_to(base)) if absolute.is_relative_to(base) else str(absolute)


def build_handoff(document: ClaimsFile, claims_path: str) -> Handoff:
    if document.verdict is None:
        raise InputError("the brief has no verdict; run deep-research verdict first")
    usable = is_usable(document.verdict)
    split = _Split(document)
    context: list[HandoffClaim] = []
    constraints: list[HandoffClaim] = []
    for claim in document.claims if usable else []:
        if not split.held(claim):
            continue
        confidence = split.confidence(claim)
        if claim.support_class == "Partially Supported" or confidence == "medium-contested":
            constraints.append(split.view(claim, split.positions(claim)))
        elif confidence in CONTEXT_CONFIDENCE:
            context.append(split.view(claim, []))
    uncovered: list[str] = []
    if document.verdict in {"PARTIAL", "PARTIAL_QUICK"}:
        covered = {c.sq for c in document.claims if c.support_class == "Supported"}
        uncovered = [sq for sq in _sub_question_ids(document) if sq not in covered]
    return Handoff(
        research_claims=claims_path,
        research_freshness=document.freshness,
        triangulation_score=document.triangulation_score,
        refetch_pass_rate=document.refetch_pass_rate,
        ciber_passed=document.ciber_passed,
        verdict=document.verdict,
        usable=usable,
        non_default_settings=dict(document.non_default_settings),
        context=context,
        constraints=constraints,
        uncovered_sub_questions=uncovered,
    )


def run_handoff(root: Path, project: Path | None = None) -> Handoff:
    """The brief's handoff; its path relative to ``project`` (default: the working directory)."""
    brief = open_brief(root)
    claims_path = project_relative(brief.claims_path, project or Path.cwd())
    return build_handoff(brief.load_claims(), claims_path)


def handoff_reasons(root: Path) -> list[str]:
    """The brief's ``verdict_reasons`` (what an unusable handoff's next step is read from)."""
    return list(open_brief(root).load_claims().verdict_reasons)
