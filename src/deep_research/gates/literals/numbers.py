"""Figures written in digits: numbers, multipliers, percentages, money and ordinals.

* numbers: integers and decimals with ``,`` ``.`` or space grouping, read as a reader of any
  locale would where the writing is unambiguous, and both ways where it is not:

  - ``,`` followed by groups of exactly three digits groups thousands (``12,34,567`` lakh
    grouping too); ``,`` followed by one or two digits is a decimal comma;
  - two or more ``.`` groups are thousands (``1.234.567``); with both marks the last one is the
    decimal mark (``1.234,5``); a lone ``.`` followed by other than exactly three digits is a
    decimal point (``2.75``, ``1.5``);
  - a lone ``.`` followed by exactly three digits is ambiguous — a decimal point in English, a
    thousands mark where dots group (``300.000``): the figure stands for both values
    (:attr:`LiteralToken.alternatives`), and either one may establish or be established;
  - thin and no-break spaces group thousands; ordinary spaces do when two or more groups follow
    (``4 096 000``); a single group after an ordinary space (``12 500``) may be one figure or
    two, which the check reads both ways (:mod:`.matching`).

  Multipliers ``thousand/million/billion/trillion/bn/mn/crore/lakh`` scale the value, in any
  case (``Million``, ``CRORE``); ``m``/``k`` only when glued to the digits or on money (``60 m``
  is sixty metres), and never when a digit follows the letter (``1m80`` is a height). Ordinals
  (``3rd``) are their own kind. A number right after ``<digits>/`` is the denominator of a
  rating or fraction (``7.5/10``), not a figure of its own.
* percentages (``7%``, ``7 percent``, ``7 per cent``, ``80-percent``, ``55 out of 100``,
  ``84/100``); the value is the number (7 for 7%).
* money: a currency symbol or ISO code before or after the amount, or ``dollars``/``euros``…
  after it; the value is in units of the currency (``$35 million`` → 35000000 ``USD``).

Every pattern's quantifier is bounded or applies to a disjoint character class, and starts
inside a digit run or right after a consumed thousands group are refused by lookbehind, so each
pattern scans a text in linear time.
"""

from __future__ import annotations

import re
from decimal import Decimal

from deep_research.gates.literals.dates import edge_before, is_year
from deep_research.gates.literals.names import event_year, title_number
from deep_research.gates.literals.qualifiers import qualifier_after, qualifier_before
from deep_research.gates.literals.tokens import LiteralKind, LiteralToken, TakenSpans

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


NUMERAL = r"""
    (?:\d{1,3}(?:,\d{3})+(?:\.\d+)?               # 1,234,567.89
      |\d{1,2}(?:,\d{2})+,\d{3}(?:\.\d+)?         # 1,23,456 (lakh grouping)
      |\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?            # 1.234.567,89
      |\d{1,3}\.\d{3},\d+                         # 1.234,5
      |\d{1,3}(?:[\u2009\u202f\u00a0]\d{3})+(?:[.,]\d+)?   # 1 234 567 (thin/no-break space)
      |\d{1,3}(?:\x20\d{3}){2,}(?![\d.,]?\d)            # 4 096 000 (ordinary spaces)
      |\d+,\d{1,2}(?![\d,])                       # 3,5 (decimal comma)
      |\d+(?:\.\d+)?)                             # 1234 / 3.14
"""
# Each alternation below starts with a lookahead on its possible first characters: without it
# the regex engine tries every alternative at every word start, which dominated extraction time.
#: The characters a currency written before its figure can start with.
_CUR_PREFIX_FIRST = "$€£¥₹₩₽₺UACHNSR" + "".join(sorted({code[0] for code in _CURRENCY_CODES}))
_CUR_PREFIX = (
    r"(?=[" + _CUR_PREFIX_FIRST + r"])"
    r"(?:(?:US\s?|AU|CA|HK|NZ|A|C|S|R)?\$|€|£|¥|₹|₩|₽|₺|Rs\.?|(?:"
    + "|".join(_CURRENCY_CODES)
    + r")(?![A-Za-z]))"
)
CURRENCY_SUFFIX = (
    r"(?:"
    + "|".join(_CURRENCY_CODES)
    + r"|"
    + "|".join(sorted(_CURRENCY_WORDS, key=len, reverse=True))
    + r")(?![A-Za-z])"
)
_MULT = (
    r"(?:(?i:thousand|million|billion|trillion|crores?|lakhs?|bn|mn)(?![A-Za-z])"
    r"|[MmKk](?![A-Za-z\d]))"  # "1m80" is a height: a letter with a digit after it is a unit
)

