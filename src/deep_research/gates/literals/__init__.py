"""Literal fidelity: every figure, date and name in a claim must be backed by its quotes.

Step 3 of the gate. :func:`extract` finds the literals of a text; :func:`check` says which literals
of a claim the quotes cited for it do not establish.

Extraction
    * numbers: integers and decimals with ``,`` ``.`` or thin/no-break-space grouping. ``,``
      followed by groups of exactly three digits groups thousands (``12,34,567`` lakh grouping
      too); ``,`` followed by one or two digits is a decimal comma; a lone ``.`` is always a
      decimal point (``1.000`` is one, not a thousand); two or more ``.`` groups are thousands;
      with both marks the last one is the decimal mark. Multipliers ``thousand/million/billion/
      trillion/bn/mn/crore/lakh`` scale the value; ``m``/``k`` only when glued to the digits or
      on money (``60 m`` is sixty metres).
    * number words (``three``, ``twenty-five``, ``two hundred and five``, ``a dozen``,
      ``two million``); the pronoun ``one of`` is not a count. Ordinals (``3rd``, ``third``) are
      their own kind.
    * percentages (``7%``, ``7 percent``, ``7 per cent``, ``80-percent``, ``55 out of 100``,
      ``84/100``); the value is the number (7 for 7%).
    * money: a currency symbol or ISO code before or after the amount, or ``dollars``/``euros``…
      after it; the value is in units of the currency (``$35 million`` → 35000000 ``USD``).
    * dates: ISO ``2024-03-05`` / ``2024-03``, ``5 March 2024``, ``March 5, 2024``,
      ``March 2024``, and day-month without a year, which takes the year of the nearest earlier
      (else later) year in the same text, or year 0 ("not stated") when the text has none.
      Lower-case month names count only in full day-month-year dates (``may`` is a verb).
    * years: a four-digit integer 1000–2100 after a temporal word (``in``, ``since``, ``after``,
      ``no later than``…), in parentheses, or before a possessive (``2009's``); decades
      (``1990s``) cover their ten years; a season ``2010-11`` is two years. Any other bare
      four-digit integer is a number (``cases reached 2251``).
    * qualifiers: a comparative right before a figure (``more than``, ``over``, ``at least``,
      ``under``, ``older than``, ``about``, ``~``, ``nearly``, ``almost``…), or ``or more`` /
      ``or less`` / ``+`` right after it; ``eq`` otherwise. Before dates and ordinals:
      ``after``/``later than`` (gt), ``before``/``prior to`` (lt), ``no later than`` (le),
      ``no earlier than`` (ge), ``around``/``circa`` (approx). ``by``, ``since`` and ``until``
      mark an endpoint and are read as ``eq``: "by April 21 there were 17 cases" is the count
      as of April 21, which a count as of April 20 does not establish.
    * names: capitalized word sequences (joined by ``of``/``de``/``van``…) and acronyms. A single
      capitalized word at a sentence start is not a name; leading function words are dropped;
      month and weekday names belong to dates. A number is part of a name, not a figure, when it
      follows a capitalized word (``Ted 2``, ``Euro 2016``, ``Super Mario Bros. 3``), when it is
      a label (``#3``, ``No. 3``), or when a year sits between "the" and a capitalized word
      (``the 2018 World Cup``): the name check still catches a change to it.

Matching (each claim literal against the literals of all quotes taken together)
    Every literal is an interval: ``eq X`` → {X}; ``more than X`` → (X, ∞); ``at least X`` →
    [X, ∞); ``less than X`` → (−∞, X); ``at most X`` → (−∞, X]; ``about X`` → X ± max(5% of X,
    half a unit of the last written digit) — the latter is the rounding rule, so it only applies
    under ``about``; ``nearly X`` → the same band capped at X. In a quote, ``about Y`` is taken
    at face value ({Y}) and ``nearly Y`` is the band below Y. A claim literal is satisfied when a
    compatible quote literal's interval lies inside the claim literal's interval: ``150`` is not
    established by ``more than 100``, ``less than 6.8 million`` not by ``over 6.7 million``, and a
    bare ``18,700`` not by ``18,752``. Dates are day intervals: a year covers its days, so
    ``in 2020`` contains any date in 2020 and ``March 2024`` any day of that month; a claim date
    without a year compares day and month only; a quote date without a year cannot establish a
    claim date that states one.

    A bound is judged against its referent, not against every figure (else any larger number in
    the quote would establish ``more than X``): the quote figure nearest in value, unless another
    one at most 0.1 farther (relative distance) shares more neighbouring lower-case words with
    the claim figure (``under 100 crores worldwide`` is judged against ``144 crores worldwide``,
    not ``75 crores nett in India``). Equality and ``about`` accept any matching figure.

    Compatible kinds: number with number and ordinal (the 26th year makes 26 years), and with a
    year only for equality; percent with percent; money with money of the same currency; ordinal
    with ordinal; date and year claims with quote dates and years (a bare four-digit quote number
    may be a year).

    Derived: when ``derived`` is given, the claim figure equal to its result (within half a unit
    of its last written digit) is satisfied iff every input is a figure in the quotes and the
    operation on the inputs gives the claim figure within that precision (or its ``about``
    band). ``difference`` is first − second, ``ratio`` first / second (for a percent figure the
    ratio may be a fraction or a percentage), ``percent_change`` (second − first) / first × 100.

    Names: satisfied when the normalized name (case, diacritics, punctuation and possessive
    ``'s`` removed) occurs as a whole-word phrase in the normalized quotes. A shorter claim name
    inside a longer quote name counts (``Brandon`` in ``Brandon Mayhew``); a longer one does not
    (``New York City`` is not established by ``New York``: it names something more specific).
"""

from __future__ import annotations

import bisect
import re
import string
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import date as _date
from decimal import Decimal, DivisionByZero, InvalidOperation
from functools import lru_cache
from typing import Literal, TypeVar

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


@dataclass(frozen=True)
class Derivation:
    """A figure the claim's author declares as computed from quoted figures."""

    operation: Literal["sum", "difference", "ratio", "product", "percent_change"]
    inputs: tuple[Decimal, ...]
    result: Decimal


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


# --------------------------------------------------------------------------------------------
# Vocabulary

