"""The skeptic panel: aggregation, abstentions, and early stopping over every vote sequence."""

from __future__ import annotations

import json
import re
from itertools import product
from pathlib import Path

import pytest

from briefs import PageSpec, page, read_claims, write_brief
from conftest import REPO
from deep_research.cli import main
from deep_research.decide.votes import (
    ABSTAIN,
    REFUTE,
    UPHOLD,
    discarded_votes,
    outcome,
    panel,
    parse_vote,
    read_vote,
    run_votes,
    settled,
    tally,
)
from deep_research.errors import InputError, SchemaViolation
from deep_research.gates.trace import TraceOptions, run_trace
from deep_research.models import VoteRecord
from deep_research.schemas import validator
from deep_research.settings import Settings

SETTINGS = Settings()
R, U, A = REFUTE, UPHOLD, ABSTAIN


@pytest.mark.parametrize(
    ("votes", "expected", "score"),
    [
        ([U, U, U], "survives", "3-0"),
        ([U, U, R], "survives", "2-1"),
        ([U, R, R], "killed", "1-2"),
        ([R, R, R], "killed", "0-3"),
        ([U, U, A], "survives", "2-0"),
        ([U, R, A], "survives", "1-1"),  # two valid votes, one refutes: survives
        ([R, R, A], "killed", "0-2"),
        ([U, A, A], "unverified", "1-0"),  # infrastructure failure: neither refuted nor confirmed
        ([R, A, A], "unverified", "0-1"),
        ([A, A, A], "unverified", "0-0"),
        ([], "unverified", "0-0"),
    ],
)
def test_outcome_table(votes: list[VoteRecord], expected: str, score: str) -> None:
    assert outcome(votes, SETTINGS) == expected
    assert tally(votes) == score


def _early_stopped(sequence: tuple[VoteRecord, ...], first_batch: int) -> list[VoteRecord]:
    """Cast ``first_batch`` votes at once (1 = sequential, 2 = two in parallel), then one by one,
    stopping as soon as the outcome is settled."""
    cast = list(sequence[:first_batch])
    while len(cast) < len(sequence) and settled(cast, SETTINGS) is None:
        cast.append(sequence[len(cast)])
    return cast


@pytest.mark.parametrize("first_batch", [1, 2])
def test_early_stop_never_changes_an_outcome(first_batch: int) -> None:
    stopped_early = 0
    for sequence in product((R, U, A), repeat=SETTINGS.panel_size):
        full = outcome(sequence, SETTINGS)
        cast = _early_stopped(sequence, first_batch)
        assert outcome(cast, SETTINGS) == full, sequence
        if len(cast) < len(sequence):
            stopped_early += 1
            assert settled(cast, SETTINGS) == full
    assert stopped_early > 0  # the rule does stop early sometimes (two agreeing votes)


def test_every_prefix_settles_only_on_the_final_outcome() -> None:
    # Stronger than the simulation: at any point, a settled answer equals every completion's.
    for length in range(SETTINGS.panel_size + 1):
        for prefix in product((R, U, A), repeat=length):
            answer = settled(prefix, SETTINGS)
            rest = SETTINGS.panel_size - length
            finals = {
                outcome([*prefix, *tail], SETTINGS) for tail in product((R, U, A), repeat=rest)
            }
            assert (answer is not None) == (len(finals) == 1)
            if answer is not None:
                assert finals == {answer}


def test_two_agreeing_votes_stop_the_panel() -> None:
    assert settled([U, U], SETTINGS) == "survives"
    assert settled([R, R], SETTINGS) == "killed"
    assert settled([U, R], SETTINGS) is None
    assert settled([A, A], SETTINGS) == "unverified"


@pytest.mark.parametrize(
    ("raw", "status", "refuted"),
    [
        ({"refuted": True, "evidence": "page says 2.1m", "confidence": 0.8}, "valid", True),
        (
            {"refuted": False, "evidence": "", "confidence": 0.5, "counterSource": "S3"},
            "valid",
            False,
        ),
        ({"refuted": True, "evidence": "x", "confidence": 7}, "valid", True),  # clamped to 1.0
        (None, "abstained", None),  # the vote call errored
        ({"error": "timeout"}, "abstained", None),
        ({"refuted": "maybe", "evidence": "", "confidence": 0.5}, "abstained", None),
        ({"evidence": "no verdict", "confidence": 0.5}, "abstained", None),
        ("refuted", "abstained", None),
    ],
)
def test_parse_vote(raw: object, status: str, refuted: bool | None) -> None:
    vote = parse_vote(raw)
    assert vote.status == status and vote.refuted is refuted
    if vote.confidence is not None:
        assert 0.0 <= vote.confidence <= 1.0


def _contract_example() -> dict[str, object]:
    """The vote agents/skeptic.md tells the skeptic to return."""
    text = (REPO / "agents" / "skeptic.md").read_text(encoding="utf-8")
    found = re.search(r"`(\{\"refuted\".*?\})`", text, re.DOTALL)
    assert found is not None, "agents/skeptic.md shows no vote"
    value: dict[str, object] = json.loads(found.group(1))
    return value


