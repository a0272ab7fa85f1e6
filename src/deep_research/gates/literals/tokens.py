"""What a literal is: its kind, its qualifier, where it sits in the text."""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Literal

LiteralKind = Literal["number", "percent", "money", "date", "year", "ordinal", "name"]
Qualifier = Literal["eq", "gt", "ge", "lt", "le", "approx", "nearly"]
#: The day of a period a date stands for: "the start of 2020" is its first day, "the end of
#: March" the last day of March.
Edge = Literal["first", "last"]


@dataclass(frozen=True)
class LiteralToken:
    """One literal as found in a text.

    ``alternatives`` are the other values a numeral written ambiguously may stand for
    (``300.000`` is three hundred written to three decimals, or three hundred thousand grouped
    with dots), each with its ``step`` — one unit of its last written digit. A ``vague`` count
    (``thousands``) is more than one and fewer than ten of its scale, ``value``.
    """

    kind: LiteralKind
    text: str
    start: int
    end: int
    value: Decimal | None
    unit: str | None
    date: tuple[int, int | None, int | None] | None
    qualifier: Qualifier
    alternatives: tuple[tuple[Decimal, Decimal], ...] = ()
    step: Decimal | None = None
    edge: Edge | None = None
    vague: bool = False

    def __hash__(self) -> int:
        # Tokens key the check's lookups; equal tokens agree on these fields, and hashing them
        # alone spares hashing every field (values, readings) on each lookup.
        return hash((self.kind, self.text, self.start, self.end))

    @property
    def numeric(self) -> bool:
        return self.kind != "name"

    def readings(self) -> tuple[LiteralToken, ...]:
        """The token as each value it may stand for, its first reading first."""
        if not self.alternatives:
            return (self,)
        others = tuple(
            replace(self, value=value, step=step, alternatives=())
            for value, step in self.alternatives
        )
        return (replace(self, alternatives=()), *others)


class TakenSpans:
    """Characters already claimed by an earlier, more specific pattern, one byte each.

    A byte per character, not a sorted list of spans: a list insert per token made a page of a
    hundred thousand numbers quadratic (seconds of list moves per megabyte)."""

    def __init__(self) -> None:
        self._taken = bytearray()

    def free(self, start: int, end: int) -> bool:
        """No character of ``start:end`` (a match, never empty) is taken."""
        return self._taken.find(1, start, end) == -1

    def take(self, start: int, end: int) -> None:
        if end > len(self._taken):
            self._taken.extend(bytes(end - len(self._taken)))
        self._taken[start:end] = b"\x01" * (end - start)
