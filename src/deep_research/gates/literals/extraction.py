"""All the literals of a text: each reader claims its spans, the most specific first."""

from __future__ import annotations

from operator import attrgetter

from deep_research.gates.literals.dates import date_tokens, infer_years
from deep_research.gates.literals.memo import memoized
from deep_research.gates.literals.names import identifier_tokens, name_tokens
from deep_research.gates.literals.number_words import count_word_tokens, word_tokens
from deep_research.gates.literals.numbers import number_tokens
from deep_research.gates.literals.tokens import LiteralToken, TakenSpans


def extract(text: str) -> list[LiteralToken]:
    """All literals of ``text`` in order of position (each reader's module states its rules)."""
    return list(literals_of(text))


#: The only non-ASCII characters that case-insensitive patterns match as ASCII letters. The word
#: tables are ASCII, so these are folded first (one character each: offsets stay valid).
_IGNORECASE_ALIASES = str.maketrans({"İ": "I", "ı": "i", "ſ": "s", "\u212a": "K"})


_START = attrgetter("start")


@memoized
def literals_of(text: str) -> tuple[LiteralToken, ...]:
    """:func:`extract` as a tuple: memoized, so the check shares it between claims and quotes."""
    text = text.translate(_IGNORECASE_ALIASES)
    taken = TakenSpans()
    tokens = identifier_tokens(text, taken)
    tokens += date_tokens(text, taken)
    tokens += number_tokens(text, taken)
    tokens += count_word_tokens(text, taken)
    tokens += word_tokens(text, taken)
    tokens += name_tokens(text, taken)
    tokens.sort(key=_START)
    return tuple(infer_years(tokens))
