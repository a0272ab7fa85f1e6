"""Reasoners behind the :class:`~deep_research.run.interface.Reasoner` seam.

:class:`ExtractiveReasoner` needs no model and no network. It is honest about what it is:

* sub-questions come from the question's key phrases and the scout survey's headings; each
  one's ``scope`` is the research question itself, because every sub-question serves it;
* findings are sentences (at least 40 characters) that answer the *research question*: a
  sentence must hold two of its content terms, one of them among the question's most specific
  terms in that document, and not only the words a heading adds. Among those, terms rare in the
  document weigh more than terms every sentence repeats, the question's terms weigh more than
  the sub-question's, and a sentence that opens by pointing back ("This is…", "However, if…")
  ranks lower. Headings and fragments cut off a code block are never findings. The quote is
  the exact substring of the retained text; the claim is that sentence, whitespace collapsed;
* the skeptic panel and CIBER are *skipped with a reason*, never recorded as passed;
* the synthesis is an ordered digest of the verified claims with their ``[S#]`` markers; the
  report says that the extractive reasoner wrote it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from deep_research.errors import InputError
from deep_research.gates.vocabulary import (
    STOP_WORDS,
    Sentence,
    ends_a_sentence,
    sentences,
    term_stem,
)
from deep_research.models import CiberOutput, Claim, SkepticVote
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

EXTRACTIVE = "extractive"
#: A located span shorter than this supports nothing alone (the trace gate's rule), so a
#: shorter sentence is never offered as a finding.
MIN_SENTENCE = 40
MAX_SENTENCE = 360
FINDINGS_PER_DOCUMENT = 2
#: A sentence must share this many distinct content stems with the sub-question to be a finding
#: (all of them when the sub-question names fewer).
MIN_MATCHED_TERMS = 2
#: ... and this many with the research question itself (fewer when the question has fewer): a
#: sub-question serves the question, so a sentence that only matches a heading answers nothing.
MIN_FOCUS_TERMS = 2
#: Weight of a matched term of the research question against one only the sub-question names.
FOCUS_WEIGHT = 2.0
#: Score factor of a sentence that leans on the one before it ("This is…", "However, if…").
DEPENDENT_PENALTY = 0.5
QUESTION_WORDS = frozenset(
    {
        "how",
        "what",
        "why",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "does",
        "do",
        "did",
        "is",
        "are",
        "was",
        "were",
        "can",
        "could",
        "should",
        "would",
        "will",
    }
)
#: Words a question asks *with*, not *about*; matching them says nothing about the topic.
ASKING_WORDS = frozenset(
    {
        "work",
        "works",
        "working",
        "use",
        "uses",
        "used",
        "using",
        "run",
        "runs",
        "happen",
        "happens",
        "mean",
        "means",
        "meaning",
        "difference",
        "differences",
        "differ",
        "explain",
        "describe",
        "purpose",
    }
)

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")
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


def key_terms(text: str) -> list[str]:
    """Content words of ``text`` in order, without stop-words, question words or repeats."""
    seen: list[str] = []
    for word in _WORD.findall(text):
        lower = word.lower().strip("'-")
        if len(lower) < 3 or lower in STOP_WORDS or lower in QUESTION_WORDS:
            continue
        if lower not in seen:
            seen.append(lower)
    return seen


def key_phrases(text: str) -> list[str]:
    """Adjacent content-word pairs, then single content words (most specific first)."""
    terms = key_terms(text)
    pairs = [f"{a} {b}" for a, b in pairwise(terms)]
    return pairs + terms


def stems(text: str) -> frozenset[str]:
    return frozenset(term_stem(term) for term in key_terms(text))


def topic_stems(text: str) -> frozenset[str]:
    """:func:`stems` without the words a question asks with."""
    return frozenset(term_stem(t) for t in key_terms(text) if t not in ASKING_WORDS)


def stands_alone(sentence: Sentence) -> bool:
    """Whether the sentence can be a claim by itself: not a heading, not a fragment cut off
    a code block (a lower-case start), and ending as a sentence ends — not with a colon that
    points at a block it does not quote."""
    claim = sentence.claim
    if _HEADING_LINE.search(sentence.text) or claim[:1].islower():
        return False
    # "… proceeds as follows:" introduces what the claim would not show.
    return ends_a_sentence(claim) and not claim.rstrip("\"')]*’”").endswith(":")


def depends_on_context(sentence: Sentence) -> bool:
    """Whether the sentence opens by pointing back ("This is…", "However, if…", "In this
    case…"): quoted alone it does not say what it is about."""
    return _DEPENDENT.match(sentence.claim) is not None


@dataclass(frozen=True)
class _Analysed:
    """A document's candidate sentences, their stems, and how many sentences hold each stem."""

    candidates: tuple[tuple[Sentence, frozenset[str]], ...]
    frequency: Mapping[str, int]
    total: int


def _analyse(text: str) -> _Analysed:
    frequency: dict[str, int] = {}
    candidates = []
    every = sentences(text)
    for sentence in every:
        own = stems(sentence.text)
        for item in own:
            frequency[item] = frequency.get(item, 0) + 1
        if MIN_SENTENCE <= len(sentence.claim) <= MAX_SENTENCE and stands_alone(sentence):
            candidates.append((sentence, own))
    return _Analysed(tuple(candidates), frequency, len(every))


def _weight(term: str, document: _Analysed) -> float:
    # Inverse sentence frequency inside the document: a term every sentence repeats says
    # little about which sentence answers.
    return math.log(1.0 + document.total / document.frequency.get(term, 1))


def specific_terms(focus: frozenset[str], document: _Analysed) -> frozenset[str]:
    """The question's most specific terms in this document: those present in no more sentences
    than the median question term present. A sentence must hold one of them."""
    present = sorted(document.frequency[t] for t in focus if t in document.frequency)
    if not present:
        return focus
    median = present[(len(present) - 1) // 2]
    return frozenset(t for t in focus if 0 < document.frequency.get(t, 0) <= median)


def rank(text: str, focus: frozenset[str], topic: frozenset[str]) -> list[tuple[float, Sentence]]:
    """Sentences of ``text`` that answer the research question (``focus``), best first, scored
    higher when they also match the sub-question's own ``topic``."""
    document = _analyse(text)
    need_focus = min(MIN_FOCUS_TERMS, len(focus))
    need_all = min(MIN_MATCHED_TERMS, len(focus | topic))
    anchors = specific_terms(focus, document)
    ranked: list[tuple[float, int, Sentence]] = []
    for sentence, own in document.candidates:
        matched_focus = own & focus
        matched = own & (focus | topic)
        if len(matched_focus) < need_focus or len(matched) < need_all:
            continue
        if not matched_focus & anchors:
            continue
        # fsum is exact whatever the set's iteration order (which varies with the hash seed),
        # so equal scores stay equal and fall back to document order.
        points = math.fsum(
            [FOCUS_WEIGHT * _weight(t, document) for t in matched_focus]
            + [_weight(t, document) for t in matched - focus]
        )
        if depends_on_context(sentence):
            points *= DEPENDENT_PENALTY
        ranked.append((-points, sentence.start, sentence))
    ranked.sort(key=lambda item: (item[0], item[1]))
    return [(-points, sentence) for points, _, sentence in ranked]


class ExtractiveReasoner:
    """A :class:`~deep_research.run.interface.Reasoner` that reads and quotes, and judges
    nothing."""

    def __init__(self, sub_questions: int = 3, max_sub_questions: int = 5) -> None:
        self.sub_questions = sub_questions
        self.max_sub_questions = max_sub_questions

    @property
    def name(self) -> str:
        return EXTRACTIVE

    @property
    def price(self) -> CallPrice:
        return CallPrice()

    def decompose(self, question: str, survey: Sequence[SurveyDoc]) -> Plan:
        phrases = key_phrases(question)
        if not phrases:
            raise InputError(
                f"the question {question!r} has no content words to search for; ask it in full"
            )
        wanted = stems(question)
        focus = " ".join(key_terms(question))
        # Every sub-question's scope is the research question: extract() ranks by it, so a
        # heading's worker still looks for what the question asks.
        plans = [
            SubQuestionPlan(
                "sq1", question, tuple(dict.fromkeys([focus, *phrases[:3]]))[:4], 4, question
            )
        ]
        headings = [
            heading
            for doc in survey
            for heading in doc.headings
            if stems(heading) & wanted or stems(heading) & stems(doc.title or "")
        ]
        for heading in dict.fromkeys(headings):
            if len(plans) >= self.max_sub_questions:
                break
            if key_terms(heading):
                plans.append(
                    self._plan(
                        len(plans) + 1,
                        f"What does the corpus say about {heading}?",
                        heading,
                        focus,
                        question,
                    )
                )
        for phrase in phrases:
            if len(plans) >= self.sub_questions:
                break
            plans.append(
                self._plan(len(plans) + 1, f"What is said about {phrase}?", phrase, focus, question)
            )
        return Plan(tuple(plans), "key phrases of the question and headings the scout saw")

    @staticmethod
    def _plan(number: int, question: str, topic: str, focus: str, asked: str) -> SubQuestionPlan:
        queries = tuple(dict.fromkeys([topic, f"{topic} {focus}"]))
        return SubQuestionPlan(f"sq{number}", question, queries, len(queries), asked)

    def follow_up(self, sub_question: SubQuestionPlan, found: Sequence[FindingDraft]) -> list[str]:
        return []  # the planned queries are all an extractive worker runs

    def counter_queries(self, sub_question: SubQuestionPlan) -> list[str]:
        terms = " ".join(key_terms(sub_question.question)[:4])
        return [f"{terms} not except unless"] if terms else []

    def extract(self, sub_question: SubQuestionPlan, document: Retained) -> list[FindingDraft]:
        # The plan's scope holds the research question every sub-question serves; a plan
        # without one (written by another reasoner) is its own focus.
        focus = topic_stems(sub_question.scope or sub_question.question)
        # The queries name the sub-question's topic without the wording around it ("What does
        # the corpus say about…").
        topic = topic_stems(" ".join(sub_question.queries) or sub_question.question)
        return [
            FindingDraft(claim=sentence.claim, quote=sentence.text)
            for _, sentence in rank(document.text, focus or topic, topic)[:FINDINGS_PER_DOCUMENT]
        ]

    def judge(self, claim: Claim, evidence: Sequence[EvidenceText]) -> list[SkepticVote] | Skipped:
        return Skipped("extractive reasoner: no model to act as a skeptic")

    def reframe(self, claims: Sequence[Claim]) -> CiberOutput | Skipped:
        return Skipped("extractive reasoner: no model to re-frame claims")

    def synthesize(self, question: str, claims: Sequence[CitedClaim]) -> str:
        # Cited lines only: an uncited one (who wrote the digest, or that nothing answers)
        # would be stripped from the answer. The report says both, from the run's record.
        return "\n".join(
            f"- {claim.claim} {''.join(f'[{source}]' for source in claim.supporting)}"
            for claim in claims
        )


def make_reasoner(name: str) -> Reasoner:
    """``auto`` and ``extractive`` → the extractive reasoner; ``claude`` is not available yet."""
    if name in ("auto", EXTRACTIVE):
        return ExtractiveReasoner()
    if name == "claude":
        raise InputError(
            "--reasoner claude is not available yet; use --reasoner extractive (or auto)"
        )
    raise InputError(f"unknown reasoner {name!r}; use auto, extractive or claude")
