"""How well a sentence answers a question: the extractive reasoner's measured score.

The relevance gate (:mod:`deep_research.gates.relevance`) says whether a sentence is about the
question at all. This score says how well it answers, so that a threshold chosen on a labelled
development set can keep what answers and leave the rest ``not found``, and so that the best
sentence leads the Answer. It reads the question as an engineer does:

* **identifiers are exact keys**: what the question writes as code — ``os.path.join``,
  ``__init__``, ``lru_cache``, ``max()`` — must appear exactly (case kept, word-bounded) in the
  sentence, in the declaration it documents, or (a module's name) in the document's name; a
  word the question uses that the declaration takes as a parameter (``maxsize`` under
  ``lru_cache(maxsize=128, typed=False)``) is one too;
* **the question's kind steers**: a question asking for a default wants a sentence that states
  one ("the default", ``name=value``), one asking what is raised wants an exception, one asking
  what something returns a return, a count a figure, a date a year, a definition "X is a …",
  "who" and "where" a name the question does not write, "why" a cause ("because", "due to").
  Where no sentence can answer without it — a count, a measurement, a date, a name, a reason,
  asked without code — a sentence that does not state it is no answer, however many of the
  question's words it shares (:meth:`Asked.lacks_kind`);
* **coverage**: the share of the question's concepts (their weights as the gate gives them)
  the sentence names itself, a concept named only by its carried subject (the declaration, the
  heading, the previous sentence) counting :data:`CARRIED_CREDIT` of a named one.

The score is a weighted sum in [0, 1]; its weights are round numbers, not fitted, and the
threshold (:data:`MIN_SCORE` of :mod:`deep_research.run.reasoners`) was chosen on the
development set's precision/answered curve (benchmarks/RESULTS.md).
"""

from __future__ import annotations

import builtins
import keyword
import math
import re
from dataclasses import dataclass
from functools import cached_property

from deep_research.gates.relevance import Question
from deep_research.gates.vocabulary import MONTH_PATTERN, STOP_WORDS, term_stem

#: Share of the score from the question's concepts the sentence names.
COVERAGE_WEIGHT = 0.6
#: Share from the question's identifiers found exactly.
IDENTIFIER_WEIGHT = 0.25
#: Share from the sentence stating what the question's kind asks for.
KIND_WEIGHT = 0.15
#: What a concept named only by the carried subject counts, against one the sentence names.
CARRIED_CREDIT = 0.7

#: Code in a question: a dotted name, a dunder, a name with an underscore or inner capital, or
#: a name followed by "()".
_CODE = re.compile(
    r"`([^`\s]+)`"
    r"|\b([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?"
    r"|\b(__\w+__)"
    r"|\b([A-Za-z]\w*_\w+|[a-z]+[A-Z]\w*)\b"
    r"|\b([A-Za-z_]\w*)\(\)"
    r"|(?<![=!<>:*/])((?:[=!<>]=|:=|<<|>>|\*\*|//|->))(?![=<>*/])"
)
#: Shortest parameter name read as a key ("a" and "p" of ``join(a, *p)`` are not).
MIN_PARAMETER = 3
#: Words at a sentence's start where a definition names what it defines.
_OPENING_WORDS = 5
#: Parameters of a declaration line: ``name=`` or a bare name between the parentheses.
_PARAMETER = re.compile(r"[(,]\s*\*{0,2}([A-Za-z_]\w*)")

