"""One claim per fact: wordings that state the same fact group together; near misses do not."""

from __future__ import annotations

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
    first = groups.key(HOLLOWAY, HOLLOWAY)
    assert groups.key(HOLLOWAY_AGAIN, HOLLOWAY_AGAIN) == first
    # The same wording again (other spacing, other case) joins the same group without a check.
    assert groups.key("  " + HOLLOWAY_AGAIN.upper(), "x") == first
    other = "The Old Harbour Bridge was opened to traffic in 1927."
    assert groups.key(other, other) != first
