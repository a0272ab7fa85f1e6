"""Contradictions found in code: a year against a year, a length against a length — and the
pairs that only look like contradictions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deep_research.decide.contradictions import find_contradictions, merged
from deep_research.models import Claim, ClaimsFile, Votes

OPENED_1923 = "The Old Harbour Bridge was opened to traffic in 1923 after six years of work."
OPENED_1927 = (
    "According to the archive, the Old Harbour Bridge opened to traffic in 1927, four years "
    "later than often stated."
)
LONG_1240 = "The Old Harbour Bridge has a total length of 1,240 m, including both viaducts."
LONG_980 = "Measured between its abutments, the Old Harbour Bridge is 980 m long."


def claims(*texts: str, sq: str = "sq1", **extra: object) -> list[Claim]:
    return [
        Claim(id=f"C{n}", claim=text, sq=sq, support_class="Supported", supporting=[f"S{n}"])
        for n, text in enumerate(texts, start=1)
    ]


def test_a_year_against_a_year_and_a_length_against_a_length() -> None:
    found = find_contradictions(claims(OPENED_1923, LONG_1240, OPENED_1927, LONG_980))
    assert [(c.ids, c.topic) for c in found] == [
        (["C1", "C3"], "Year of Old Harbour Bridge opened traffic"),
        (["C2", "C4"], "Length of Old Harbour Bridge"),
    ]
    assert "C2 gives 1,240 m, C4 gives 980 m" in found[1].description


def test_figures_are_compared_by_value_in_one_unit() -> None:
    # 1.2 km is 1,240 m rounded; 0.98 km is not.
    assert not find_contradictions(claims(LONG_1240, "The Old Harbour Bridge is 1.2 km long."))
    assert find_contradictions(claims(LONG_1240, "The Old Harbour Bridge is 0.98 km long."))
    # A date agrees with its own year.
    assert not find_contradictions(
        claims(OPENED_1923, "The Old Harbour Bridge opened to traffic in March 1923.")
    )


@pytest.mark.parametrize(
    ("a", "b", "why"),
    [
        ("Python 2.0 was released in 2000.", "Python 3.0 was released in 2008.", "two releases"),
        (
            "The bridge was designed in 1920.",
            "The bridge opened in 1923.",
            "two events of one subject",
        ),
        (OPENED_1923, LONG_980, "a year and a length are not one kind"),
        (
            OPENED_1923,
            "The Old Harbour Bridge was opened to traffic before 1930.",
            "a bound is not a flat value",
        ),
        (
            "The harbour railway line opened to traffic in 1931.",
            "The Old Harbour Bridge hotel opened in 1927.",
            "one shared word is no shared subject",
        ),
    ],
)
def test_pairs_that_only_look_like_contradictions(a: str, b: str, why: str) -> None:
    assert not find_contradictions(claims(a, b)), why


def test_only_emitted_claims_and_one_slot_across_sub_questions_are_compared() -> None:
    pair = claims(OPENED_1923, OPENED_1927)
    # Found for other sub-questions, one slot ("opened to traffic in") with two years is
    # still one thing disputed; two figures of other slots are not compared.
    assert find_contradictions(pair, {"C1": frozenset({"sq1"}), "C2": frozenset({"sq2"})})
    other = claims(OPENED_1923, "The Old Harbour Bridge was painted grey in 1927 by the city.")
    assert not find_contradictions(other, {"C1": frozenset({"sq1"}), "C2": frozenset({"sq2"})})
    assert find_contradictions(pair, {"C1": frozenset({"sq1", "sq2"}), "C2": frozenset({"sq2"})})
    unsupported = [pair[0], pair[1].model_copy(update={"support_class": "Partially Supported"})]
    assert not find_contradictions(unsupported)
    refuted = pair[1].model_copy(update={"votes": Votes(tally="0-3", outcome="killed", records=[])})
    assert not find_contradictions([pair[0], refuted])


def test_recording_twice_adds_nothing() -> None:
    document = ClaimsFile(topic="t", claims=claims(OPENED_1923, OPENED_1927))
    found = find_contradictions(document.claims)
    once = merged(document, found)
    assert merged(once, found) == once
    assert len(once.unresolved_contradictions) == 1


_BY_CONTENT = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "facts_by_content.json").read_text(encoding="utf-8")
)["cases"]


@pytest.mark.parametrize("case", _BY_CONTENT, ids=[c["why"] for c in _BY_CONTENT])
def test_one_slot_with_two_figures_contradicts_in_any_wording(case: dict[str, object]) -> None:
    # Found by different sub-questions: the slot, not the plan, says they are about one thing.
    a = claims(str(case["a"]), sq="sq1")[0]
    b = claims(str(case["b"]), sq="sq2")[0].model_copy(update={"id": "C2"})
    assert bool(find_contradictions([a, b])) is case["contradict"]