_MONTHS: dict[str, int] = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
_WEEKDAYS = frozenset(
    {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
)

_UNITS: dict[str, int] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9,
}  # fmt: skip
_TEENS: dict[str, int] = {
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
    "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS: dict[str, int] = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES: dict[str, int] = {
    "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12,
}  # fmt: skip
_ORDINAL_WORDS: dict[str, int] = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
    "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
    "nineteenth": 19, "twentieth": 20, "thirtieth": 30, "fortieth": 40, "fiftieth": 50,
    "sixtieth": 60, "seventieth": 70, "eightieth": 80, "ninetieth": 90, "hundredth": 100,
    "thousandth": 1000, "millionth": 10**6,
}  # fmt: skip

_MULTIPLIERS: dict[str, int] = {
    "thousand": 10**3, "million": 10**6, "billion": 10**9, "trillion": 10**12,
    "bn": 10**9, "mn": 10**6, "crore": 10**7, "crores": 10**7, "lakh": 10**5, "lakhs": 10**5,
    "m": 10**6, "k": 10**3,
}  # fmt: skip
# Bare letters are too ambiguous (metres, kilo-anything) unless the figure is money or the
# letter is glued to the digits.
_LOOSE_MULTIPLIERS = frozenset({"m", "k"})

_CURRENCY_SYMBOLS: dict[str, str] = {
    "$": "USD", "us$": "USD", "us $": "USD", "a$": "AUD", "au$": "AUD", "c$": "CAD",
    "ca$": "CAD", "hk$": "HKD", "nz$": "NZD", "s$": "SGD", "r$": "BRL", "€": "EUR", "£": "GBP",
    "¥": "JPY", "₹": "INR", "rs": "INR", "rs.": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY",
}  # fmt: skip
_CURRENCY_CODES = (
    "USD", "EUR", "GBP", "JPY", "CNY", "RMB", "INR", "CAD", "AUD", "CHF", "HKD", "NZD", "SGD",
    "KRW", "RUB", "BRL", "ZAR", "SEK", "NOK", "DKK", "MXN", "PLN", "TRY",
)  # fmt: skip
_CURRENCY_WORDS: dict[str, str] = {
    "dollars": "USD", "dollar": "USD", "euros": "EUR", "euro": "EUR", "pounds sterling": "GBP",
    "pounds": "GBP", "yen": "JPY", "rupees": "INR", "yuan": "CNY",
}  # fmt: skip

# --------------------------------------------------------------------------------------------
# Patterns. Every quantifier is bounded or applies to a disjoint character class, and starts
# inside a digit run or right after a consumed thousands group are refused by lookbehind, so each
# pattern scans a text in linear time.

_NUMERAL = r"""
    (?:\d{1,3}(?:,\d{3})+(?:\.\d+)?               # 1,234,567.89
      |\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?         # 1,23,456 (lakh grouping)
      |\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?            # 1.234.567,89
      |\d{1,3}\.\d{3},\d+                         # 1.234,5
      |\d{1,3}(?:[\u2009\u202f\u00a0]\d{3})+(?:[.,]\d+)?   # 1 234 567 (thin/no-break space)
      |\d+,\d{1,2}(?![\d,])                       # 3,5 (decimal comma)
      |\d+(?:\.\d+)?)                             # 1234 / 3.14
"""
# Each alternation below starts with a lookahead on its possible first characters: without it
# the regex engine tries every alternative at every word start, which dominated extraction time.
_CUR_PREFIX = (
    r"(?=[$€£¥₹₩₽₺UACHNSR" + "".join(sorted({code[0] for code in _CURRENCY_CODES})) + r"])"
    r"(?:(?:US\s?|AU|CA|HK|NZ|A|C|S|R)?\$|€|£|¥|₹|₩|₽|₺|Rs\.?|(?:"
    + "|".join(_CURRENCY_CODES)
    + r")(?![A-Za-z]))"
)
_CUR_SUFFIX = (
    r"(?:"
    + "|".join(_CURRENCY_CODES)
    + r"|"
    + "|".join(sorted(_CURRENCY_WORDS, key=len, reverse=True))
    + r")(?![A-Za-z])"
)
_MULT = r"(?:thousand|million|billion|trillion|crores?|lakhs?|[Bb]n|[Mm]n|[Mm]|[Kk])(?![A-Za-z])"

_NUMBER_RE = re.compile(
    r"(?<![\w.])(?<![^\W\d_][-–])(?!(?<=\d,)\d{3}(?!\d))"  # not inside a word/grouped numeral
    r"(?:(?P<cur>" + _CUR_PREFIX + r")\s?)?"
    r"(?P<sign>[−-](?=\d))?(?P<num>" + _NUMERAL + r")(?!\d)"
    r"(?:(?P<ord>st|nd|rd|th)(?![A-Za-z])"
    r"|(?P<plus>\+)?(?P<msp>\s?)(?P<mult>" + _MULT + r"))?"
    r"(?:[\s-]?(?P<pct>%|percent(?![A-Za-z])|per\s?cent(?![A-Za-z])|pct(?![A-Za-z]))"
    r"|(?P<outof>\s?/\s?100|\sout\s+of\s+100)(?![\d.,]?\d)"
    r"|\s?(?P<cur2>" + _CUR_SUFFIX + r"))?",
    re.VERBOSE,
)

