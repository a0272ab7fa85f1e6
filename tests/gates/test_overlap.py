"""Topical overlap: shared content tokens, with stop-words and bare numbers left out."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deep_research.gates.overlap import content_tokens, overlaps, shared_tokens
from deep_research.gates.vocabulary import stem


@pytest.mark.parametrize(
    ("claim", "quote", "expected"),
    [
        ("Heat pump sales rose in 2023", "Sales of heat pumps rose to 2.9 million", True),
        ("The councils approved budgets", "The council approved a budget of $1.82 billion", True),
        # Only stop-words and numbers in common: the quote is attached to the wrong claim.
        (
            "The tram opened in 2023 with 12 stops",
            "In 2023 the agency counted 12 installers",
            False,
        ),
        ("Volcanic ash grounded flights", "The council approved the budget", False),
        ("", "anything at all", False),
        ("Heat pumps", "", False),
    ],
)
def test_overlap_table(claim: str, quote: str, expected: bool) -> None:
    assert overlaps(claim, quote) is expected


def test_tokens_fold_case_accents_and_possessives() -> None:
    assert content_tokens("Zürich's Councils said") == {"zurich", "council"}
    assert shared_tokens("installers installed", "Installer installing") == ["install", "installer"]


@pytest.mark.parametrize(
    ("word", "expected"),
    [("budgets", "budget"), ("studies", "study"), ("is", "is"), ("ring", "ring")],
)
def test_stem(word: str, expected: str) -> None:
    assert stem(word) == expected


@given(st.text())
def test_a_text_never_overlaps_with_nothing(text: str) -> None:
    assert shared_tokens(text, "") == []
    assert set(shared_tokens(text, text)) == content_tokens(text)
