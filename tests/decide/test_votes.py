"""The skeptic panel: aggregation, abstentions, and early stopping over every vote sequence."""

from __future__ import annotations

import json
from itertools import product
from pathlib import Path

import pytest

from briefs import PageSpec, page, read_claims, write_brief
from deep_research.decide.votes import (
    ABSTAIN,
    REFUTE,
    UPHOLD,
    outcome,
    panel,
    parse_vote,
    run_votes,
    settled,
    tally,
)
from deep_research.errors import InputError, SchemaViolation
from deep_research.gates.trace import TraceOptions, run_trace
from deep_research.models import VoteRecord
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
