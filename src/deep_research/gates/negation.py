"""Polarity (docs/contracts.md §4.1 step 3): a claim must not negate what its quote states, nor
state what its quote negates.

The literal and overlap checks read figures and words, never whether they are denied: "the
harbor did not handle 1,234 ships" shares every figure and content word with "the harbor handled
1,234 ships". This check reads explicit negation and where it reaches.

* **Cues**: ``not``, ``no``, ``never``, ``nor``, ``neither``, ``none``, ``nothing``,
  ``nobody``, ``nowhere``, ``cannot``, a word ending in ``n't``, ``without``, ``no longer``, and
  ``fail``/``fails``/``failed``/``failing`` before ``to``. Not cues: ``not only`` (and ``not
  just``/``merely``/``simply``/``solely``: "not only X but Y" states X), ``not to mention``,
  ``not least``, ``no doubt``, ``nothing but``, ``none other than``, ``not until``, ``if not``,
  ``or not``, a bound (``no more than 200``, ``not later than 1990``: the literal check reads
  those), and ``No.`` before a number.
* **Reach**: a cue governs the next :data:`REACH` content words and figures after it in its
  clause; a clause ends at punctuation and at ``and``, ``or``, ``but``, ``yet``, ``although``,
  ``though``, ``while``, ``whereas``, ``however``, ``because``, ``unless``, ``except``. So "it
  handled 1,234 ships, though it did not expand" denies the expansion, not the ships.
* A cue met within the reach of the one before cancels it, and both govern nothing: "did not
  fail to handle" handles, "never sailed without a pilot" sailed with one, "no ship failed to
  dock" docked. Otherwise a word's **polarity** is the parity of the cues that govern it.
* The claim and the located text **disagree** when a word both hold (stemmed, case and accents
  folded; a figure by its digits) is negated in one and never in the other. The located text
  is read from the start of its clause in the document, so a negation a quote was cut to leave
  out ("never" right before it) still reaches it; a negation elsewhere in the sentence does
  not.
* The check **abstains** when either side says something close to a negation in that clause
  without a cue — ``only``, ``lack``, ``exclude``, ``absent``, ``refute``, ``deny``,
  ``reject``, ``refuse``, ``prevent``, ``avoid``, ``unable``, ``unlike``, ``instead``,
  ``hardly``, ``rarely``…: "the script excluded a birthday" and "there was no birthday"
  agree, "no state can deny" affirms, and telling when such a word negates is beyond this
  check.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from deep_research.gates.vocabulary import STOP_WORDS, term_stem

#: Content words and figures a cue governs after it, within its clause.
REACH = 3
#: Characters of the document read before a located span, back to its clause's start.
MAX_LEAD_CHARS = 300

# Quotation marks break clauses too: a quoted title ("Never Be like You") negates nothing
# outside it, and quoted speech is judged as said.
_TOKEN = re.compile(r"\d(?:[\d,.]*\d)?|[^\W_]+(?:['’][^\W_]+)*|[,;:.!?()\[\]{}—–\"“”]")
_CLAUSE_BREAK_CHARS = frozenset(',;:.!?()[]{}—–"“”')
_LEAD_BREAK = re.compile(r"[,;:.!?()\[\]{}—–\"“”\n]")
_CLAUSE_WORDS = frozenset(
    "and or but yet although though while whereas however because unless except".split()
)
_CUE_WORDS = frozenset(
    "not no never nor neither none nothing nobody nowhere cannot without".split()
)
_FAIL = frozenset({"fail", "fails", "failed", "failing"})
#: Words after ``not`` or ``no`` that make the pair no negation of what follows.
_NOT_NEGATING_NEXT = {
    "not": frozenset("only just merely simply solely least until".split()),
    "no": frozenset({"doubt"}),
    "nothing": frozenset({"but"}),
    "none": frozenset({"other"}),
}
#: Letters every cue holds: a text with none of them holds no cue and is read no further (a
#: substring test is far cheaper than a regular expression at every position).
_CUE_LETTERS = ("no", "ne", "n't", "n’t", "without", "fail")
#: Where a cue may start, in lower-cased text; one starting inside a word (the "no" of
#: "know") is set aside after the match. The first character is a literal set, which the
#: regular expression engine scans for quickly.
_CUE_START = re.compile(
    r"[ncwf](?:o(?:t|r|ne|thing|body|where)?\b|e(?:ver|ither)\b|['’]t\b|annot\b|ithout\b|ail)"
)
#: ``no``/``not`` + comparative + ``than`` is a bound on a figure or date, not a denial.
_COMPARATIVES = frozenset(
    """more less fewer greater higher larger bigger older younger longer shorter taller lower
    smaller later earlier sooner heavier lighter wider narrower deeper faster slower""".split()
)
#: Words close to a negation that carry no cue; where they stand, the check does not judge.
_NEAR_NEGATIONS = frozenset(
    """only lack lacks lacked lacking exclude excludes excluded excluding absent absence refute
    refutes refuted deny denies denied denial reject rejects rejected refuse refuses refused
    prevent prevents prevented avoid avoids avoided unable unlike instead hardly barely rarely
    seldom scarcely false untrue fail fails failed failing ceased stopped""".split()
)


@dataclass(frozen=True)
class _Word:
    key: str  # stemmed word, or a figure's digits
    heads: tuple[str, ...]  # per cue that governs it, the key of the first word the cue governs
    hedged: bool  # its clause holds a near-negation
    counted: bool  # inside the located text (not the lead read for its clause)

    def negated(self, other: frozenset[str]) -> bool:
        """Negated as far as a text holding the words ``other`` can tell: a cue whose head that
        text does not mention denies something it does not speak of."""
        return sum(1 for head in self.heads if head in other) % 2 == 1


def disagreement(claim: str, text: str, spans: Sequence[tuple[int, int]]) -> tuple[str, ...]:
    """Words the claim and the located text hold with opposite polarity; empty when they agree.

    ``spans``: the located ``(start, end)`` offsets in the document ``text``; each is read on
    from the start of its clause (at most :data:`MAX_LEAD_CHARS` before it).
    """
    windows = [(max(0, start - MAX_LEAD_CHARS), start, end) for start, end in spans]
    if not _claim_may_negate(claim) and not any(
        _may_negate(text[first:end]) for first, _, end in windows
    ):
        return ()  # most pairs: nothing on either side to read
    quoted: dict[str, list[_Word]] = {}
    for first, start, end in windows:
        for key, words in _polarities(text[start:end], _lead(text[first:start])).items():
            quoted.setdefault(key, []).extend(words)
    in_claim = _polarities(claim, "")
    claim_keys, quote_keys = frozenset(in_claim), frozenset(quoted)
    return tuple(
        sorted(
            key
            for key in claim_keys & quote_keys
            if _opposed(
                [(word.negated(quote_keys), word.hedged) for word in in_claim[key]],
                [(word.negated(claim_keys), word.hedged) for word in quoted[key]],
            )
        )
    )


def _may_negate(text: str) -> bool:
    """Whether ``text`` holds a word a cue starts with (never false for a text that does)."""
    folded = text.lower()
    if not any(letters in folded for letters in _CUE_LETTERS):
        return False
    for found in _CUE_START.finditer(folded):
        at = found.start()
        if folded[at + 1] in "'’" or at == 0 or not folded[at - 1].isalnum():
            return True
    return False


#: A claim is checked against each source it cites: its answer is kept.
_claim_may_negate = lru_cache(maxsize=1024)(_may_negate)


def _lead(before: str) -> str:
    """The end of ``before`` from the start of the clause it ends in."""
    breaks = [found.end() for found in _LEAD_BREAK.finditer(before)]
    return before[breaks[-1] :] if breaks else before


def _opposed(claim: Sequence[tuple[bool, bool]], quote: Sequence[tuple[bool, bool]]) -> bool:
    """One side negates the word wherever it holds it and the other nowhere, and neither says
    something close to a negation around it (which may deny the denial: "no state can deny").
    Each item: (negated, hedged)."""
    if {negated for negated, _ in claim} & {negated for negated, _ in quote}:
        return False
    return not any(hedged for _, hedged in (*claim, *quote))


@lru_cache(maxsize=1024)
def _polarities(text: str, lead: str) -> dict[str, tuple[_Word, ...]]:
    """The words of ``text`` (read on from ``lead``, whose own words are not kept), by key."""
    found: dict[str, list[_Word]] = {}
    for word in _words(lead, text):
        if word.counted:
            found.setdefault(word.key, []).append(word)
    return {key: tuple(words) for key, words in found.items()}


def _words(lead: str, text: str) -> Iterator[_Word]:
    tokens = [(token, False) for token in _tokens(lead)] + [(t, True) for t in _tokens(text)]
    for clause in _clauses(tokens):
        yield from _clause_words(clause)


def _tokens(text: str) -> list[str]:
    folded = text.casefold().replace("’", "'")
    if not folded.isascii():
        decomposed = unicodedata.normalize("NFKD", folded)
        folded = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return _TOKEN.findall(folded)


def _clauses(tokens: list[tuple[str, bool]]) -> Iterator[list[tuple[str, bool]]]:
    clause: list[tuple[str, bool]] = []
    for token, counted in tokens:
        # A figure's "1,234" is one token; a lone comma, full stop or conjunction ends a clause.
        # "nor" ends one and negates the next ("neither coal nor grain": no double negation).
        if token in _CLAUSE_BREAK_CHARS or token in _CLAUSE_WORDS or token == "nor":
            if clause:
                yield clause
            clause = [(token, counted)] if token == "nor" else []
            continue
        clause.append((token, counted))
    if clause:
        yield clause


def _clause_words(clause: list[tuple[str, bool]]) -> Iterator[_Word]:
    words = [token for token, _ in clause]
    content: list[tuple[int, str]] = []  # (position, key) of each content word
    scopes: list[int] = []  # per cue, the position its scope starts at
    hedged = False  # a near-negation outside any cue ("failed", not "failed to")
    index = 0
    while index < len(words):
        length = _cue_length(words, index)
        if length:
            scopes.append(index + length)
            index += length
            continue
        hedged = hedged or words[index] in _NEAR_NEGATIONS
        if _is_content(words[index]):
            content.append((index, _key(words[index])))
        index += 1
    positions = [position for position, _ in content]
    heads: dict[int, list[str]] = {}
    for start in _uncancelled(scopes, positions):
        first = bisect_left(positions, start)
        reached = content[first : first + REACH]
        if not reached:
            continue
        # The word a cue denies is the first it reaches, an adverb aside ("not directly handle").
        head = next((key for at, key in reached if not words[at].endswith("ly")), reached[0][1])
        for position, _ in reached:
            heads.setdefault(position, []).append(head)
    for position, key in content:
        yield _Word(key, tuple(heads.get(position, ())), hedged, clause[position][1])


def _uncancelled(scopes: list[int], positions: list[int]) -> list[int]:
    """The scopes left once each cue met within the reach of the one before cancels it: "did
    not fail to handle" handles, "never sailed without a pilot" sailed with one.
    ``positions``: where the clause's content words are, in order."""
    kept: list[int] = []
    for start in scopes:
        # Content words between the last kept cue and this one (cue words are none of them).
        if kept and bisect_left(positions, start) - bisect_left(positions, kept[-1]) < REACH:
            kept.pop()
            continue
        kept.append(start)
    return kept


def _cue_length(words: list[str], index: int) -> int:
    """How many words the negation cue starting at ``index`` spans (0: none starts there)."""
    word = words[index]
    following = words[index + 1] if index + 1 < len(words) else ""
    if word in _FAIL:
        return 2 if following == "to" else 0
    if word.endswith("n't"):
        return 1
    if word not in _CUE_WORDS:
        return 0
    after = words[index + 2] if index + 2 < len(words) else ""
    before = words[index - 1] if index > 0 else ""
    if (
        following in _NOT_NEGATING_NEXT.get(word, ())
        or (word == "not" and (following, after) == ("to", "mention"))
        or (word == "not" and before in ("if", "or"))
        or (word in ("no", "not") and following in _COMPARATIVES and after == "than")
        or (word == "no" and following[:1].isdigit())  # "No 1" ("No. 1" breaks at the stop)
    ):
        return 0
    return 2 if (word, following) == ("no", "longer") else 1


def _is_content(word: str) -> bool:
    if word[:1].isdigit():
        return True
    return len(word) >= 2 and word not in STOP_WORDS and word not in _CLAUSE_WORDS


def _key(word: str) -> str:
    if word[:1].isdigit():
        return word.replace(",", "")
    return term_stem(word.removesuffix("'s"))
