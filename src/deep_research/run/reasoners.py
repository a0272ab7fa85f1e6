"""Reasoners behind the :class:`~deep_research.run.interface.Reasoner` seam.

:class:`ExtractiveReasoner` needs no model and no network. It is honest about what it is:

* sub-questions are the parts the question asks (:func:`clauses`: "When did it open, how long
  is it and who designed it?" gives three, a one-part question one), never a document's title
  or heading; each is searched first by the code it names (an identifier is an exact key:
  :meth:`~deep_research.run.localcorpus.CorpusIndex.declaring`), and its ``scope`` is the
  research question;
* findings are sentences (with the subject they carry: the declaration a docstring sentence
  documents, the heading above it, the sentence before a short or pointing-back one, a proper
  name the document writes) that pass the relevance gate (:mod:`deep_research.gates.relevance`)
  for their part of the question, write the question's identifiers and parameters, and score
  at least :data:`MIN_SCORE` (:mod:`deep_research.run.answering`: the question's concepts
  named, its identifiers found exactly, what its kind asks for stated). A document that names
  no word of a part of the question answers nothing for that part. The quote is the exact
  substring of the retained text; the claim is that passage, whitespace collapsed;
* in the library's documentation a docstring's first sentence says what its declaration line
  declares without naming it ("Least-recently-used cache decorator." under
  ``lru_cache(maxsize=128, typed=False)``): the finding is the two together;
* a sub-question nothing answers is ``not found``, naming the passage that came nearest
  (:meth:`ExtractiveReasoner.nearest_passage`);
* the skeptic panel and CIBER are *skipped with a reason*, never recorded as passed;
* the synthesis lists the verified claims best-scoring first (the report's Answer leads with
  the first), each sentence with its ``[S#]`` markers; the report says that the extractive
  reasoner wrote it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import NamedTuple

from deep_research.decide.samefact import claim_key
from deep_research.errors import InputError
from deep_research.gates.relevance import (
    POINTS_BACK,
    QUESTION_PARTS,
    Question,
    Relevance,
    aliases,
    document_name,
    key_terms,
    name_words,
    spaced_name,
    stems,
    topic_stems,
    topic_terms,
)
from deep_research.gates.vocabulary import Sentence, ends_a_sentence, sentences
from deep_research.models import CiberOutput, Claim, SkepticVote
from deep_research.run.answering import Asked, identifiers, parameters, written_words
from deep_research.run.interface import (
    CallPrice,
    CitedClaim,
    EvidenceText,
    FindingDraft,
    Plan,
    Reasoner,
    Retained,
    Skipped,
    SubQuestionPlan,
    SurveyDoc,
)
from deep_research.urls import excerpt

EXTRACTIVE = "extractive"
#: A located span shorter than this supports nothing alone (the trace gate's rule), so a
#: shorter sentence is never offered as a finding.
MIN_SENTENCE = 40
MAX_SENTENCE = 360
FINDINGS_PER_DOCUMENT = 2
#: The least score (:mod:`deep_research.run.answering`) a sentence needs to be a finding:
#: the highest precision before answered drops on the development sets' precision/answered
#: curve (benchmarks/RESULTS.md); below it a sub-question is ``not found``.
MIN_SCORE = 0.65
#: Characters of the nearest passage a not-found sub-question names.
NEAREST_CHARS = 120
#: Weight of a concept of the research question against a word only the sub-question names.
FOCUS_WEIGHT = 2.0
#: A declaration line as pydoc writes one: ``name(args)``, ``class Name(bases)``, perhaps
#: ``async``, a return annotation or pydoc's "from …"/"method of …" note.
_DECLARATION = re.compile(
    r"^(?:async\s+)?(?:class\s+)?[A-Za-z_][\w.]*(?:\s+=\s+[\w.]+)?\(.*\)"
    r"(?:\s+->\s+\S.*)?(?:\s+(?:from|method of|unbound)\s+\S.*)?$"
)
_PARAGRAPH_BREAK = re.compile(r"[ \t]*\n[ \t]*\n\s*")
_HOW_TO = re.compile(
    r"\b(?:how\s+(?:do|can|could|should|would|shall|may|might)\s+(?:i|we|you|one)|how\s+to"
    r"|what(?:'s|\s+is)\s+the\s+(?:best\s+|right\s+|easiest\s+)?way\s+to)\b",
    re.IGNORECASE,
)
#: A heading's underline or a markdown heading: a title, not a statement.
_HEADING_LINE = re.compile(r"^[ \t]*(?:([=*~^+#-])\1{2,}[ \t]*$|#{1,6}[ \t])", re.MULTILINE)
#: Openings that point back at an earlier sentence; quoted keywords ("finally") are not openings.
_DEPENDENT = re.compile(
    r"^\(?(?:"
    r"(?:in\s+)?the\s+(?:former|latter|same|above|previous|preceding)\b"
    r"|(?:this|these|that|those|they|their|its|such|here)\b"
    # "It is … to …" usually announces what follows rather than pointing back.
    r"|it\b(?!\s+(?:is|was)\b)"
    r"|(?:however|otherwise|thus|hence|therefore|also|then|instead|similarly|likewise"
    r"|furthermore|moreover|consequently|finally|again)\b"
    r"|(?:for\s+(?:example|instance)|as\s+a\s+result|see)\b"
    r"|(?:in|for|by|because\s+of|as|at|on|with|from|under|unlike|after|before)\s+"
    r"(?:this|that|these|those|such|which|them|it)\b"
    r"|(?:where|when|if|because|since|although|so|while|and|but|or)\s+"
    r"(?:this|that|these|those|it|they|such)\b"
    r")",
    re.IGNORECASE,
)


#: Openings whose subject is the document itself or its author: "This proposal", "This PEP",
#: "We", "Our", "The company", "The project".
_SELF_REFERENCE = re.compile(
    r"^\(?(?:(?:this|the\s+present)\s+(?:document|proposal|pep|rfc|specification|spec|page"
    r"|article|guide|report|paper|policy|standard|tutorial|manual)\b"
    r"|(?:we|our)\b"
    r"|the\s+(?:company|project|organi[sz]ation|firm|foundation|team)\b)",
    re.IGNORECASE,
)


def key_phrases(text: str) -> list[str]:
    """Adjacent topic-word pairs, then single topic words (most specific first); a question
    of asking words only ("How does it work?") gives its content words."""
    terms = topic_terms(text) or key_terms(text)
    pairs = [f"{a} {b}" for a, b in pairwise(terms)]
    return pairs + terms


def clauses(question: str) -> list[str]:
    """The parts a question asks, each a question of its own: "When did the bridge open, how
    long is it and who designed it?" → three; a part that points back ("how long is it")
    gets the first part's subject after it. A one-part question is itself."""
    parts = [p.strip(" ,;") for p in QUESTION_PARTS.split(question) if p.strip(" ,;")]
    if len(parts) < 2:
        return [question.strip()]
    # The first part's subject: its topic words less what it asks of them ("completed").
    subject = " ".join(t for t in topic_terms(parts[0]) if not t.endswith(("ed", "ing")))
    found = []
    for index, part in enumerate(parts):
        text = part if part.endswith("?") else f"{part}?"
        if index and POINTS_BACK.search(part) and subject:
            text = f"{text[:-1]} ({subject})?"
        found.append(text[0].upper() + text[1:])
    return found