# Inside (?i:...) the lookahead is case-insensitive too, exactly like the names it guards.
_MONTH_RE = (
    r"(?=[JFMASOND])"
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Sept|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\.?(?![A-Za-z])"
)
_DAY_RE = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?(?![\dA-Za-z])"
_YEAR_RE = r"(?:1\d{3}|20\d{2}|2100)(?!\d)"
_YEAR_MIN, _YEAR_MAX = 1000, 2100
_DATE_RE = re.compile(
    r"(?<![\w.,])(?:"
    r"(?P<iso>(?P<iy>\d{4})-(?P<im>\d{2})(?:-(?P<id>\d{2}))?)(?![\d-])"
    r"|(?P<dmy>(?P<d1>" + _DAY_RE + r")\s+(?:of\s+)?(?P<m1>" + _MONTH_RE + r")"
    r"(?:\s*,?\s*(?P<y1>" + _YEAR_RE + r"))?)"
    r"|(?P<mdy>(?P<m2>" + _MONTH_RE + r")\s+(?P<d2>" + _DAY_RE + r")"
    r"(?:\s*,?\s*(?P<y2>" + _YEAR_RE + r"))?)"
    r"|(?P<my>(?P<m3>" + _MONTH_RE + r")\s*,?\s+(?:of\s+)?(?P<y3>" + _YEAR_RE + r"))"
    # a lower-case month is a date only when a day and a year pin it down ("22 march 2020")
    r"|(?P<dmyl>(?P<d4>" + _DAY_RE + r")\s+(?P<m4>(?i:" + _MONTH_RE + r"))"
    r"\s*,?\s*(?P<y4>" + _YEAR_RE + r"))"
    r"|(?P<mdyl>(?P<m5>(?i:" + _MONTH_RE + r"))\s+(?P<d5>" + _DAY_RE + r")"
    r"\s*,?\s*(?P<y5>" + _YEAR_RE + r"))"
    r"|(?P<decade>(?P<dy>1\d{2}0|20\d0)\s?['’]?s)(?![A-Za-z])"
    r"|(?P<span>(?P<sy1>\d{4})[-–](?P<sy2>\d{2}))(?![\d-])"
    r")"
)

_WORD_NUMBERS = sorted(
    [*_UNITS, *_TEENS, *_TENS, *_SCALES, *_ORDINAL_WORDS, "hundred", "dozen"],
    key=len,
    reverse=True,
)
_NUMBER_WORD = (
    r"(?=[" + "".join(sorted({word[0] for word in _WORD_NUMBERS})) + r"])"
    r"(?:" + "|".join(_WORD_NUMBERS) + r")"
)
_WORDS_RE = re.compile(
    r"(?<![\w-])(?:(?P<article>an?)\s+(?=(?:hundred|thousand|million|billion|trillion|dozen)\b))?"
    r"(?P<words>" + _NUMBER_WORD + r"(?:(?:[\s-]+|\s+and\s+)" + _NUMBER_WORD + r")*)"
    r"(?!\w)",
    re.IGNORECASE,
)
_WORD_SPLIT_RE = re.compile(r"[A-Za-z]+")

_SUFFIX_RE = re.compile(
    r"\s?(?:(?P<pct>%|percent(?![A-Za-z])|per\s?cent(?![A-Za-z]))"
    r"|(?P<cur>" + _CUR_SUFFIX + r"))",
    re.IGNORECASE,
)

_NAME_WORD_RE = re.compile(r"[^\W_](?:[\w&+]|['’\-./](?=\w))*")
_SENTENCE_END = frozenset(".!?\n\r`\"“”'‘’(*•:;[{|")
_CONNECTORS = frozenset(
    {"of", "de", "del", "della", "di", "da", "du", "van", "von", "der", "den", "la", "le",
     "al", "bin", "ibn", "y"}
)  # fmt: skip
_FUNCTION_WORDS = frozenset(
    {
        "a", "an", "the", "in", "on", "at", "by", "for", "from", "with", "after", "before",
        "during", "since", "as", "of", "to", "according", "over", "under", "there", "this",
        "that", "these", "those", "it", "its", "he", "she", "they", "we", "his", "her", "their",
        "our", "and", "but", "or", "if", "when", "while", "although", "though", "however",
        "also", "both", "less", "more", "many", "most", "some", "all", "each", "every", "no",
        "not", "only", "than", "then", "upon", "into", "between", "among", "within", "without",
        "following", "including", "despite", "overall", "total", "approximately", "about",
        "around", "nearly", "almost", "until", "is", "was", "were", "are", "has", "have",
        "had", "i", "you", "my", "your", "what", "which", "who", "where", "why", "how", "one",
    }
)  # fmt: skip

# Comparative adjectives: "<adjective> than X" bounds X from above or below.
_GREATER = (
    "more", "greater", "higher", "larger", "bigger", "older", "longer", "taller", "heavier",
    "wider", "deeper", "faster", "stronger", "richer",
)  # fmt: skip
_SMALLER = (
    "less", "fewer", "lower", "smaller", "younger", "shorter", "lighter", "narrower",
    "shallower", "slower", "cheaper", "weaker", "poorer",
)  # fmt: skip
# Comparatives immediately before a figure; the longest phrase wins ("no less than" is ge, not lt).
_NUMERIC_QUALIFIERS: tuple[tuple[str, Qualifier], ...] = (
    ("no less than", "ge"), ("not less than", "ge"), ("no fewer than", "ge"),
    ("not fewer than", "ge"), ("at least", "ge"), ("a minimum of", "ge"), ("minimum of", "ge"),
    ("no more than", "le"), ("not more than", "le"), ("at most", "le"), ("up to", "le"),
    ("a maximum of", "le"), ("maximum of", "le"), ("as many as", "le"), ("as much as", "le"),
    *((f"{word} than", "gt") for word in _GREATER),
    ("in excess of", "gt"), ("upwards of", "gt"), ("upward of", "gt"), ("over", "gt"),
    ("above", "gt"), ("exceeds", "gt"), ("exceeded", "gt"), ("exceeding", "gt"),
    ("surpassed", "gt"), ("surpassing", "gt"), ("north of", "gt"), ("beyond", "gt"),
    *((f"{word} than", "lt") for word in _SMALLER),
    ("under", "lt"), ("below", "lt"), ("shy of", "lt"), ("short of", "lt"),
    ("approximately", "approx"), ("approx.", "approx"), ("approx", "approx"),
    ("about", "approx"), ("around", "approx"), ("roughly", "approx"), ("circa", "approx"),
    ("ca.", "approx"), ("some", "approx"), ("an estimated", "approx"),
    ("estimated", "approx"), ("close to", "approx"), ("~", "approx"), ("≈", "approx"),
    ("nearly", "nearly"), ("almost", "nearly"),
)  # fmt: skip
_DATE_QUALIFIERS: tuple[tuple[str, Qualifier], ...] = (
    ("no later than", "le"), ("not later than", "le"), ("on or before", "le"),
    ("no earlier than", "ge"), ("not earlier than", "ge"), ("on or after", "ge"),
    ("later than", "gt"), ("after", "gt"), ("earlier than", "lt"), ("prior to", "lt"),
    ("before", "lt"),
    ("around", "approx"), ("about", "approx"),
    ("circa", "approx"), ("ca.", "approx"), ("c.", "approx"), ("approximately", "approx"),
    ("roughly", "approx"),
)  # fmt: skip
_YEAR_CONTEXT = frozenset(
    {"in", "since", "by", "after", "before", "from", "until", "till", "through", "of",
     "during", "early", "late", "mid", "circa", "c", "ca", "year", "the", "between", "on",
     "spring", "summer", "autumn", "fall", "winter"}
)  # fmt: skip


