"""What a literal is: its kind, its qualifier, where it sits in the text."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

LiteralKind = Literal["number", "percent", "money", "date", "year", "ordinal", "name"]
Qualifier = Literal["eq", "gt", "ge", "lt", "le", "approx", "nearly"]


@dataclass(frozen=True)
class LiteralToken:
    """One literal as found in a text."""

    kind: LiteralKind
    text: str
    start: int
    end: int
    value: Decimal | None
    unit: str | None
    date: tuple[int, int | None, int | None] | None
    qualifier: Qualifier

    @property
    def numeric(self) -> bool:
        return self.kind != "name"


class TakenSpans:
    """Non-overlapping spans already claimed by an earlier, more specific pattern."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def free(self, start: int, end: int) -> bool:
        index = bisect.bisect_right(self._starts, start)
        if index > 0 and self._ends[index - 1] > start:
            return False
        return not (index < len(self._starts) and self._starts[index] < end)

    def take(self, start: int, end: int) -> None:
        index = bisect.bisect_right(self._starts, start)
        self._starts.insert(index, start)
        self._ends.insert(index, end)
