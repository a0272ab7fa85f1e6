"""Reasoners behind the :class:`~deep_research.interface.Reasoner` seam.

:class:`ExtractiveReasoner` needs no model and no network. It is honest about what it is:

* sub-questions come from the question's key phrases and the scout survey's headings;
* findings are the document's best-scoring sentences (at least 40 characters), quoted verbatim
  — the quote is the exact substring of the retained text, the claim is that sentence;
* the skeptic panel and CIBER are *skipped with a reason*, never recorded as passed;
* the synthesis is an ordered digest of the verified claims with their ``[S#]`` markers, and it
  says that the extractive reasoner wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from deep_research.errors import InputError
from deep_research.interface import (
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
from deep_research.models import CiberOutput, Claim, SkepticVote
from deep_research.overlap import STOP_WORDS, stem

EXTRACTIVE = "extractive"
#: A located span shorter than this supports nothing alone (the trace gate's rule), so a
#: shorter sentence is never offered as a finding.
MIN_SENTENCE = 40
MAX_SENTENCE = 360
FINDINGS_PER_DOCUMENT = 2
#: A sentence must share this many distinct content stems with the sub-question to be a finding.
MIN_MATCHED_TERMS = 2
QUESTION_WORDS = frozenset(
    {"how", "what", "why", "when", "where", "which", "who", "whom", "whose", "does", "do",
     "did", "is", "are", "was", "were", "can", "could", "should", "would", "will"}
)

_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]?\s+(?=[A-Z\"'(*])")
_SPACES = re.compile(r"\s+")


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
    return frozenset(stem(term) for term in key_terms(text))


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


def score(sentence: Sentence, wanted: frozenset[str]) -> int:
    return len(stems(sentence.text) & wanted)


class ExtractiveReasoner:
    """A :class:`~deep_research.interface.Reasoner` that reads and quotes, and judges nothing."""

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
        plans = [
            SubQuestionPlan(
                "sq1", question, tuple(dict.fromkeys([focus, *phrases[:3]]))[:4], 4, "the question"
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
                plans.append(self._plan(len(plans) + 1, f"What does the corpus say about "
                                        f"{heading}?", heading, focus))
        for phrase in phrases:
            if len(plans) >= self.sub_questions:
                break
            plans.append(self._plan(len(plans) + 1, f"What is said about {phrase}?", phrase, focus))
        return Plan(tuple(plans), "key phrases of the question and headings the scout saw")

    @staticmethod
    def _plan(number: int, question: str, topic: str, focus: str) -> SubQuestionPlan:
        queries = tuple(dict.fromkeys([topic, f"{topic} {focus}"]))
        return SubQuestionPlan(f"sq{number}", question, queries, len(queries), topic)

    def follow_up(
        self, sub_question: SubQuestionPlan, found: Sequence[FindingDraft]
    ) -> list[str]:
        return []  # the planned queries are all an extractive worker runs

    def counter_queries(self, sub_question: SubQuestionPlan) -> list[str]:
        terms = " ".join(key_terms(sub_question.question)[:4])
        return [f"{terms} not except unless"] if terms else []

    def extract(self, sub_question: SubQuestionPlan, document: Retained) -> list[FindingDraft]:
        wanted = stems(sub_question.question) | stems(" ".join(sub_question.queries))
        ranked = []
        for sentence in sentences(document.text):
            if not MIN_SENTENCE <= len(sentence.claim) <= MAX_SENTENCE:
                continue
            points = score(sentence, wanted)
            if points >= MIN_MATCHED_TERMS:
                ranked.append((-points, sentence.start, sentence))
        ranked.sort(key=lambda item: (item[0], item[1]))
        return [
            FindingDraft(claim=item.claim, quote=item.text)
            for _, _, item in ranked[:FINDINGS_PER_DOCUMENT]
        ]

    def judge(self, claim: Claim, evidence: Sequence[EvidenceText]) -> list[SkepticVote] | Skipped:
        return Skipped("extractive reasoner: no model to act as a skeptic")

    def reframe(self, claims: Sequence[Claim]) -> CiberOutput | Skipped:
        return Skipped("extractive reasoner: no model to re-frame claims")

    def synthesize(self, question: str, claims: Sequence[CitedClaim]) -> str:
        lines = [
            "*Extractive digest, written by the extractive reasoner (no model): each line is a "
            "sentence quoted from the cited source and verified against the retained text; "
            "nothing here is paraphrased or inferred.*",
            "",
        ]
        if not claims:
            lines.append(f"No verified sentence in the sources answers: {question}")
        for claim in claims:
            markers = "".join(f"[{source}]" for source in claim.supporting)
            lines.append(f"- {claim.claim} {markers}")
        return "\n".join(lines)


def make_reasoner(name: str) -> Reasoner:
    """``auto`` and ``extractive`` → the extractive reasoner; ``claude`` is not available yet."""
    if name in ("auto", EXTRACTIVE):
        return ExtractiveReasoner()
    if name == "claude":
        raise InputError(
            "--reasoner claude is not available yet; use --reasoner extractive (or auto)"
        )
    raise InputError(f"unknown reasoner {name!r}; use auto, extractive or claude")
