"""Dates and years.

* dates: ISO ``2024-03-05`` / ``2024-03``, ``5 March 2024``, ``March 5, 2024``, ``March 2024``,
  and day-month without a year, which takes the year of the nearest earlier (else later) year in
  the same text, or year 0 ("not stated") when the text has none (the check may then take it
  from the document: :mod:`.context`). Lower-case month names count only in full
  day-month-year dates (``may`` is a verb).
* years: a four-digit integer 1000–2100 after a temporal preposition (``in``, ``since``,
  ``after``, ``no later than``…) or a season word, in parentheses, or before a possessive
  (``2009's``); decades (``1990s``) cover their ten years; a season ``2010-11`` or ``2010/11``
  is two years. Any other bare four-digit integer is a number (``the tally reached 2251``): the
  check still lets it equal a year.
* edges: "the start (beginning) of" and "the end (close) of" before a date or year make it the
  period's first or last day ("before the end of 2020" is before 31 December 2020); the
  qualifier is read before the phrase.
"""

from __future__ import annotations

import bisect
import re
import string
from dataclasses import replace
from datetime import date as _date
from decimal import Decimal

from deep_research.gates.literals.names import event_year
from deep_research.gates.literals.qualifiers import qualifier_before
from deep_research.gates.literals.tokens import Edge, LiteralKind, LiteralToken, TakenSpans
from deep_research.gates.vocabulary import MONTH_PATTERN, MONTHS

_DAY_RE = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?(?![\dA-Za-z])"
_YEAR_RE = r"(?:1\d{3}|20\d{2}|2100)(?!\d)"
#: The four-digit integers that may be years: a millennium back, a lifetime ahead.
YEAR_MIN, YEAR_MAX = 1000, 2100
_DATE_RE = re.compile(
    r"(?<![\w.,])(?:"
    r"(?P<iso>(?P<iy>\d{4})-(?P<im>\d{2})(?:-(?P<id>\d{2}))?)(?![\d-])"
    r"|(?P<dmy>(?P<d1>" + _DAY_RE + r")\s+(?:of\s+)?(?P<m1>" + MONTH_PATTERN + r")"
    r"(?:\s*,?\s*(?P<y1>" + _YEAR_RE + r"))?)"
    r"|(?P<mdy>(?P<m2>" + MONTH_PATTERN + r")\s+(?P<d2>" + _DAY_RE + r")"
    r"(?:\s*,?\s*(?P<y2>" + _YEAR_RE + r"))?)"
    r"|(?P<my>(?P<m3>" + MONTH_PATTERN + r")\s*,?\s+(?:of\s+)?(?P<y3>" + _YEAR_RE + r"))"
    # a lower-case month is a date only when a day and a year pin it down ("22 march 2020")
    r"|(?P<dmyl>(?P<d4>" + _DAY_RE + r")\s+(?P<m4>(?i:" + MONTH_PATTERN + r"))"
    r"\s*,?\s*(?P<y4>" + _YEAR_RE + r"))"
    r"|(?P<mdyl>(?P<m5>(?i:" + MONTH_PATTERN + r"))\s+(?P<d5>" + _DAY_RE + r")"
    r"\s*,?\s*(?P<y5>" + _YEAR_RE + r"))"
    r"|(?P<decade>(?P<dy>1\d{2}0|20\d0)\s?['’]?s)(?![A-Za-z])"
    r"|(?P<span>(?P<sy1>\d{4})[-–/](?P<sy2>\d{2}))(?![\d-])"
    r")"
)


#: Words after which a four-digit integer is a year: the temporal prepositions, "year", the
#: seasons and the parts of a year, and the circa abbreviations. A word that as readily precedes
#: a count ("the", "from": "rose from 1200 to 1500") is not one of them.
_YEAR_CONTEXT = frozenset(
    {"in", "since", "by", "after", "before", "until", "till", "through", "of", "during",
     "early", "late", "mid", "circa", "c", "ca", "year", "between", "on", "spring", "summer",
     "autumn", "fall", "winter"}
)  # fmt: skip