def stands_alone(
    sentence: Sentence, *, lower_start: bool = False, unterminated: bool = False
) -> bool:
    """Whether the sentence can be a claim by itself: not a heading, not a fragment cut off
    a code block (a lower-case start, unless ``lower_start`` says it opens with a name), and
    ending as a sentence ends (unless ``unterminated`` says a paragraph's end ends it) — not
    with a colon that points at a block it does not quote."""
    claim = sentence.claim
    if _HEADING_LINE.search(sentence.text) or (claim[:1].islower() and not lower_start):
        return False
    # "… proceeds as follows:" introduces what the claim would not show.
    ended = ends_a_sentence(claim) or (unterminated and claim[-1:].isalnum())
    return ended and not claim.rstrip("\"')]*’”").endswith(":")


def depends_on_context(sentence: Sentence) -> bool:
    """Whether the sentence opens by pointing back ("This is…", "However, if…", "In this
    case…"): quoted alone it does not say what it is about. One naming its own document
    ("This proposal…", :func:`names_its_document`) points at the document, not back."""
    return _DEPENDENT.match(sentence.claim) is not None and not names_its_document(sentence)


def names_its_document(sentence: Sentence) -> bool:
    """Whether the sentence's subject is its document or whoever wrote it ("This PEP
    specifies…", "We are targeting…", "The company said…"): the document's title names it."""
    return _SELF_REFERENCE.match(sentence.claim) is not None