_NUMERIC_QUALIFIER_MAP = dict(_NUMERIC_QUALIFIERS)
_DATE_QUALIFIER_MAP = dict(_DATE_QUALIFIERS)
_LONGEST_QUALIFIER = max(
    len(phrase.split()) for phrase, _ in _NUMERIC_QUALIFIERS + _DATE_QUALIFIERS
)
# Words, a few symbols, and any other single character: punctuation between a comparative and
# the figure breaks the phrase ("more than, 5" is not "more than 5").
_QUALIFIER_TOKEN_RE = re.compile(r"[^\W\d_]+\.?|\S")
_POST_QUALIFIER_RE = re.compile(
    r"\s*(?:(?P<ge>or\s+(?:more|greater|higher|above)|\+|-plus)|(?P<le>or\s+(?:less|fewer|below)))"
    r"(?![\w])",
    re.IGNORECASE,
)
_QUALIFIER_WINDOW = 40
# A window can only end a qualifier phrase if it ends with the phrase's last word ("the" may be
# dropped before a dated figure, so it is kept as a possible ending).
_QUALIFIER_ENDINGS = tuple(
    {phrase.split()[-1] for phrase, _ in _NUMERIC_QUALIFIERS + _DATE_QUALIFIERS} | {"the"}
)


# --------------------------------------------------------------------------------------------
# Extraction


class _Spans:
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


def _qualifier_before(text: str, start: int, *, dated: bool) -> Qualifier:
    """The comparative that ends right before ``start``, looked up by its last few words (a
    dictionary probe per figure keeps extraction linear in the number of figures)."""
    window = text[max(0, start - _QUALIFIER_WINDOW) : start].rstrip().lower()
    if not window or not (window[-1].isalpha() or window[-1] in "~≈."):
        return "eq"
    if not window.endswith(_QUALIFIER_ENDINGS):
        return "eq"  # the last word ends no phrase: skip tokenizing (most figures)
    words = _QUALIFIER_TOKEN_RE.findall(window)[-(_LONGEST_QUALIFIER + 1) :]
    if dated and words and words[-1] == "the":
        words.pop()  # "before the 58th minute": positions read like dates
    mapping = _DATE_QUALIFIER_MAP if dated else _NUMERIC_QUALIFIER_MAP
    for size in range(min(_LONGEST_QUALIFIER, len(words)), 0, -1):
        qualifier = mapping.get(" ".join(words[-size:]))
        if qualifier is not None:
            return qualifier
    return "eq"


def _qualifier_after(text: str, end: int) -> Qualifier | None:
    found = _POST_QUALIFIER_RE.match(text, end, min(len(text), end + 20))
    if found is None:
        return None
    return "ge" if found.group("ge") else "le"


def _parse_numeral(raw: str) -> Decimal:
    if raw.isdigit():
        return Decimal(raw)
    digits = re.sub(r"[\u2009\u202f\u00a0]", "", raw)
    if "," in digits and "." in digits:
        if digits.rfind(",") > digits.rfind("."):
            digits = digits.replace(".", "").replace(",", ".")
        else:
            digits = digits.replace(",", "")
    elif "," in digits:
        if re.fullmatch(r"\d{1,3}(?:,\d{3})+|\d{1,2}(?:,\d{2})+,\d{3}", digits):
            digits = digits.replace(",", "")
        else:
            digits = digits.replace(",", ".")
    elif digits.count(".") > 1:
        digits = digits.replace(".", "")
    return Decimal(digits)


def _previous_word(text: str, start: int) -> str:
    window = text[max(0, start - 20) : start].rstrip()
    if window.endswith("("):
        return "("
    # The ASCII letters ending the window, before one optional period (what the regex
    # ``([A-Za-z]+)\.?$`` finds, without scanning every position).
    body = window[:-1] if window.endswith(".") else window
    return body[len(body.rstrip(_ASCII_LETTERS)) :].lower()


_ASCII_LETTERS = string.ascii_letters
_FOUR_DIGITS_RE = re.compile(r"\d{4}")


def _is_year(text: str, start: int, raw: str) -> bool:
    if not _FOUR_DIGITS_RE.fullmatch(raw) or not _YEAR_MIN <= int(raw) <= _YEAR_MAX:
        return False
    if _POSSESSIVE_RE.match(text, start + 4):
        return True
    previous = _previous_word(text, start)
    if previous == "(" or previous in _YEAR_CONTEXT:
        return True
    return _qualifier_before(text, start, dated=True) != "eq"  # "no later than 2025"


_POSSESSIVE_RE = re.compile(r"\s?['’]s(?![A-Za-z])")
_TITLE_WORD_RE = re.compile(r"(?<![\w'’-])([^\W\d_][\w&+'’-]*)(\.?) $")
_PREVIOUS_CAPITAL_RE = re.compile(r"(?<![\w'’-])[A-Z][\w'’-]* $")
_IDENTIFIER_RE = re.compile(r"(?:#|(?<![\w.])No\.)\s?\d+(?![\d.,]?\d)")


def _title_number(text: str, start: int) -> bool:
    """A plain number right after a capitalized word belongs to a name: Ted 2, Euro 2016,
    Super Mario Bros. 3 (a short abbreviation may end in a period)."""
    if start < 2 or text[start - 1] != " " or text[start - 2] in " \t\n":
        return False
    found = _TITLE_WORD_RE.search(text, max(0, start - 60), start)
    if found is None:
        return False
    word = found.group(1)
    if found.group(2) and not (
        len(word) <= 4
        and _PREVIOUS_CAPITAL_RE.search(text, max(0, found.start() - 60), found.start())
    ):
        return False  # "in Iran. 3 people" ends a sentence; "Mario Bros. 3" does not
    return word[0].isupper() and _is_name_word(word) and word.lower() not in _FUNCTION_WORDS


