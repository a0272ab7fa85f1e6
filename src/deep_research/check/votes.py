"""``--reasoner claude``: a model's vote on the sentences the literal checks cannot decide.

Only a sentence supported by shared words alone, or turned away for sharing too few, is asked
about (:attr:`~deep_research.check.judge.Row.undecided`), and only on its located passage: the
model reads the passage inside the page text around it, as the skeptic panel reads a claim's
located evidence (the same contract, request and reply, :mod:`deep_research.run.claude.panel`),
one vote per sentence, several sentences a call. Its vote is data: code maps it — refuted is
``unsupported`` (``model_refuted``), upheld ``supported`` — and a failed call or a malformed vote
is an abstention that leaves the literal checks' verdict. Every vote, abstentions with their
reason, is recorded beside the passage, so ``verify --offline`` re-applies it without a model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from deep_research.check.judge import CONTEXT_CHARS, Row
from deep_research.check.pages import Page
from deep_research.decide.votes import read_vote
from deep_research.errors import InputError
from deep_research.models import Claim, VoteRecord
from deep_research.run.claude.client import ClaudeClient, key_problem
from deep_research.run.claude.panel import (
    MAX_CLAIMS_PER_SKEPTIC_CALL,
    PanelReply,
    read_votes,
    vote_request,
)
from deep_research.run.claude.roles import choose_models
from deep_research.run.interface import Abstained, EvidenceText, PanelItem
from deep_research.run.ledger import spend_lines

#: The most sentences one check asks a model about; the rest keep the literal checks' verdict.
MAX_JUDGED = 200
#: Characters of a model's stated evidence (or an abstention's reason) kept in the record.
MAX_VOTE_EVIDENCE = 500


@dataclass(frozen=True)
class ModelVoter:
    """The votes of one check, through one metered client."""

    client: ClaudeClient

    @classmethod
    def from_environment(cls) -> ModelVoter:
        """The client a run uses, its models chosen as a run's are
        (``DEEP_RESEARCH_MODEL_SKEPTIC``); no key is an input error, before anything is read."""
        problem = key_problem()
        if problem is not None:
            raise InputError(f"--reasoner claude: {problem}; set it, or use --reasoner extractive")
        return cls(ClaudeClient(choose_models()))

    def __call__(self, rows: Sequence[Row], pages: dict[str, Page]) -> dict[int, VoteRecord]:
        return cast_votes(self.client, rows, pages)

    def spend(self) -> list[str]:
        """What the votes cost, as a run's summary states it."""
        return spend_lines(self.client.ledger.as_record())


def cast_votes(
    client: ClaudeClient, rows: Sequence[Row], pages: dict[str, Page]
) -> dict[int, VoteRecord]:
    """Each undecided row's vote, by sentence number (at most :data:`MAX_JUDGED` rows)."""
    asked = [row for row in rows if row.undecided and row.evidence is not None][:MAX_JUDGED]
    votes: dict[int, VoteRecord] = {}
    for start in range(0, len(asked), MAX_CLAIMS_PER_SKEPTIC_CALL):
        chunk = asked[start : start + MAX_CLAIMS_PER_SKEPTIC_CALL]
        items = [PanelItem(_claim(row), [_evidence(row, pages)]) for row in chunk]
        reply = client.structured("skeptic", PanelReply, vote_request(items, 0, 1))
        cast, _ = read_votes(reply, [item.claim.id for item in items])
        for row in chunk:
            vote = cast[_claim(row).id]
            if isinstance(vote, Abstained):
                votes[row.sentence.number] = VoteRecord(
                    status="abstained", evidence=vote.reason[:MAX_VOTE_EVIDENCE]
                )
            else:
                votes[row.sentence.number] = read_vote(vote.model_dump(by_alias=True))[0]
    return votes


def _claim(row: Row) -> Claim:
    return Claim(id=f"C{row.sentence.number}", claim=row.sentence.text)


def _evidence(row: Row, pages: dict[str, Page]) -> EvidenceText:
    assert row.evidence is not None
    page = pages[row.evidence.url]
    start, end = row.evidence.span
    return EvidenceText(
        "S1",
        row.evidence.passage,
        before=page.text[max(0, start - CONTEXT_CHARS) : start],
        after=page.text[end : end + CONTEXT_CHARS],
    )
