"""English the gates and the extractive reasoner read by: stop words, stemmers, month and
weekday names, and the sentence splitter.

Each list or rule lives here once; where two uses need different ones, both are here under
names that say which is which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

# --------------------------------------------------------------------------------------------
# Stop words

#: Words that say nothing about a text's topic: left out of topical overlap, key terms and the
#: local corpus's search terms.
STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    said says say according per via within without among amongst upon onto whether though
    although however thus therefore may might must shall one ones us many much several besides
    despite toward towards
    """.split()
)

#: Words next to a figure that do not say what it counts. Apart from :data:`STOP_WORDS` because
#: "total", "number", "reported"… sit next to any figure: with STOP_WORDS here the literal check
#: judges some bounds against another quote figure.
FIGURE_CONTEXT_STOP_WORDS = frozenset(
    """a an the of in on at to for from with by and or but as is are was were be been being has
    have had it its this that these those there their they he she his her which who whom whose
    than then so such not no nor into over under about around more less most least very also
    only just up down out off per each all any both some many much few fewer other another
    same own again further once here when where why how what while during before after above
    below between through until against among within without since via upon de la le total
    number numbers approximately nearly almost roughly reached reach reported report""".split()
)

# --------------------------------------------------------------------------------------------
# Stemmers

# Longest suffix first, so "nationally" loses "ally" rather than "y".
_SUFFIXES = (
    "ational",
    "ations",
    "ation",
    "ings",
    "ing",
    "edly",
    "ies",
    "ied",
    "es",
    "ed",
    "ly",
    "s",
)

# The suffixes a word can end with, by its last character (order kept): most words end in a
# letter no suffix ends in and skip the loop.
_SUFFIXES_BY_LAST: dict[str, tuple[str, ...]] = {
    last: tuple(suffix for suffix in _SUFFIXES if suffix.endswith(last))
    for last in {suffix[-1] for suffix in _SUFFIXES}
}


# Texts share most of their words: a word met again is stemmed once (a few thousand kept).
@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A deliberately light stemmer: enough to match plural/tense variants, never a lemmatizer.

    A final "e" goes too, so a verb's plain form meets its other forms: "announce",
    "announced" and "announcing" are all "announc"; "release" and "releases" "releas"."""
    for suffix in _SUFFIXES_BY_LAST.get(word[-1:], ()):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            return base + "y" if suffix in ("ies", "ied") else base
    return word[:-1] if word.endswith("e") and len(word) >= 4 else word


#: Irregular past forms and the verb they are a form of: "When did it see first light?" is
#: answered by "it saw first light". Only forms that are no other common word of their own
#: ("found", "left", "bound", "lay" and "ground" are, and stay as written).
IRREGULAR: dict[str, str] = {
    form: base
    for base, forms in {
        "arise": "arose arisen", "become": "became", "begin": "began begun",
        "break": "broke broken", "bring": "brought", "build": "built", "buy": "bought",
        "catch": "caught", "choose": "chose chosen", "come": "came", "deal": "dealt",
        "draw": "drew drawn", "drive": "drove driven", "eat": "ate eaten", "fall": "fell fallen",
        "fly": "flew flown", "forget": "forgot forgotten", "freeze": "froze frozen",
        "give": "gave given", "go": "went gone", "grow": "grew grown", "hear": "heard",
        "hide": "hid hidden", "hold": "held", "keep": "kept", "know": "knew known",
        "lead": "led", "light": "lit", "lose": "lost", "make": "made", "mean": "meant",
        "meet": "met", "pay": "paid", "ride": "rode ridden", "rise": "rose risen",
        "run": "ran", "say": "said", "see": "saw seen", "sell": "sold", "send": "sent",
        "shake": "shook shaken", "show": "shown", "sing": "sang sung", "sink": "sank sunk",
        "speak": "spoke spoken", "spend": "spent", "stand": "stood", "strike": "struck",
        "take": "took taken", "teach": "taught", "tell": "told", "think": "thought",
        "throw": "threw thrown", "understand": "understood", "undertake": "undertook undertaken",
        "wake": "woke woken", "wear": "wore worn", "win": "won", "withdraw": "withdrew withdrawn",
        "write": "wrote written",
    }.items()
    for form in forms.split()
}  # fmt: skip


# Apart from stem because only the reasoner's ranking gains from merging "evaluate"/"evaluated";
# topical overlap keeps stem, whose shared tokens the gate reports.
@lru_cache(maxsize=65536)  # the reasoner stems every word of every retained sentence
def term_stem(word: str) -> str:
    """:func:`stem`, then a final ``e`` and a doubled final consonant dropped, so
    "evaluate"/"evaluated", "format"/"formatting" and "line"/"lines" meet; an irregular past
    form (:data:`IRREGULAR`) is stemmed as its verb."""
    base = stem(IRREGULAR.get(word.lower(), word))
    if len(base) > 3 and base.endswith("e"):
        base = base[:-1]
    if len(base) > 4 and base[-1] == base[-2] and base[-1] not in "aeioulsz":
        base = base[:-1]
    return base


# --------------------------------------------------------------------------------------------
# Months and weekdays

MONTHS: dict[str, int] = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}  # fmt: skip
WEEKDAYS = frozenset({"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"})

#: A capitalized month name or abbreviation, perhaps with a period, as a whole word. Inside
#: (?i:...) the lookahead is case-insensitive too, exactly like the names it guards.
MONTH_PATTERN = (
    r"(?=[JFMASOND])"
    r"(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Sept|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\.?(?![A-Za-z])"
)

# --------------------------------------------------------------------------------------------
# Sentences

_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z\"'(*])")
_SPACES = re.compile(r"\s+")
#: How a sentence ends: its stop, closing quotes or brackets, perhaps a footnote mark ("[3]").
_SENTENCE_STOP = re.compile(r"[.!?:][\"')\]*’”]*(?:\s*\[\d+\])?$")


@dataclass(frozen=True)
class Sentence:
    start: int
    end: int
    text: str  # the exact substring of the document

    @property
    def claim(self) -> str:
        return _SPACES.sub(" ", self.text).strip()


def sentences(text: str) -> list[Sentence]:
    """Prose sentences with their offsets; grammar, code and table blocks are left out."""
    found: list[Sentence] = []
    position = 0
    for block in _PARAGRAPH.split(text):
        start = text.find(block, position)
        position = start + len(block)
        if _not_prose(block):
            continue
        cursor = 0
        for piece in _SENTENCE_END.split(block):
            offset = block.find(piece, cursor)
            cursor = offset + len(piece)
            stripped = piece.strip()
            if not stripped:
                continue
            lead = piece.find(stripped)
            begin = start + offset + lead
            found.append(Sentence(begin, begin + len(stripped), stripped))
    return found


def _not_prose(block: str) -> bool:
    lines = [line for line in block.splitlines() if line.strip()]
    if not lines:
        return True
    indented = sum(1 for line in lines if line.startswith(("   ", "\t")))
    return "::=" in block or indented * 2 > len(lines) or block.lstrip().startswith(("|", "+-"))


def ends_a_sentence(text: str) -> bool:
    """Whether ``text`` ends as a sentence ends (see :data:`_SENTENCE_STOP`)."""
    return _SENTENCE_STOP.search(text) is not None