def _identifier_tokens(text: str, taken: _Spans) -> list[LiteralToken]:
    """Labels such as "#3" and "No. 3" name something; they are not quantities."""
    tokens: list[LiteralToken] = []
    for found in _IDENTIFIER_RE.finditer(text):
        start, end = found.span()
        if taken.free(start, end):
            taken.take(start, end)
            tokens.append(LiteralToken("name", found.group(0), start, end, None, None, None, "eq"))
    return tokens


_EVENT_YEAR_RE = re.compile(r"(?:1\d{3}|20\d{2})(?:[-–]\d{2})?")
_THE_BEFORE_RE = re.compile(r"(?<![\w])[Tt]he $")
_NAME_AFTER_RE = re.compile(r" ([^\W\d_][\w&+'’-]*)")


def _event_year(text: str, start: int, end: int) -> bool:
    """A year between "the" and a capitalized word names an event: the 2018 World Cup."""
    if not _EVENT_YEAR_RE.fullmatch(text, start, end):
        return False
    if not _THE_BEFORE_RE.search(text, max(0, start - 5), start):
        return False
    after = _NAME_AFTER_RE.match(text, end)
    if after is None:
        return False
    word = after.group(1)
    return word[0].isupper() and _is_name_word(word) and word.lower() not in _FUNCTION_WORDS


def _money_unit(prefix: str | None, suffix: str | None) -> str | None:
    for raw in (prefix, suffix):
        if raw is None:
            continue
        key = " ".join(raw.lower().split())
        if key in _CURRENCY_SYMBOLS:
            return _CURRENCY_SYMBOLS[key]
        if key.endswith("$"):
            return _CURRENCY_SYMBOLS.get(key.replace(" ", ""), "USD")
        if key in _CURRENCY_WORDS:
            return _CURRENCY_WORDS[key]
        if raw.upper() in _CURRENCY_CODES:
            return "CNY" if raw.upper() == "RMB" else raw.upper()
    return None


_PLAIN_NUMERAL_RE = re.compile(r"\d+(?:\.\d+)?")


def _number_token(text: str, found: re.Match[str]) -> LiteralToken | None:
    """One figure from a match of ``_NUMBER_RE``, or None when it is part of a name."""
    groups = found.groupdict()
    value = _parse_numeral(groups["num"])
    if groups["sign"]:
        value = -value
    start, end = found.start("sign" if groups["sign"] else "num"), found.end()
    mult = groups["mult"]
    loose = mult is not None and mult.lower() in _LOOSE_MULTIPLIERS
    if loose and not (groups["cur"] or groups["cur2"] or not groups["msp"]):
        # "60 m" is sixty metres, not sixty million; what followed it is not ours either
        mult = None
        end = found.end("plus") if groups["plus"] else found.end("num")
        groups.update(pct=None, outof=None, cur2=None)
    if mult is not None:
        value *= _MULTIPLIERS[mult.lower()]
    unit: str | None = None
    kind: LiteralKind
    if groups["ord"] and mult is None:
        kind, end = "ordinal", found.end("ord")
    elif groups["pct"] or groups["outof"]:
        kind = "percent"
    elif groups["cur"] or groups["cur2"]:
        kind, unit = "money", _money_unit(groups["cur"], groups["cur2"])
        start = found.start()
    elif mult is None and not groups["sign"] and _is_year(text, start, groups["num"]):
        kind = "year"
    else:
        kind = "number"
    plain = kind in ("number", "year") and _PLAIN_NUMERAL_RE.fullmatch(text, start, end)
    if plain and (_title_number(text, start) or _event_year(text, start, end)):
        return None
    qualifier = _qualifier_before(text, start, dated=kind in ("year", "ordinal"))
    if qualifier == "eq":
        qualifier = "ge" if groups["plus"] else _qualifier_after(text, end) or "eq"
    return LiteralToken(
        kind=kind,
        text=text[start:end],
        start=start,
        end=end,
        value=value,
        unit=unit,
        date=(int(value), None, None) if kind == "year" else None,
        qualifier=qualifier,
    )


def _number_tokens(text: str, taken: _Spans) -> list[LiteralToken]:
    tokens: list[LiteralToken] = []
    for found in _NUMBER_RE.finditer(text):
        token = _number_token(text, found)
        if token is not None and taken.free(token.start, token.end):
            taken.take(token.start, token.end)
            tokens.append(token)
    return tokens


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


def _date_token(
    text: str, start: int, end: int, parts: tuple[int, int | None, int | None], kind: LiteralKind
) -> LiteralToken:
    return LiteralToken(
        kind=kind,
        text=text[start:end],
        start=start,
        end=end,
        value=Decimal(parts[0]) if kind == "year" else None,
        unit=None,
        date=parts,
        qualifier=_qualifier_before(text, start, dated=True),
    )


_DAY_FORMS = ((1, "dmy"), (2, "mdy"), (4, "dmyl"), (5, "mdyl"))


def _date_tokens(text: str, taken: _Spans) -> list[LiteralToken]:
    tokens: list[LiteralToken] = []
    for found in _DATE_RE.finditer(text):
        start, end = found.span()
        made: list[LiteralToken] = []
        if _event_year(text, start, end):
            taken.take(start, end)  # left for the name it belongs to
            continue
        if found.group("iso"):
            year, month = int(found.group("iy")), int(found.group("im"))
            day = int(found.group("id")) if found.group("id") else None
            if day is None and month == (year + 1) % 100:
                made = _season(text, found, year)
            elif _YEAR_MIN <= year <= _YEAR_MAX and _valid_date(year, month, day):
                made = [_date_token(text, start, end, (year, month, day), "date")]
        elif suffix := next((str(n) for n, name in _DAY_FORMS if found.group(name)), ""):
            month = _MONTHS[found.group("m" + suffix).rstrip(".").lower()]
            day = _day_number(found.group("d" + suffix))
            year_raw = found.group("y" + suffix)
            year = int(year_raw) if year_raw else 0
            if _valid_date(year, month, day):
                made = [_date_token(text, start, end, (year, month, day), "date")]
        elif found.group("my"):
            month = _MONTHS[found.group("m3").rstrip(".").lower()]
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