_ASCII_LETTERS = string.ascii_letters
_POSSESSIVE_RE = re.compile(r"\s?['’]s(?![A-Za-z])")


def _previous_word(text: str, start: int) -> str:
    window = text[max(0, start - 20) : start].rstrip()
    if window.endswith("("):
        return "("
    # The ASCII letters ending the window, before one optional period (what the regex
    # ``([A-Za-z]+)\.?$`` finds, without scanning every position).
    body = window[:-1] if window.endswith(".") else window
    return body[len(body.rstrip(_ASCII_LETTERS)) :].lower()


def is_year(text: str, start: int, raw: str) -> bool:
    # Plain string tests before the patterns: most figures are no four-digit integer, and most
    # years have no apostrophe after them.
    if len(raw) != 4 or not raw.isdecimal() or not YEAR_MIN <= int(raw) <= YEAR_MAX:
        return False  # \d is a decimal digit, as isdecimal() tests
    after = text[start + 4 : start + 6]
    if ("'" in after or "’" in after) and _POSSESSIVE_RE.match(text, start + 4):
        return True
    previous = _previous_word(text, start)
    if previous == "(" or previous in _YEAR_CONTEXT:
        return True
    return qualifier_before(text, start, dated=True) != "eq"  # "no later than 2025"


def _valid_date(year: int, month: int, day: int | None) -> bool:
    if not 1 <= month <= 12:
        return False
    if day is None:
        return True
    try:
        _date(year or 2000, month, day)
    except ValueError:
        return False
    return True


def _day_number(raw: str) -> int:
    return int(re.sub(r"\D", "", raw))


_EDGE_RE = re.compile(
    r"(?<![\w])(?:the\s+)?(?P<edge>start|beginning|end|close)\s+of\s+(?:the\s+)?$", re.IGNORECASE
)
_EDGES: dict[str, Edge] = {"start": "first", "beginning": "first", "end": "last", "close": "last"}


def edge_before(text: str, start: int) -> tuple[Edge | None, int]:
    """The edge ("the end of") right before a date at ``start``, and where its qualifier ends."""
    lowest = max(0, start - 30)
    # Every edge phrase holds an "of" (in any case): most figures have none before them.
    if "of" not in text[lowest:start].lower():
        return None, start
    found = _EDGE_RE.search(text, lowest, start)
    if found is None:
        return None, start
    return _EDGES[found.group("edge").lower()], found.start()


def _date_token(
    text: str, start: int, end: int, parts: tuple[int, int | None, int | None], kind: LiteralKind
) -> LiteralToken:
    edge, qualified_at = edge_before(text, start)
    return LiteralToken(
        kind=kind,
        text=text[start:end],
        start=start,
        end=end,
        value=Decimal(parts[0]) if kind == "year" else None,
        unit=None,
        date=parts,
        qualifier=qualifier_before(text, qualified_at, dated=True),
        edge=edge,
    )


_DAY_FORMS = ((1, "dmy"), (2, "mdy"), (4, "dmyl"), (5, "mdyl"))


#: A month's name (a form with one needs it at a word's start, with no ASCII letter after it).
_MONTH_AT_RE = re.compile(
    r"(?i:" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")(?![A-Za-z])"
)
#: What follows the ``0`` of a decade: perhaps a white space and an apostrophe, then an ``s``.
_DECADE_END_RE = re.compile(r"\s?['’]?s(?![A-Za-z])")


