"""Relative dates: "today", "this week", "next month" — read from the page's publication date.

A release dated 3 March 2026 that says "today" means 3 March 2026; "yesterday" is the day
before, "tomorrow" the day after; "this week" is the Monday-to-Sunday week holding the date,
"last week" and "next week" the weeks either side; "this month", "last month", "next month",
"this year", "last year", "next year" likewise. A period stands for all of its days, so "this
week" establishes "in March 2026" (when the week lies in March) but never one day of it. A
qualifier or an edge before it reads as before a date ("by the end of next month"). Without a
publication date nothing is resolved: the words state no date by themselves.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

from deep_research.gates.literals.dates import edge_before
from deep_research.gates.literals.intervals import Interval, days_interval
from deep_research.gates.literals.qualifiers import qualifier_before

_RELATIVE_RE = re.compile(
    r"(?<![\w'’-])(?:(?P<day>today|tonight|yesterday|tomorrow)"
    r"|(?P<which>this|last|next)\s+(?P<period>week|month|year))(?![\w'’-])",
    re.IGNORECASE,
)
_DAY_OFFSETS = {"today": 0, "tonight": 0, "yesterday": -1, "tomorrow": 1}
_STEPS = {"this": 0, "last": -1, "next": 1}
_UNITS = {"week": 7, "month": 31, "year": 365}


@dataclass(frozen=True)
class RelativeDate:
    """One relative date of a text, resolved: its words and the days it stands for."""

    text: str
    interval: Interval


def _period(which: str, period: str, published: date) -> tuple[date, date]:
    step = _STEPS[which]
    if period == "week":
        monday = published - timedelta(days=published.weekday()) + timedelta(weeks=step)
        return monday, monday + timedelta(days=6)
    if period == "month":
        index = published.year * 12 + published.month - 1 + step
        year, month = divmod(index, 12)
        last = calendar.monthrange(year, month + 1)[1]
        return date(year, month + 1, 1), date(year, month + 1, last)
    year = published.year + step
    return date(year, 1, 1), date(year, 12, 31)


def relative_dates(text: str, published: date | None) -> list[RelativeDate]:
    """The relative dates of ``text``, each resolved from ``published``."""
    if published is None:
        return []
    found: list[RelativeDate] = []
    for match in _RELATIVE_RE.finditer(text):
        if match.group("day"):
            day = published + timedelta(days=_DAY_OFFSETS[match.group("day").lower()])
            first, last, unit = day, day, 1
        else:
            period = match.group("period").lower()
            first, last = _period(match.group("which").lower(), period, published)
            unit = _UNITS[period]
        edge, qualified_at = edge_before(text, match.start())
        if edge == "first":
            last = first
        elif edge == "last":
            first = last
        qualifier = qualifier_before(text, qualified_at, dated=True)
        bounds = (first.toordinal(), last.toordinal())
        interval = days_interval(bounds, qualifier, unit=unit, claim=False)
        found.append(RelativeDate(match.group(0), interval))
    return found
