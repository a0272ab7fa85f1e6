"""Quote location: table-driven cases, adversarial cases, properties and the eval targets."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from conftest import FIXTURES
from deep_research.gates.locate import (
    ELLIPSIS_MAX_GAP,
    FUZZY_MIN_CHARS,
    MIN_SUPPORT_CHARS,
    Document,
    Located,
    locate,
)
from deep_research.gates.textnorm import normalize

_TABLE: dict[str, Any] = json.loads((FIXTURES / "locate_cases.json").read_text(encoding="utf-8"))
_DOCUMENTS: dict[str, Document] = {
    name: Document(text) for name, text in _TABLE["documents"].items()
}


@pytest.mark.parametrize("case", _TABLE["cases"], ids=[case["name"] for case in _TABLE["cases"]])
def test_table(case: dict[str, Any]) -> None:
    document = _DOCUMENTS[case["doc"]]
    result = locate(case["quote"], document)
    if case["method"] is None:
        assert result is None
        return
    assert result is not None
    assert result.method == case["method"]
    assert document.text[result.start : result.end] == case["span"]
    assert result.hash == document.content_hash


def test_table_covers_every_method_and_refusals() -> None:
    methods = Counter(case["method"] for case in _TABLE["cases"])
    assert set(methods) == {"exact", "normalized", "ellipsis", "fuzzy", None}
    assert methods[None] >= 10


# --- result fields ----------------------------------------------------------------------------


def test_document_hash_is_sha256_of_utf8_and_a_given_hash_is_kept() -> None:
    text = "Caf\u00e9 prices rose."
    assert Document(text).content_hash == "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert Document(text, "sha256:given").content_hash == "sha256:given"


def test_document_normalization_is_cached() -> None:
    document = Document("Some  Text")
    assert document.normalized is document.normalized
    assert document.normalized.text == "some text"


def test_plain_string_document() -> None:
    text = "Alpha beta gamma delta epsilon zeta eta theta iota kappa."
    result = locate("gamma delta", text)
    assert result == Located(
        hash=Document(text).content_hash,
        start=11,
        end=22,
        method="exact",
        score=100.0,
        matched_chars=11,
    )


def test_first_occurrence_wins() -> None:
    text = "The same sentence appears twice. The same sentence appears twice."
    result = locate("the same sentence appears twice.", text)
    assert result is not None
    assert (result.start, result.method) == (0, "normalized")


def test_ellipsis_reports_min_segment_score_and_matched_chars_without_gaps() -> None:
    document = _DOCUMENTS["science"]
    quote = "Extremophiles are bacteria ... such as hot springs and deep-sea vnts."
    result = locate(quote, document)
    assert result is not None
    assert result.method == "ellipsis"
    assert 90.0 < result.score < 100.0
    assert result.matched_chars == len("Extremophiles are bacteria") + len(
        "such as hot springs and deep-sea vents."
    )
    assert result.end - result.start > result.matched_chars


def test_fuzzy_score_is_a_similarity() -> None:
    document = _DOCUMENTS["science"]
    result = locate(
        "Researchers at the institute sequenced the genme of one such organism", document
    )
    assert result is not None
    assert result.method == "fuzzy"
    assert 95.0 < result.score < 100.0


def test_short_spans_are_located_but_flagged_by_the_constant() -> None:
    result = locate("12%", _DOCUMENTS["report"])
    assert result is not None
    assert result.end - result.start < MIN_SUPPORT_CHARS


# --- adversarial cases that need code to build --------------------------------------------------


def test_ellipsis_segments_beyond_the_gap_bound_are_not_a_quote() -> None:
    head = "The council approved the new budget for schools on Monday evening."
    tail = "The mayor said the decision was long overdue for the whole city."
    near = f"{head} {'Filler words here. ' * 10}{tail}"
    far = f"{head} {'Filler words here. ' * (ELLIPSIS_MAX_GAP // 10)}{tail}"
    quote = "The council approved the new budget ... the decision was long overdue"
    assert locate(quote, near) is not None
    assert locate(quote, far) is None


def test_one_word_change_in_a_long_quote_is_located_as_the_documents_words() -> None:
    """Decision: a one-word change within the edit budget (5% of the quote) is located, because
    typos and extraction noise look the same; the evidence is the document's span, which keeps
    the original word. Figures and negations are never forgiven (see the table)."""
    text = (
        "Over the past decade the regional hospital network steadily increased the number of "
        "intensive care beds, according to the annual health ministry report."
    )
    quote = text.replace("increased", "decreased")
    result = locate(quote, text)
    assert result is not None
    assert result.method == "fuzzy"
    span = text[result.start : result.end]
    assert "increased" in span
    assert "decreased" not in span


def test_fuzzy_never_runs_on_short_quotes() -> None:
    text = "The committee meets every second Tuesday of the month."
    quote = "every second Tusday"
    assert len(normalize(quote)) < FUZZY_MIN_CHARS
    assert locate(quote, text) is None


def test_foreign_quote_in_a_large_document_is_rejected_quickly() -> None:
    filler = " ".join(f"Sentence number {i} talks about topic {i % 97}." for i in range(20_000))
    document = Document(filler)
    _ = document.normalized
    assert (
        locate("A completely different statement about volcanic activity in Iceland.", document)
        is None
    )


# --- properties -------------------------------------------------------------------------------

_alphabet = st.sampled_from(
    [*"abcdefghij klmnop .,;'\"-", "\u2019", "\u2014", "\u00e9", "\u00a0", "\n", "\u2026"]
)


@given(st.text(alphabet=_alphabet, min_size=40, max_size=300), st.data())
def test_any_substring_of_40_chars_is_located_at_its_first_occurrence(
    text: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(text) - 40))
    end = data.draw(st.integers(start + 40, len(text)))
    quote = text[start:end]
    result = locate(quote, text)
    if not any(char.isalnum() for char in normalize(quote)):
        assert result is None
        return
    assert result is not None
    assert result.method == "exact"
    assert (result.start, result.end) == (text.find(quote), text.find(quote) + len(quote))


@given(st.text(alphabet=_alphabet, min_size=1, max_size=200), st.text(_alphabet, max_size=120))
def test_a_located_span_always_maps_inside_the_document(text: str, quote: str) -> None:
    result = locate(quote, text)
    if result is not None:
        assert 0 <= result.start <= result.end <= len(text)
        assert 0 < result.matched_chars <= result.end - result.start


@given(st.text(alphabet=_alphabet, min_size=60, max_size=300), st.data())
def test_case_and_white_space_changes_are_located_normalized(
    text: str, data: st.DataObject
) -> None:
    start = data.draw(st.integers(0, len(text) - 40))
    end = data.draw(st.integers(start + 40, len(text)))
    quote = text[start:end].upper().replace(" ", "  \n")
    assume(any(char.isalnum() for char in normalize(quote)))
    result = locate(quote, text)
    assert result is not None
    assert result.method in ("exact", "normalized")
    assert normalize(text[result.start : result.end]) == normalize(quote)


# --- the windowed path agrees with the whole document -----------------------------------------

_WORDS = st.sampled_from(
    [
        "harbour",
        "ships",
        "record",
        "council",
        "budget",
        "2023",
        "1,234",
        "approved",
        "the",
        "a",
        "Norland",
        "quarter",
        "energy",
        "\u2019s",
        "\u2014",
        "caf\u00e9",
        "not",
        "never",
        "units",
    ]
)
_PERTURB = st.sampled_from(["none", "spaces", "upper", "drop", "ellipsis", "curly"])


def _perturbed(quote: str, how: str, cut: int) -> str:
    if how == "spaces":
        return quote.replace(" ", "  ", 3)
    if how == "upper":
        return quote.upper()
    if how == "drop":
        return quote[:cut] + quote[cut + 1 :]
    if how == "ellipsis":
        return quote[:30] + " … " + quote[-30:]
    if how == "curly":
        return quote.replace("'", "\u2019").replace('"', "\u201c")
    return quote


@given(
    st.lists(st.lists(_WORDS, min_size=8, max_size=20), min_size=30, max_size=60),
    st.data(),
    _PERTURB,
)
def test_windows_find_what_the_whole_document_finds(
    sentences: list[list[str]], data: st.DataObject, how: str
) -> None:
    # Normalizing only windows around a rare verbatim piece of the quote is a shortcut: it must
    # place every quote where normalizing the whole document would.
    text = "\n\n".join(" ".join(words).capitalize() + "." for words in sentences)
    start = data.draw(st.integers(0, len(text) - 120))
    length = data.draw(st.integers(80, 200))
    quote = _perturbed(text[start : start + length], how, data.draw(st.integers(20, 60)))
    windowed = locate(quote, Document(text))
    whole = Document(text)
    _ = whole.normalized  # computed first: locate then skips the windows
    assert windowed == locate(quote, whole)


def test_a_window_never_prefers_a_fuzzy_match_to_a_normalized_one_elsewhere() -> None:
    # The quote's words occur twice: in a title line (without the "# ") and in the heading it
    # quotes. Every stage runs across all windows before the next, as over the whole text.
    filler = " ".join(["council budget report"] * 60)
    text = (
        "TITLE: Ryan Adams transforms Taylor Swift's 1989 into a melancholy masterpiece\n"
        f"{filler}\n# Ryan Adams transforms Taylor Swift's 1989 into a melancholy masterpiece\n"
        f"{filler}"
    )
    quote = "# ryan adams transforms taylor swift's 1989 into a melancholy masterpiece"
    found = locate(quote, Document(text))
    assert found is not None and found.method == "normalized"
    assert found.start == text.index("# Ryan")


@pytest.mark.parametrize(
    ("text", "piece"),
    [("a" * 17, "aa"), ("a" * 18, "aa"), ("xaxax" * 3, "xax"), ("abc", "d"), ("ab" * 20, "ab")],
)
def test_a_pieces_places_are_kept_only_while_str_count_finds_it_rare(text: str, piece: str) -> None:
    # One scan counts the piece (without overlaps, as str.count does) and places it (with them).
    from deep_research.gates.locate import _MAX_ANCHOR_HITS, _occurrences

    every = [at for at in range(len(text)) if text.startswith(piece, at)]
    expected = every if 0 < text.count(piece) <= _MAX_ANCHOR_HITS else []
    assert _occurrences(piece, text) == expected


@given(st.text(alphabet=st.sampled_from(list(". ()[]a…\n")), max_size=30))
def test_an_ellipsis_is_looked_for_only_where_it_can_be(text: str) -> None:
    # The ellipsis pattern is searched only in quotes holding ".." or ". .": it never matches
    # anywhere else.
    from deep_research.gates.locate import _ELLIPSIS

    if _ELLIPSIS.search(text):
        assert ".." in text or ". ." in text
