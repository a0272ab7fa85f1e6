"""The values a literal stands for, as an interval.

``eq X`` → {X}; ``more than X`` → (X, ∞); ``at least X`` → [X, ∞); ``less than X`` → (−∞, X);
``at most X`` → (−∞, X]; ``about X`` → X ± max(5% of X, half a unit of the last written digit) —
the latter is the rounding rule, so it only applies under ``about``; ``nearly X`` → the same band
capped at X; a vague count (``hundreds``) → (100, 1,000), in a claim and in a quote alike.

A quote is read at face value, as a careful reader reads a figure its writer chose: ``about Y`` is
{Y}, and a one-sided bound is Y to one unit of its last written digit on the open side — ``over
3.4 million`` is (3.4 million, 3.5 million), ``at least 120`` is [120, 130), ``under 60`` is
(50, 60). A writer who knew the figure was far beyond Y would have written a figure nearer it; a
writer who only knows a bound writes it at the precision they know it to. So a claim's opposite
bound is established only beyond that unit: ``over 3.4 million`` establishes ``under 3.5
million``, never ``under 3.4 million`` or ``under 3.45 million``. ``nearly Y`` is the band below
Y.

Dates are day intervals: a year covers its days, so ``in 2020`` contains any date in 2020 and
``March 2024`` any day of that month; "the end of" a period is its last day.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date as _date
from decimal import Decimal

from deep_research.gates.literals.numbers import NUMERAL, parse_numeral, step_of
from deep_research.gates.literals.tokens import LiteralToken, Qualifier

_INFINITY = Decimal("Infinity")
#: How far "about X" reaches beyond rounding: a twentieth of X, the band within which writers
#: round a figure they call approximate ("about 4,300" for 4,12x would be "about 4,100").
_APPROX_SHARE = Decimal("0.05")
#: A vague count (``hundreds``) is fewer than ten of its scale: the next scale word would name it.
_VAGUE_RANGE = Decimal(10)


@dataclass(frozen=True)
class Interval:
    low: Decimal
    high: Decimal
    low_open: bool = False
    high_open: bool = False

    def within(self, outer: Interval) -> bool:
        if self.low < outer.low or (self.low == outer.low and outer.low_open and not self.low_open):
            return False
        return not (
            self.high > outer.high
            or (self.high == outer.high and outer.high_open and not self.high_open)
        )

    @property
    def middle(self) -> Decimal:
        if self.low == -_INFINITY:
            return self.high
        if self.high == _INFINITY:
            return self.low
        return (self.low + self.high) / 2


def _exponent(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    return exponent if isinstance(exponent, int) else 0


def quantum(token: LiteralToken) -> Decimal:
    """One unit of the figure's last written digit; trailing zeros of an integer do not count."""
    assert token.value is not None
    if token.step is not None:
        return token.step
    found = re.search(NUMERAL, token.text, re.VERBOSE)
    if found is None:
        return Decimal(1).scaleb(_exponent(token.value.normalize()))
    written = parse_numeral(found.group(0))
    scale = abs(token.value / written) if written else Decimal(1)
    return step_of(written) * scale


def tolerance(token: LiteralToken) -> Decimal:
    assert token.value is not None
    return max(abs(token.value) * _APPROX_SHARE, quantum(token) / 2)


def _vague_interval(token: LiteralToken) -> Interval:
    """``thousands``: more than one thousand, fewer than ten — on either side of the check."""
    assert token.value is not None
    return Interval(token.value, token.value * _VAGUE_RANGE, low_open=True, high_open=True)


def claim_interval(token: LiteralToken) -> Interval:
    assert token.value is not None
    value = token.value
    if token.vague:
        return _vague_interval(token)
    beyond = _beyond(token.qualifier, value, value)
    if beyond is not None:
        return beyond
    match token.qualifier:
        case "approx":
            slack = tolerance(token)
            return Interval(value - slack, value + slack)
        case "nearly":
            return Interval(value - tolerance(token), value)
    return Interval(value, value)


def quote_interval(token: LiteralToken) -> Interval:
    assert token.value is not None
    value = token.value
    if token.vague:
        return _vague_interval(token)
    if token.qualifier in ("eq", "approx"):
        return Interval(value, value)
    unit = quantum(token)
    match token.qualifier:
        case "gt":
            return Interval(value, value + unit, low_open=True, high_open=True)
        case "ge":
            return Interval(value, value + unit, high_open=True)
        case "lt":
            return Interval(value - unit, value, low_open=True, high_open=True)
        case "le":
            return Interval(value - unit, value, low_open=True)
    return claim_interval(token)


def _date_bounds(token: LiteralToken, *, yearless: bool) -> tuple[int, int] | None:
    """First and last day a date or year literal covers, as ordinal day numbers."""
    assert token.date is not None
    year, month, day = token.date
    if yearless:
        year = 2000  # a leap year, so 29 February projects
    if year == 0:
        return None
    decade = token.kind == "year" and token.text.rstrip().lower().endswith("s")
    try:
        if month is None:
            last_year = year + 9 if decade else year
            return _date(year, 1, 1).toordinal(), _date(last_year, 12, 31).toordinal()
        if day is None:
            following = _date(year + (month == 12), month % 12 + 1, 1).toordinal()
            return _date(year, month, 1).toordinal(), following - 1
        first = _date(year, month, day).toordinal()
    except ValueError:
        return None
    return first, first


def _edge_bounds(token: LiteralToken, bounds: tuple[int, int]) -> tuple[int, int]:
    """ "The end of 2020" is its last day; "the start of March" the first."""
    if token.edge == "first":
        return bounds[0], bounds[0]
    if token.edge == "last":
        return bounds[1], bounds[1]
    return bounds


def date_interval(token: LiteralToken, *, claim: bool, yearless: bool) -> Interval | None:
    bounds = _date_bounds(token, yearless=yearless)
    if bounds is None:
        return None
    assert token.date is not None
    unit = 365 if token.date[1] is None else 31 if token.date[2] is None else 1
    if token.edge is not None:
        unit = 1
    return days_interval(_edge_bounds(token, bounds), token.qualifier, unit=unit, claim=claim)


def days_interval(
    bounds: tuple[int, int], qualifier: Qualifier, *, unit: int, claim: bool
) -> Interval:
    """The days a period from day ``bounds[0]`` to ``bounds[1]`` (ordinals) stands for under
    ``qualifier``; ``unit`` is the period's length, the reach of a claim's ``about``."""
    first, last = Decimal(bounds[0]), Decimal(bounds[1])
    beyond = _beyond(qualifier, first, last)
    if beyond is not None:
        return beyond
    if qualifier in ("approx", "nearly") and claim:
        return Interval(first - unit, last + unit)
    return Interval(first, last)


def _beyond(qualifier: Qualifier, first: Decimal, last: Decimal) -> Interval | None:
    """What a comparison ("more than", "at most" …) of a claim stands for: everything past the
    value (or period) ``first``..``last``, open where the comparison is strict; ``None`` for any
    other qualifier."""
    match qualifier:
        case "gt":
            return Interval(last, _INFINITY, low_open=True)
        case "ge":
            return Interval(first, _INFINITY)
        case "lt":
            return Interval(-_INFINITY, first, high_open=True)
        case "le":
            return Interval(-_INFINITY, last)
    return None
