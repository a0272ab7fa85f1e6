"""Topical overlap (docs/contracts.md §4 step 4): does the quote talk about what the claim says?

A quote attached to the wrong claim usually shares almost no content words with it. We compare
content tokens — lower-cased, stop-words removed, reduced by a light suffix stemmer — and require
at least :data:`MIN_SHARED_TOKENS` in common. Pure numbers are left to the literal check, which
compares them by value; counting "2020" as topical overlap would let any dated quote pass.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

MIN_SHARED_TOKENS = 2

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")

STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    said says say according per via within without among amongst upon onto whether though
    although however thus therefore may might must shall one ones us many much several
    """.split()
)

# Longest suffix first, so "nationally" loses "ally" rather than "y".
_SUFFIXES = (
    "ational",
    "ations",
    "ation",
    "ings",
    "ing",
    "edly",
    "ies",
    "ied",
    "es",
    "ed",
    "ly",
    "s",
)


# The suffixes a word can end with, by its last character (order kept): most words end in a
# letter no suffix ends in and skip the loop.
_SUFFIXES_BY_LAST: dict[str, tuple[str, ...]] = {
    last: tuple(suffix for suffix in _SUFFIXES if suffix.endswith(last))
    for last in {suffix[-1] for suffix in _SUFFIXES}
}


def stem(word: str) -> str:
    """A deliberately light stemmer: enough to match plural/tense variants, never a lemmatizer."""
    for suffix in _SUFFIXES_BY_LAST.get(word[-1:], ()):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix in ("ies", "ied") else base
    return word


@lru_cache(maxsize=8192)
def content_tokens(text: str) -> frozenset[str]:
    """Stemmed content words of ``text``: accents and case folded, stop-words and numbers out."""
    folded = text.casefold()
    if not folded.isascii():
        decomposed = unicodedata.normalize("NFKD", folded)
        folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    tokens = set()
    for found in _WORD.findall(folded):
        word = found.replace("’", "'")
        word = word.removesuffix("'s")
        if word in STOP_WORDS or word.isdigit() or len(word) < 2:
            continue
        tokens.add(stem(word))
    return frozenset(tokens)


def shared_tokens(claim: str, quote: str) -> list[str]:
    """Content tokens claim and quote have in common, sorted for stable output."""
    return sorted(content_tokens(claim) & content_tokens(quote))


def overlaps(claim: str, quote: str) -> bool:
    return len(shared_tokens(claim, quote)) >= MIN_SHARED_TOKENS
