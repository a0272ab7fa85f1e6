"""Does a claim answer the research question? The relevance gate, by words alone.

A claim answers a question when it names what the question is about. The question's *topic* is
its content words without the words a question asks with ("how", "work", "difference", "affect")
and without filler that names the corpus rather than the topic ("in Python", "programming").
Each remaining word is a *concept*, named by the word's light stem and by the spellings the
documentation uses for it: a short form and its word ("dict"/"dictionary"), a sibling a question
names in another's stead ("NFC"/"NFKC"), a form derived from the same root
("normalization"/"normal form", "decorator"/"decorated"), and for a word the question writes
in capitals, the initials of the words it abbreviates ("GIL"/"global interpreter lock"). A
version or number the question names ("Python 3.0", "in 2018") is a concept spelled only so.

Concepts are weighed by how specific they are: by how few of the texts the run retained name
them (log(1 + N / n), the inverse document frequency), a word in capitals or a figure counting
double and a verb saying which side of the topic is asked ("evaluated", "handled") half, so
"NFC" outweighs "Unicode" and "GIL" outweighs "thread". A claim answers when what it leaves
unnamed carries less than :data:`MAX_UNNAMED_SHARE` of the question's weight — a score whose
"not found" threshold was calibrated on WikiQA train, not a rule that every word appear. A
concept the claim's context names (its document's name or title, its heading) counts
:data:`CONTEXT_CREDIT` of one it names; a word meets its inflected and derived forms
("stable", "stabilized", "stability") and the other names the document itself gives a thing
("often called floats", :func:`aliases`); a name the question capitalises is never left out.
Unweighed, the heaviest concepts by factor must each be named. "All identifiers are converted
into the normal form NFKC" answers "Unicode normalization, NFC/NFKD?" without the word
Unicode; ".pdbrc is read from the home directory" does not answer "How do I read a file line
by line?", whose three words weigh alike. A sentence that matches only a sub-question's
heading, or shares a common word or two with the question, is about something else: it is
not emitted, and a question nothing answers ends ``not found`` rather than in off-topic
claims.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import PurePosixPath
from urllib.parse import urlsplit

from deep_research.brief.layout import Brief
from deep_research.errors import InputError
from deep_research.gates.vocabulary import STOP_WORDS, term_stem
from deep_research.models import SourceRow

QUESTION_WORDS = frozenset(
    """how what why when where which who whom whose does do did is are was were can could should
    would will""".split()
)
#: Words a question asks *with*, not *about*; matching them says nothing about the topic.
ASKING_WORDS = frozenset(
    """work works use uses used using run runs happen happens mean means meaning
    difference differences differ explain describe purpose affect affects effect effects impact
    relate relates related relationship versus way ways best example examples tell find know
    become becomes became
    show need want possible get good idiomatic exactly actually really basically simply quickly
    easily efficiently safely properly correctly automatically manually programmatically
    dynamically""".split()
)
#: Verbs that say which side of the topic a question asking "how" asks about ("How are chained
#: comparisons evaluated?"); an answer often says it in other words ("… stops at the first
#: false one"), so each weighs :data:`ASPECT_WEIGHT` of what its frequency gives, and one no
#: retained text uses weighs as if every text used it.
ASPECT_WORDS = frozenset(
    """evaluate evaluated evaluates evaluating evaluation handle handled handles handling treat
    treated treats implement implemented implements implementation compute computed computes
    calculate calculated determine determined define defined represent represented store stored
    perform performed behave behaves behaviour behavior declare declared declares
    declaration""".split()
)
#: Asking words that are the task itself right after "How do I…": "How does it run?" asks
#: how it works, "How do I run a coroutine?" asks about running one.
TASK_VERBS = frozenset({"run"})
_TASK = re.compile(
    r"\bhow\s+(?:(?:do|can|could|should|would)\s+(?:i|we|you|one)|to)\s+("
    + "|".join(sorted(TASK_VERBS))
    + r")\b",
    re.IGNORECASE,
)
#: Words that name the corpus or the asker's setting rather than the topic: "What is a
#: decorator in Python?" asks what "What is a decorator?" asks.
FILLER_WORDS = frozenset("python python3 pythons cpython programming program programs".split())
#: Spellings the documentation uses for one thing: a short form and its word, or siblings a
#: question names in each other's stead. Compared by :func:`term_stem`.
SYNONYMS: tuple[frozenset[str], ...] = tuple(
    frozenset(term_stem(word) for word in group.split())
    for group in (
        "dict dictionary",
        "int integer",
        "bool boolean",
        "func function",
        # Askers say "argument" for what the reference calls a parameter, and the reverse.
        "arg argument param parameter",
        "kwarg keyword",
        "dir directory folder",
        "env environment",
        "regex regexp",
        "async asynchronous",
        "nfc nfd nfkc nfkd",
        "parse deserialize",
        "delete remove",
        "tmp temp temporary",
        # Verbs the library's docstrings use for what a question asks in other words.
        "check test verify",
        "evaluate calculate compute",
        "pause sleep delay suspend",
        "start begin launch spawn",
        "stop terminate halt",
        "join concatenate",
        "convert transform",
        # "How long is it?" asks for its length; "How tall is it?" for its height, which a
        # source may give as how high it rises.
        "long length",
        "tall height high rise",
        # The library calls a file object a stream ("Read and return a line from the stream").
        "file stream",
    )
)
#: Endings by which two stems of one root may differ ("decorat"/"decorator",
#: "normal"/"normaliz"); only these, so "import" never meets "important".
_DERIVED = frozenset({"", "or", "er", "ion", "iz", "al", "ive", "an", "n"})
_MIN_ROOT = 5
#: Derivational endings a stem may carry over its root, longest first: "stability",
#: "stabilized" and "stable" are one word's forms, "availability" and "available", "election"
#: and "elect", "national" and "nation". Stripped only while a root of :data:`_MIN_ROOT`
#: letters or more remains, so "formal" never meets "form".
_DERIVATIONAL = (
    "ability", "ibility", "ization", "isation", "ation", "ility", "ment", "ness", "ity", "abl",
    "ibl", "iz", "is", "al", "ic", "ion",
)  # fmt: skip
_ROOT_STRIPS = 2  # "stabilization" → "stabiliz" (the stemmer's) → "stabil"
#: The "not found" threshold: a claim answers when the concepts it leaves unnamed carry less
#: than this share of the question's weight. Calibrated on WikiQA train (2118 questions, the
#: extractive reasoner on each page as benchmarks/wikiqa_eval.py --split train runs it):
#: 0.25 / 0.30 / 1/3 / 0.40 / 0.45 gave answer-triggering F1 0.368 / 0.371 / 0.373 / 0.379 /
#: 0.384 at claim precision 0.420 / 0.411 / 0.405 / 0.395 / 0.382; 1/3 is the highest F1
#: that keeps claim precision within 0.015 of the rule it replaced (every concept named but
#: a generic one: F1 0.366 at 0.419), since an off-topic claim is worse than "not found".
MAX_UNNAMED_SHARE = 1 / 3
#: What a concept named only by a claim's context (its document's name or title, its heading,
#: the entry it documents) counts against one the claim names. On the same calibration, at a
#: share of 0.3334, 1.0 / 0.7 / 0.5 gave F1 0.374 / 0.375 / 0.376 at claim precision 0.397 /
#: 0.405 / 0.408: every sentence of a page shares its title, so the title alone tells none of
#: them apart.
CONTEXT_CREDIT = 0.5
#: A word written in capitals or a figure names one thing exactly; it weighs this much more.
PRECISE_WEIGHT = 2.0
#: ... and an aspect verb this much of what its frequency gives.
ASPECT_WEIGHT = 0.5
#: Where a question asks its next part: a comma or "and" before a question word.
QUESTION_PARTS = re.compile(
    r"\s*(?:,\s*(?:and\s+)?|\s+and\s+)(?=(?:how|who|whom|whose|when|where|why|what|which)\b)",
    re.IGNORECASE,
)
#: A part that points back at the first part's subject.
POINTS_BACK = re.compile(r"\b(?:it|its|they|them|their|this|these|he|she|his|her)\b", re.I)
#: Endings that name a file's format rather than its subject.
DOCUMENT_EXTENSIONS = frozenset({"md", "markdown", "txt", "html", "htm", "pdf", "rst"})
#: Shortest part of an identifier that is a word of its own.
_MIN_PART = 3
#: Four or more items of one or two words, parted by commas ("list, tuple, set, frozenset");
#: never a signature's parameters (no parentheses, no "=" in an item).
_ITEM = r"[\w\"'.*`-]+(?:\s+[\w\"'.*`-]+)?"
_LIST_COMMAS = 2  # the fewest commas a list of four names holds ("a, b, c and d")
_ENUMERATION = re.compile(
    rf"(?:{_ITEM},\s+){{2,}}{_ITEM},?\s+(?:and|or|nor)\s+{_ITEM}|(?:{_ITEM},\s+){{3,}}{_ITEM}"
)
_CALLED = re.compile(r"\b([A-Za-z][A-Za-z0-9_]{5,})\(")
_IDENTIFIER = re.compile(r"\b[A-Za-z][a-z0-9]*(?:(?:[_.][A-Za-z0-9]+)|(?:[A-Z][a-z0-9]+))+\b")
_SEPARATORS = re.compile(r"[._-]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_HUMPS = re.compile(r"[_.]+|(?<=[a-z0-9])(?=[A-Z])")
#: Marks a run of initials among a text's words, so only an abbreviation is compared with it.
INITIALS = "^"
#: A word in any script: a letter, then letters, digits, underscores, apostrophes, dashes.
_WORD = re.compile(r"[^\W\d_][\w'-]*")
_LETTERS = re.compile(r"[A-Za-z]+")
_HYPHENATED = re.compile(r"\b[A-Za-z]{3,}(?:-[A-Za-z]{3,})+\b")
_CAPITALS = re.compile(r"\b[A-Z]{3,6}s?\b")
#: A version or a number of two digits or more; a lone digit ("Python 3") is filler.
_FIGURE = re.compile(r"(?<![\w.])(?:\d+(?:\.\d+)+|\d{2,})(?![\w.]*\d)")


def key_terms(text: str) -> list[str]:
    """Content words of ``text`` in order, without stop-words, question words or repeats."""
    seen: list[str] = []
    for word in _WORD.findall(text):
        lower = word.lower().removesuffix("'s").strip("'-")  # "thread's" names a thread
        if len(lower) < 3 or lower in STOP_WORDS or lower in QUESTION_WORDS:
            continue
        if lower not in seen:
            seen.append(lower)
    return seen


def stems(text: str) -> frozenset[str]:
    return frozenset(term_stem(term) for term in key_terms(text))


def topic_terms(text: str) -> list[str]:
    """:func:`key_terms` without the words a question asks with or the corpus's filler —
    unless that leaves nothing, when the filler is the topic ("What is Python?") — but with
    the task of a question asking how to do something ("How do I run a coroutine?")."""
    task = _TASK.search(text)
    kept = {task.group(1).lower()} if task else set()
    terms = [t for t in key_terms(text) if t not in ASKING_WORDS or t in kept]
    return [t for t in terms if t not in FILLER_WORDS] or terms


def topic_stems(text: str) -> frozenset[str]:
    return frozenset(term_stem(t) for t in topic_terms(text))


#: A word in capitals that may abbreviate words a question spells out ("EOF").
_ACRONYM = re.compile(r"\b[A-Z]{2,5}\b")


def initials(text: str) -> frozenset[str]:
    """The initials of every run of two to four words not opening or closing on a stop-word
    ("the global interpreter lock" → "gil", among others)."""
    words = [w.lower() for w in _LETTERS.findall(text)]
    found = set()
    for size in (2, 3, 4):
        for start in range(len(words) - size + 1):
            window = words[start : start + size]
            if window[0] not in STOP_WORDS and window[-1] not in STOP_WORDS:
                found.add("".join(w[0] for w in window))
    return frozenset(found)


def _related(a: str, b: str) -> bool:
    """Whether two stems are one root with derived endings ("decorat"/"decorator")."""
    if a == b:
        return True
    root = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        root += 1
    if root >= _MIN_ROOT and a[root:] in _DERIVED and b[root:] in _DERIVED:
        return True
    return _latin(a, b) or (min(len(a), len(b)) >= _MIN_ROOT and _root(a) == _root(b))


@lru_cache(maxsize=65536)
def _root(stem: str) -> str:
    """``stem`` without its derivational endings (:data:`_DERIVATIONAL`), the Latin "-ble" /
    "-bility" alternation made one ("stabil" of "stability" is "stabl" of "stable")."""
    for _ in range(_ROOT_STRIPS):
        ending = next(
            (e for e in _DERIVATIONAL if stem.endswith(e) and len(stem) - len(e) >= _MIN_ROOT),
            None,
        )
        if ending is None:
            break
        stem = stem[: -len(ending)]
    return stem[:-3] + "bl" if stem.endswith("bil") else stem


def _latin(a: str, b: str) -> bool:
    """Whether one stem is the other's noun in "-sion" as Latin verbs make it: "divide" and
    "division", "extend"/"extension", "include"/"inclusion", "omit"/"omission"."""
    for noun, verb in ((a, b), (b, a)):
        if noun.endswith("ssion") and len(noun) > 7 and verb == noun[:-5] + "t":
            return True
        if noun.endswith("sion") and len(noun) > 7 and verb == noun[:-4] + "d":
            return True
    return False


@dataclass(frozen=True)
class Concept:
    """One thing the question names: its stem, the spellings that also name it, and whether
    the question wrote it in capitals (then initials of the claim's words name it too)."""

    stem: str
    spellings: frozenset[str]
    abbreviation: bool = False
    figure: bool = False
    aspect: bool = False

    @property
    def factor(self) -> float:
        """What the concept's weight is multiplied by: :data:`PRECISE_WEIGHT` for a word in
        capitals or a figure, :data:`ASPECT_WEIGHT` for an aspect verb."""
        if self.abbreviation or self.figure:
            return PRECISE_WEIGHT
        return ASPECT_WEIGHT if self.aspect else 1.0

    def named_by(self, words: Iterable[str]) -> frozenset[str]:
        """The ``words`` (stems, and initials) that name this concept."""
        return frozenset(w for w in words if any(_related(s, w) for s in self.spellings))


@dataclass(frozen=True)
class Relevance:
    """Whether a claim answers the question, which of the question's concepts it names, and
    what share of the question's weight the ones it does not name carry."""

    answers: bool
    matched: tuple[str, ...]
    missing: tuple[str, ...]
    missing_share: float

    @property
    def reason(self) -> str:
        if not self.matched:
            return "names none of the question's topic words"
        named = ", ".join(self.matched)
        if self.answers:
            return f"names {named}"
        return (
            f"names {named} but not {', '.join(self.missing)} "
            f"({round(100 * self.missing_share)}% of the question)"
        )


class Question:
    """A research question analysed once, to judge many claims against."""

    def __init__(self, text: str) -> None:
        self.text = text
        capitals = {m.group(0).lower().removesuffix("s") for m in _CAPITALS.finditer(text)}
        manner = text.lstrip().lower().startswith("how")
        concepts: list[Concept] = []
        for term in topic_terms(text):
            stem = term_stem(term)
            spellings = {stem}.union(*(group for group in SYNONYMS if stem in group))
            if any(c.spellings & spellings for c in concepts):
                continue  # a repeat, or "NFC/NFKD": siblings name one thing
            abbreviation = term.removesuffix("s") in capitals
            if abbreviation:
                spellings.add(INITIALS + term.removesuffix("s"))
            # "How are they evaluated?" asks about their evaluation in general; "When are
            # they evaluated?" asks about exactly that.
            aspect = term in ASPECT_WORDS and manner
            concepts.append(Concept(stem, frozenset(spellings), abbreviation, aspect=aspect))
        # A question that spells an abbreviation out beside it ("global interpreter lock
        # (GIL)") names one thing: the spelled-out words are not concepts of their own.
        spelled: set[str] = set()
        for concept in concepts:
            if concept.abbreviation:
                spelled |= _spelled_out(text, concept.stem)
        # A figure the question names ("Python 3.0", "in 2018") is what it asks about.
        self.figures = frozenset(_FIGURE.findall(text))
        concepts += [Concept(f, frozenset({f}), figure=True) for f in sorted(self.figures)]
        self.concepts = tuple(c for c in concepts if c.abbreviation or c.stem not in spelled)
        # A name the question writes with a capital past its first word ("the Loom
        # proposal") is whom it asks about: a claim about another never answers it.
        capitalised = {term_stem(w.lower()) for w in _WORD.findall(text)[1:] if w[:1].isupper()}
        self.names = frozenset(c.stem for c in self.concepts if c.stem in capitalised)
        self.abbreviates = any(c.abbreviation for c in self.concepts)
        # The reverse: words the question spells out that a text may abbreviate ("end of
        # file", written "EOF"), by their initials.
        words = [w.lower() for w in _LETTERS.findall(text)]
        self.spelled_out: dict[str, frozenset[str]] = {}
        for size in (2, 3, 4):
            for start in range(len(words) - size + 1):
                window = words[start : start + size]
                if window[0] not in STOP_WORDS and window[-1] not in STOP_WORDS:
                    key = "".join(w[0] for w in window)
                    self.spelled_out[key] = stems(" ".join(window))
        self.facets = self._facets(text)

    def _facets(self, text: str) -> tuple[Facet, ...]:
        """The parts a question asks at once ("When did the bridge open, how long is it and
        who designed it?"), each answerable alone; a part pointing back ("it") needs what the
        first part names too. A first part naming one thing only is that subject, no part of
        its own ("What is the GIL and how does it affect threads?")."""
        parts = [p for p in QUESTION_PARTS.split(text) if p.strip()]
        every = tuple(c.stem for c in self.concepts)
        if len(parts) < 2:
            return (Facet(every),)
        own = [self._stems_of(part) for part in parts]
        subject = own[0]
        facets = [Facet(subject)] if len(subject) > 1 else []
        for part, stems_ in zip(parts[1:], own[1:], strict=True):
            if not stems_:
                continue
            refers = POINTS_BACK.search(part) is not None
            facets.append(Facet(stems_, subject if refers else ()))
        return tuple(facets) or (Facet(every),)

    def _stems_of(self, part: str) -> tuple[str, ...]:
        terms = {term_stem(t) for t in topic_terms(part)} | set(_FIGURE.findall(part))
        return tuple(c.stem for c in self.concepts if c.spellings & terms or c.stem in terms)

    def words(self, text: str, *, mentions: bool = False) -> frozenset[str]:
        """What of ``text`` can name a concept: its stems outside lists of four names or more
        (inside them too with ``mentions``), the parts of its identifiers (:meth:`parts`),
        and (marked, so only an abbreviation meets them) its initials when the question holds
        an abbreviation."""
        if mentions:
            found = frozenset(
                term_stem(term) for term in key_terms(" ".join(set(_WORD.findall(text))))
            )
        else:
            # A word named only in a list of names is mentioned in passing: "For container
            # types such as list, tuple, set, frozenset, dict, …" says nothing about what a
            # frozenset is.
            if text.count(",") >= _LIST_COMMAS:
                text = _ENUMERATION.sub(" ", text)
            found = stems(text)
        # A hyphenated compound names its words too: "strict-margins" names strict margins.
        for compound in _HYPHENATED.findall(text):
            found |= stems(compound.replace("-", " "))
        # Only code is split: "readline(…)" reads a line; "a readline history file" does not.
        compounds = _CALLED.findall(text) + _IDENTIFIER.findall(text)
        if compounds:
            found = found.union(*(self.parts(token) for token in compounds))
        if self.figures:
            found |= self.figures.intersection(_FIGURE.findall(text))
        if self.abbreviates:
            found |= {INITIALS + i for i in initials(text)}
        for acronym in _ACRONYM.findall(text):
            found |= self.spelled_out.get(acronym.lower(), frozenset())
        return found

    def parts(self, token: str) -> frozenset[str]:
        """The stems of an identifier's parts: split at underscores, dots and capitals
        ("lru_cache", "NamedTemporaryFile"), or — a name called, all lower-case — into two
        words the question uses ("readline(" → read, line; "copyfile(" → copy, file; never
        "thread(" → read, nor "profile(" → file)."""
        pieces = [p for p in _HUMPS.split(token) if p]
        if len(pieces) > 1:
            return frozenset(term_stem(p.lower()) for p in pieces if len(p) >= _MIN_PART)
        word = token.lower()
        for cut in range(_MIN_PART, len(word) - _MIN_PART + 1):
            left, right = term_stem(word[:cut]), term_stem(word[cut:])
            if left in self.vocabulary and right in self.vocabulary:
                return frozenset({left, right})
        return frozenset()

    @cached_property
    def vocabulary(self) -> frozenset[str]:
        """Every stem the question uses, asking words too, and each concept's spellings."""
        spellings = {s for c in self.concepts for s in c.spellings}
        return stems(self.text) | spellings

    def named(self, words: frozenset[str]) -> frozenset[str]:
        """The concepts (by stem) that ``words`` name."""
        return frozenset(c.stem for c in self.concepts if c.named_by(words))

    def weights(self, counts: Mapping[str, int], total: int) -> dict[str, float]:
        """Each concept's weight from how many of ``total`` reference texts name it
        (``counts``): rarer is more specific, log(1 + total / count), one never named weighing
        as if named by half a text."""
        return {
            c.stem: math.log(1.0 + max(total, 1) / max(counts.get(c.stem, 0), 0.5))
            if counts.get(c.stem) or not c.aspect
            else math.log(2.0)
            for c in self.concepts
        }

    def weigh(self, texts: Iterable[str]) -> dict[str, float]:
        """:meth:`weights` over ``texts`` (each counted once, whatever its length, and naming
        a concept wherever it does)."""
        counts: dict[str, int] = {}
        total = 0
        for text in texts:
            total += 1
            for stem in self.named(self.words(text, mentions=True)):
                counts[stem] = counts.get(stem, 0) + 1
        return self.weights(counts, total)

    def decide(
        self,
        named: Iterable[str],
        weights: Mapping[str, float] | None = None,
        context: Iterable[str] = (),
    ) -> Relevance:
        """The rule over the concepts a claim names (``named``) and those only its context
        names (``context``: its document's name or title, its heading), for any one of the
        question's :attr:`facets`: what the claim leaves unnamed weighs at most
        :data:`MAX_UNNAMED_SHARE` of the facet, a concept named by context alone counting
        :data:`CONTEXT_CREDIT` of one named — a score, not a rule that every word appear —
        and a name the question capitalises (:attr:`names`) is named or in context; of a
        facet pointing back, at least half the subject's concepts too. A concept weighs what
        its frequency gives (1 without ``weights``) times :attr:`Concept.factor`."""
        named = frozenset(named)
        credit = dict.fromkeys(context, CONTEXT_CREDIT) | dict.fromkeys(named, 1.0)
        factor = {c.stem: c.factor for c in self.concepts}
        weight = {stem: (weights or {}).get(stem, 1.0) * f for stem, f in factor.items()}
        matched = tuple(c.stem for c in self.concepts if c.stem in credit)
        missing = tuple(c.stem for c in self.concepts if c.stem not in credit)
        # Unweighed, no concept is known to be more generic than another: the heaviest by
        # factor alone (each, when they tie) must be named, by the claim or its context.
        outcomes = [_facet_rule(facet, credit, weight, weights is None) for facet in self.facets]
        answers = any(ok for ok, _ in outcomes) and self.names <= credit.keys()
        share = min((missed for _, missed in outcomes), default=1.0)
        return Relevance(answers, matched, missing, share)

    def judge(
        self, claim: str, weights: Mapping[str, float] | None = None, source: str = ""
    ) -> Relevance:
        """The rule applied to ``claim``, quoted from the document at ``source`` (a URL or
        path), whose name (:func:`document_name`) is the claim's context."""
        context = self.named(name_words(document_name(source))) if source else frozenset()
        return self.decide(self.named(self.words(claim)), weights, context)

    def answers(
        self, claim: str, weights: Mapping[str, float] | None = None, source: str = ""
    ) -> bool:
        return self.judge(claim, weights, source).answers


#: Where a document gives a thing another name: "glacier caves are often called ice caves",
#: "the FIFA World Cup, also known as the World Cup", "Tsingtao, now called Qingdao".
_ALIAS = re.compile(
    r"(?P<left>(?:[\w'-]+\s+){0,2}[\w'-]+)[\s,()]+(?:(?:is|are|was|were|be)\s+)?"
    r"(?:(?:also|often|sometimes|commonly|formerly|originally|popularly|usually|now)\s+)?"
    r"(?:known\s+as|called|referred\s+to\s+as|termed|nicknamed|abbreviated(?:\s+as)?)\s+"
    r"(?:the\s+|an?\s+)?[\"“']?(?P<right>[\w'-]+(?:\s+[\w'-]+){0,2})",
    re.IGNORECASE,
)


def aliases(text: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    """The other names ``text`` itself gives things, as pairs of stems told apart: "glacier
    caves are often called ice caves" gives ({glacier}, {ic}) — the words the two names share
    ("caves") are no alias of anything, unless one name is all shared ("floating figures …
    called floats"). A near-synonym the corpus states, not one assumed."""
    found = []
    for match in _ALIAS.finditer(text):
        # "historically known as": the adverb is no part of the name.
        words = [w for w in match.group("left").split() if not w.lower().endswith("ly")]
        left, right = stems(" ".join(words)), stems(match.group("right"))
        # "Floating figures are often called floats": "floats" names the figures as well.
        if left != right and left and right:
            found.append((left - right or left, right - left or right))
    return found


def name_words(name: str) -> frozenset[str]:
    """The stems of a name's words, split at dots, dashes, underscores and capitals
    ("asyncio.tasks" → asyncio, task) but never into words it only happens to contain: the
    ``readline`` module is not about reading lines."""
    return stems(name) | stems(spaced_name(name))


def spaced_name(name: str) -> str:
    """A name's words parted by spaces at its dots, dashes, underscores and capitals
    ("asyncio.TaskGroup" → "asyncio Task Group")."""
    return _CAMEL.sub(" ", _SEPARATORS.sub(" ", name))


def document_name(source: str) -> str:
    """The name of the document at ``source``: the last part of its path without a file
    extension ("file://python-docs/library/subprocess" → "subprocess", ".../notes/heat-pumps.md"
    → "heat-pumps"). A sentence quoted from a document is about what the document is named
    for: "Run command with arguments" in the subprocess module's documentation is about
    running a subprocess though it does not say so."""
    path = urlsplit(source).path if "://" in source else source
    name = PurePosixPath(path.rstrip("/")).name
    stem, dot, extension = name.rpartition(".")
    return stem if dot and extension.lower() in DOCUMENT_EXTENSIONS else name


@dataclass(frozen=True)
class Facet:
    """One part of a question: its concepts (by stem), and the subject's when it points back."""

    stems: tuple[str, ...]
    subject: tuple[str, ...] = ()


def _facet_rule(
    facet: Facet, credit: Mapping[str, float], weight: Mapping[str, float], top_named: bool
) -> tuple[bool, float]:
    """(whether a claim crediting ``credit`` (concept → 1 named, less by context) answers this
    facet, the share of its weight unnamed)."""
    own = {stem: weight[stem] for stem in facet.stems}
    total = math.fsum(own.values())
    unnamed = math.fsum(w * (1.0 - credit.get(stem, 0.0)) for stem, w in own.items())
    share = unnamed / total if total > 0 else 1.0
    top = max(own.values(), default=0.0)
    specific = not top_named or all(stem in credit for stem, w in own.items() if w >= top - 1e-9)
    # Strictly below: of three equally weighty concepts, two named are not enough.
    answers = specific and share < MAX_UNNAMED_SHARE - 1e-9
    if answers and facet.subject:
        answers = 2 * len(facet.subject & credit.keys()) >= len(facet.subject)
    return answers, share


def _spelled_out(text: str, abbreviation: str) -> set[str]:
    words = [w.lower() for w in _LETTERS.findall(text)]
    size = len(abbreviation)
    for start in range(len(words) - size + 1):
        window = words[start : start + size]
        if "".join(w[0] for w in window) == abbreviation:
            return {term_stem(w) for w in window}
    return set()


def answers(question: str, claim: str) -> bool:
    """Whether ``claim`` answers ``question``, every concept weighing the same."""
    return Question(question).answers(claim)


def relevant_rows(
    rows: Sequence[SourceRow],
    question: str,
    texts: Iterable[str] = (),
    sub_questions: Mapping[str, str] | None = None,
) -> list[SourceRow]:
    """``rows`` keeping only the findings whose claim answers ``question``, the question's
    concepts weighed by the retained ``texts`` (every concept the same without them): what
    claims are built from, whichever reasoner wrote the findings. ``sub_questions`` (id → text):
    a plan a model wrote, whose sub-questions word the question's parts in their own words — a
    finding that answers the sub-question it was found for answers the question too."""
    judge = _finding_judge(question, texts, sub_questions)
    kept = []
    for row in rows:
        findings = [f for f in row.findings if any(r.answers for r in judge(f.claim, row))]
        if len(findings) != len(row.findings):
            row = row.model_copy(update={"findings": findings})
        kept.append(row)
    return kept


def relevance_ranks(
    rows: Sequence[SourceRow],
    question: str,
    texts: Iterable[str] = (),
    sub_questions: Mapping[str, str] | None = None,
) -> dict[str, float]:
    """Each finding's rank (by finding id) under the rule :func:`relevant_rows` applies, higher
    first: half the share of the question's — or its sub-question's — weight its claim names,
    plus 1 when that answers it (so 1 or more exactly for the findings it keeps). For a run
    whose judges decide relevance: it orders, it drops nothing."""
    judge = _finding_judge(question, texts, sub_questions)
    return {
        finding.id: max(
            float(r.answers) + (1.0 - r.missing_share) / 2 for r in judge(finding.claim, row)
        )
        for row in rows
        for finding in row.findings
    }


def _finding_judge(
    question: str, texts: Iterable[str], sub_questions: Mapping[str, str] | None
) -> Callable[[str, SourceRow], list[Relevance]]:
    """The rule for a finding's claim in its row: against ``question``, then each of the row's
    sub-questions ``sub_questions`` words, every concept weighed by the retained ``texts``."""
    corpus = list(texts)
    asked = Question(question)
    weights = asked.weigh(corpus) if corpus else None
    parts = {
        sq: (Question(text), Question(text).weigh(corpus) if corpus else None)
        for sq, text in (sub_questions or {}).items()
    }

    def judge(claim: str, row: SourceRow) -> list[Relevance]:
        return [asked.judge(claim, weights, row.url)] + [
            part.judge(claim, weighed, row.url)
            for sq in row.sub_questions
            if sq in parts
            for part, weighed in [parts[sq]]
        ]

    return judge


def retained_texts(brief: Brief, rows: Sequence[SourceRow]) -> list[str]:
    """The retained text of each distinct source in ``rows``, the reference a question's
    concepts are weighed by; one that cannot be read is left to the trace gate to report."""
    texts = []
    for content_hash in dict.fromkeys(row.content_hash for row in rows if row.content_hash):
        try:
            texts.append(brief.read_corpus(content_hash))
        except InputError:
            continue
    return texts
