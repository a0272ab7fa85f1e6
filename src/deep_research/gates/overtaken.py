"""Dated claims the report's date has overtaken (docs/contracts.md §12).

"The works restart in March 2026", fetched in 2025 and read in December 2026, is a statement
about a future that has since become the past: true as the source stated it, and no longer an
answer to "when will it restart?". A claim is flagged when one of its evidence quotes states, in
the same sentence and before the date, that the date lies ahead (``will``, ``expected``,
``target``, ``scheduled``, ``plans``, …) and every day the claim's date covers lies before the
brief's ``generated`` date. The report's date is that recorded date, never the clock at render
time, so a brief renders the same forever.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import date

from deep_research.gates.literals.extraction import literals_of
from deep_research.gates.literals.intervals import date_interval
from deep_research.gates.literals.tokens import LiteralToken
from deep_research.models import Claim

NOTE = "stated as future in the source; that date has passed"

#: Words that put what follows in the future, as a source writes a plan or a forecast.
_FUTURE = re.compile(
    r"(?<![\w-])(?:will|shall|'ll|expected|expects?|scheduled|planned|plans?|targets?|targeted|"
    r"due|aims?|aiming|forecasts?|projected|intends?|set\s+to|on\s+track|anticipated|"
    r"programme|program|timetable|timeline)(?![\w-])",
    re.IGNORECASE,
)
_SENTENCE_START = re.compile(r"[.!?]\s+(?=\S)")
#: How far before a date its future word may stand, in characters.
_REACH = 160


def _dates(text: str) -> list[LiteralToken]:
    return [t for t in literals_of(text) if t.kind in ("date", "year") and t.date is not None]


def _last_day(token: LiteralToken) -> date | None:
    interval = date_interval(token, claim=True, yearless=False)
    if interval is None or not interval.high.is_finite():
        return None
    return date.fromordinal(int(interval.high))


def _future_before(text: str, at: int) -> bool:
    """Whether a future word stands before offset ``at`` in the same sentence."""
    window = text[max(0, at - _REACH) : at]
    starts = [m.end() for m in _SENTENCE_START.finditer(window)]
    return bool(_FUTURE.search(window[starts[-1] if starts else 0 :]))


def _stated_as_future(quote: str, passed: date) -> bool:
    for token in _dates(quote):
        last = _last_day(token)
        if last is not None and last < passed and _future_before(quote, token.start):
            return True
    return False


def overtaken(claims: Iterable[Claim], generated: date | None) -> dict[str, str]:
    """Claim id → :data:`NOTE` for each claim whose future-tense date ``generated`` has passed."""
    if generated is None:
        return {}
    flagged: dict[str, str] = {}
    for claim in claims:
        claimed = [last for t in _dates(claim.claim) if (last := _last_day(t)) is not None]
        if not claimed or max(claimed) >= generated:
            continue
        quotes = [item.quote for item in claim.evidence if item.quote] or [claim.claim]
        if any(_stated_as_future(quote, generated) for quote in quotes):
            flagged[claim.id] = NOTE
    return flagged
