"""The words next to a figure, which say what it counts."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from deep_research.gates.literals.extraction import literals_of
from deep_research.gates.literals.memo import memoized
from deep_research.gates.literals.tokens import LiteralToken
from deep_research.gates.vocabulary import FIGURE_CONTEXT_STOP_WORDS, stem


@dataclass(frozen=True)
class Evidence:
    """A quote literal with the content words around it, used to find what a figure counts."""

    token: LiteralToken
    context: frozenset[str]


_CONTEXT_WORDS = 1  # the word that names what a figure counts sits right next to it
#: How far either way context words are looked for: about a clause.
_CONTEXT_SPAN = 60
_CONTEXT_WORD_RE = re.compile(r"[^\W\d_]+")


def _content_words(words: Iterable[str], count: int) -> list[str]:
    """The first ``count`` lower-case content words of ``words``, stemmed: capitalized ones are
    mostly the sentence's subject, which every figure in it shares, so they cannot tell figures
    apart. Words past those are not stemmed (a figure reads only its nearest)."""
    found: list[str] = []
    for word in words:
        if len(found) == count:
            break
        if word.islower() and word not in FIGURE_CONTEXT_STOP_WORDS:
            found.append(stem(word))
    return found


def _contexts(text: str, tokens: Sequence[LiteralToken]) -> list[frozenset[str]]:
    """Content words next to each literal, up to the neighbouring literals on either side."""
    result: list[frozenset[str]] = []
    for index, token in enumerate(tokens):
        left_edge = tokens[index - 1].end if index > 0 else 0
        right_edge = tokens[index + 1].start if index + 1 < len(tokens) else len(text)
        left = text[max(left_edge, token.start - _CONTEXT_SPAN) : token.start]
        right = text[token.end : min(right_edge, token.end + _CONTEXT_SPAN)]
        words = _content_words(reversed(_CONTEXT_WORD_RE.findall(left)), _CONTEXT_WORDS)
        words += _content_words(_CONTEXT_WORD_RE.findall(right), _CONTEXT_WORDS)
        result.append(frozenset(words))
    return result


@memoized
def evidence_of(text: str) -> tuple[Evidence, ...]:
    """The figures, dates and years of ``text``, each with the words next to it."""
    tokens = [token for token in literals_of(text) if token.numeric]
    return tuple(
        Evidence(token, context)
        for token, context in zip(tokens, _contexts(text, tokens), strict=True)
    )
