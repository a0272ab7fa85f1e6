"""Names: capitalized word sequences and acronyms, and the numbers that belong to a name.

Capitalized word sequences (joined by ``of``/``de``/``van``…) and acronyms. A single capitalized
word at a sentence start is not read as a name here (:mod:`.openers` decides it with the texts
around it), nor is one joined to the rest by a connector ("Builds of Rust" reads "Rust");
leading function words are dropped; month and weekday names belong to dates. A number is part
of a name, not a figure, when it follows a capitalized word that is not merely the first word of
its sentence (``the sequel Paddington 2``, ``Euro 2016``, ``Apollo 13``, a short abbreviation
inside a name: ``Bros. 3``), when it is a label (``#3``, ``No. 3``, ``Vol. 2``, ``Op. 27``), or
when a year sits between "the" and a capitalized word (``the 1998 Winter Olympics``): the name
check still catches a change to it. After a
sentence's capitalized first word a number stays a figure ("Along 310 kilometres of coast",
"Today 42 gauges"): the check lets such a figure, and one that opens a capitalized phrase
("127 Hours"), be established by the phrase as a name (:mod:`.matching`).
"""

from __future__ import annotations

import re
import unicodedata

from deep_research.gates.literals.memo import memoized
from deep_research.gates.literals.tokens import LiteralToken, TakenSpans
from deep_research.gates.vocabulary import MONTHS, WEEKDAYS

