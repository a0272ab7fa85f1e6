"""Figures written in digits: numbers, multipliers, percentages, money and ordinals.

* numbers: integers and decimals with ``,`` ``.`` or thin/no-break-space grouping. ``,``
  followed by groups of exactly three digits groups thousands (``12,34,567`` lakh grouping
  too); ``,`` followed by one or two digits is a decimal comma; a lone ``.`` is always a
  decimal point (``1.000`` is one, not a thousand); two or more ``.`` groups are thousands;
  with both marks the last one is the decimal mark. Multipliers ``thousand/million/billion/
  trillion/bn/mn/crore/lakh`` scale the value; ``m``/``k`` only when glued to the digits or
  on money (``60 m`` is sixty metres). Ordinals (``3rd``) are their own kind.
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

from deep_research.gates.literals.dates import is_year
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
CURRENCY_SUFFIX = (
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
    r"(?P<sign>[−-](?=\d))?(?P<num>" + NUMERAL + r")(?!\d)"
    r"(?:(?P<ord>st|nd|rd|th)(?![A-Za-z])"
    r"|(?P<plus>\+)?(?P<msp>\s?)(?P<mult>" + _MULT + r"))?"
    r"(?:[\s-]?(?P<pct>%|percent(?![A-Za-z])|per\s?cent(?![A-Za-z])|pct(?![A-Za-z]))"
    r"|(?P<outof>\s?/\s?100|\sout\s+of\s+100)(?![\d.,]?\d)"
    r"|\s?(?P<cur2>" + CURRENCY_SUFFIX + r"))?",
    re.VERBOSE,
)


def parse_numeral(raw: str) -> Decimal:
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
        kind, unit = "money", money_unit(groups["cur"], groups["cur2"])
        start = found.start()
    elif mult is None and not groups["sign"] and is_year(text, start, groups["num"]):
        kind = "year"
    else:
        kind = "number"
    plain = kind in ("number", "year") and _PLAIN_NUMERAL_RE.fullmatch(text, start, end)
    if plain and (title_number(text, start) or event_year(text, start, end)):
        return None
    qualifier = qualifier_before(text, start, dated=kind in ("year", "ordinal"))
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
    )


def number_tokens(text: str, taken: TakenSpans) -> list[LiteralToken]:
    tokens: list[LiteralToken] = []
    for found in _NUMBER_RE.finditer(text):
        token = _number_token(text, found)
        if token is not None and taken.free(token.start, token.end):
            taken.take(token.start, token.end)
            tokens.append(token)
    return tokens