@dataclass(frozen=True)
class _Candidate:
    """A sentence that may be a finding: its words, the words of the name it documents (None
    outside any entry), and whether it is that entry's summary (its declaration and first
    sentence)."""

    sentence: Sentence
    words: frozenset[str]
    owner: frozenset[str] | None
    summary: bool
    #: The declaration line the sentence documents ("" outside any entry).
    declaration: str = ""
    #: The subject the sentence inherits: the heading above it, and the sentence before it
    #: when it is quoted with that one (a short sentence, or one opening with "It…").
    carried: str = ""
    #: The class whose entry the sentence is in (pydoc lists a class's methods under it).
    within: str = ""
    #: The heading of the passage the sentence is in ("" before any heading).
    heading: str = ""


@dataclass(frozen=True)
class _Analysed:
    """A document's sentences with their words, the candidates among them, and how many
    sentences hold each word."""

    every: tuple[frozenset[str], ...]
    candidates: tuple[_Candidate, ...]
    frequency: Mapping[str, int]

    @property
    def total(self) -> int:
        return len(self.every)


def entry(text: str, previous: Sentence | None, sentence: Sentence) -> Sentence:
    """``sentence``, or — when it opens the docstring right under a declaration line, as in
    the library's documentation ("lru_cache(maxsize=128, typed=False)" then "Least-recently-
    used cache decorator.") — the declaration and it together: the docstring's sentence says
    what the declared name does without naming it."""
    if previous is None or not _DECLARATION.match(previous.text):
        return sentence
    if _PARAGRAPH_BREAK.fullmatch(text[previous.end : sentence.start]) is None:
        return sentence
    return Sentence(previous.start, sentence.end, text[previous.start : sentence.end])


def declared_words(question: Question, line: str) -> frozenset[str]:
    """The words the name a declaration line declares stands for, as the question's concepts
    are matched: its parts when the question uses every one of them (``start_new_thread``
    for "How do I start a new thread?"), else the name as one word — so
    ``dataclass_transform`` is not ``dataclass``, nor ``read_history_file`` reading a file."""
    name = line.split("(", 1)[0].split()[-1].rsplit(".", 1)[-1]
    parts = stems(spaced_name(name))
    if parts and parts <= question.vocabulary:
        return question.words(name) | parts
    return stems(name)


def with_previous(
    text: str, previous: Sentence | None, sentence: Sentence, *, within_entry: bool = False
) -> Sentence | None:
    """The previous sentence and ``sentence`` quoted together, when they are one paragraph's
    neighbours — or, ``within_entry``, one docstring's, whose paragraphs all document one
    name: the subject a short or pointing-back sentence ("It is 40 m tall.", "If the
    iterable is empty, return True.") leaves out is in the one before it. None when there is
    no such neighbour."""
    if previous is None or _HEADING_LINE.search(previous.text) or not stands_alone(previous):
        return None
    gap = text[previous.end : sentence.start]
    if _PARAGRAPH_BREAK.search(gap) and not (within_entry and _PARAGRAPH_BREAK.fullmatch(gap)):
        return None
    return Sentence(previous.start, sentence.end, text[previous.start : sentence.end])


def heading_text(sentence: Sentence) -> str | None:
    """The heading a sentence is, without its marks (``## Tower`` or ``Tower`` over
    ``=====``), or None when it is no heading."""
    if not _HEADING_LINE.search(sentence.text):
        return None
    lines = [line.strip().lstrip("#").strip() for line in sentence.text.splitlines()]
    kept = [line for line in lines if line and not re.fullmatch(r"([=*~^+#-])\1{2,}", line)]
    return kept[0] if kept else None


