"""Whether a claim's evidence answers its sub-question: the judges' words, counted by code.

Every way a vote's ``answers`` can arrive is read (a malformed one abstains on that alone), the
count is table-driven beside its adversarial cases, and stopping the panel early is proved over
every sequence of votes never to change whether a claim is off its question."""

from __future__ import annotations

from itertools import product

import pytest

from deep_research.decide.relevance_votes import (
    off_question,
    read_answers,
    settled,
    strip_reason,
    sub_question_texts,
)
from deep_research.decide.votes import outcome, panel, read_vote
from deep_research.decide.votes import settled as panel_settled
from deep_research.models import Answers, Claim, ClaimsFile, VoteRecord
from deep_research.settings import Settings

SETTINGS = Settings()


def vote(answers: object = "yes", refuted: bool = False) -> dict[str, object]:
    return {
        "refuted": refuted,
        "evidence": "the located text",
        "confidence": 0.8,
        "answers": answers,
    }


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        (vote("yes"), "yes"),
        (vote("partly"), "partly"),
        (vote("no"), "no"),
        (vote(" No "), "no"),  # case and spaces aside
        (vote("maybe"), None),  # a word the contract does not offer
        (vote("yes, mostly"), None),
        (vote(True), None),
        (vote(0), None),
        (vote(None), None),
        ({"refuted": False, "evidence": "", "confidence": 0.5}, None),  # not given
        ({"error": "timeout", "answers": "no"}, None),  # an errored call says nothing
        (None, None),
        (["answers", "no"], None),
        ("no", None),
    ],
)
def test_a_votes_answers_is_read_and_anything_else_abstains(raw: object, read: str | None) -> None:
    assert read_answers(raw) == read


def test_a_malformed_answers_abstains_alone_the_rest_of_the_vote_counts() -> None:
    record, reason = read_vote(vote("probably", refuted=True))
    assert reason is None and record.status == "valid" and record.refuted is True
    assert record.answers is None
    record, _ = read_vote(vote("no"))
    assert record.answers == "no"


Y, P, N, X = "yes", "partly", "no", None


@pytest.mark.parametrize(
    ("answers", "off"),
    [
        ([N, N, N], True),
        ([N, N, Y], True),
        ([N, N, X], True),  # an abstention does not save it
        ([N, N], True),
        ([N, Y, P], False),
        ([N, P, P], False),
        ([N, N, P, P], False),  # a tie is no majority (a larger panel)
        ([N, X, X], False),  # one judge is no majority
        ([N], False),
        ([X, X, X], False),  # every vote abstained: nothing is decided, the claim stays
        ([], False),
        ([Y, Y, Y], False),
        ([P, P, N], False),
    ],
)
def test_a_claim_is_off_its_question_only_by_a_majority_saying_no(
    answers: list[Answers | None], off: bool
) -> None:
    settings = Settings(panel_size=max(3, len(answers)))
    assert off_question(answers, settings) is off


def records() -> list[VoteRecord]:
    """Every vote a panel can record: refuting, upholding or abstaining, each with every
    answer (a whole-vote abstention answers nothing)."""
    cast = [
        VoteRecord(refuted=refuted, status="valid", answers=answer)
        for refuted in (True, False)
        for answer in (Y, P, N, X)
    ]
    return [*cast, VoteRecord(status="abstained")]


def decided(votes: list[VoteRecord] | tuple[VoteRecord, ...]) -> tuple[str, bool]:
    return outcome(votes, SETTINGS), off_question([v.answers for v in votes], SETTINGS)


def test_stopping_the_panel_early_never_changes_either_decision() -> None:
    stopped = 0
    for sequence in product(records(), repeat=SETTINGS.panel_size):
        for first in (1, 2):  # one vote at a time, or two in parallel first
            cast = list(sequence[:first])
            while len(cast) < len(sequence) and panel_settled(cast, SETTINGS) is None:
                cast.append(sequence[len(cast)])
            assert decided(cast) == decided(sequence), sequence
            stopped += len(cast) < len(sequence)
    assert stopped > 0


@pytest.mark.parametrize(
    ("answers", "open_"),
    [
        ([Y, Y], False),
        ([N, N], False),
        ([Y, N], True),  # the third judge decides
        ([N, X], True),
        ([X, X], False),  # a third "no" alone is no majority
        ([P, X], False),
    ],
)
def test_two_votes_leave_the_question_open_only_when_a_third_can_decide(
    answers: list[Answers | None], open_: bool
) -> None:
    assert settled(answers, SETTINGS) is not open_


def test_the_panel_records_the_decision_and_the_strip_reason_gives_the_tally() -> None:
    votes = panel([vote("no"), vote("maybe"), vote("no")], SETTINGS)
    assert votes.off_question and votes.outcome == "survives"
    claim = Claim(id="C4", claim="The record is published online.", sq="sq4", votes=votes)
    assert strip_reason(claim) == (
        "does not answer its sub-question sq4, the judges voted (yes 0, partly 0, no 2)"
    )
    kept = claim.model_copy(update={"votes": panel([vote("no"), vote("yes")], SETTINGS)})
    assert strip_reason(kept) is None
    assert strip_reason(claim.model_copy(update={"votes": None})) is None


def test_sub_questions_are_read_as_claims_json_lists_them() -> None:
    document = ClaimsFile(
        topic="t",
        sub_questions=[{"id": "sq1", "question": "Since when?"}, "sq2", {"id": "sq3"}, 7],
    )
    assert sub_question_texts(document) == {"sq1": "Since when?", "sq3": "sq3"}