_NUMBER_RE = re.compile(
    # Every figure starts with a digit, a sign or a currency: the first test at each position,
    # so the look-behinds below run only there (it changes no match, and halves the scan).
    r"(?=[\d−\-" + _CUR_PREFIX_FIRST + r"])"
    r"(?<![\w.])(?<![^\W\d_][-–])(?!(?<=\d,)\d{3}(?!\d))"  # not inside a word/grouped numeral
    r"(?<!\d/)(?<!\d\x20/)(?<!\d\x20/\x20)"  # nor the denominator of a rating: 7.5/10
    r"(?:(?P<cur>" + _CUR_PREFIX + r")\s?)?"
    r"(?P<sign>[−-](?=\d))?(?P<num>" + NUMERAL + r")(?!\d)"
    r"(?:(?P<ord>st|nd|rd|th)(?![A-Za-z])"
    r"|(?P<plus>\+)?(?P<msp>\s?)(?P<mult>" + _MULT + r"))?"
    r"(?:[\s-]?(?P<pct>%|percent(?![A-Za-z])|per\s?cent(?![A-Za-z])|pct(?![A-Za-z]))"
    r"|(?P<outof>\s?/\s?100|\sout\s+of\s+100)(?![\d.,]?\d)"
    r"|\s?(?P<cur2>" + CURRENCY_SUFFIX + r"))?",
    re.VERBOSE,
)


def parse_numeral(raw: str) -> Decimal:
    """The first reading of a written numeral (:func:`grouped_reading` gives the other)."""
    if raw.isdigit():
        return Decimal(raw)
    digits = re.sub(r"[\u2009\u202f\u00a0 ]", "", raw)
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


_DOT_THOUSANDS_RE = re.compile(r"\d{1,3}\.\d{3}")


def grouped_reading(raw: str) -> Decimal | None:
    """The value of ``300.000`` read with the dot as a thousands mark; None when the numeral is
    not written that ambiguously."""
    if "." not in raw or _DOT_THOUSANDS_RE.fullmatch(raw) is None:
        return None
    return Decimal(raw.replace(".", ""))


def step_of(written: Decimal) -> Decimal:
    """One unit of the last written digit of a parsed numeral; an integer's trailing zeros do
    not count (``4,300`` is written to the hundred)."""
    exponent = written.as_tuple().exponent
    if isinstance(exponent, int) and exponent < 0:
        return Decimal(1).scaleb(exponent)
    exponent = written.normalize().as_tuple().exponent
    return Decimal(1).scaleb(exponent if isinstance(exponent, int) else 0)


def money_unit(prefix: str | None, suffix: str | None) -> str | None:
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
    value = parse_numeral(groups["num"])
    # an English scale word says the figure is written the English way: 2.995 million
    grouped = grouped_reading(groups["num"]) if groups["mult"] is None else None
    if groups["sign"]:
        value = -value
        grouped = -grouped if grouped is not None else None
    start, end = found.start("sign" if groups["sign"] else "num"), found.end()
    mult = groups["mult"]
    loose = mult is not None and mult.lower() in _LOOSE_MULTIPLIERS
    if loose and not (groups["cur"] or groups["cur2"] or not groups["msp"]):
        # "60 m" is sixty metres, not sixty million; what followed it is not ours either
        mult = None
        end = found.end("plus") if groups["plus"] else found.end("num")
        groups.update(pct=None, outof=None, cur2=None)
    scale = _MULTIPLIERS[mult.lower()] if mult is not None else 1
    value *= scale
    unit: str | None = None
    kind: LiteralKind
    if groups["ord"] and mult is None:
        kind, end = "ordinal", found.end("ord")
    elif groups["pct"] or groups["outof"]:
        kind = "percent"
    elif groups["cur"] or groups["cur2"]:
        kind, unit = "money", money_unit(groups["cur"], groups["cur2"])
        start = found.start()
    elif mult is None and not groups["sign"] and is_year(text, start, groups["num"]):
        kind = "year"
    else:
        kind = "number"
    plain = kind in ("number", "year") and _PLAIN_NUMERAL_RE.fullmatch(text, start, end)
    if plain and (title_number(text, start) or event_year(text, start, end)):
        return None
    edge, qualified_at = edge_before(text, start) if kind == "year" else (None, start)
    qualifier = qualifier_before(text, qualified_at, dated=kind in ("year", "ordinal"))
    if qualifier == "eq":
        qualifier = "ge" if groups["plus"] else qualifier_after(text, end) or "eq"
    return LiteralToken(
        kind=kind,
        text=text[start:end],
        start=start,
        end=end,
        value=value,
        unit=unit,
        date=(int(value), None, None) if kind == "year" else None,
        qualifier=qualifier,
        alternatives=() if grouped is None else ((grouped * scale, step_of(grouped) * scale),),
        edge=edge,
    )


def number_tokens(text: str, taken: TakenSpans) -> list[LiteralToken]:
    tokens: list[LiteralToken] = []
    for found in _NUMBER_RE.finditer(text):
        token = _number_token(text, found)
        if token is not None and taken.free(token.start, token.end):
            taken.take(token.start, token.end)
            tokens.append(token)
    return tokens
