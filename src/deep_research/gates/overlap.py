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

from deep_research.gates.vocabulary import STOP_WORDS, stem

MIN_SHARED_TOKENS = 2

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")


# A trace asks again for a claim it checked against another source; a batch of distinct rows
# never does, and a larger memo only holds more rows alive (8,192 was ~15 MB of a 100k-row gate).
@lru_cache(maxsize=1024)
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
