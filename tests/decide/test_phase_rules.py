"""Each phase's rules as both drivers call them: the panel's claims and votes, CIBER's skips and
claims, the plan's floors by depth — each read from the settings in force."""

from __future__ import annotations

from itertools import product
from typing import Any

import pytest

from deep_research.decide.phase_rules import (
    PlanFloors,
    ciber_claims,
    ciber_skip,
    panel_claims,
    votes_wanted,
)
from deep_research.decide.votes import ABSTAIN, REFUTE, UPHOLD, outcome, settled
from deep_research.errors import InputError
from deep_research.models import ClaimsFile, VoteRecord
from deep_research.settings import Settings, load_settings

R, U, A = REFUTE, UPHOLD, ABSTAIN


def document(claims: list[dict[str, Any]], **fields: Any) -> ClaimsFile:
    rows = [
        {"id": f"C{n}", "claim": f"claim {n}", "supporting": ["S1"], **row}
        for n, row in enumerate(claims, start=1)
    ]
    return ClaimsFile.model_validate(
        {"topic": "t", "generated": "2026-12-01", "depth": "full", "claims": rows, **fields}
    )


@pytest.mark.parametrize(
    ("size", "cast", "wanted"),
    [
        (3, [], 2),  # two at once, as the plugin always sent
        (3, [U, U], 0),
        (3, [R, R], 0),
        (3, [U, R], 1),  # the third only on a split
        (3, [U, A], 1),  # an abstention settles nothing
        (3, [U, R, U], 0),  # the panel is full
        (3, [U, R, U, R], 0),  # votes past the panel are not read
        # At five, until four votes are in, the votes to come could still find the evidence off
        # its sub-question (decide/relevance_votes.py): the panel stays open for that too.
        (5, [], 4),
        (5, [U, U], 2),  # two refutes could still kill it
        (5, [U, U, U], 1),  # a fourth uphold leaves one vote, which cannot kill
        (5, [U, U, U, U], 0),
        (5, [R], 3),  # one more refute would kill, but whether it answers stays open
    ],
)
def test_votes_wanted_by_panel_size(size: int, cast: list[VoteRecord], wanted: int) -> None:
    assert votes_wanted(cast, Settings(panel_size=size)) == wanted


@pytest.mark.parametrize(("cast", "wanted"), [([], 1), ([U], 0), ([R], 0), ([A], 0)])
def test_a_panel_of_one_sends_one_skeptic(cast: list[VoteRecord], wanted: int) -> None:
    settings = Settings(panel_size=1, kill_votes=1, survive_valid_votes=1)
    assert votes_wanted(cast, settings) == wanted


def _one_at_a_time(votes: tuple[VoteRecord, ...], settings: Settings) -> int:
    """How many votes a driver asking one per round casts: until the outcome is settled."""
    count = 0
    while count < settings.panel_size and settled(votes[:count], settings) is None:
        count += 1
    return count


def _in_batches(votes: tuple[VoteRecord, ...], settings: Settings) -> int:
    """How many a driver asking ``votes_wanted`` at once casts."""
    count = 0
    while (more := votes_wanted(votes[:count], settings)) > 0:
        count += more
    return count


@pytest.mark.parametrize(
    ("size", "kill", "survive"), [(1, 1, 1), (2, 1, 2), (3, 2, 2), (4, 2, 3), (5, 2, 2), (5, 3, 3)]
)
def test_batches_cast_the_votes_one_at_a_time_casts_with_the_same_outcome(
    size: int, kill: int, survive: int
) -> None:
    # Every sequence the skeptics could answer: the parallel driver (the plugin) and the
    # one-per-round driver (headless) ask the same number of votes and reach the same outcome.
    settings = Settings(panel_size=size, kill_votes=kill, survive_valid_votes=survive)
    for votes in product((R, U, A), repeat=size):
        batched, single = _in_batches(votes, settings), _one_at_a_time(votes, settings)
        assert batched == single, (votes, batched, single)
        assert outcome(votes[:batched], settings) == outcome(votes, settings), votes


def test_panel_claims_are_the_traced_load_bearing_ones() -> None:
    claims = [
        {"support_class": "Supported", "importance": "central"},
        {"support_class": "Supported", "importance": "supporting"},
        {"support_class": "Unsupported", "importance": "central"},
    ]
    assert [c.id for c in panel_claims(document(claims))] == ["C1"]
    # With no central claim every traced claim bears the brief; an untraced one never goes.
    claims = [{"support_class": "Supported"}, {"support_class": "Uncertain"}]
    assert [c.id for c in panel_claims(document(claims))] == ["C1"]


HIGH = {"confidence": "high"}


@pytest.mark.parametrize(
    ("claims", "fields", "skip"),
    [
        ([HIGH, HIGH], {"depth": "quick", "refetch_pass_rate": 0.5}, "depth-quick"),
        ([HIGH, HIGH], {"refetch_pass_rate": 0.5}, "refetch-hard-fail"),
        ([HIGH], {"refetch_pass_rate": 0.5}, "refetch-hard-fail"),  # checked before the count
        ([HIGH, HIGH], {"refetch_pass_rate": 0.7}, None),  # at the threshold is no hard fail
        ([HIGH, HIGH], {}, None),  # no rate (nothing re-fetched) is no hard fail
        ([HIGH, {"confidence": "medium"}], {}, "insufficient-high-confidence-claims"),
    ],
)
def test_ciber_skip(claims: list[dict[str, Any]], fields: dict[str, Any], skip: str | None) -> None:
    assert ciber_skip(document(claims, **fields), Settings()) == skip


def test_ciber_claims_are_the_first_top_n_high_ones() -> None:
    doc = document([HIGH, {"confidence": "medium"}, HIGH, HIGH])
    assert [c.id for c in ciber_claims(doc, Settings().ciber_top_n)] == ["C1", "C3", "C4"]
    assert [c.id for c in ciber_claims(doc, 2)] == ["C1", "C3"]


def test_plan_floors_by_depth() -> None:
    settings = Settings(full_counter_queries_per_sub_question=2)
    assert PlanFloors.of(settings, "full") == PlanFloors(5, 4, 2)
    assert PlanFloors.of(settings, "quick") == PlanFloors(3, 2, 0)  # no round 2 at quick


@pytest.mark.parametrize(
    ("overrides", "ok"),
    [
        (["panel_size=1"], False),  # one vote can neither kill nor uphold at the defaults
        (["panel_size=3", "survive_valid_votes=4"], False),
        (["panel_size=1", "kill_votes=1", "survive_valid_votes=1"], True),
        (["panel_size=5"], True),
    ],
)
def test_a_panel_that_could_decide_nothing_is_refused(overrides: list[str], ok: bool) -> None:
    if ok:
        assert load_settings(overrides, environ={}).panel_size == int(overrides[0][-1])
        return
    with pytest.raises(InputError, match="no claim could be decided"):
        load_settings(overrides, environ={})
