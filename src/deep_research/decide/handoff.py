"""The handoff a consumer reads: where the brief is, how far to trust it, and what to use how.

The metadata block keeps the consumer's field names. The consumption split is decided here, not
by the consumer: Supported claims with confidence high or medium go to ``context``; Partially
Supported or medium-contested claims go to ``constraints`` with every other position on the same
question; a PARTIAL brief names the sub-questions it left without a verified claim. A HOLD or FAIL
brief hands off no claims at all (``usable`` is false). A load-bearing claim the skeptic panel has
not upheld is never handed off as ``high``, whatever claims.json says (docs/contracts.md §6.4).
"""

from __future__ import annotations

from pathlib import Path

from deep_research.decide.triangulate import awaiting_panel
from deep_research.errors import InputError
from deep_research.models import Claim, ClaimsFile, Handoff, HandoffClaim
from deep_research.record import open_brief
from deep_research.verdict_meanings import is_usable

CONTEXT_CONFIDENCE = frozenset({"high", "medium"})


def _positions(claim: Claim, document: ClaimsFile, by_id: dict[str, Claim]) -> list[str]:
    """Every other position recorded against ``claim``, each with the sources holding it."""
    positions = []
    for entry in document.unresolved_contradictions:
        if claim.id not in entry.ids:
            continue
        others = [cid for cid in entry.ids if cid != claim.id]
        for other in others:
            rival = by_id.get(other)
            if rival is not None:
                cites = "".join(f"[{s}]" for s in rival.supporting)
                positions.append(f"{other}: {rival.claim} {cites}".strip())
        if not others:
            cites = "".join(f"[{s}]" for s in claim.contests)
            positions.append(f"{entry.description or entry.topic} {cites}".strip())
    for note in document.ciber_timeline:
        if note.claim == claim.id:
            cites = "".join(f"[{s}]" for s in note.sources)
            positions.append(f"for another period: {note.reading} {cites}".strip())
    return positions


def _view(claim: Claim, positions: list[str], unheard: set[str]) -> HandoffClaim:
    demoted = claim.id in unheard and claim.confidence == "high"
    return HandoffClaim(
        id=claim.id,
        claim=claim.claim,
        sq=claim.sq,
        confidence="medium" if demoted else claim.confidence,
        support_class=claim.support_class,
        supporting=list(claim.supporting),
        other_positions=positions,
    )


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
    by_id = {claim.id: claim for claim in document.claims}
    context: list[HandoffClaim] = []
    constraints: list[HandoffClaim] = []
    unheard = {claim.id for claim in awaiting_panel(document.claims, document.depth)}
    for claim in document.claims if usable else []:
        if claim.votes is not None and claim.votes.outcome == "killed":
            continue
        if claim.support_class == "Partially Supported" or claim.confidence == "medium-contested":
            constraints.append(_view(claim, _positions(claim, document, by_id), unheard))
        elif claim.support_class == "Supported" and claim.confidence in CONTEXT_CONFIDENCE:
            context.append(_view(claim, [], unheard))
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