def may_hold_dates(text: str) -> bool:
    """Whether ``_DATE_RE`` may match in ``text``: what each of its forms needs, looked for with
    substring searches. Most texts hold none of it, and the pattern is tried at every position.

    ISO dates and seasons need a digit right before ``-``, ``–`` or ``/``; decades a ``0`` and
    :data:`_DECADE_END_RE`; the other forms a month's name at a word's start
    (:data:`_MONTH_AT_RE`), which begins with a month's first three letters, in any case.
    """
    for mark in "-–/":
        at = text.find(mark, 1)
        while at > 0:
            if text[at - 1].isdecimal():
                return True
            at = text.find(mark, at + 1)
    at = text.find("0")
    while at >= 0:
        if _DECADE_END_RE.match(text, at + 1):
            return True
        at = text.find("0", at + 1)
    if "ſ" in text or "ı" in text or "\u212a" in text or "İ" in text:
        return True  # letters only case-insensitive matching reads as ASCII: the pattern decides
    low = text.lower()
    for first in _MONTH_FIRSTS:
        at = low.find(first)
        while at >= 0:
            before = text[at - 1] if at else " "
            if not (before.isalnum() or before == "_") and _MONTH_AT_RE.match(text, at):
                return True
            at = low.find(first, at + 1)
    return False


_MONTH_FIRSTS = tuple(dict.fromkeys(name[:3] for name in MONTHS))


def date_tokens(text: str, taken: TakenSpans) -> list[LiteralToken]:
    if not may_hold_dates(text):
        return []
    tokens: list[LiteralToken] = []
    for found in _DATE_RE.finditer(text):
        start, end = found.span()
        made: list[LiteralToken] = []
        if event_year(text, start, end):
            taken.take(start, end)  # left for the name it belongs to
            continue
        if found.group("iso"):
            year, month = int(found.group("iy")), int(found.group("im"))
            day = int(found.group("id")) if found.group("id") else None
            if day is None and month == (year + 1) % 100:
                made = _season(text, found, year)
            elif YEAR_MIN <= year <= YEAR_MAX and _valid_date(year, month, day):
                made = [_date_token(text, start, end, (year, month, day), "date")]
        elif suffix := next((str(n) for n, name in _DAY_FORMS if found.group(name)), ""):
            month = MONTHS[found.group("m" + suffix).rstrip(".").lower()]
            day = _day_number(found.group("d" + suffix))
            year_raw = found.group("y" + suffix)
            year = int(year_raw) if year_raw else 0
            if _valid_date(year, month, day):
                made = [_date_token(text, start, end, (year, month, day), "date")]
        elif found.group("my"):
            month = MONTHS[found.group("m3").rstrip(".").lower()]
            made = [_date_token(text, start, end, (int(found.group("y3")), month, None), "date")]
        elif found.group("decade"):
            made = [_date_token(text, start, end, (int(found.group("dy")), None, None), "year")]
        elif found.group("span"):
            first = int(found.group("sy1"))
            if int(found.group("sy2")) == (first + 1) % 100:
                made = _season(text, found, first)
        for token in made:
            if taken.free(token.start, token.end):
                taken.take(token.start, token.end)
                tokens.append(token)
    return tokens


def _season(text: str, found: re.Match[str], first: int) -> list[LiteralToken]:
    """``2010-11``: the season spans two years, each a literal of its own."""
    start = found.start()
    second_start = found.end() - 2
    return [
        _date_token(text, start, start + 4, (first, None, None), "year"),
        replace(
            _date_token(text, second_start, found.end(), (first + 1, None, None), "year"),
            qualifier="eq",
        ),
    ]


def infer_years(tokens: list[LiteralToken]) -> list[LiteralToken]:
    """A day-month without a year takes the year of the nearest earlier (else later) year."""
    if not any(token.date is not None and token.date[0] == 0 for token in tokens):
        return tokens  # nothing to infer (most texts)
    years = [
        (token.start, token.date[0])
        for token in tokens
        if token.date is not None and token.date[0] != 0
    ]
    if not years:
        return tokens
    starts = [start for start, _ in years]
    result: list[LiteralToken] = []
    for token in tokens:
        if token.date is not None and token.date[0] == 0:
            index = bisect.bisect_left(starts, token.start)
            year = years[index - 1][1] if index > 0 else years[index][1]
            token = replace(token, date=(year, token.date[1], token.date[2]))
        result.append(token)
    return result