#: A word: a letter or digit, then word characters, ``&`` and ``+``, and inner ``'’-./`` that a
#: word character follows (O'Brien, AT&T, U.S., e-mail). Written as runs of a character class,
#: which the engine scans far faster than one alternation per character.
_NAME_WORD_RE = re.compile(r"[^\W_][\w&+]*(?:['’\-./](?=\w)[\w&+]*)*")
#: From the end of a word (or the text's start): the words that begin with a lower-case ASCII
#: letter, each as ``_NAME_WORD_RE`` reads it, and what lies between them. It stops where a word
#: begins with any other letter or digit, which is where the word scan resumes.
_LOWER_WORDS_RE = re.compile(r"[\W_]*(?:[a-z][\w&+]*(?:['’\-./](?=\w)[\w&+]*)*[\W_]*)*")
#: Characters after which a capitalized word is capitalized because it starts something (a
#: sentence, a quotation, a bracket, a list item), not because it is a name.
_SENTENCE_END = frozenset(".!?\n\r`\"“”'‘’(*•:;[{|")
#: Lower-case words that join the parts of one name (Bank of Ireland, Ludwig van Beethoven).
_CONNECTORS = frozenset(
    {"of", "de", "del", "della", "di", "da", "du", "van", "von", "der", "den", "la", "le",
     "al", "bin", "ibn", "y"}
)  # fmt: skip
#: Capitalized only at a sentence start or in a heading, these never begin or carry a name.
FUNCTION_WORDS = frozenset(
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


_TITLE_WORD_RE = re.compile(r"(?<![\w'’-])([^\W\d_][\w&+'’-]*)(\.?) $")
_PREVIOUS_CAPITAL_RE = re.compile(r"(?<![\w'’-])[A-Z][\w'’-]* $")
#: Label abbreviations: each names the item its number picks out (number, volume, part, chapter,
#: opus, episode, book, article, section, figure, mark), never a quantity.
_LABELS = ("No", "Nos", "Vol", "Vols", "Pt", "Ch", "Op", "Ep", "Bk", "Art", "Sec", "Fig", "Mk")
_IDENTIFIER_MARKS = ("#", *(label + "." for label in _LABELS))
_IDENTIFIER_RE = re.compile(r"(?:#|(?<![\w.])(?:" + "|".join(_LABELS) + r")\.)\s?\d+(?![\d.,]?\d)")


def title_number(text: str, start: int) -> bool:
    """A plain number right after a capitalized word belongs to a name: Paddington 2, Euro 2016,
    Mario Bros. 3 (a short abbreviation may end in a period) — unless the word only starts its
    sentence ("Along 310 kilometres"): then nothing says it is a name."""
    if start < 2 or text[start - 1] != " " or text[start - 2] in " \t\n":
        return False
    # The word ends at the space before ``start`` and holds no space: searching from the space
    # before it finds the same match as from 60 characters back, without trying each position.
    lowest = max(0, start - 60)
    found = _TITLE_WORD_RE.search(text, max(lowest, text.rfind(" ", lowest, start - 1) + 1), start)
    if found is None:
        return False
    word = found.group(1)
    if not word[0].isupper():
        return False  # the last test below, first: most words before a figure are lower-case
    if found.group(2) and not (
        len(word) <= 4
        and _PREVIOUS_CAPITAL_RE.search(text, max(0, found.start() - 60), found.start())
    ):
        return False  # "in Iran. 3 people" ends a sentence; "Mario Bros. 3" does not
    if _opens_sentence(text, found.start(1)) and not _is_acronym(word):
        return False
    return word[0].isupper() and is_name_word(word) and word.lower() not in FUNCTION_WORDS


def identifier_tokens(text: str, taken: TakenSpans) -> list[LiteralToken]:
    """Labels such as "#3" and "No. 3" name something; they are not quantities."""
    if not any(mark in text for mark in _IDENTIFIER_MARKS):
        return []  # the pattern's every match holds one (most texts have none)
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


def event_year(text: str, start: int, end: int) -> bool:
    """A year between "the" and a capitalized word names an event: the 1998 Winter Olympics."""
    before = max(0, start - 5)
    if "he " not in text[before:start] or not _THE_BEFORE_RE.search(text, before, start):
        return False  # the substring test first: most figures follow no "the"
    if not _EVENT_YEAR_RE.fullmatch(text, start, end):
        return False
    after = _NAME_AFTER_RE.match(text, end)
    if after is None:
        return False
    word = after.group(1)
    return word[0].isupper() and is_name_word(word) and word.lower() not in FUNCTION_WORDS


def _opens_sentence(text: str, start: int) -> bool:
    """Whether ``start`` is the first word of a sentence proper: after the text's start, a line
    break or a full stop (a colon or a bracket opens a title as often: "Chapter 3")."""
    index = start - 1
    while index >= 0 and text[index] in " \t\"“”'‘’":
        index -= 1
    return index < 0 or text[index] in ".!?\n\r"


def starts_sentence(text: str, start: int) -> bool:
    """Whether the word at ``start`` is capitalized because it starts something (a sentence, a
    quotation, a bracket, a list item)."""
    index = start - 1
    while index >= 0 and text[index] in " \t":
        index -= 1
    return index < 0 or text[index] in _SENTENCE_END


def name_tokens(text: str, taken: TakenSpans) -> list[LiteralToken]:
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
    position = 0
    while True:
        if not run:
            # Most words: with no run open, a word that is neither capitalized nor a number only
            # ends an (empty) run, and where it ended is never read: skip such words in one scan.
            skipped = _LOWER_WORDS_RE.match(text, position)  # it matches, if only emptily
            position = skipped.end() if skipped is not None else position
        found = _NAME_WORD_RE.search(text, position)
        if found is None:
            break
        start, position = found.span()
        word = found.group(0)
        first = word[0]
        if not run and not first.isupper() and not first.isdigit():
            previous_end = position
            continue
        adjacent = False
        if run:  # only a word that may join an open run reads the gap before it
            gap = text[previous_end:start]
            adjacent = gap.strip() == "" and "\n" not in gap
        if first.isdigit():
            if run and pending_connector is None and title_number(text, start):
                run.append(found)
            else:
                flush()
                pending_connector = None
                if event_year(text, start, position):
                    run.append(found)
            previous_end = position
            continue
        capitalized = first.isupper() and is_name_word(word) and taken.free(start, position)
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
        previous_end = position
    flush()
    return tokens


def is_name_word(word: str) -> bool:
    lowered = word.lower().rstrip(".")
    return lowered not in MONTHS and lowered not in WEEKDAYS and lowered != "i"


def _name_from_run(text: str, run: list[re.Match[str]]) -> LiteralToken | None:
    words = list(run)
    if (
        starts_sentence(text, words[0].start())
        and len(words) == 1
        and not _is_acronym(words[0].group(0))
    ):
        return None
    if (
        len(words) > 2
        and words[1].group(0) in _CONNECTORS
        and starts_sentence(text, words[0].start())
    ):
        del words[:2]  # "Builds of Rust": the first word is capitalized for its place (.openers)
    while words and words[0].group(0).lower() in FUNCTION_WORDS:
        words.pop(0)
    while words and words[-1].group(0).lower() in _CONNECTORS:
        words.pop()
    if not words:
        return None
    start, end = words[0].start(), words[-1].end()
    return LiteralToken("name", text[start:end], start, end, None, None, None, "eq")


def _is_acronym(word: str) -> bool:
    second = word[1:2]
    if second.islower() and second.isalpha():
        return False  # a lower-case letter (most capitalized words have one second)
    letters = [char for char in word if char.isalpha()]
    return len(letters) >= 2 and all(char.isupper() for char in letters)


@memoized
def normalize_name(text: str) -> str:
    """A name as names are compared: case, diacritics, punctuation and possessive ``'s`` gone."""
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