def _analyse(text: str, question: Question) -> _Analysed:
    frequency: dict[str, int] = {}
    every = []
    candidates = []
    previous: Sentence | None = None
    # In the library's documentation every sentence under a declaration line documents the
    # name declared there, until the next one.
    owner: frozenset[str] | None = None
    declaration = ""
    heading = ""
    within = ""
    for sentence in sentences(text):
        # A declaration's parameters are names, not a list mentioned in passing.
        declares = _DECLARATION.match(sentence.text) is not None
        own = question.words(sentence.text, mentions=declares)
        every.append(own)
        for item in own:
            frequency[item] = frequency.get(item, 0) + 1
        if _DECLARATION.match(sentence.text):
            owner = declared_words(question, sentence.text)
            declaration = sentence.text
            if sentence.text.startswith("class "):
                within = sentence.text.split("(", 1)[0].split()[-1]
        if (title := heading_text(sentence)) is not None:
            heading, owner, declaration, within = title, None, "", ""
        unit = entry(text, previous, sentence)
        summary = unit is not sentence
        carried = heading
        if unit is sentence and (
            len(sentence.claim) < MIN_SENTENCE or depends_on_context(sentence)
        ):
            # Quoted alone it does not say what it is about: with the sentence before it, it
            # does — or it is no finding.
            # Inside an entry or under a heading, every paragraph is about one subject.
            joined = with_previous(
                text, previous, sentence, within_entry=bool(declaration or heading)
            )
            unit = joined if joined is not None else sentence
            carried = f"{heading}\n{previous.text}" if joined is not None and previous else ""
        # A docstring sentence may open with its entry's parameter ("prefix can also be a
        # tuple of strings to try."): a name, not a fragment cut off a code block.
        opens_with_parameter = bool(declaration) and (
            sentence.claim.split(" ", 1)[0] in parameters(declaration)
        )
        # pydoc's one-line summaries often end without a stop ("Returns the final component
        # of a pathname"): under its declaration, the line is the sentence.
        alone = (
            stands_alone(sentence)
            or (opens_with_parameter and stands_alone(sentence, lower_start=True))
            or (summary and stands_alone(sentence, unterminated=True))
        )
        if MIN_SENTENCE <= len(unit.claim) <= MAX_SENTENCE and alone:
            words = question.words(unit.text) if unit is not sentence else own
            if summary and previous is not None:
                # The declaration names what it declares and the parameters the question
                # writes ("rel_tol"); its others ("with_pip", "system_site_packages") are the
                # entry's context, mentioned in passing.
                written = parameters(previous.text) & written_words(question.text)
                name = previous.text.split("(", 1)[0]
                words = (
                    own | question.words(name, mentions=True) | question.words(" ".join(written))
                )
            candidates.append(
                _Candidate(unit, words, owner, summary, declaration, carried, within, heading)
            )
        previous = sentence
    return _Analysed(tuple(every), tuple(candidates), frequency)


