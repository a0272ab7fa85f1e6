"""The check: which literals of a claim the quotes cited for it do not establish.

Each claim literal is matched against the literals of all quotes taken together. A claim literal
is satisfied when a compatible quote literal's interval (see
:mod:`~deep_research.gates.literals.intervals`) lies inside the claim literal's interval:
``150`` is not established by ``more than 100``, ``less than 6.8 million`` not by ``over 6.7
million``, and a bare ``18,700`` not by ``18,752``. A claim date without a year compares day and
month only; a quote date without a year cannot establish a claim date that states one.

A bound is judged against its referent, not against every figure (else any larger number in the
quote would establish ``more than X``): the quote figure nearest in value, unless another one at
most 0.1 farther (relative distance) shares more neighbouring lower-case words with the claim
figure (``under 100 crores worldwide`` is judged against ``144 crores worldwide``, not ``75
crores nett in India``). Equality and ``about`` accept any matching figure.

Compatible kinds: number with number and ordinal (the 26th year makes 26 years), and with a year
only for equality; percent with percent; money with money of the same currency; ordinal with
ordinal; date and year claims with quote dates and years (a bare four-digit quote number may be
a year).

Names: satisfied when the normalized name (case, diacritics, punctuation and possessive ``'s``
removed) occurs as a whole-word phrase in the normalized quotes. A shorter claim name inside a
longer quote name counts (``Brandon`` in ``Brandon Mayhew``); a longer one does not (``New York
City`` is not established by ``New York``: it names something more specific).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal

from deep_research.gates.literals.dates import YEAR_MAX, YEAR_MIN
from deep_research.gates.literals.derived import Derivation, derived_satisfied
from deep_research.gates.literals.extraction import literals_of
from deep_research.gates.literals.figure_context import Evidence, evidence_of
from deep_research.gates.literals.intervals import (
    Interval,
    claim_interval,
    date_interval,
    quote_interval,
)
from deep_research.gates.literals.memo import memoized
from deep_research.gates.literals.tokens import LiteralToken, Qualifier


@dataclass(frozen=True)
class LiteralCheck:
    """Which literals of a claim the quotes do not establish."""

    claim_literals: tuple[LiteralToken, ...]
    missing: tuple[LiteralToken, ...]

    @property
    def numeric_missing(self) -> tuple[LiteralToken, ...]:
        return tuple(token for token in self.missing if token.numeric)

    @property
    def names_missing(self) -> tuple[LiteralToken, ...]:
        return tuple(token for token in self.missing if not token.numeric)

    @property
    def ok(self) -> bool:
        return not self.missing


# Figures this much (relative distance) farther than the nearest one still compete as referents.
_REFERENT_SLACK = Decimal("0.1")


def as_year(token: LiteralToken) -> LiteralToken | None:
    """A quote's bare four-digit integer may be a year the extractor had no context for."""
    if token.kind in ("date", "year"):
        return token
    if (
        token.kind == "number"
        and token.value is not None
        and re.fullmatch(r"\d{4}", token.text)
        and YEAR_MIN <= token.value <= YEAR_MAX
    ):
        return replace(token, kind="year", date=(int(token.value), None, None))
    return None


@dataclass(frozen=True)
class _Candidate:
    interval: Interval
    distance: Decimal  # how far the quote literal is from the claim literal
    shared: int  # context words it shares with the claim literal


def _date_satisfied(claim: Evidence, quotes: Sequence[Evidence]) -> bool:
    token = claim.token
    assert token.date is not None
    yearless = token.date[0] == 0
    outer = date_interval(token, claim=True, yearless=yearless)
    if outer is None:
        return False
    candidates: list[_Candidate] = []
    for evidence in quotes:
        quote = as_year(evidence.token)
        if quote is None or quote.date is None:
            continue
        if yearless and (quote.date[1] is None or (token.date[2] and quote.date[2] is None)):
            continue
        inner = date_interval(quote, claim=False, yearless=yearless)
        if inner is not None:
            distance = abs(inner.middle - outer.middle)
            candidates.append(_Candidate(inner, distance, len(claim.context & evidence.context)))
    return _judge(token.qualifier, outer, candidates)


