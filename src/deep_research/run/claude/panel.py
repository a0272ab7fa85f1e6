"""The skeptic panel and CIBER on Claude: votes cast one by one until the outcome is settled.

A claim reaches the panel only after the mechanical gates passed it (the phase sends only traced
``Supported`` claims). Each vote is one call on the skeptic role whose prefix — the skeptic
contract, the claim and its located evidence (the text the trace gate found in the retained
pages, never a summary) — is identical for every vote of that claim and marked for prompt
caching, so the second and third votes read it from the cache; only a short vote-specific angle
follows it. After each vote :func:`deep_research.decide.votes.settled` says whether the
remaining votes could still change the outcome; when they cannot, no more are cast (the tests
of that function prove stopping early never changes an outcome).

A call that fails (after its retries), refuses, is cut short or does not validate is an
:class:`~deep_research.run.interface.Abstained` vote: it neither refutes nor upholds. With
``--batch``, the panel's first two votes of every claim go out as one Message Batch at half
price, and the third only for the claims they left unsettled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deep_research.decide.votes import ABSTAIN, read_vote, settled
from deep_research.models import CiberOutput, Claim, SkepticVote, VoteRecord
from deep_research.run.claude.client import Answer, ClaudeClient, Failed, read_structured
from deep_research.run.claude.roles import MAX_OUTPUT_TOKENS, instructions
from deep_research.run.interface import Abstained, EvidenceText
from deep_research.settings import Settings

MAX_EVIDENCE_ITEMS = 4
MAX_EVIDENCE_CHARS = 1500
#: CIBER reads at most this many claims (the contract's ``top_n``) and quotes per claim.
CIBER_TOP_N = 10
CIBER_QUOTES = 4

ANGLES = (
    "Hunt first for a contradicting passage, or a number, date or name that changed.",
    "Hunt first for overreach: does the claim say more than the quotes say?",
    "Hunt first for a stale figure, or marketing copy presented as a finding.",
)

Vote = SkepticVote | Abstained


def _cached(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}


def evidence_text(claim: Claim, evidence: Sequence[EvidenceText]) -> str:
    """The claim, then each located quote between «» in its page context."""
    lines = [
        f"Claim {claim.id}: {claim.claim}",
        "",
        "Located evidence (each quote between «» in the retained page text around it):",
    ]
    for item in evidence[:MAX_EVIDENCE_ITEMS]:
        quote = item.quote[:MAX_EVIDENCE_CHARS]
        lines.append(f"[{item.source}] …{item.before}«{quote}»{item.after}…")
    if not evidence:
        lines.append("(none located)")
    return "\n".join(lines)


def vote_request(
    claim: Claim, evidence: Sequence[EvidenceText], number: int, size: int
) -> dict[str, Any]:
    """Vote ``number`` (from 0): the shared, cached prefix, then this vote's angle."""
    angle = ANGLES[number % len(ANGLES)]
    return {
        "max_tokens": MAX_OUTPUT_TOKENS["skeptic"],
        "system": [_cached(instructions("skeptic"))],
        "messages": [
            {
                "role": "user",
                "content": [
                    _cached(evidence_text(claim, evidence)),
                    {"type": "text", "text": f"Vote {number + 1} of {size}. {angle}"},
                ],
            }
        ],
    }


def _record(vote: Vote) -> VoteRecord:
    if isinstance(vote, Abstained):
        return ABSTAIN
    return read_vote(vote.model_dump(by_alias=True))[0]


def _as_vote(outcome: SkepticVote | Failed) -> Vote:
    return Abstained(outcome.reason) if isinstance(outcome, Failed) else outcome


def cast_vote(
    client: ClaudeClient, claim: Claim, evidence: Sequence[EvidenceText], number: int, size: int
) -> Vote:
    request = vote_request(claim, evidence, number, size)
    return _as_vote(client.structured("skeptic", SkepticVote, request))


def judge(
    client: ClaudeClient, claim: Claim, evidence: Sequence[EvidenceText], settings: Settings
) -> list[Vote]:
    """Votes one at a time until :func:`settled` says the rest cannot change the outcome."""
    votes: list[Vote] = []
    for number in range(settings.panel_size):
        if settled([_record(v) for v in votes], settings) is not None:
            break
        votes.append(cast_vote(client, claim, evidence, number, settings.panel_size))
    return votes


def judge_batch(
    client: ClaudeClient,
    items: Sequence[tuple[Claim, Sequence[EvidenceText]]],
    settings: Settings,
) -> dict[str, list[Vote]]:
    """Every claim's panel through Message Batches: one batch per round of votes, each round
    only for the claims the earlier votes left unsettled."""
    import anthropic

    schema = anthropic.transform_schema(SkepticVote.model_json_schema())
    fmt = {"format": {"type": "json_schema", "schema": schema}}
    votes: dict[str, list[Vote]] = {claim.id: [] for claim, _ in items}
    for number in range(settings.panel_size):
        open_items = [
            (claim, evidence)
            for claim, evidence in items
            if settled([_record(v) for v in votes[claim.id]], settings) is None
        ]
        if not open_items:
            break
        requests = [
            {**vote_request(claim, evidence, number, settings.panel_size), "output_config": fmt}
            for claim, evidence in open_items
        ]
        for (claim, _), outcome in zip(open_items, client.batch("skeptic", requests), strict=True):
            parsed = (
                read_structured(outcome, SkepticVote) if isinstance(outcome, Answer) else outcome
            )
            votes[claim.id].append(_as_vote(parsed))
    return votes


# --- CIBER ----------------------------------------------------------------------------------


def ciber_request(claims: Sequence[Claim]) -> dict[str, Any]:
    lines = ["Claims (confidence high) and their located evidence:"]
    for claim in claims[:CIBER_TOP_N]:
        lines.append(f"\n{claim.id}: {claim.claim}")
        for item in claim.evidence[:CIBER_QUOTES]:
            lines.append(f"  [{item.source}] «{item.quote[:MAX_EVIDENCE_CHARS]}»")
    lines.append(
        "\nWrite the three re-framings of each claim, check each against the evidence above, "
        "and report every re-framing the evidence supports."
    )
    return {
        "max_tokens": MAX_OUTPUT_TOKENS["ciber"],
        "system": [_cached(instructions("ciber"))],
        "messages": [{"role": "user", "content": "\n".join(lines)}],
    }


def reframe(client: ClaudeClient, claims: Sequence[Claim]) -> CiberOutput | Failed:
    """CIBER's diagnosis of ``claims``; the gate applies it (or refuses a malformed one)."""
    outcome = client.structured("ciber", CiberOutput, ciber_request(claims))
    if isinstance(outcome, Failed):
        return outcome
    known = {claim.id for claim in claims}
    # A failure naming a claim CIBER was not shown is the model's invention, not a diagnosis.
    strays = [f.claim_id for f in outcome.consistency_failures if f.claim_id not in known]
    if strays:
        return Failed(f"CIBER named claims it was not given: {', '.join(strays)}")
    return outcome