#: What "how …" asks a measurement of: "How long does the crossing take?" is answered by
#: "crosses the sound in twenty-five minutes", which says neither "long" nor "take".
MEASURES = ("long", "tall", "large", "big", "high", "wide", "deep", "far", "heavy", "old", "often")
#: What "which version" asks with, that "in the 1.65.0 release" answers without repeating.
_VERSION_WORDS = ("version", "release")
#: Verbs a measurement question asks with that its answer need not repeat.
_MEASURE_VERBS = ("take", "takes", "last", "lasts")
_NUMBER_WORDS = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy"
    r"|eighty|ninety|hundred|thousand|million|billion|half|once|twice|dozen"
)
#: The question's kind, by the words it asks with (first match wins, most specific first).
_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("default", re.compile(r"\bdefaults?\b", re.I)),
    ("raises", re.compile(r"\b(?:exceptions?|errors?|raised?|raises)\b", re.I)),
    ("count", re.compile(r"\bhow\s+many\b|\bnumber\s+of\b", re.I)),
    (
        "version",
        re.compile(r"\b(?:what|which)\s+(?:version|release)\b|\bsince\s+(?:what|which)\b", re.I),
    ),
    ("measure", re.compile(rf"\bhow\s+(?:{'|'.join(MEASURES)})\b", re.I)),
    ("date", re.compile(r"\bwhen\s+(?:was|were|did|is|are)\b|\b(?:what|which)\s+year\b", re.I)),
    # "Who is Bob Seger?" asks what he is ("… is an American singer"), not for a name.
    (
        "definition",
        re.compile(r"^\s*who\s+(?:is|was|are|were)\s+\S+(?:\s+\S+){0,2}\s*\??\s*$", re.I),
    ),
    ("person", re.compile(r"^\s*who(?:m|se)?\b|\bby\s+whom\b", re.I)),
    (
        "place",
        re.compile(r"^\s*where\b|\b(?:what|which)\s+(?:country|city|state|county|town)\b", re.I),
    ),
    ("reason", re.compile(r"^\s*why\b", re.I)),
    ("returns", re.compile(r"\breturns?\b", re.I)),
    ("difference", re.compile(r"\bdiffer(?:ence|ent|s)?\b|\bversus\b|\bvs\.?\b|\bcompare", re.I)),
    ("definition", re.compile(r"^\s*what\s+(?:is|are)\s+(?:an?\s+|the\s+)?\S+", re.I)),
)
#: A question asking which exception, and the name of one (``KeyError``, ``StopIteration``).
_WHICH_EXCEPTION = re.compile(r"\b(?:what|which)\s+(?:exceptions?|errors?)\b", re.I)
_EXCEPTION_NAME = re.compile(r"\b[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt|Iteration)\b")
#: A capitalised word past a sentence's first: a name, for "who" and "where".
_NAME = re.compile(r"(?<=\S)\s+[\"'(]?([A-Z][a-z]+)")
#: A capitalised word that names a people or a language, not a person ("an English singer",
#: "the American actress", "a French painter"): no answer to "who".
_DEMONYM = re.compile(r"(?:[a-z]an|ese|ish|ch|[st]i)$")
#: A version as a release names it: "1.65.0", "version 3.8", "release 2", "v2.1".
VERSION = r"\b\d+\.\d+\.\d+\b|\b(?:[Vv]ersion|[Rr]elease|v)\s?\d+(?:\.\d+)*\b"
#: A URL or a file path: where something is, on the web or on a disk.
_LOCATOR = re.compile(r"\b\w+://\S|(?<![\w/])[~.]?/\w+/|\w/\w+/\w")
#: Kinds whose answer a sentence must state to answer at all: a sentence about the subject
#: that states no date does not say when, whatever words it shares with the question.
STRICT_KINDS = frozenset({"count", "measure", "date", "version", "person", "place", "reason"})

#: What a sentence answering each kind states.
_CUES: dict[str, re.Pattern[str]] = {
    "default": re.compile(r"\bdefaults?\b|\b[A-Za-z_]\w*=[^\s,)]+|\bwhen\s+omitted\b", re.I),
    "raises": re.compile(r"\brais(?:e|es|ed|ing)\b|\b[A-Z]\w*(?:Error|Exception|Warning)\b"),
    "count": re.compile(rf"\d|\b(?:{_NUMBER_WORDS}|single|both)\b", re.I),
    "measure": re.compile(rf"\d|\b(?:{_NUMBER_WORDS})\b", re.I),
    # A software feature's "when" is often its release: "stabilized in the 1.65.0 release".
    "date": re.compile(
        rf"\b(?:1[5-9]|20)\d\d\b|{MONTH_PATTERN}|\b\d\d?(?:st|nd|rd|th)\s+century\b"
        rf"|{VERSION}"
    ),
    "version": re.compile(VERSION),
    # A name the question does not write: checked in :meth:`Asked.states_kind`.
    "person": _NAME,
    "place": _NAME,
    "reason": re.compile(
        r"\bbecause\b|\bdue\s+to\b|\bcaus(?:e|es|ed|ing)\b|\bresult(?:s|ed)?\s+(?:of|from|in)\b"
        r"|\bso\s+that\b|\bin\s+order\s+to\b|\breasons?\b|\b(?:leads?|led)\s+to\b",
        re.I,
    ),
    "returns": re.compile(r"\breturn(?:s|ed|ing)?\b|->|\byields?\b", re.I),
    "difference": re.compile(
        r"\bwhereas\b|\bunlike\b|\bwhile\b|\bbut\b|\bonly\s+if\b|\binstead\b|\bnot\b", re.I
    ),
    "definition": re.compile(r"\b(?:is|are)\s+(?:an?|the|any|used|called)\b", re.I),
}


