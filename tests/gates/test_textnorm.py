"""Normalization and its offset map back to the original text."""

from __future__ import annotations

import unicodedata
from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deep_research.gates.textnorm import NormalizedText, OffsetMap, normalize, normalize_text


@pytest.mark.parametrize(
    ("original", "expected"),
    [
        ("Hello World", "hello world"),
        (
            "\u2018single\u2019 \u201cdouble\u201d \u201elow\u201f \u00abguillemets\u00bb",
            '\'single\' "double" "low" "guillemets"',
        ),
        ("a\u2010b\u2011c\u2012d\u2013e\u2014f\u2015g\u2212h\ufe63i\uff0dj", "a-b-c-d-e-f-g-h-i-j"),
        ("a\u00a0b\u2009c\u202fd\u3000e", "a b c d e"),
        ("  lots \t of\n\n white \r\n space  ", "lots of white space"),
        (
            "zero\u200bwidth\u200c\u200djoin\ufeffers and soft\u00adhyphen",
            "zerowidthjoiners and softhyphen",
        ),
        ("\ufb01ne \ufb02ow \u2026", "fine flow ..."),
        ("\uff21\uff22\uff23 \u00b2", "abc 2"),
        ("Stra\u00dfe \u0130stanbul \u03a3\u03a3", "strasse i\u0307stanbul \u03c3\u03c3"),
        ("e\u0301cole", "\u00e9cole"),
        ("a \u200b b", "a b"),
        ("a\u200b\u0301", "\u00e1"),
        ("", ""),
        (" \n\u00a0 ", ""),
    ],
)
def test_normalize_table(original: str, expected: str) -> None:
    assert normalize(original) == expected


def _chunks(original: str) -> list[str]:
    nt = normalize_text(original)
    return [original[slice(*nt.to_original(i, i + 1))] for i in range(len(nt.text))]


def test_expansion_maps_every_output_char_to_the_whole_source_char() -> None:
    assert _chunks("a\ufb01b") == ["a", "\ufb01", "\ufb01", "b"]
    assert _chunks("x\u2026") == ["x", "\u2026", "\u2026", "\u2026"]


def test_composition_maps_to_base_and_mark() -> None:
    assert _chunks("xe\u0301y") == ["x", "e\u0301", "y"]


def test_collapsed_space_is_owned_by_the_first_white_space_char() -> None:
    original = "a \n\t b"
    nt = normalize_text(original)
    assert nt.text == "a b"
    assert nt.to_original(1, 2) == (1, 2)
    assert nt.to_original(0, 3) == (0, 6)


def test_removed_characters_are_outside_tight_spans() -> None:
    original = "ab\u200b\u200bcd"
    nt = normalize_text(original)
    assert nt.text == "abcd"
    assert nt.to_original(0, 2) == (0, 2)
    assert nt.to_original(2, 4) == (4, 6)


def test_empty_range_and_bounds() -> None:
    nt = normalize_text("  Hello  ")
    assert nt.to_original(0, 0) == (2, 2)
    assert nt.to_original(5, 5) == (9, 9)
    with pytest.raises(ValueError):
        nt.to_original(3, 2)
    with pytest.raises(ValueError):
        nt.to_original(0, 6)


def test_offsets_sequence_protocol() -> None:
    nt = normalize_text("A  \u2019b")
    assert nt.text == "a 'b"
    assert list(nt.offsets) == [0, 1, 3, 4, 5]
    assert nt.offsets[-1] == 5
    assert nt.offsets[1:3] == [1, 3]
    with pytest.raises(IndexError):
        nt.offsets[5]


def test_plain_sequence_offsets_are_accepted() -> None:
    nt = NormalizedText("fi x", [0, 0, 1, 2, 3])
    assert nt.to_original(0, 1) == (0, 1)
    assert nt.to_original(2, 4) == (1, 3)


def test_mostly_ascii_text_is_stored_as_few_segments() -> None:
    original = ("Plain ASCII text, with a \u2018quote\u2019 now and then.\n\n" * 20_000)[:1_000_000]
    nt = normalize_text(original)
    assert isinstance(nt.offsets, OffsetMap)
    # One gap plus a few irregular stretches per sentence, not one entry per character.
    assert nt.offsets.segment_count < len(original) / 10
    assert nt.text.startswith("plain ascii text, with a 'quote' now and then. plain")