def _judge(qualifier: Qualifier, outer: Interval, candidates: list[_Candidate]) -> bool:
    """Equality-like claims need any contained quote literal. A bound is judged only against its
    referent, else any larger figure would establish "more than X": the nearest figure in value,
    unless one almost as near shares more context words with the claim figure."""
    if not candidates:
        return False
    if qualifier in ("gt", "ge", "lt", "le"):
        reach = min(candidate.distance for candidate in candidates) + _REFERENT_SLACK
        pool = [candidate for candidate in candidates if candidate.distance <= reach]
        best = max((candidate.shared, -candidate.distance) for candidate in pool)
        candidates = [c for c in pool if (c.shared, -c.distance) == best]
    return any(candidate.interval.within(outer) for candidate in candidates)


def _compatible(claim: LiteralToken, quote: LiteralToken) -> bool:
    if quote.value is None:
        return False
    if claim.kind == "number":
        if quote.kind == "year":
            # a year is a count only by coincidence: it can equal a figure, never bound one
            return claim.qualifier not in ("gt", "ge", "lt", "le")
        # the 26th consecutive year makes 26 consecutive years; a count does not make a rank
        return quote.kind in ("number", "ordinal")
    if claim.kind == "money":
        return quote.kind == "money" and quote.unit == claim.unit
    return quote.kind == claim.kind


def _relative_distance(a: Decimal, b: Decimal) -> Decimal:
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale else Decimal(0)


def _value_satisfied(claim: Evidence, quotes: Sequence[Evidence]) -> bool:
    token = claim.token
    assert token.value is not None
    outer = claim_interval(token)
    candidates = [
        _Candidate(
            quote_interval(evidence.token),
            _relative_distance(evidence.token.value, token.value),
            len(claim.context & evidence.context),
        )
        for evidence in quotes
        if evidence.token.value is not None and _compatible(token, evidence.token)
    ]
    return _judge(token.qualifier, outer, candidates)


@memoized
def _normalize_name(text: str) -> str:
    folded = text
    if not folded.isascii():  # ASCII is already NFKD and has no combining marks
        folded = unicodedata.normalize("NFKD", folded)
        folded = "".join(char for char in folded if not unicodedata.combining(char))
    folded = folded.replace("’", "'").casefold()
    if "'" in folded:  # the scan for possessives is the costly part; most names have none
        folded = _POSSESSIVE_MARK_RE.sub("", folded)
    return " ".join(_NAME_PART_RE.findall(folded))


_POSSESSIVE_MARK_RE = re.compile(r"(?<=\w)'s\b|(?<=s)'(?!\w)")
_NAME_PART_RE = re.compile(r"[^\W_]+")


def _satisfied(
    claim: Evidence,
    quotes: Sequence[Evidence],
    quote_text: str,
    derived: Derivation | None,
) -> bool:
    token = claim.token
    if token.kind == "name":
        name = _normalize_name(token.text)
        return bool(name) and f" {name} " in quote_text
    if token.kind in ("date", "year"):
        if _date_satisfied(claim, quotes):
            return True
    elif _value_satisfied(claim, quotes):
        return True
    return (
        derived is not None
        and token.value is not None
        and derived_satisfied(token, [evidence.token for evidence in quotes], derived)
    )


def check(claim: str, quotes: Sequence[str], *, derived: Derivation | None = None) -> LiteralCheck:
    """Which literals of ``claim`` the ``quotes`` (taken together) do not establish."""
    claim_tokens = literals_of(claim)
    claim_evidence = {item.token: item for item in evidence_of(claim)}
    evidence = [item for quote in quotes for item in evidence_of(quote)]
    quote_text = " " + " ".join(_normalize_name(quote) for quote in quotes) + " "
    missing = tuple(
        token
        for token in claim_tokens
        if not _satisfied(
            claim_evidence.get(token, Evidence(token, frozenset())), evidence, quote_text, derived
        )
    )
    return LiteralCheck(claim_literals=claim_tokens, missing=missing)
