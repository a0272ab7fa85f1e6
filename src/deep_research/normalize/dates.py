"""Dates and datetimes as fetchers write them: parsed when unambiguous, refused otherwise."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

from deep_research.gates.vocabulary import MONTHS
from deep_research.normalize.describe import excerpt, kind

_WEEKDAYS = frozenset(
    (
        "monday",
        "mon",
        "tuesday",
        "tue",
        "tues",
        "wednesday",
        "wed",
        "thursday",
        "thu",
        "thur",
        "thurs",
        "friday",
        "fri",
        "saturday",
        "sat",
        "sunday",
        "sun",
    )
)

_DATE_FILLER = frozenset(("st", "nd", "rd", "th", "of", "the", "on", "at"))


def _year_first(match: re.Match[str]) -> tuple[int, int, int] | str:
    return int(match.group(1)), int(match.group(2)), int(match.group(3))


def _day_month(match: re.Match[str]) -> tuple[int, int, int] | str:
    """Day and month in either order, read only when the numbers leave one reading."""
    first, second, year = (int(group) for group in match.groups())
    if first > 12 >= second:
        return year, second, first
    if second > 12 >= first or first == second:
        return year, first, second
    return "ambiguous day/month order"


def _no_day(match: re.Match[str]) -> tuple[int, int, int] | str:
    return "partial date without a day"


#: An ISO date or datetime: the date as written (its time ignored, no time-zone shift).
_ISO_DATE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$"
)
#: The all-number forms, tried in order, each with how its numbers read.
_NUMERIC_FORMS: tuple[
    tuple[re.Pattern[str], Callable[[re.Match[str]], tuple[int, int, int] | str]], ...
] = (
    (_ISO_DATE, _year_first),
    (re.compile(r"^(\d{4})[/.](\d{1,2})[/.](\d{1,2})$"), _year_first),  # 2024/03/05
    (re.compile(r"^(\d{4})(\d{2})(\d{2})$"), _year_first),  # 20240305
    (re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$"), _day_month),  # 25/03/2024
    (re.compile(r"^\d{4}(?:[-/.]\d{1,2})?$"), _no_day),  # 2024, 2024-03
)

_TIME_TAIL = re.compile(
    r"(?:[ ,]+|(?<=\d)T)\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?\s*(?:[ap]\.?m\.?)?\s*"
    r"(?:gmt|utc|z|[+-]\d{2}:?\d{2}|[a-z]{3,4})?$",
    re.IGNORECASE,
)


def parse_date(value: Any) -> tuple[date | None, str | None]:
    """(date, None) for a date stated in a common format, else (None, why) — never a guess.

    Accepts ISO dates and datetimes (the date as written, no time-zone shift), ``2024/03/05``,
    ``20240305``, month-name forms (``March 5, 2024``, ``5 Mar 2024``, ``Tue, 05 Mar 2024
    10:00:00 GMT``, ``5th of March 2024``) and day/month/year numbers only when unambiguous
    (``25/03/2024``; ``03/05/2024`` is refused). A year or a month alone is refused: there is no
    day to record.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    if not isinstance(value, str):
        return None, f"date {excerpt(value)!r} is {kind(value)}, not a date string"
    text = value.strip()
    parts = _date_parts(text)
    if isinstance(parts, str):
        return None, f"{parts}: {text!r}"
    try:
        return date(*parts), None
    except ValueError:
        return None, f"no such date: {text!r}"


def _date_parts(text: str) -> tuple[int, int, int] | str:
    for pattern, read in _NUMERIC_FORMS:
        if match := pattern.match(text):
            return read(match)
    return _named_month_parts(text)


def _named_month_parts(text: str) -> tuple[int, int, int] | str:
    tokens = re.findall(r"[a-z]+|\d+", _TIME_TAIL.sub("", text.lower()))
    tokens = [t for t in tokens if t not in _WEEKDAYS and t not in _DATE_FILLER]
    months = [MONTHS[t] for t in tokens if t in MONTHS]
    numbers = [t for t in tokens if t.isdigit()]
    if len(months) != 1 or len(tokens) != len(numbers) + 1:
        return "unparseable date"
    years = [int(t) for t in numbers if len(t) == 4]
    days = [int(t) for t in numbers if len(t) <= 2]
    if len(years) == 1 and not days and len(numbers) == 1:
        return "partial date without a day"
    if len(years) != 1 or len(days) != 1 or len(numbers) != 2:
        return "unparseable date"
    return years[0], months[0], days[0]


def parse_datetime(value: Any) -> tuple[datetime | None, str | None]:
    """(UTC datetime, None) for an ISO datetime (naive means UTC), else (None, why)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    if not isinstance(value, str):
        return None, f"datetime {excerpt(value)!r} is {kind(value)}, not an ISO string"
    text = value.strip()
    if "T" not in text.upper() and " " not in text:
        return None, f"a date without a time is not a retrieval time: {text!r}"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None, f"not an ISO datetime: {text!r}"
    return as_utc(parsed), None


def as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive datetime is taken to be UTC already."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