def _is_sentence_start(text: str, start: int) -> bool:
    index = start - 1
    while index >= 0 and text[index] in " \t":
        index -= 1
    return index < 0 or text[index] in _SENTENCE_END


@dataclass
class _WordNumber:
    value: int
    first: int
    last: int
    ordinal: bool


def _word_category(word: str) -> tuple[str, int]:
    """(category, amount) of one number word; ordinal words share their cardinal's category."""
    if word in _UNITS:
        return "unit", _UNITS[word]
    if word in _TEENS:
        return "teen", _TEENS[word]
    if word in _TENS:
        return "tens", _TENS[word]
    if word in _SCALES:
        return "scale", _SCALES[word]
    if word in ("hundred", "dozen"):
        return word, 100 if word == "hundred" else 12
    amount = _ORDINAL_WORDS[word]
    if amount < 10:
        return "unit", amount
    if amount < 20:
        return "teen", amount
    if amount < 100:
        return "tens", amount
    return ("hundred", 100) if amount == 100 else ("scale", amount)


class _WordNumberParser:
    """Reads a run of number words left to right, closing a number when a word cannot extend it
    ("two hundred and five" → 205; "one two" → 1, 2; "twenty-first" → ordinal 21)."""

    def __init__(self) -> None:
        self.results: list[_WordNumber] = []
        self._reset()

    def _reset(self) -> None:
        self.total = 0
        self.current = 0
        self.first = -1
        self.last_scale = 10**15

    def close(self, last: int, *, ordinal: bool = False) -> None:
        if self.first >= 0 and last >= self.first:
            value = self.total + self.current
            self.results.append(_WordNumber(value, self.first, last, ordinal))
        self._reset()

    def _extends(self, category: str) -> bool:
        if self.first < 0:
            return False
        small = self.current % 100
        if category == "unit":
            return small % 10 == 0 and small != 10 and (self.current + self.total) > 0
        if category in ("teen", "tens"):
            return small == 0 and (self.current + self.total) > 0
        if category == "hundred":
            return 0 < self.current < 100
        if category == "scale":
            return self.current > 0
        return self.total == 0 and 0 < self.current < 100  # dozen

    def feed(self, index: int, word: str) -> None:
        category, amount = _word_category(word)
        if category == "scale" and amount >= self.last_scale:
            self.close(index - 1)
        if not self._extends(category):
            self.close(index - 1)
            self.first = index
            if category in ("hundred", "scale", "dozen"):
                self.current = 1
        elif self.first < 0:
            self.first = index
        if category in ("unit", "teen", "tens"):
            self.current += amount
        elif category in ("hundred", "dozen"):
            self.current *= amount
        else:
            self.total += self.current * amount
            self.current = 0
            self.last_scale = amount
        if word in _ORDINAL_WORDS:
            self.close(index, ordinal=True)
        elif category == "dozen":
            self.close(index)


def _parse_number_words(words: list[str]) -> list[_WordNumber]:
    parser = _WordNumberParser()
    for index, raw in enumerate(words):
        word = raw.lower()
        if word != "and":
            parser.feed(index, word)
    parser.close(len(words) - 1)
    return parser.results


def _word_tokens(text: str, taken: _Spans) -> list[LiteralToken]:
    tokens: list[LiteralToken] = []
    for found in _WORDS_RE.finditer(text):
        pieces = list(_WORD_SPLIT_RE.finditer(found.group("words")))
        offset = found.start("words")
        words = [piece.group(0) for piece in pieces]
        for number in _parse_number_words(words):
            start = offset + pieces[number.first].start()
            end = offset + pieces[number.last].end()
            if number.first == 0 and found.group("article"):
                start = found.start()
            token = _word_token(text, start, end, number)
            if token is not None and taken.free(token.start, token.end):
                taken.take(token.start, token.end)
                tokens.append(token)
    return tokens


_PRONOUN_ONE_RE = re.compile(r"\s+(?:of|another)(?!\w)", re.IGNORECASE)


def _word_token(text: str, start: int, end: int, number: _WordNumber) -> LiteralToken | None:
    if text[start:end].lower() == "one" and _PRONOUN_ONE_RE.match(text, end):
        return None  # "one of the best", "one another": a pronoun, not a count
    kind: LiteralKind = "ordinal" if number.ordinal else "number"
    unit: str | None = None
    suffix = None if number.ordinal else _SUFFIX_RE.match(text, end)
    if suffix is not None:
        if suffix.group("pct"):
            kind = "percent"
        else:
            kind, unit = "money", _money_unit(None, suffix.group("cur"))
        end = suffix.end()
    qualifier = _qualifier_before(text, start, dated=number.ordinal)
    post = _qualifier_after(text, end)
    if post is not None and qualifier == "eq":
        qualifier = post
    return LiteralToken(
        kind=kind,
        text=text[start:end],
        start=start,
        end=end,
        value=Decimal(number.value),
        unit=unit,
        date=None,
        qualifier=qualifier,
    )


def _name_tokens(text: str, taken: _Spans) -> list[LiteralToken]:
    tokens: list[LiteralToken] = []
    run: list[re.Match[str]] = []

    def flush() -> None:
        if run:
            token = _name_from_run(text, run)
            if token is not None:
                tokens.append(token)
            run.clear()

    pending_connector: re.Match[str] | None = None
    previous_end = -1
    for found in _NAME_WORD_RE.finditer(text):
        word = found.group(0)
        if not run and not word[0].isupper() and not word[0].isdigit():
            # Most words: with no run open, a word that is neither capitalized nor a number
            # only ends an (empty) run; skip the work below.
            previous_end = found.end()
            continue
        gap = text[previous_end : found.start()] if previous_end >= 0 else ""
        adjacent = previous_end >= 0 and gap.strip() == "" and "\n" not in gap
        if word[0].isdigit():
            if run and pending_connector is None and _title_number(text, found.start()):
                run.append(found)
            else:
                flush()
                pending_connector = None
                if _event_year(text, found.start(), found.end()):
                    run.append(found)
            previous_end = found.end()
            continue
        capitalized = word[0].isupper() and _is_name_word(word) and taken.free(*found.span())
        if capitalized:
            if run and adjacent:
                if pending_connector is not None:
                    run.append(pending_connector)
                run.append(found)
            else:
                flush()
                run.append(found)
            pending_connector = None
        elif run and adjacent and pending_connector is None and word.lower() in _CONNECTORS:
            pending_connector = found
        else:
            flush()
            pending_connector = None
        previous_end = found.end()
    flush()
    return tokens


