"""A capitalized word that opens a sentence: a name when the writing around it says so.

A capitalized word at a sentence start is capitalized for its position, so by itself it is no
name (:mod:`.names`): "Today", "Each", "Inspections". Yet "PowerShell now performs its own
search" names something, and a check that ignores it lets a claim swap one product for another.
The word is read as a name when the evidence says it is one:

- its own spelling: a capital inside the word (``PowerShell``, ``McDonald``, ``O'Brien``);
- the writers' usage: the texts read (the claim, its quotes, the source document and its title)
  write it capitalized where no sentence opens more often than in lower case (``Rust`` in
  "written in Rust"; ``rust`` in a code fence counts against it);
- a possessive that is nobody's common noun: ``Inkwell's new release`` when no text read writes
  ``inkwell`` in lower case (a bare common noun rarely owns something at a sentence start).

A word no text read writes in lower case is not a name for that alone: a source that is one
sentence ("Averaged over 44 reviews, …" cited to a sentence without "averaged") would make every
opener a name.

Time words ("Today's") and indefinite pronouns ("Everyone's") name no one. A name read here is
then checked like any other: the quotes or the document's context must establish it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from deep_research.gates.literals.names import (
    FUNCTION_WORDS,
    is_name_word,
    normalize_name,
    starts_sentence,
)
from deep_research.gates.literals.tokens import LiteralToken

_WORD_RE = re.compile(r"[^\W\d_][\w&+]*(?:['’\-./](?=\w)[\w&+]*)*")
_POSSESSIVE_RE = re.compile(r"['’]s?$")
_INNER_CAPITAL_RE = re.compile(r"[a-z'’][A-Z]")
#: Characters that continue a word before or after it ("rust-lang", "O'Rust", "rust_c").
_JOINS_BEFORE = frozenset("_'’-")
_JOINS_AFTER = frozenset("_-")
#: Words that name no one: time words, indefinite pronouns, and the words whose "'s" is "is"
#: or "us" ("Here's", "Let's") — closed classes, not a list of sentence openers.
_NO_ONE = frozenset(
    {"today", "tonight", "yesterday", "tomorrow", "everyone", "everybody", "everything",
     "someone", "somebody", "something", "anyone", "anybody", "anything", "nobody", "nothing",
     "another", "other", "others", "either", "neither", "none", "here", "let", "now"}
)  # fmt: skip


def sentence_openers(text: str, covered: tuple[tuple[int, int], ...]) -> tuple[LiteralToken, ...]:
    """The capitalized words that open a sentence of ``text`` and no literal covers."""
    found: list[LiteralToken] = []
    for match in _WORD_RE.finditer(text):
        word = match.group(0)
        start, end = match.span()
        if not word[0].isupper() or not starts_sentence(text, start):
            continue
        stem = _POSSESSIVE_RE.sub("", word)
        lowered = stem.lower()
        if lowered in FUNCTION_WORDS or lowered in _NO_ONE or not is_name_word(stem):
            continue
        if any(left < end and start < right for left, right in covered):
            continue
        found.append(LiteralToken("name", word, start, end, None, None, None, "eq"))
    return tuple(found)


def _whole_words(text: str, word: str) -> Iterator[int]:
    """Where ``word`` stands as a whole word in ``text`` (a substring search: pages are long)."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        before = text[start - 1] if start else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before in _JOINS_BEFORE) and not (
            after.isalnum() or after in _JOINS_AFTER
        ):
            yield start
        start = text.find(word, start + 1)


def _usage(stem: str, texts: Sequence[str]) -> tuple[int, int]:
    """How often ``texts`` write ``stem`` capitalized where no sentence opens, and in lower case
    (counted only until it outnumbers the capitalized: that decides)."""
    capitalized = sum(
        1 for text in texts for at in _whole_words(text, stem) if not starts_sentence(text, at)
    )
    lowered = stem.lower()
    lower = 0
    for text in texts:
        for _ in _whole_words(text, lowered):
            lower += 1
            if lower > capitalized:
                return capitalized, lower
    return capitalized, lower


def is_name(opener: LiteralToken, texts: Sequence[str], document: str | None = None) -> bool:
    """Whether ``opener`` names something, by its spelling and by how ``texts`` (and the source
    ``document``, when there is one) write it."""
    stem = _POSSESSIVE_RE.sub("", opener.text)
    if _INNER_CAPITAL_RE.search(stem):
        return True
    capitalized, lower = _usage(stem, [*texts, document] if document is not None else texts)
    return capitalized > lower or (not lower and stem != opener.text)


def named_openers(
    text: str,
    tokens: Sequence[LiteralToken],
    texts: Sequence[str],
    document: str | None = None,
    settled: str = "",
) -> tuple[LiteralToken, ...]:
    """The openers of ``text`` (beside its literal ``tokens``) that ``texts`` show are names.
    An opener ``settled`` (normalized names' text) holds is not judged: the quotes establish it
    either way, and reading a long document for it would cost time for nothing."""
    covered = tuple((token.start, token.end) for token in tokens)
    return tuple(
        opener
        for opener in sentence_openers(text, covered)
        if f" {normalize_name(opener.text)} " not in settled and is_name(opener, texts, document)
    )