_KIND_STEMS = frozenset(
    term_stem(w)
    for w in ("default", "defaults", "return", "returns", "raise", "raises", "exception", "error")
)


#: Built-in names a question may write bare and still mean the built-in: the interpreter's
#: own, less those that are everyday words ("all", "list", "open", "range", "round", "dir"),
#: which are code only when written as code (``list()``).
_EVERYDAY_BUILTINS = frozenset(
    "all any bin bytes callable compile complex copyright credits dir exit filter float format "
    "help hash id input iter license list map max min next object open print property quit "
    "range reversed round set slice sorted sum super type vars zip".split()
)
BARE_BUILTINS = (
    frozenset(
        name
        for name, value in vars(builtins).items()
        if callable(value) and name.islower() and not name.startswith("_")
    )
    - _EVERYDAY_BUILTINS
)


#: A Python keyword named as what it is ("the with statement", "the finally clause"): code,
#: though as a word it is a stop word.
_KEYWORD_NAMED = re.compile(
    rf"\b({'|'.join(k for k in keyword.kwlist if k.islower())})\s+"
    r"(?:statements?|clauses?|keywords?|loops?|blocks?|expressions?)\b"
)


def identifiers(question: str) -> tuple[str, ...]:
    """What the question writes as code, in order: ``os.path.join``, ``__init__``,
    ``lru_cache``, ``max`` (from ``max()``), a built-in's name written bare (``getattr``,
    ``isinstance``: :data:`BARE_BUILTINS`) and a keyword named as one ("the with
    statement")."""
    found: list[str] = []
    for match in _CODE.finditer(question):
        token = next(group for group in match.groups() if group)
        token = token.removesuffix("()").rstrip(".")
        if token and token not in found:
            found.append(token)
    for word in re.findall(r"(?<![\w.`])[a-z]+(?![\w.(`])", question):
        if word in BARE_BUILTINS and word not in found:
            found.append(word)
    for match in _KEYWORD_NAMED.finditer(question):
        if match.group(1) not in found:
            found.append(match.group(1))
    return tuple(found)


def kind_of(question: str) -> str:
    """The question's kind: default, raises, count, date, returns, difference, definition, or
    other (a "how" or "why" question, whose answer no one word marks)."""
    return next((kind for kind, pattern in _KINDS if pattern.search(question)), "other")


def written_words(text: str) -> frozenset[str]:
    """A text's plain words as written: a parameter name it writes is one of them."""
    return frozenset(re.findall(r"[A-Za-z_]\w*", text))


def parameters(declaration: str) -> frozenset[str]:
    """The parameter names of a declaration line (``lru_cache(maxsize=128, typed=False)``)."""
    inside = declaration.split("(", 1)[1] if "(" in declaration else ""
    return frozenset(_PARAMETER.findall("(" + inside))


def _exact(key: str, text: str) -> bool:
    # A keyword opening a sentence is capitalised ("Assert statements are…").
    spelled = f"(?:{key}|{key.capitalize()})" if keyword.iskeyword(key) else re.escape(key)
    return re.search(rf"(?<![\w.]){spelled}(?!\w)", text) is not None


def _declares(name: str, declaration: str) -> bool:
    """Whether the declaration line declares ``name``, written bare or on pydoc's stand-in
    for the instance (``D.pop(k[,d]) -> v`` under a class's ``pop``)."""
    return re.match(rf"(?:[A-Za-z_]\w*\.)*{re.escape(name)}\(", declaration) is not None