@lru_cache(maxsize=64)
def _aliases(text: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    return tuple(aliases(text))


@lru_cache(maxsize=64)
def _analysed(text: str, question: str) -> _Analysed:
    # Every sub-question's worker reads for the same research question, and many retain the
    # same document: it is read once.
    return _analyse(text, Question(question))


def _weight(term: str, document: _Analysed) -> float:
    # Inverse sentence frequency inside the document: a term every sentence repeats says
    # little about which sentence answers.
    return math.log(1.0 + document.total / document.frequency.get(term, 1))


def asks_how_to(question: str) -> bool:
    """Whether the question asks how to do something ("How do I…", "How can I…", "How to…"):
    then an entry of the library documenting a means answers it; otherwise the question asks
    what something is or how it works, and an entry answers it only by naming that thing."""
    return _HOW_TO.search(question) is not None


def _kind_stems(asked: Asked, text: str) -> frozenset[str]:
    """The question's own kind word (``default``, ``return``, ``raise``…) as a stem the
    sentence names when it states what that kind asks for (``maxsize=128`` states a default):
    the relevance gate then needs no sentence that repeats the word."""
    return asked.kind_concepts() if asked.states_kind(text) >= 1.0 else frozenset()


#: What a question calls an entry's parameter ("the prefix argument").
_PARAMETER_WORDS = "argument parameter"
#: Told each sentence the relevance gate turned away that named part of the question.
Missed = Callable[[Relevance, Sentence], None]


class _Grade(NamedTuple):
    """A finding as its sub-question's answer weighs it: its passage's home, its score, who
    published it, and in which order its worker found it."""

    home: float
    score: float
    publisher: str
    order: int


class Ranked(NamedTuple):
    """A sentence that answers, with its score and how far its passage is about the subject."""

    score: float
    home: float
    sentence: Sentence


def rank(
    text: str,
    question: Question,
    topic: frozenset[str],
    title: str | None = None,
    source: str = "",
    asked: Asked | None = None,
    missed: Missed | None = None,
) -> list[Ranked]:
    """Sentences of ``text`` (the document at ``source``, titled ``title``) that answer the
    research ``question`` by its relevance gate (the sentence's words with the subject it
    carries: the name it documents, its heading, the sentence it is quoted with), each with
    its score (:mod:`deep_research.run.answering`) against ``asked`` (the sub-question; the
    question by default) and how far its passage is about the question's subject
    (:meth:`~deep_research.run.answering.Asked.home`), best first: passages about the
    subject first, then by score, then by the gate's points (the question's concepts weighed
    by how few of the document's sentences name them, higher when they also match the
    sub-question's own ``topic``), then in document order."""
    asked = asked or Asked(question.text)
    document = _analysed(text, question.text)
    if asked.identifiers and not any(asked.key_named(text, key) for key in asked.identifiers):
        return []  # the question names code this document never writes
    # Words a sentence is credited with though it does not write them (the kind it states,
    # "argument" for the parameter it names) name their concept in any document.
    vocabulary = (
        frozenset(document.frequency) | question.words(_PARAMETER_WORDS) | asked.kind_concepts()
    )
    namers = {c.stem: c.named_by(vocabulary) for c in question.concepts}
    # A name the document itself gives the concept ("often called ice caves") names it too.
    for left, right in _aliases(text):
        for stem, words in namers.items():
            if words & left:
                namers[stem] = words | right
            elif words & right:
                namers[stem] = words | left
    named_for = name_words(document_name(source)) if source else frozenset()
    # "Carrick Point" written anywhere in the document is what every sentence of it is about.
    about = " ".join(n for n in proper_names(question.text) if n in text)
    named_for |= question.words(about) if about else frozenset()
    # A qualifier of the question's identifiers that the document's name holds ("path" of
    # ``os.path.splitext`` in ``posixpath``) is named by every sentence of it.
    held = [
        part
        for key in asked.identifiers
        for part in key.split(".")[:-1]
        if len(part) > 1 and part.lower() in document_name(source).lower()
    ]
    named_for |= question.words(" ".join(held)) if held else frozenset()
    # A concept the document names nowhere (nor its name, nor as what the question's kind
    # asks for) is a part of the question it cannot answer: it weighs as the rarest, so no
    # sentence here answers a part needing it. One every sentence names tells none apart.
    exempt = asked.kind_concepts() | {c.stem for c in question.concepts if c.aspect}
    counts = {
        stem: sum(1 for own in document.every if own & words)
        or (document.total if stem in exempt or question.named(named_for) & {stem} else 0)
        for stem, words in namers.items()
    }
    weights = question.weights(counts, document.total)
    naming = frozenset().union(*namers.values())
    ranked: list[tuple[float, float, float, int, Sentence]] = []
    how_to = asks_how_to(question.text)
    asked_stems = stems(question.text)
    on_subject = bool((question.words(title or "") | named_for) & naming)
    name = document_name(source) if source else ""
    for candidate in document.candidates:
        sentence, owner = candidate.sentence, candidate.owner
        if depends_on_context(sentence):
            continue  # quoted alone it does not say what it is about: no claim
        if asked.lacks_kind(sentence.claim):
            continue  # on the subject, but not stating what is asked (no date for "when")
        written = f"{candidate.carried}\n{sentence.text}"
        if not asked.writes_a_key(written, candidate.declaration, f"{name}\n{candidate.within}"):
            continue  # the question names code this sentence is not about
        if not asked.names_a_parameter(sentence.text, candidate.declaration, candidate.summary):
            continue  # about another parameter of the entry than the one asked about
        # A method documents its class's name too: ``pop`` under ``class dict`` is dict.pop.
        carried = question.words(
            f"{candidate.carried}\n{candidate.declaration}\n{candidate.within}"
        )
        kind = _kind_stems(asked, f"{candidate.declaration}\n{sentence.text}")
        # The entry's parameter the question asks about ("the prefix argument") is an
        # argument of the entry: the sentence naming it names what the question calls it.
        if asked.asked_parameters(candidate.declaration):
            kind |= question.words(_PARAMETER_WORDS)
        own = candidate.words | kind
        # The document's name, the heading and the entry a sentence is under name its subject
        # when it does not; "This proposal" is the document titled so.
        around = named_for | carried
        if names_its_document(sentence):
            around |= question.words(title or "")
        named = [stem for stem, words in namers.items() if own & words]
        by_context = [stem for stem, words in namers.items() if around & words]
        relevance = question.decide(named, weights, by_context)
        if not relevance.answers:
            if missed is not None and relevance.matched:
                missed(relevance, sentence)
            continue
        # An entry documenting a name the question asks about is about it (``start()`` for
        # "How do I start a thread?"), more than a sentence that mentions it in passing.
        entitled = [stem for stem, words in namers.items() if owner and owner & words]
        # A sentence documenting a name the question does not ask about answers it only as
        # that entry's summary, in a module about the question, to a question asking how to
        # do something: "How do I parse JSON?" by ``loads()``, never "What is a decorator?"
        # by ``singledispatch``, though its entry calls it a decorator.
        # A name the question writes as code is asked about, whatever its words (``all()``).
        declares_key = any(
            asked.key_named(candidate.declaration.split("(", 1)[0], key)
            for key in asked.identifiers
        )
        elsewhere = (
            owner is not None and not entitled and not owner & asked_stems and not declares_key
        )
        if elsewhere and not (how_to and candidate.summary and on_subject):
            continue
        # fsum is exact whatever the set's iteration order (which varies with the hash seed),
        # so equal scores stay equal and fall back to document order.
        points = math.fsum(
            [FOCUS_WEIGHT * weights[stem] for stem in dict.fromkeys(named + by_context)]
            + [FOCUS_WEIGHT * weights[stem] for stem in entitled]
            + [_weight(t, document) for t in sorted(((own | around) & topic) - naming)]
        )
        score = asked.score(
            sentence.claim,
            carried=candidate.carried,
            declaration=candidate.declaration,
            document=name,
            heading=candidate.heading,
        )
        # The passage the sentence is in: its document's name and title, its heading, the
        # entry it documents. A sentence in the passage about the subject outranks one that
        # names the subject inside a passage about something else.
        entry = f"{candidate.heading}\n{candidate.declaration}\n{candidate.within}"
        home = asked.home(named_for | question.words(f"{title or ''}\n{entry}"), entry)
        # Of sentences scoring alike in a passage wholly about the subject, the first says
        # what the subject is: a reference section opens with it (lead before detail).
        order = float(sentence.start) if home >= 1.0 else -points
        ranked.append((-home, -score, order, sentence.start, sentence))
    ranked.sort(key=lambda item: item[:4])
    return [Ranked(-score, -home, sentence) for home, score, _, _, sentence in ranked]


def best(ranked: Sequence[Ranked], count: int) -> list[Ranked]:
    """The first ``count`` of ``ranked`` that overlap none taken before them: a sentence and
    the same sentence quoted with its neighbour are one finding — the fuller one when it
    answers at least as well ("X may only occur in a loop." and, quoted with it, "It
    terminates the nearest enclosing loop.")."""
    taken: list[Ranked] = []
    for item in ranked:
        sentence = item.sentence
        overlapping = [
            t for t in taken if t.sentence.start < sentence.end and sentence.start < t.sentence.end
        ]
        if not overlapping:
            if len(taken) < count:
                taken.append(item)
            continue
        if len(overlapping) == 1:
            (held,) = overlapping
            wider = sentence.start <= held.sentence.start and held.sentence.end <= sentence.end
            if wider and (item.home, item.score) >= (held.home, held.score):
                taken[taken.index(held)] = item
    return taken


class ExtractiveReasoner:
    """A :class:`~deep_research.run.interface.Reasoner` that reads and quotes, and judges
    nothing."""

    def __init__(self, sub_questions: int = 3, max_sub_questions: int = 5) -> None:
        self.sub_questions = sub_questions
        self.max_sub_questions = max_sub_questions
        #: Each finding's score (by its claim, case and spacing folded), for the synthesis.
        self.scores: dict[str, float] = {}
        #: Each finding's home (:meth:`Asked.home`), by its claim key, for the synthesis.
        self.homes: dict[str, float] = {}
        #: Sub-question → claim key → how what its worker found was graded.
        self.graded: dict[str, dict[str, _Grade]] = {}
        #: Sub-question → the passage nearest to answering it (score, where, claim, why not).
        self.nearest: dict[str, tuple[float, str, str, str]] = {}

    @property
    def name(self) -> str:
        return EXTRACTIVE

    @property
    def price(self) -> CallPrice:
        return CallPrice()

    def decompose(self, question: str, survey: Sequence[SurveyDoc]) -> Plan:
        """One sub-question per part the question asks (:func:`clauses`), each searched by its
        own code identifiers first (exact keys), then its words with the question's focus.
        Never a document's title or heading: what the corpus happens to hold is no part of
        what was asked."""
        if not key_phrases(question):
            raise InputError(
                f"the question {question!r} has no content words to search for; ask it in full"
            )
        focus = " ".join(key_terms(question))
        plans = []
        for number, part in enumerate(clauses(question)[: self.max_sub_questions], start=1):
            # Written as code, so the search reads them as names to look up, not words.
            keys = " ".join(_as_code(k) for k in identifiers(part) or identifiers(question))
            own = " ".join(key_terms(part))
            queries = tuple(q for q in dict.fromkeys([keys, own, focus, *key_phrases(part)]) if q)
            plans.append(SubQuestionPlan(f"sq{number}", part, queries[:4], 4, question))
        return Plan(tuple(plans), "the parts the question asks, searched by their own words")

    def follow_up(self, sub_question: SubQuestionPlan, found: Sequence[FindingDraft]) -> list[str]:
        return []  # the planned queries are all an extractive worker runs

    def counter_queries(self, sub_question: SubQuestionPlan) -> list[str]:
        terms = " ".join(key_terms(sub_question.question)[:4])
        return [f"{terms} not except unless"] if terms else []

    def extract(self, sub_question: SubQuestionPlan, document: Retained) -> list[FindingDraft]:
        # A sub-question that is one of the question's parts is judged as that part (so the
        # part asking a height is not answered by a completion year); one the floors added
        # ("What does the corpus say about…") serves the research question in its scope, and a
        # plan without a scope (written by another reasoner) is its own focus.
        scope = sub_question.scope or sub_question.question
        own = sub_question.question in clauses(scope)
        question = Question(sub_question.question if own else scope)
        # The queries name the sub-question's topic without the wording around it ("What does
        # the corpus say about…").
        topic = topic_stems(" ".join(sub_question.queries) or sub_question.question)
        asked = Asked(sub_question.question if own else scope)

        def missed(relevance: Relevance, sentence: Sentence) -> None:
            # Named as nearest only while nothing scored: a passage the gate let through and
            # the threshold did not outranks any the gate turned away.
            near = -1.0 + (1.0 - relevance.missing_share)
            self._near(sub_question.id, near, document, sentence, relevance.reason)

        ranked = rank(document.text, question, topic, document.title, document.url, asked, missed)
        answering = [item for item in ranked if item.score >= MIN_SCORE]
        below = [item for item in ranked if item.score < MIN_SCORE]
        if not answering and below:
            nearest = max(below, key=lambda item: item.score)
            self._near(sub_question.id, nearest.score, document, nearest.sentence)
        found = []
        graded = self.graded.setdefault(sub_question.id, {})
        publisher = document.owner or document.url
        for score, home, sentence in best(answering, FINDINGS_PER_DOCUMENT):
            key = claim_key(sentence.claim)
            self.scores[key] = max(score, self.scores.get(key, 0.0))
            self.homes[key] = max(home, self.homes.get(key, 0.0))
            if key not in graded or (home, score) > (graded[key].home, graded[key].score):
                graded[key] = _Grade(home, score, publisher, len(graded))
            found.append(FindingDraft(claim=sentence.claim, quote=sentence.text))
        return found

    def chosen(self, sq: str, claims: Sequence[str]) -> frozenset[str]:
        """Of the claims sub-question ``sq``'s worker found (by :func:`claim_key`), those its
        answer keeps: precision before volume. Each publisher's best — from its passage most
        about the question's subject, then by score, then found first: "What does the break
        statement do?" is answered by the break statement's own section, not by a sentence
        of the ``try`` statement's that names ``break`` — and only that: one publisher's
        second sentence answers less than its first, and what two publishers say is
        compared, agreeing or not. Called as the worker ends, before its findings are
        recorded: every claim it found was graded here."""
        graded = self.graded.get(sq, {})
        best_of: dict[str, tuple[tuple[float, float, int], str]] = {}
        for key in dict.fromkeys(claims):
            found = graded[key]
            rank_key = (found.home, found.score, -found.order)
            held = best_of.get(found.publisher)
            if held is None or rank_key > held[0]:
                best_of[found.publisher] = (rank_key, key)
        return frozenset(key for _, key in best_of.values())

    def _near(
        self, sq: str, score: float, document: Retained, sentence: Sentence, why: str = ""
    ) -> None:
        """Keep the passage nearest to answering ``sq``: one below the threshold by its score
        (0 to 1), else one the relevance gate turned away by the share of the question it
        names (-1 to 0, ``why`` saying what it leaves out)."""
        known = self.nearest.get(sq)
        if known is None or score > known[0]:
            self.nearest[sq] = (score, document.title or document.url, sentence.claim, why)

    def nearest_passage(self, sq: str) -> str | None:
        """For a sub-question nothing answered above :data:`MIN_SCORE`, the passage that came
        nearest, for the reader to judge: where it is, its opening, its score. None when no
        passage answered it even below the threshold (or this process did not read for it)."""
        known = self.nearest.get(sq)
        if known is None:
            return None
        score, where, claim, why = known
        opening = excerpt(claim, NEAREST_CHARS)
        judged = why or f"score {score:.2f}, below {MIN_SCORE}"
        return f'nearest passage, in {where}: "{opening}" ({judged})'

    def judge(self, claim: Claim, evidence: Sequence[EvidenceText]) -> list[SkepticVote] | Skipped:
        return Skipped("extractive reasoner: no model to act as a skeptic")

    def reframe(self, claims: Sequence[Claim]) -> CiberOutput | Skipped:
        return Skipped("extractive reasoner: no model to re-frame claims")

    def synthesize(self, question: str, claims: Sequence[CitedClaim]) -> str:
        """The verified claims, best-scoring first: the first line is the Answer. A claim
        this process did not score (a run resumed after its findings were made) is scored
        by its own words."""
        # Cited lines only: an uncited one (who wrote the digest, or that nothing answers)
        # would be stripped from the answer. The report says both, from the run's record.
        asked = Asked(question)

        def grade(claim: CitedClaim) -> tuple[float, float]:
            key = claim_key(claim.claim)
            return (-self.homes.get(key, 0.0), -self.scores.get(key, asked.score(claim.claim)))

        ordered = sorted(claims, key=grade)  # stable: ties keep order
        return "\n".join(f"- {_cited(claim)}" for claim in ordered)


def _as_code(identifier: str) -> str:
    """An identifier as the question may have written it, kept recognisable as code in a
    query: a bare name gets its call parentheses (``max`` → ``max()``)."""
    if "." in identifier or "_" in identifier or not identifier.isidentifier():
        return identifier
    return f"{identifier}()"


def _cited(claim: CitedClaim) -> str:
    """The claim with its sources' markers after each of its sentences: the answer is traced
    sentence by sentence, and a claim quoted with the sentence before it has two."""
    markers = "".join(f"[{source}]" for source in claim.supporting)
    parts = [s.text for s in sentences(claim.claim)] or [claim.claim]
    return " ".join(f"{part} {markers}" for part in parts)


def proper_names(question: str) -> tuple[str, ...]:
    """Runs of capitalised words the question writes past its first word ("Carrick Point"):
    a document that writes one is about it, so each of its sentences carries the name."""
    words = question.split()
    found: list[str] = []
    run: list[str] = []
    for word in [*words[1:], ""]:
        clean = word.strip("?,.;:!\"'()")
        if clean[:1].isupper() and not clean.isupper():
            run.append(clean)
            continue
        if run:
            found.append(" ".join(run))
        run = []
    return tuple(dict.fromkeys(found))


def make_reasoner(name: str) -> Reasoner:
    """``auto`` and ``extractive`` → the extractive reasoner; ``claude`` is not available yet."""
    if name in ("auto", EXTRACTIVE):
        return ExtractiveReasoner()
    if name == "claude":
        raise InputError(
            "--reasoner claude is not available yet; use --reasoner extractive (or auto)"
        )
    raise InputError(f"unknown reasoner {name!r}; use auto, extractive or claude")