def _is_name_word(word: str) -> bool:
    lowered = word.lower().rstrip(".")
    return lowered not in _MONTHS and lowered not in _WEEKDAYS and lowered != "i"


def _name_from_run(text: str, run: list[re.Match[str]]) -> LiteralToken | None:
    words = list(run)
    if (
        _is_sentence_start(text, words[0].start())
        and len(words) == 1
        and not _is_acronym(words[0].group(0))
    ):
        return None
    while words and words[0].group(0).lower() in _FUNCTION_WORDS:
        words.pop(0)
    while words and words[-1].group(0).lower() in _CONNECTORS:
        words.pop()
    if not words:
        return None
    start, end = words[0].start(), words[-1].end()
    return LiteralToken("name", text[start:end], start, end, None, None, None, "eq")


def _is_acronym(word: str) -> bool:
    letters = [char for char in word if char.isalpha()]
    return len(letters) >= 2 and all(char.isupper() for char in letters)


def _infer_years(tokens: list[LiteralToken]) -> list[LiteralToken]:
    """A day-month without a year takes the year of the nearest earlier (else later) year."""
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


#: Texts up to this length have their literals memoized: a trace checks the same claim against
#: every cited source and the same quote for several claims. Longer texts are not kept alive.
_MEMO_CHARS = 4096


_Result = TypeVar("_Result")


def _memoized(function: Callable[[str], _Result]) -> Callable[[str], _Result]:
    """Memoize a pure function of a short text; results must be immutable."""
    cached = lru_cache(maxsize=4096)(function)

    def call(text: str) -> _Result:
        return cached(text) if len(text) <= _MEMO_CHARS else function(text)

    return call


def extract(text: str) -> list[LiteralToken]:
    """All literals of ``text`` in order of position (see the module docstring for the rules)."""
    return list(_extract(text))


#: The only non-ASCII characters that case-insensitive patterns match as ASCII letters. The word
#: tables are ASCII, so these are folded first (one character each: offsets stay valid).
_IGNORECASE_ALIASES = str.maketrans({"İ": "I", "ı": "i", "ſ": "s", "\u212a": "K"})


@_memoized
def _extract(text: str) -> tuple[LiteralToken, ...]:
    text = text.translate(_IGNORECASE_ALIASES)
    taken = _Spans()
    tokens = _identifier_tokens(text, taken)
    tokens += _date_tokens(text, taken)
    tokens += _number_tokens(text, taken)
    tokens += _word_tokens(text, taken)
    tokens += _name_tokens(text, taken)
    tokens.sort(key=lambda token: token.start)
    return tuple(_infer_years(tokens))


# --------------------------------------------------------------------------------------------
# Matching

_INFINITY = Decimal("Infinity")
_APPROX_SHARE = Decimal("0.05")


@dataclass(frozen=True)
class _Interval:
    low: Decimal
    high: Decimal
    low_open: bool = False
    high_open: bool = False

    def within(self, outer: _Interval) -> bool:
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


def _quantum(token: LiteralToken) -> Decimal:
    """One unit of the figure's last written digit; trailing zeros of an integer do not count."""
    assert token.value is not None
    found = re.search(_NUMERAL, token.text, re.VERBOSE)
    if found is None:
        return Decimal(1).scaleb(_exponent(token.value.normalize()))
    written = _parse_numeral(found.group(0))
    exponent = _exponent(written) if _exponent(written) < 0 else _exponent(written.normalize())
    scale = abs(token.value / written) if written else Decimal(1)
    return Decimal(1).scaleb(exponent) * scale


def _tolerance(token: LiteralToken) -> Decimal:
    assert token.value is not None
    return max(abs(token.value) * _APPROX_SHARE, _quantum(token) / 2)


def _claim_interval(token: LiteralToken) -> _Interval:
    assert token.value is not None
    value = token.value
    match token.qualifier:
        case "gt":
            return _Interval(value, _INFINITY, low_open=True)
        case "ge":
            return _Interval(value, _INFINITY)
        case "lt":
            return _Interval(-_INFINITY, value, high_open=True)
        case "le":
            return _Interval(-_INFINITY, value)
        case "approx":
            slack = _tolerance(token)
            return _Interval(value - slack, value + slack)
        case "nearly":
            return _Interval(value - _tolerance(token), value)
    return _Interval(value, value)


def _quote_interval(token: LiteralToken) -> _Interval:
    assert token.value is not None
    if token.qualifier in ("eq", "approx"):
        return _Interval(token.value, token.value)
    return _claim_interval(token)


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


def _date_interval(token: LiteralToken, *, claim: bool, yearless: bool) -> _Interval | None:
    bounds = _date_bounds(token, yearless=yearless)
    if bounds is None:
        return None
    first, last = Decimal(bounds[0]), Decimal(bounds[1])
    assert token.date is not None
    unit = Decimal(365 if token.date[1] is None else 31 if token.date[2] is None else 1)
    match token.qualifier:
        case "gt":
            return _Interval(last, _INFINITY, low_open=True)
        case "ge":
            return _Interval(first, _INFINITY)
        case "lt":
            return _Interval(-_INFINITY, first, high_open=True)
        case "le":
            return _Interval(-_INFINITY, last)
        case "approx" | "nearly" if claim:
            return _Interval(first - unit, last + unit)
    return _Interval(first, last)


def _as_year(token: LiteralToken) -> LiteralToken | None:
    """A quote's bare four-digit integer may be a year the extractor had no context for."""
    if token.kind in ("date", "year"):
        return token
    if (
        token.kind == "number"
        and token.value is not None
        and re.fullmatch(r"\d{4}", token.text)
        and _YEAR_MIN <= token.value <= _YEAR_MAX
    ):
        return replace(token, kind="year", date=(int(token.value), None, None))
    return None


@dataclass(frozen=True)
class _Evidence:
    """A quote literal with the content words around it, used to find what a figure counts."""

    token: LiteralToken
    context: frozenset[str]


