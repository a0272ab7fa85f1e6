"""The skeptic panel and CIBER on Claude: rounds of votes, several claims per call, each claim
voted on until its outcome is settled.

A claim reaches the panel only after the mechanical gates passed it (the phase sends only traced
``Supported`` claims). A skeptic call judges up to :data:`MAX_CLAIMS_PER_SKEPTIC_CALL` claims at
once, each shown with its sub-question and its own located evidence (the text the trace gate
found in the retained pages, never a summary), and answers one vote per claim id
(:class:`PanelReply`: a list of the contract's per-claim vote objects, each tagged with its
claim's id). Round 1 asks every claim's first vote, round 2 every second vote, and a third round
only the claims whose votes are still split: after each round
:func:`deep_research.decide.phase_rules.votes_wanted` — the panel rule the plugin's step code
calls too — says, claim by claim, whether the remaining votes could still change the outcome
(the tests of :func:`~deep_research.decide.votes.settled` prove stopping early never changes an
outcome). Each call is a fresh request, so the votes of one claim stay independent of each
other. A call's prefix — the skeptic contract, then its claims and their evidence — is marked
for prompt caching; a round asking the same claims as the one before reads it from the cache,
and only a short vote-specific angle follows it.

A call that fails (after its retries), refuses, is cut short or does not validate is an
:class:`~deep_research.run.interface.Abstained` vote for every claim it carried: it neither
refutes nor upholds. Within a reply that validates, a claim it casts no vote for (or more than
one) abstains, a malformed vote abstains for its claim alone, a vote for a claim the call did
not carry is ignored and counted, and each vote is clamped as any vote is
(:func:`~deep_research.decide.votes.check_vote`). With ``--batch``, each round's calls go out as
one Message Batch at half price. A cap reached mid-panel keeps the votes cast so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from deep_research import role_contracts
from deep_research.decide.phase_rules import votes_wanted
from deep_research.decide.votes import ABSTAIN, check_vote, read_vote
from deep_research.fetch.fetcher import wrap_untrusted
from deep_research.models import CiberOutput, Claim, SkepticVote, VoteRecord
from deep_research.run.claude.client import Answer, ClaudeClient, Failed, read_structured
from deep_research.run.claude.roles import MAX_OUTPUT_TOKENS, instructions
from deep_research.run.governor import CapReached
from deep_research.run.interface import Abstained, PanelItem, Panels
from deep_research.settings import Settings

MAX_EVIDENCE_ITEMS = 4
MAX_EVIDENCE_CHARS = 1500
#: The most claims one skeptic call judges; a round asks ⌈claims / this⌉ calls.
MAX_CLAIMS_PER_SKEPTIC_CALL = 8
#: The most items of a reply that are read (the list's length is the model's to choose).
MAX_REPLY_ITEMS = 2 * MAX_CLAIMS_PER_SKEPTIC_CALL
#: CIBER reads at most this many quotes per claim (the phase chooses its claims).
CIBER_QUOTES = 4

#: Where the skeptic contract lists the angle each vote of a claim hunts first for.
ANGLES_SECTION = "Vote angles"

Vote = SkepticVote | Abstained


class ClaimVote(BaseModel):
    """One claim's vote in a reply: the contract's vote object, tagged with the claim's id. The
    vote is read by :func:`check_vote`, so a malformed one abstains for its claim alone."""

    model_config = ConfigDict(extra="ignore")

    claim_id: str = Field(description="the id of the claim voted on, as the message gives it")
    vote: Annotated[Any, WithJsonSchema(SkepticVote.model_json_schema())]


class PanelReply(BaseModel):
    """A skeptic call's answer: one vote per claim it was given."""

    model_config = ConfigDict(extra="ignore")

    votes: list[ClaimVote]


def _cached(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}


def evidence_text(item: PanelItem) -> str:
    """The claim, its sub-question, then each located quote between «» in its page context (the
    skeptic contract's headless section says how to read it)."""
    claim, evidence = item.claim, item.evidence
    lines = [f"Claim {claim.id}: {claim.claim}"]
    if item.sub_question:
        lines.append(f"Sub-question {claim.sq}: {item.sub_question}")
    lines += ["", "Located evidence:"]
    for located in evidence[:MAX_EVIDENCE_ITEMS]:
        quote = located.quote[:MAX_EVIDENCE_CHARS]
        page = wrap_untrusted(
            f"source:{located.source}", f"…{located.before}«{quote}»{located.after}…"
        )
        lines.append(f"[{located.source}] {page}")
    if not evidence:
        lines.append("(none located)")
    return "\n".join(lines)


def claims_text(items: Sequence[PanelItem]) -> str:
    """The claims of one call, each with its own evidence."""
    return "\n\n".join(evidence_text(item) for item in items)


def angle(number: int) -> str:
    """The angle vote ``number`` (from 0) of a claim hunts first for, as the contract lists it."""
    angles = role_contracts.items("skeptic", ANGLES_SECTION)
    return angles[number % len(angles)]