# --- properties -------------------------------------------------------------------------------

_INTERESTING = (
    " \t\n\r\u00a0\u2009\u3000\u200b\u00ad\ufeff\u2018\u2019\u201c\u201d\u2013\u2014\u2212"
    "\ufb01\u2026\u00c9\u00df\u0130\u03a3\u0301\u0308\u00a8\uff21\u00b2-'\".?"
)
texts = st.text(
    alphabet=st.one_of(
        st.sampled_from("abcXYZ 019,."), st.sampled_from(_INTERESTING), st.characters()
    ),
    max_size=60,
)


# Past a few hundred non-ASCII characters a stretch is translated in bulk rather than cluster by
# cluster; these strings exercise that path.
long_texts = st.text(
    alphabet=st.one_of(st.sampled_from(_INTERESTING), st.characters(min_codepoint=0x80)),
    min_size=260,
    max_size=400,
)


def _check_offsets(original: str) -> None:
    nt = normalize_text(original)
    offsets = list(nt.offsets)
    assert len(offsets) == len(nt.text) + 1
    assert offsets[-1] == len(original)
    assert all(0 <= o <= len(original) for o in offsets)
    assert all(a <= b for a, b in pairwise(offsets))


def _check_round_trip(original: str, data: st.DataObject) -> None:
    """For a normalized slice ``text[a:b]`` mapped to ``original[s:e]``:

    ``normalize(original[s:e])`` contains the slice (without its edge spaces) -- the span covers
    it -- and is itself a substring of the normalized text -- the span covers nothing but whole
    chunks of it.
    """
    nt = normalize_text(original)
    a = data.draw(st.integers(0, len(nt.text)))
    b = data.draw(st.integers(a, len(nt.text)))
    s, e = nt.to_original(a, b)
    assert 0 <= s <= e <= len(original)
    renormalized = normalize(original[s:e])
    assert nt.text[a:b].strip(" ") in renormalized
    assert renormalized in nt.text


def _check_idempotent(original: str) -> None:
    once = normalize(original)
    assert normalize(once) == once


@given(texts)
def test_offsets_are_monotone_and_in_bounds(original: str) -> None:
    _check_offsets(original)


@given(texts, st.data())
def test_mapped_span_normalizes_back_to_the_slice(original: str, data: st.DataObject) -> None:
    _check_round_trip(original, data)


@given(texts)
def test_normalize_is_idempotent(original: str) -> None:
    _check_idempotent(original)


@settings(max_examples=25)
@given(long_texts, st.data())
def test_long_stretches_keep_the_properties(original: str, data: st.DataObject) -> None:
    _check_offsets(original)
    _check_idempotent(original)
    _check_round_trip(original, data)


@given(st.text(alphabet=st.characters(max_codepoint=0x7F), max_size=200))
def test_ascii_is_lower_case_with_collapsed_white_space(original: str) -> None:
    assert normalize(original) == " ".join(original.lower().split())


def _oracle_char(char: str) -> str:
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", char).casefold())
    out = []
    for c in folded:
        if c.isspace():
            out.append(" ")
        elif c in "\u2018\u2019\u201a\u201b\u2039\u203a\uff07":
            out.append("'")
        elif c in "\u201c\u201d\u201e\u201f\u00ab\u00bb\uff02":
            out.append('"')
        elif c in "\u2212\u2796\ufe63\uff0d" or unicodedata.category(c) == "Pd":
            out.append("-")
        elif unicodedata.category(c) != "Cf":
            out.append(c)
    return "".join(out)


@given(
    st.text(alphabet=st.characters().filter(lambda c: unicodedata.combining(c) == 0), max_size=400)
)
def test_matches_a_character_by_character_oracle(original: str) -> None:
    """Without combining marks every character is its own cluster: the spec, literally."""
    expected = " ".join("".join(_oracle_char(c) for c in original).split(" "))
    expected = " ".join(part for part in expected.split(" ") if part)
    assert normalize(original) == expected