@dataclass(frozen=True)
class _Candidate:
    interval: _Interval
    distance: Decimal  # how far the quote literal is from the claim literal
    shared: int  # context words it shares with the claim literal


_STOP_WORDS = frozenset(
    """a an the of in on at to for from with by and or but as is are was were be been being has
    have had it its this that these those there their they he she his her which who whom whose
    than then so such not no nor into over under about around more less most least very also
    only just up down out off per each all any both some many much few fewer other another
    same own again further once here when where why how what while during before after above
    below between through until against among within without since via upon de la le total
    number numbers approximately nearly almost roughly reached reach reported report""".split()
)
_CONTEXT_WORDS = 1  # the word that names what a figure counts sits right next to it
_CONTEXT_SPAN = 60
# Figures this much (relative distance) farther than the nearest one still compete as referents.
_REFERENT_SLACK = Decimal("0.1")
_CONTEXT_WORD_RE = re.compile(r"[^\W\d_]+")


def _stem(word: str) -> str:
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _content_words(text: str) -> list[str]:
    """Lower-case content words: capitalized ones are mostly the sentence's subject, which every
    figure in it shares, so they cannot tell figures apart."""
    return [
        _stem(word)
        for word in _CONTEXT_WORD_RE.findall(text)
        if word.islower() and word not in _STOP_WORDS
    ]


def _contexts(text: str, tokens: Sequence[LiteralToken]) -> list[frozenset[str]]:
    """Content words next to each literal, up to the neighbouring literals on either side."""
    result: list[frozenset[str]] = []
    for index, token in enumerate(tokens):
        left_edge = tokens[index - 1].end if index > 0 else 0
        right_edge = tokens[index + 1].start if index + 1 < len(tokens) else len(text)
        left = text[max(left_edge, token.start - _CONTEXT_SPAN) : token.start]
        right = text[token.end : min(right_edge, token.end + _CONTEXT_SPAN)]
        words = _content_words(left)[-_CONTEXT_WORDS:] + _content_words(right)[:_CONTEXT_WORDS]
        result.append(frozenset(words))
    return result


@_memoized
def _evidence(text: str) -> tuple[_Evidence, ...]:
    tokens = [token for token in _extract(text) if token.numeric]
    return tuple(
        _Evidence(token, context)
        for token, context in zip(tokens, _contexts(text, tokens), strict=True)
    )


def _date_satisfied(claim: _Evidence, quotes: Sequence[_Evidence]) -> bool:
    token = claim.token
    assert token.date is not None
    yearless = token.date[0] == 0
    outer = _date_interval(token, claim=True, yearless=yearless)
    if outer is None:
        return False
    candidates: list[_Candidate] = []
    for evidence in quotes:
        quote = _as_year(evidence.token)
        if quote is None or quote.date is None:
            continue
        if yearless and (quote.date[1] is None or (token.date[2] and quote.date[2] is None)):
            continue
        inner = _date_interval(quote, claim=False, yearless=yearless)
        if inner is not None:
            distance = abs(inner.middle - outer.middle)
            candidates.append(_Candidate(inner, distance, len(claim.context & evidence.context)))
    return _judge(token.qualifier, outer, candidates)


def _judge(qualifier: Qualifier, outer: _Interval, candidates: list[_Candidate]) -> bool:
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


def _value_satisfied(claim: _Evidence, quotes: Sequence[_Evidence]) -> bool:
    token = claim.token
    assert token.value is not None
    outer = _claim_interval(token)
    candidates = [
        _Candidate(
            _quote_interval(evidence.token),
            _relative_distance(evidence.token.value, token.value),
            len(claim.context & evidence.context),
        )
        for evidence in quotes
        if evidence.token.value is not None and _compatible(token, evidence.token)
    ]
    return _judge(token.qualifier, outer, candidates)


def _apply(operation: str, inputs: Sequence[Decimal]) -> Decimal | None:
    try:
        if operation == "sum":
            return sum(inputs, Decimal(0))
        if operation == "product":
            product = Decimal(1)
            for value in inputs:
                product *= value
            return product
        if len(inputs) != 2:
            return None
        first, second = inputs
        if operation == "difference":
            return first - second
        if operation == "ratio":
            return first / second
        if operation == "percent_change":
            return (second - first) / first * 100
    except (DivisionByZero, InvalidOperation, ZeroDivisionError):
        return None
    return None


def _derived_satisfied(
    claim: LiteralToken, quote_tokens: Sequence[LiteralToken], derived: Derivation
) -> bool:
    assert claim.value is not None
    slack = _tolerance(claim) if claim.qualifier in ("approx", "nearly") else _quantum(claim) / 2
    if abs(claim.value - derived.result) > slack:
        return False
    present = {quote.value for quote in quote_tokens if quote.value is not None}
    if not derived.inputs or any(value not in present for value in derived.inputs):
        return False
    computed = _apply(derived.operation, derived.inputs)
    if computed is None:
        return False
    candidates = [computed]
    if claim.kind == "percent" and derived.operation == "ratio":
        candidates.append(computed * 100)
    outer = _claim_interval(claim)
    if claim.qualifier == "eq":
        outer = _Interval(claim.value - slack, claim.value + slack)
    return any(_Interval(value, value).within(outer) for value in candidates)


@_memoized
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
    claim: _Evidence,
    quotes: Sequence[_Evidence],
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
        and _derived_satisfied(token, [evidence.token for evidence in quotes], derived)
    )


def check(claim: str, quotes: Sequence[str], *, derived: Derivation | None = None) -> LiteralCheck:
    """Which literals of ``claim`` the ``quotes`` (taken together) do not establish."""
    claim_tokens = _extract(claim)
    claim_evidence = {item.token: item for item in _evidence(claim)}
    evidence = [item for quote in quotes for item in _evidence(quote)]
    quote_text = " " + " ".join(_normalize_name(quote) for quote in quotes) + " "
    missing = tuple(
        token
        for token in claim_tokens
        if not _satisfied(
            claim_evidence.get(token, _Evidence(token, frozenset())), evidence, quote_text, derived
        )
    )
    return LiteralCheck(claim_literals=claim_tokens, missing=missing)


__all__ = [
    "Derivation",
    "LiteralCheck",
    "LiteralKind",
    "LiteralToken",
    "Qualifier",
    "check",
    "extract",
]