def vote_request(items: Sequence[PanelItem], number: int, size: int) -> dict[str, Any]:
    """Vote ``number`` (from 0) of each of ``items``: the cached prefix, then this vote's angle."""
    ids = ", ".join(item.claim.id for item in items)
    ask = f"Vote {number + 1} of {size}\n{angle(number)}\nVote on: {ids}"
    return {
        "max_tokens": MAX_OUTPUT_TOKENS["skeptic"] * len(items),
        "system": [_cached(instructions("skeptic"))],
        "messages": [
            {
                "role": "user",
                "content": [
                    _cached(claims_text(items)),
                    {"type": "text", "text": ask},
                ],
            }
        ],
    }


def chunks(items: Sequence[PanelItem]) -> list[list[PanelItem]]:
    """``items`` grouped by sub-question (in order of first appearance), then cut into calls of
    at most :data:`MAX_CLAIMS_PER_SKEPTIC_CALL` claims."""
    first: dict[str | None, int] = {}
    for item in items:
        first.setdefault(item.claim.sq, len(first))
    ordered = sorted(items, key=lambda item: first[item.claim.sq])
    size = MAX_CLAIMS_PER_SKEPTIC_CALL
    return [ordered[start : start + size] for start in range(0, len(ordered), size)]


def read_votes(outcome: PanelReply | Failed, asked: Sequence[str]) -> tuple[dict[str, Vote], int]:
    """Each asked claim's vote in ``outcome``, and how many of its votes were ignored."""
    if isinstance(outcome, Failed):
        return {claim_id: Abstained(outcome.reason) for claim_id in asked}, 0
    cast: dict[str, list[object]] = {claim_id: [] for claim_id in asked}
    for item in outcome.votes[:MAX_REPLY_ITEMS]:
        if item.claim_id.strip() in cast:
            cast[item.claim_id.strip()].append(item.vote)
    ignored = len(outcome.votes) - sum(len(given) for given in cast.values())
    votes: dict[str, Vote] = {}
    for claim_id, given in cast.items():
        if len(given) != 1:
            how = "no vote" if not given else f"{len(given)} votes"
            votes[claim_id] = Abstained(f"the reply cast {how} for this claim")
            continue
        checked = check_vote(given[0])
        votes[claim_id] = (
            Abstained(f"malformed vote: {checked}") if isinstance(checked, str) else checked
        )
    return votes, ignored


def _record(vote: Vote) -> VoteRecord:
    if isinstance(vote, Abstained):
        return ABSTAIN
    return read_vote(vote.model_dump(by_alias=True))[0]


def _batched(client: ClaudeClient, requests: Sequence[dict[str, Any]]) -> list[PanelReply | Failed]:
    import anthropic

    schema = anthropic.transform_schema(PanelReply.model_json_schema())
    fmt = {"format": {"type": "json_schema", "schema": schema}}
    answers = client.batch("skeptic", [{**request, "output_config": fmt} for request in requests])
    return [
        read_structured(answer, PanelReply) if isinstance(answer, Answer) else answer
        for answer in answers
    ]


def _cast(
    client: ClaudeClient,
    votes: dict[str, list[Vote]],
    chunk: Sequence[PanelItem],
    reply: PanelReply | Failed,
) -> None:
    cast, ignored = read_votes(reply, [item.claim.id for item in chunk])
    if ignored:
        client.ledger.count("skeptic_votes_ignored", ignored)
    for claim_id, vote in cast.items():
        votes[claim_id].append(vote)


def run_panels(
    client: ClaudeClient, items: Sequence[PanelItem], settings: Settings, *, batch: bool = False
) -> Panels:
    """Every claim's panel, round by round, each round only for the claims the earlier votes
    left unsettled; with ``batch`` each round is one Message Batch."""
    votes: dict[str, list[Vote]] = {item.claim.id: [] for item in items}
    try:
        for number in range(settings.panel_size):
            open_items = [
                item
                for item in items
                if votes_wanted([_record(v) for v in votes[item.claim.id]], settings) > 0
            ]
            if not open_items:
                break
            calls = chunks(open_items)
            requests = [vote_request(chunk, number, settings.panel_size) for chunk in calls]
            if batch:
                for chunk, reply in zip(calls, _batched(client, requests), strict=True):
                    _cast(client, votes, chunk, reply)
                continue
            # One call at a time: a cap reached mid-round keeps the votes already cast.
            for chunk, request in zip(calls, requests, strict=True):
                _cast(client, votes, chunk, client.structured("skeptic", PanelReply, request))
    except CapReached as exc:
        return Panels(votes, stopped=exc)
    return Panels(votes)


# --- CIBER ----------------------------------------------------------------------------------


def ciber_request(claims: Sequence[Claim]) -> dict[str, Any]:
    """The CIBER call on ``claims``: each claim, then its located quotes (the contract's
    headless section says what to do with them)."""
    lines = []
    for claim in claims:
        lines.append(f"{claim.id}: {claim.claim}")
        for item in claim.evidence[:CIBER_QUOTES]:
            quote = f"«{item.quote[:MAX_EVIDENCE_CHARS]}»"
            lines.append(f"  [{item.source}] {wrap_untrusted(f'source:{item.source}', quote)}")
        lines.append("")
    return {
        "max_tokens": MAX_OUTPUT_TOKENS["ciber"],
        "system": [_cached(instructions("ciber"))],
        "messages": [{"role": "user", "content": "\n".join(lines).strip()}],
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
