"""Relative dates: "today", "this week", "next month" — read from the page's publication date.

A release dated 3 March 2026 that says "today" means 3 March 2026; "yesterday" is the day
before, "tomorrow" the day after; "this week" is the Monday-to-Sunday week holding the date,
"last week" and "next week" the weeks either side; "this month", "last month", "next month",
"this year", "last year", "next year" likewise.

A weekday is read only where its readings agree. "Last Friday" is Friday of last week and also
the latest Friday before the date: on a Thursday both are the Friday eight days back, but on a
Saturday one reading is yesterday, so it is not resolved; "next Monday" and "this Friday" alike
(Monday of next week and the first Monday after; Friday of this week and the first Friday from
the date on). A bare "on Monday" is the latest Monday up to the date when its sentence speaks in
the past ("said on Monday"), the first one from the date on when it speaks of the future ("will
open on Monday"); in neither, only the date's own weekday is one day. A weekday followed by its
date ("Monday, 9 March") is that date's, not a relative one.

A period stands for all of its days, so "this week" establishes "in March 2026" (when the week
lies in March) but never one day of it. A qualifier or an edge before it reads as before a date
("by the end of next month"). Without a publication date nothing is resolved: the words state
no date by themselves.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, timedelta

from deep_research.gates.literals.dates import edge_before
from deep_research.gates.literals.intervals import Interval, days_interval
from deep_research.gates.literals.qualifiers import qualifier_before
from deep_research.gates.vocabulary import MONTHS

_WEEKDAY = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_RELATIVE_RE = re.compile(
    r"(?<![\w'’-])(?:(?P<day>today|tonight|yesterday|tomorrow)"
    r"|(?P<which>this|last|next)\s+(?:(?P<period>week|month|year)|(?P<weekday>" + _WEEKDAY + r"))"
    r"|(?<=\bon )(?P<bare>" + _WEEKDAY + r"))(?![\w'’-])",
    re.IGNORECASE,
)
_WEEKDAYS = _WEEKDAY.split("|")
#: A weekday followed by its date ("Monday, 9 March"): the date says which day.
_DATED_AFTER_RE = re.compile(r",?\s+(?:\d|(?:" + "|".join(m.title() for m in MONTHS) + r")\b)")
_SENTENCE_BOUNDARY_RE = re.compile(r"[.!?](?:\s|$)")
_FUTURE_RE = re.compile(
    r"(?<![\w'’-])(?:will|shall|'ll|won't|going to|due to|scheduled|set to|plans? to)(?![\w'’-])",
    re.IGNORECASE,
)
_PAST_RE = re.compile(r"(?<![\w'’-])(?:said|was|were|had|did|[a-z]+ed)(?![\w'’-])")
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


def _weekday(which: str, name: str, published: date) -> date | None:
    """``this``/``last``/``next`` ``name`` as a day, when its two readings agree."""
    index, today = _WEEKDAYS.index(name), published.weekday()
    monday = published - timedelta(days=today)
    if which == "last":
        return monday + timedelta(days=index - 7) if index >= today else None
    if which == "next":
        return monday + timedelta(days=index + 7) if index <= today else None
    return monday + timedelta(days=index) if index >= today else None


def _bare_weekday(text: str, start: int, name: str, published: date) -> date | None:
    """ "on Monday": the latest one up to ``published`` in a sentence about the past, the first
    one from it on in a sentence about the future."""
    back = (published.weekday() - _WEEKDAYS.index(name)) % 7
    if back == 0:
        return published
    ends = [found.end() for found in _SENTENCE_BOUNDARY_RE.finditer(text, 0, start)]
    after = _SENTENCE_BOUNDARY_RE.search(text, start)
    sentence = text[ends[-1] if ends else 0 : after.start() if after else len(text)]
    if _FUTURE_RE.search(sentence):
        return published + timedelta(days=7 - back)
    if _PAST_RE.search(sentence):
        return published - timedelta(days=back)
    return None


def relative_dates(text: str, published: date | None) -> list[RelativeDate]:
    """The relative dates of ``text``, each resolved from ``published``."""
    if published is None:
        return []
    found: list[RelativeDate] = []
    for match in _RELATIVE_RE.finditer(text):
        weekday = match.group("weekday") or match.group("bare")
        if weekday and _DATED_AFTER_RE.match(text, match.end()):
            continue
        if match.group("day"):
            day = published + timedelta(days=_DAY_OFFSETS[match.group("day").lower()])
            first, last, unit = day, day, 1
        elif weekday:
            resolved = (
                _weekday(match.group("which").lower(), weekday.lower(), published)
                if match.group("which")
                else _bare_weekday(text, match.start(), weekday.lower(), published)
            )
            if resolved is None:
                continue
            first, last, unit = resolved, resolved, 1
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