def test_the_contract_example_is_a_vote_that_counts() -> None:
    example = _contract_example()
    assert not list(validator("skeptic-vote").iter_errors(example))
    vote, reason = read_vote(example)
    assert reason is None and vote.status == "valid" and vote.refuted is True
    assert vote.answers == example["answers"]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (
            {"refuted": False, "evidence": "as quoted", "confidence": "high"},
            "confidence: Input should be a valid number",
        ),
        ({"refuted": False, "confidence": 0.5}, "evidence: Field required"),
        (
            {"refuted": False, "evidence": "", "confidence": 0.5, "claim_id": "C1"},
            "claim_id: Extra inputs are not permitted",
        ),
        (None, "null: the skeptic returned no vote"),
        ({"error": "timeout"}, "the skeptic call errored: timeout"),
        (["refuted"], "not a JSON object but list"),
    ],
)
def test_a_vote_not_counted_says_why(raw: object, reason: str) -> None:
    vote, why = read_vote(raw)
    assert vote.status == "abstained" and why is not None and why.startswith(reason)


def test_panel_reads_at_most_panel_size_votes() -> None:
    refute = {"refuted": True, "evidence": "", "confidence": 1}
    uphold = {"refuted": False, "evidence": "", "confidence": 1}
    votes = panel([uphold, uphold, refute, refute, refute], SETTINGS)
    assert votes.outcome == "survives" and votes.tally == "2-1" and len(votes.records) == 3


# --- recording votes in a brief -------------------------------------------------------------

QUOTE = "approve a budget of $1.82 billion for the 2025 fiscal year, an increase of 3.5%"


def _brief(tmp_path: Path) -> Path:
    root = write_brief(
        tmp_path / "brief",
        [
            PageSpec(
                "https://harbourton-news.example/budget",
                page("city-budget.txt"),
                [("Budget", QUOTE)],
            ),
            PageSpec("https://never.example/x", None, [("Budget", QUOTE)], fetch="never"),
        ],
        [
            {"claim": "Harbourton approved a $1.82 billion budget for 2025", "supporting": ["S1"]},
            {"claim": "Harbourton approved a $1.82 billion budget for 2025", "supporting": ["S2"]},
        ],
    )
    run_trace(TraceOptions(brief=root))
    return root


def test_votes_are_recorded_per_claim(tmp_path: Path) -> None:
    root = _brief(tmp_path)
    votes = tmp_path / "votes.json"
    votes.write_text(
        json.dumps(
            {"C1": [None, {"refuted": True, "evidence": "e", "confidence": 0.9}, {"error": "500"}]}
        )
    )
    summary = run_votes(root, votes, SETTINGS)
    assert summary["outcomes"] == {"C1": "unverified"}
    claim = read_claims(root)["claims"][0]
    assert claim["votes"]["outcome"] == "unverified" and claim["votes"]["tally"] == "0-1"
    trace = json.loads((root / "trace.json").read_text())
    assert trace["phases"]["votes"]["raw"]["C1"][2] == {"error": "500"}
    assert [(d["vote"], d["reason"]) for d in summary["discarded"]] == [
        (1, "null: the skeptic returned no vote"),
        (3, "the skeptic call errored: 500"),
    ]
    assert trace["phases"]["votes"]["discarded"] == summary["discarded"]


def test_word_confidences_are_reported_not_silently_abstained(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Votes shaped like an older skeptic contract ("confidence": "high"): none of them counts,
    # and the command says so for each one, in its result and on stderr.
    root = _brief(tmp_path)
    worded = {"refuted": False, "evidence": "the page states it", "confidence": "high"}
    votes = tmp_path / "votes.json"
    votes.write_text(json.dumps({"C1": [worded, worded]}))
    capsys.readouterr()
    assert main(["votes", str(root), "--input", str(votes)]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["outcomes"] == {"C1": "unverified"}
    assert [d["vote"] for d in result["discarded"]] == [1, 2]
    lines = captured.err.splitlines()
    assert len(lines) == 2 and all(
        line.startswith("discarded: C1 vote ") and "confidence" in line for line in lines
    )


def test_votes_beyond_the_panel_size_are_reported() -> None:
    uphold = {"refuted": False, "evidence": "", "confidence": 1}
    found = discarded_votes({"C1": [uphold] * 4}, SETTINGS)
    assert [(d.claim, d.vote, d.reason) for d in found] == [
        ("C1", 4, "beyond panel_size (3): not read")
    ]


@pytest.mark.parametrize(
    ("payload", "error", "message"),
    [
        ({"C2": []}, InputError, "only claims that passed the trace gate"),
        ({"C9": []}, InputError, "not in claims.json"),
        (["C1"], SchemaViolation, "expected"),
    ],
)
def test_bad_votes_input_changes_nothing(
    tmp_path: Path, payload: object, error: type[Exception], message: str
) -> None:
    root = _brief(tmp_path)
    before = (root / "claims.json").read_bytes(), (root / "trace.json").read_bytes()
    votes = tmp_path / "votes.json"
    votes.write_text(json.dumps(payload))
    with pytest.raises(error, match=message):
        run_votes(root, votes, SETTINGS)
    assert ((root / "claims.json").read_bytes(), (root / "trace.json").read_bytes()) == before
