"""The figures a sentence states flatly, each with its kind and a value comparable within it.

Shared by the grouping of findings into facts (:mod:`deep_research.decide.samefact`: "40 m",
"40 metres" and "forty metres" are one figure) and by the contradiction finder
(:mod:`deep_research.decide.contradictions`: 1891 and 1893 for one slot are two).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from decimal import Decimal

from deep_research.gates.literals import LiteralToken
from deep_research.gates.literals.extraction import literals_of
from deep_research.gates.literals.matching import as_year
from deep_research.gates.literals.units import quantity, unit_after
from deep_research.gates.overlap import content_tokens

#: Two figures of one kind closer than this (relative to the larger) are the same figure rounded.
TOLERANCE = Decimal("0.05")

#: Words that name a dimension: the same measure, however a sentence phrases it.
DIMENSION_WORDS: dict[str, str] = {
    "long": "length",
    "length": "length",
    "tall": "height",
    "height": "height",
    "high": "height",
    "wide": "width",
    "width": "width",
    "deep": "depth",
    "depth": "depth",
    "heavy": "mass",
    "weigh": "mass",
    "weight": "mass",
}
_NEXT_WORD = re.compile(r"\s*[^\W\d_]")
_COUNTED = re.compile(r"\s*[^\W\d_]+")
#: A capitalized word or "version" right before a figure: the figure is part of a name.
_NAMED = re.compile(r"(?:\b[A-Z][\w-]*|\b[Vv]ersion|\bv)[ \u00a0]?$")


@dataclass(frozen=True)
class Figure:
    """One flatly stated literal of a claim: its kind and a value comparable within the kind."""

    kind: str  # "year", "percent", "money:USD", a dimension ("length"…), or "number"
    value: Decimal | tuple[int, int | None, int | None]
    text: str
    #: The content words just before the figure ("completed in 1891" → completed): which
    #: slot of its subject the figure fills.
    slot: frozenset[str] = frozenset()


def figures(text: str) -> tuple[list[Figure], str]:
    """The claim's figures, and its text with every figure (and its unit) blanked out."""
    found = []
    blank = list(text)
    for token in literals_of(text):
        if not token.numeric or token.qualifier != "eq":
            continue
        unit = unit_after(text, token)
        end = unit[1] if unit is not None else token.end
        figure = _figure(text, token, text[token.start : end])
        if figure is not None:
            found.append(replace(figure, slot=slot_before(text, token.start, end)))
        elif (counted := _COUNTED.match(text, end)) is not None:
            end = counted.end()  # "six years": what a count counts belongs to the count
        blank[token.start : end] = " " * (end - token.start)
    return found, "".join(blank)


def _figure(text: str, token: LiteralToken, shown: str) -> Figure | None:
    if token.kind in ("date", "year") and token.date is not None and token.date[0]:
        return Figure("year", token.date, shown)
    if token.kind == "percent" and token.value is not None:
        return Figure("percent", token.value, shown)
    if token.kind == "money" and token.value is not None:
        return Figure(f"money:{token.unit or '?'}", token.value, shown)
    if token.kind != "number" or token.value is None:
        return None
    if (measured := quantity(text, token)) is not None:
        return Figure(measured.dimension, measured.value, shown)
    year = as_year(token)
    if year is not None and year.date is not None and not _NEXT_WORD.match(text, token.end):
        # "completed 1927." is a year the extractor had no temporal word for; "1500 workers"
        # counts workers.
        return Figure("year", year.date, shown)
    if _NAMED.search(text, 0, token.start):
        # "Python 3.0", "PEP 8", "version 2": a figure that names which thing is meant.
        return Figure("number", token.value, shown)
    return None  # a count ("six years", "1500 workers"): what it counts is not read here


def subject(blanked: str) -> frozenset[str]:
    return frozenset(DIMENSION_WORDS.get(word, word) for word in content_tokens(blanked))


def agree(kind: str, a: Figure, b: Figure) -> bool:
    """Whether two figures of one kind can be the same figure."""
    if kind == "year":
        assert isinstance(a.value, tuple) and isinstance(b.value, tuple)
        # Compare on the precision both state: "March 1923" and "1923" agree.
        return all(x == y for x, y in zip(a.value, b.value, strict=True) if x and y)
    assert isinstance(a.value, Decimal) and isinstance(b.value, Decimal)
    larger = max(abs(a.value), abs(b.value))
    return larger == 0 or abs(a.value - b.value) <= TOLERANCE * larger


#: Words next to a figure read as the slot it fills: those just before it ("completed in"),
#: or after it when none are ("In 1923 the bridge opened").
SLOT_WINDOW = 3
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
#: Verbs that fill one slot in other words (compared as content tokens, i.e. stems).
_SLOT_SYNONYMS = {"finish": "complet", "complete": "complet"}


def slot_before(text: str, start: int, end: int | None = None) -> frozenset[str]:
    """The content words among the :data:`SLOT_WINDOW` words before ``start`` (or, when
    there are none, after ``end``), verbs of one slot as one ("finished", "completed")."""
    words = _WORD.findall(text[max(0, start - 60) : start])[-SLOT_WINDOW:]
    found = content_tokens(" ".join(words))
    if not found and end is not None:
        found = content_tokens(" ".join(_WORD.findall(text[end : end + 60])[:SLOT_WINDOW]))
    return frozenset(_SLOT_SYNONYMS.get(w, w) for w in found)


def same_slot(a: Figure, b: Figure) -> bool:
    """Two figures of one kind fill one slot: a measure of one dimension always (the kind
    says it), any other when the words before them share one."""
    if a.kind != b.kind:
        return False
    return a.kind in DIMENSIONS or bool(a.slot & b.slot)


#: Kinds that are a dimension: the kind itself is the slot.
DIMENSIONS = frozenset({"length", "height", "width", "depth", "mass", "area", "volume"})


def same_figures(a: list[Figure], b: list[Figure]) -> bool:
    """Whether two sentences state the same figures: each of either agrees with one of the
    other's of its kind (none of kind "number", whose referent is not read)."""
    if not a or not b or any(f.kind == "number" for f in (*a, *b)):
        return False
    return all(any(x.kind == y.kind and agree(x.kind, x, y) for y in b) for x in a) and all(
        any(x.kind == y.kind and agree(x.kind, y, x) for x in a) for y in b
    )
