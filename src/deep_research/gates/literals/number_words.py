"""Figures written in words: ``three``, ``twenty-five``, ``two hundred and five``.

Number words (``three``, ``twenty-five``, ``two hundred and five``, ``a dozen``, ``two
million``), perhaps as a percentage or an amount of money (``five percent``, ``ten dollars``);
the pronoun ``one of`` is not a count. Ordinal words (``third``, ``twenty-first``) are ordinals.

Vague counts name a range of a scale, not a figure: a plural scale word (``hundreds``,
``thousands of``, ``millions``, ``dozens``) or ``several``/``a few``/``many`` before one
(``several thousand``) is more than one of the scale and fewer than ten — ``thousands of
visitors`` is established by ``4,200 visitors``, never by ``800`` or ``25,000``; ``tens of`` and
``hundreds of`` before a plural scale multiply both ends (``tens of thousands``: more than
10,000, fewer than 100,000). A vague count followed by ``of`` and a currency (``millions of
euros``) is money.

Counts of times: ``twice`` is 2 and ``thrice`` 3; ``once`` is 1 where it counts — bounded
(``more than once``), closing its clause (``has flooded once.``) or a rate (``once a year``) —
and no figure where it means "formerly" or "as soon as" (``once a school``, ``once the gates
shut``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from deep_research.gates.literals.numbers import CURRENCY_SUFFIX, money_unit
from deep_research.gates.literals.qualifiers import qualifier_after, qualifier_before
from deep_research.gates.literals.tokens import LiteralKind, LiteralToken, TakenSpans

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
    r"|(?P<cur>" + CURRENCY_SUFFIX + r"))",
    re.IGNORECASE,
)


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


#: Every number word begins with one of these, and a run of them begins a word (the pattern
#: looks behind for neither a word character nor a hyphen): a text where none begins a word (most
#: claims) is spared the pattern, which ignores case (the characters it would match as ASCII
#: letters are folded before extraction).
NUMBER_WORD_STARTS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nin", "ten",
    "eleven", "twel", "thir", "fif", "fort", "twent", "first", "second", "hundred", "thousand",
    "million", "billion", "trillion", "dozen",
)  # fmt: skip


def _may_hold_number_words(low: str) -> bool:
    """Whether a number word may begin a word of the lower-cased text ``low``."""
    for start in NUMBER_WORD_STARTS:
        at = low.find(start)
        while at >= 0:
            if at == 0 or not (low[at - 1].isalnum() or low[at - 1] in "_-"):
                return True
            at = low.find(start, at + 1)
    return False


def word_tokens(text: str, taken: TakenSpans) -> list[LiteralToken]:
    if not _may_hold_number_words(text.lower()):
        return []
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


#: The scales a vague count is counted in ("dozens", "several hundred", "tens of thousands").
_VAGUE_SCALES: dict[str, int] = {
    "dozen": 12, "hundred": 10**2, "thousand": 10**3, "million": 10**6, "billion": 10**9,
    "trillion": 10**12,
}  # fmt: skip
_VAGUE_SCALE = "|".join(_VAGUE_SCALES)
_VAGUE_RE = re.compile(
    r"(?<![\w-])(?=[dhtmbsaf])"  # the first letters of the forms below: most words fail here
    r"(?:(?P<times>tens|hundreds)\s+of\s+(?P<of>" + _VAGUE_SCALE + r")s"
    r"|(?P<plural>" + _VAGUE_SCALE + r")s"
    r"|(?:several|a\s+few|many)\s+(?P<scale>" + _VAGUE_SCALE + r"))"
    r"(?![\w-])(?:\s+of\s+(?P<cur>" + CURRENCY_SUFFIX + r"))?",
    re.IGNORECASE,
)


def count_word_tokens(text: str, taken: TakenSpans) -> list[LiteralToken]:
    """Vague counts (``thousands``) and counts of times (``twice``)."""
    # Each form contains one of these words: a text with none (nearly every text) is spared
    # both patterns. Spelled out: a chain of ``in`` tests is the cheapest check in Python.
    low = text.lower()
    tokens: list[LiteralToken] = []
    if (
        "ozens" in low
        or "undreds" in low
        or "ousands" in low
        or "illions" in low
        or "several" in low
        or "few" in low
        or "many" in low
    ):
        tokens += _vague_tokens(text, taken)
    if "once" in low or "twice" in low or "thrice" in low:
        tokens += _times_tokens(text, taken)
    return tokens


def _vague_tokens(text: str, taken: TakenSpans) -> list[LiteralToken]:
    """``thousands``, ``several hundred``, ``tens of millions``: more than one and fewer than
    ten of the scale (:mod:`.intervals` reads the range; like ``about``, any quote figure in it
    establishes it)."""
    tokens: list[LiteralToken] = []
    for found in _VAGUE_RE.finditer(text):
        start, end = found.span()
        word = (found.group("of") or found.group("plural") or found.group("scale")).lower()
        scale = _VAGUE_SCALES[word]
        if found.group("times"):
            scale *= 10 if found.group("times").lower() == "tens" else 100
        unit = money_unit(None, found.group("cur")) if found.group("cur") else None
        if not taken.free(start, end):
            continue
        taken.take(start, end)
        tokens.append(
            LiteralToken(
                kind="money" if unit else "number",
                text=text[start:end],
                start=start,
                end=end,
                value=Decimal(scale),
                unit=unit,
                date=None,
                qualifier="approx",
                vague=True,
            )
        )
    return tokens


#: Adverbs that count times.
_TIMES: dict[str, int] = {"once": 1, "twice": 2, "thrice": 3}
_TIMES_RE = re.compile(r"(?<![\w-])(?=[otOT])(?:once|twice|thrice)(?![\w-])", re.IGNORECASE)
#: After "once" as a count: the end of its clause, or a rate ("once a year", "once every
#: season" — "once a school" is "formerly").
_ONCE_COUNTS_RE = re.compile(
    r"\s*(?:[.,;:!?)]|$|(?:a|an|per|every|each)\s+(?:other\s+)?"
    r"(?:minute|hour|day|night|week|fortnight|month|quarter|term|season|year|decade|century)s?"
    r"(?!\w))",
    re.IGNORECASE,
)


def _times_tokens(text: str, taken: TakenSpans) -> list[LiteralToken]:
    """``twice``, ``thrice``: counts of times; ``once`` too when bounded ("more than once") or
    closing its clause ("won the cup once.") or a rate ("once a year") — elsewhere it means
    "formerly" or "as soon as" ("once the capital", "once the vote closed")."""
    tokens: list[LiteralToken] = []
    for found in _TIMES_RE.finditer(text):
        start, end = found.span()
        word = found.group(0).lower()
        qualifier = qualifier_before(text, start, dated=False)
        if word == "once" and qualifier == "eq" and not _ONCE_COUNTS_RE.match(text, end):
            continue
        if not taken.free(start, end):
            continue
        taken.take(start, end)
        tokens.append(
            LiteralToken(
                "number", text[start:end], start, end, Decimal(_TIMES[word]), None, None, qualifier
            )
        )
    return tokens


_PRONOUN_ONE_RE = re.compile(r"\s+(?:of|another)(?!\w)", re.IGNORECASE)


def _word_token(text: str, start: int, end: int, number: _WordNumber) -> LiteralToken | None:
    if text[start:end].lower() == "one" and _PRONOUN_ONE_RE.match(text, end):
        return None  # "one of the longest", "one another": a pronoun, not a count
    kind: LiteralKind = "ordinal" if number.ordinal else "number"
    unit: str | None = None
    suffix = None if number.ordinal else _SUFFIX_RE.match(text, end)
    if suffix is not None:
        if suffix.group("pct"):
            kind = "percent"
        else:
            kind, unit = "money", money_unit(None, suffix.group("cur"))
        end = suffix.end()
    qualifier = qualifier_before(text, start, dated=number.ordinal)
    post = qualifier_after(text, end)
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
