"""One claim per fact: wordings that state the same fact group together; near misses do not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deep_research.decide.samefact import FactGroups, Wording, same_fact

HOLLOWAY = (
    "The engineer Margaret Holloway designed the Old Harbour Bridge and also planned the "
    "harbour railway line."
)
HOLLOWAY_AGAIN = (
    "The Old Harbour Bridge was designed by the engineer Margaret Holloway, who also planned "
    "the harbour railway."
)


def said(text: str) -> Wording:
    return Wording(text, text)


def test_two_wordings_of_one_fact_are_one_fact() -> None:
    assert same_fact(said(HOLLOWAY), said(HOLLOWAY_AGAIN))
    assert same_fact(
        said("In 1923 the Old Harbour Bridge was opened to traffic."),
        said("The Old Harbour Bridge opened to traffic in 1923."),
    )


@pytest.mark.parametrize(
    ("a", "b", "why"),
    [
        (
            "The Old Harbour Bridge was opened to traffic in 1923.",
            "The Old Harbour Bridge was opened to traffic in 1927.",
            "another year",
        ),
        (
            "The lock is held by one thread at a time, so threads do not run bytecode in parallel.",
            "The lock is held by one thread at a time, so threads run bytecode in parallel.",
            "one negates",
        ),
        (
            HOLLOWAY,
            "The bridge was designed by the engineer Margaret Holloway, who also planned the "
            "harbour railway.",
            "a name of one wording is not in the other's quote",
        ),
        ("The bridge opened in 1923.", "The bridge closed in 1923.", "too little in common"),
        (
            "Static method objects provide a way of defeating the transformation of function "
            "objects to method objects.",
            "Static method objects are also callable.",
            "a short sentence inside a longer one",
        ),
        (
            "Each operand of a chained comparison is evaluated once.",
            "The interpreter caches the middle value of a chained comparison for speed.",
            "overlap below the share",
        ),
    ],
)
def test_near_misses_stay_apart(a: str, b: str, why: str) -> None:
    assert not same_fact(said(a), said(b)), why


def test_groups_key_each_finding_by_its_first_wording() -> None:
    groups = FactGroups()
    first = groups.key(HOLLOWAY, HOLLOWAY, "S1")
    assert groups.key(HOLLOWAY_AGAIN, HOLLOWAY_AGAIN, "S2") == first
    # The same wording again (other spacing, other case) joins the same group without a check.
    assert groups.key("  " + HOLLOWAY_AGAIN.upper(), "x", "S3") == first
    other = "The Old Harbour Bridge was opened to traffic in 1927."
    assert groups.key(other, other, "S2") != first


def test_a_documents_own_sentences_are_grouped_only_word_for_word() -> None:
    groups = FactGroups()
    first = groups.key(HOLLOWAY, HOLLOWAY, "S1")
    assert groups.key(HOLLOWAY_AGAIN, HOLLOWAY_AGAIN, "S1") != first
    assert groups.key(HOLLOWAY, HOLLOWAY, "S1") == first


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            'The context manager\'s "__exit__()" method is loaded for later use by the statement.',
            'The context manager\'s "__enter__()" method is loaded for later use by the statement.',
        ),
        (
            "The `|` operator yields the bitwise OR of its integer arguments and operands.",
            "The `&` operator yields the bitwise AND of its integer arguments and operands.",
        ),
    ],
)
def test_one_template_over_two_quoted_terms_is_two_facts(a: str, b: str) -> None:
    assert not same_fact(said(a), said(b))


_BY_CONTENT = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "facts_by_content.json").read_text(encoding="utf-8")
)["cases"]


@pytest.mark.parametrize("case", _BY_CONTENT, ids=[c["why"] for c in _BY_CONTENT])
def test_one_fact_by_its_content_in_any_wording(case: dict[str, object]) -> None:
    a, b = said(str(case["a"])), said(str(case["b"]))
    assert same_fact(a, b) is case["same"]
    assert same_fact(b, a) is case["same"]