@dataclass(frozen=True)
class Asked:
    """A question read for scoring: its concepts, identifiers and kind."""

    text: str

    @cached_property
    def question(self) -> Question:
        return Question(self.text)

    @cached_property
    def identifiers(self) -> tuple[str, ...]:
        return identifiers(self.text)

    @cached_property
    def kind(self) -> str:
        return kind_of(self.text)

    @cached_property
    def words(self) -> frozenset[str]:
        """The question's plain words as written (:func:`written_words`)."""
        return written_words(self.text)

    def kind_concepts(self) -> frozenset[str]:
        """The question's concepts that are its kind's own word ("default", "return",
        "raise", "exception", "error"; a measurement's "long" or "tall" and "take"): a
        sentence stating what the kind asks names them."""
        own = set(_KIND_STEMS)
        if self.kind == "measure":
            own |= {term_stem(w) for w in (*MEASURES, *_MEASURE_VERBS)}
        if self.kind == "version":
            own |= {term_stem(w) for w in _VERSION_WORDS}
        return frozenset(c.stem for c in self.question.concepts if c.stem in own)

    def key_named(self, text: str, key: str) -> bool:
        """Whether ``text`` writes the identifier ``key``'s own name (its last part) exactly."""
        return _exact(key.split(".")[-1], text)

    def writes_a_key(self, sentence: str, declaration: str, context: str) -> bool:
        """Whether the sentence (with the declaration it documents) writes one of the
        question's identifiers — its own name exactly, and a qualifier (``functools`` of
        ``functools.lru_cache``) in the sentence, or in ``context`` (the document's name and
        the class it documents): an identifier is an exact key, and a sentence about another
        ``open`` than ``codecs.open`` is about something else. True when the question names
        no identifier."""
        where = f"{declaration}\n{sentence}"
        for token in self.identifiers:
            *qualifiers, name = token.split(".")
            if not (_exact(name, where) or _declares(name, declaration)):
                continue
            if not qualifiers or _exact(token, sentence):
                return True
            context_words = context.lower()
            if any(len(q) > 1 and q.lower() in context_words for q in qualifiers):
                return True
        return not self.identifiers

    def asked_parameters(self, declaration: str) -> frozenset[str]:
        """The declaration's parameters the question names (``typed`` of "What does the typed
        argument of lru_cache do?"), of :data:`MIN_PARAMETER` characters or more."""
        return frozenset(
            name
            for name in parameters(declaration) & self.words
            if len(name) >= MIN_PARAMETER and name.lower() not in STOP_WORDS
        )

    def names_a_parameter(self, sentence: str, declaration: str, summary: bool) -> bool:
        """Whether the sentence names a parameter the question asks about, when it asks about
        one: an entry's other sentences are about other parameters. The entry's summary, its
        declaration quoted with it, names them all."""
        asked = self.asked_parameters(declaration)
        return summary or not asked or any(_exact(name, sentence) for name in asked)

    def keys_found(self, sentence: str, declaration: str, document: str) -> float:
        """Share of the question's exact keys found: each identifier's last part in the
        sentence or its declaration (its qualifiers — ``os.path`` of ``os.path.join`` — count
        half, found anywhere there or in the document's name), and each word the question uses
        that the declaration takes as a parameter, in the sentence or declaration. 1.0 when the
        question names no key (nothing to miss)."""
        where = f"{declaration}\n{sentence}"
        owed = 0.0
        got = 0.0
        for token in self.identifiers:
            *qualifiers, name = token.split(".")
            owed += 1.0
            got += 1.0 if _exact(name, where) or _declares(name, declaration) else 0.0
            for part in qualifiers:
                owed += 0.5
                # "path" of os.path is held by the name "posixpath", as writes_a_key reads it.
                held = _exact(part, where) or part.lower() in document.lower()
                got += 0.5 if held else 0.0
        for name in sorted(parameters(declaration) & self.words):
            if any(name in token.split(".") for token in self.identifiers):
                continue
            owed += 1.0
            got += 1.0 if _exact(name, sentence) or f"{name}=" in declaration else 0.5
        return got / owed if owed else 1.0

    def states_kind(self, sentence: str) -> float:
        """1.0 when the sentence states what the question's kind asks for, 0.0 when it does
        not, 0.5 for a question of no marked kind."""
        cue = _CUES.get(self.kind)
        if cue is None:
            return 0.5
        if self.kind == "definition":
            # "A generator is …": the thing asked about opens the sentence that defines it.
            opening = " ".join(sentence.split()[:_OPENING_WORDS])
            if not self.question.named(self.question.words(opening)):
                return 0.0
        if self.kind == "place" and _LOCATOR.search(sentence):
            return 1.0  # "Where is it published?": at a URL or a path
        if self.kind in ("person", "place"):
            asked = self.question.vocabulary
            names = [
                name
                for name in cue.findall(sentence)
                if term_stem(name.lower()) not in asked
                and (self.kind == "place" or not _DEMONYM.search(name))
            ]
            return 1.0 if names else 0.0
        if self.kind == "raises" and _WHICH_EXCEPTION.search(self.text):
            # "What exception…" is answered by the exception's name, not by "raises".
            return 1.0 if _EXCEPTION_NAME.search(sentence) else 0.0
        return 1.0 if cue.search(sentence) else 0.0

    def lacks_kind(self, sentence: str) -> bool:
        """Whether the sentence fails to state what the question asks for, when the question
        asks for something a sentence must state (:data:`STRICT_KINDS`: a date, a count, a
        name, a reason) and writes no code (a declaration answers a code question's count)."""
        return (
            self.kind in STRICT_KINDS and not self.identifiers and self.states_kind(sentence) < 1.0
        )

    def coverage(self, own: frozenset[str], carried: frozenset[str]) -> float:
        """Share of the question's concept factors the sentence's stems (``own``) name, those
        only the carried subject names (``carried``) at :data:`CARRIED_CREDIT`."""
        concepts = self.question.concepts
        total = math.fsum(c.factor for c in concepts)
        if total <= 0:
            return 0.0
        got = math.fsum(
            c.factor * (1.0 if c.named_by(own) else CARRIED_CREDIT if c.named_by(carried) else 0.0)
            for c in concepts
        )
        return got / total

    def home(self, passage: frozenset[str], entry: str = "") -> float:
        """How far a passage is about the question's subject, in [0, 1]. When the question
        writes code, its identifiers are the subject: the share of them that the passage's
        heading or documented declaration (``entry``, as written) names exactly — a
        module's title naming ``shutil`` and "copying" is not ``shutil.copy``'s entry, and
        "The "global" statement" is not about the ``with`` statement. Otherwise, the share
        of the question's concept factors (its kind's own words aside) that the passage's
        name, title, heading or declaration (``passage``: their stems) names: "The
        "comparisons" section" is about "How are comparisons chained?"."""
        if self.identifiers:
            # What the question writes as code is its subject ("How many values does
            # divmod() return?" is about divmod, not values).
            keys = sum(1 for key in self.identifiers if self.key_named(entry, key))
            return keys / len(self.identifiers)
        kind = self.kind_concepts()
        subject = [c for c in self.question.concepts if c.stem not in kind]
        total = math.fsum(c.factor for c in subject)
        if total <= 0:
            return 0.0
        return math.fsum(c.factor for c in subject if c.named_by(passage)) / total

    def score(
        self,
        sentence: str,
        *,
        carried: str = "",
        declaration: str = "",
        document: str = "",
        heading: str = "",
    ) -> float:
        """How well ``sentence`` answers, in [0, 1]: :data:`COVERAGE_WEIGHT` of coverage,
        :data:`IDENTIFIER_WEIGHT` of exact keys, :data:`KIND_WEIGHT` of the kind's cue.
        ``carried``: the subject the sentence inherits (its declaration or previous sentence);
        ``document``: the document's name; ``heading``: the heading of the passage it is in,
        whose words name the subject of every sentence under it as if the sentence wrote
        them."""
        own = self.question.words(sentence) | self.question.words(heading)
        context = self.question.words(f"{carried}\n{declaration}\n{document}")
        value = (
            COVERAGE_WEIGHT * self.coverage(own, context - own)
            + IDENTIFIER_WEIGHT * self.keys_found(sentence, declaration, document)
            + KIND_WEIGHT * self.states_kind(sentence)
        )
        return round(value, 6)
