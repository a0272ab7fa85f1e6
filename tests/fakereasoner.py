"""A scripted reasoner for runner tests: it implements the Reasoner seam, so nothing of ours is
mocked. Each knob reproduces one way a model misbehaves (asks for too much, never stops, hangs)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from deep_research.gates.vocabulary import sentences
from deep_research.models import CiberOutput, Claim, ConsistencyFailure, SkepticVote
from deep_research.run.interface import (
    CallPrice,
    CitedClaim,
    EvidenceText,
    FindingDraft,
    Plan,
    Retained,
    Skipped,
    SubQuestionPlan,
    SurveyDoc,
)
from deep_research.run.reasoners import ExtractiveReasoner, stands_alone


@dataclass
class ScriptedReasoner:
    """Plans ``workers`` sub-questions asking for ``max_searches`` each; reads like the
    extractive reasoner; optionally never stops, hangs one worker, or sleeps per read."""

    workers: int = 3
    max_searches: int = 2
    queries: tuple[str, ...] = ("chained comparisons", "comparison operators")
    call_price: CallPrice = field(default_factory=CallPrice)
    endless: bool = False
    wedge: str | None = None  # sub-question id whose reads never return (until released)
    sleep_s: float = 0.0
    release: threading.Event = field(default_factory=threading.Event)
    calls: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "scripted"

    @property
    def price(self) -> CallPrice:
        return self.call_price

    def decompose(self, question: str, survey: Sequence[SurveyDoc]) -> Plan:
        self.calls.append("decompose")
        return Plan(
            tuple(
                # Each part serves the question (its scope), as the extractive plan's do.
                SubQuestionPlan(
                    f"sq{n}", f"{question} (part {n})", self.queries, self.max_searches, question
                )
                for n in range(1, self.workers + 1)
            )
        )

    def follow_up(self, sub_question: SubQuestionPlan, found: Sequence[FindingDraft]) -> list[str]:
        self.calls.append("follow_up")
        return ["comparisons chained again"] if self.endless else []

    def counter_queries(self, sub_question: SubQuestionPlan) -> list[str]:
        return ["comparison not"]

    def extract(self, sub_question: SubQuestionPlan, document: Retained) -> list[FindingDraft]:
        self.calls.append("extract")
        if sub_question.id == self.wedge:
            self.release.wait(timeout=30)
        if self.sleep_s:
            time.sleep(self.sleep_s)
        return ExtractiveReasoner().extract(sub_question, document)

    def judge(self, claim: Claim, evidence: Sequence[EvidenceText]) -> list[SkepticVote] | Skipped:
        return Skipped("scripted: no panel")

    def reframe(self, claims: Sequence[Claim]) -> CiberOutput | Skipped:
        return Skipped("scripted: no CIBER")

    def synthesize(self, question: str, claims: Sequence[CitedClaim]) -> str:
        return "\n".join(f"- {c.claim} " + "".join(f"[{s}]" for s in c.supporting) for c in claims)


@dataclass
class PanelReasoner:
    """A model-like reasoner for full-depth runs: it paraphrases (one claim text for quotes
    found in different documents, so independent sources can agree), votes as a skeptic panel
    and re-frames claims for CIBER — all from a script, deterministic.

    ``script``: quote → claim; a document yields a finding for each quote it contains.
    ``refute``: claim texts the panel refutes (3 of 3). ``ciber_passed``: whether CIBER finds a
    negation the first high claim does not survive (``False``), none (``True``), or cannot run
    (``None``). ``counter``: round-2 counter-queries."""

    script: dict[str, str]
    queries: tuple[str, ...]
    refute: frozenset[str] = frozenset()
    ciber_passed: bool | None = True
    counter: tuple[str, ...] = ("chained comparison not",)
    calls: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return "scripted-model"

    @property
    def price(self) -> CallPrice:
        return CallPrice(tokens=500, usd=0.001)

    def decompose(self, question: str, survey: Sequence[SurveyDoc]) -> Plan:
        self.calls.append("decompose")
        return Plan(
            (
                SubQuestionPlan(
                    "sq1",
                    f"{question} (evaluation order)",
                    self.queries,
                    4,
                    "how operands are evaluated; not operator priority",
                ),
                SubQuestionPlan(
                    "sq2",
                    f"{question} (priority)",
                    ("comparison priority",),
                    2,
                    "operator priority; not evaluation order",
                ),
            )
        )

    def follow_up(self, sub_question: SubQuestionPlan, found: Sequence[FindingDraft]) -> list[str]:
        return []

    def counter_queries(self, sub_question: SubQuestionPlan) -> list[str]:
        self.calls.append(f"counter:{sub_question.id}")
        return list(self.counter)

    def extract(self, sub_question: SubQuestionPlan, document: Retained) -> list[FindingDraft]:
        return [
            FindingDraft(claim=claim, quote=quote, importance="central")
            for quote, claim in self.script.items()
            if quote in document.text
        ]

    def judge(self, claim: Claim, evidence: Sequence[EvidenceText]) -> list[SkepticVote] | Skipped:
        self.calls.append(f"judge:{claim.id}")
        refuted = claim.claim in self.refute
        return [
            SkepticVote(
                refuted=refuted, evidence=evidence[0].quote if evidence else "none", confidence=0.9
            )
            for _ in range(3)
        ]

    def reframe(self, claims: Sequence[Claim]) -> CiberOutput | Skipped:
        self.calls.append("reframe")
        if self.ciber_passed is None:
            return Skipped("scripted: no CIBER")
        if self.ciber_passed or not claims:
            return CiberOutput(ciber_passed=True)
        # Code decides the gate from the failures' severities, not from the flag the model sets.
        failure = ConsistencyFailure(
            claim_id=claims[0].id,
            failed_reframing=f"It is not the case that {claims[0].claim.lower()}",
            failed_reframing_type="negation",
            severity="negation_supported",
        )
        return CiberOutput(ciber_passed=False, consistency_failures=[failure])

    def synthesize(self, question: str, claims: Sequence[CitedClaim]) -> str:
        return "\n".join(f"- {c.claim} " + "".join(f"[{s}]" for s in c.supporting) for c in claims)


@dataclass
class VerbatimReasoner:
    """A model-like reasoner that quotes every sentence it reads as a claim in its own words —
    the document's — so two publishers' wordings of one fact stay two findings and only the
    runner's grouping can make them one claim. It plans one sub-question (the runner tops the
    plan up to the floors), upholds every claim as a skeptic panel and passes CIBER, unless
    ``panel``/``ciber`` is False: then it declares the step beyond it, as the extractive
    reasoner does."""

    panel: bool = True
    ciber: bool = True

    @property
    def name(self) -> str:
        return "verbatim"

    @property
    def price(self) -> CallPrice:
        return CallPrice()

    def decompose(self, question: str, survey: Sequence[SurveyDoc]) -> Plan:
        return Plan((SubQuestionPlan("sq1", question, (question,), 1, question),))

    def follow_up(self, sub_question: SubQuestionPlan, found: Sequence[FindingDraft]) -> list[str]:
        return []

    def counter_queries(self, sub_question: SubQuestionPlan) -> list[str]:
        return []  # the runner tops round 2 up to its floor

    def extract(self, sub_question: SubQuestionPlan, document: Retained) -> list[FindingDraft]:
        return [
            FindingDraft(claim=s.claim, quote=s.text, importance="central")
            for s in sentences(document.text)
            if len(s.claim) >= 40 and stands_alone(s)
        ]

    def judge(self, claim: Claim, evidence: Sequence[EvidenceText]) -> list[SkepticVote] | Skipped:
        if not self.panel:
            return Skipped("verbatim: no skeptic here")
        quote = evidence[0].quote if evidence else "none"
        return [SkepticVote(refuted=False, evidence=quote, confidence=0.9) for _ in range(3)]

    def reframe(self, claims: Sequence[Claim]) -> CiberOutput | Skipped:
        return CiberOutput(ciber_passed=True) if self.ciber else Skipped("verbatim: no CIBER")

    def synthesize(self, question: str, claims: Sequence[CitedClaim]) -> str:
        return "\n".join(f"- {c.claim} " + "".join(f"[{s}]" for s in c.supporting) for c in claims)


@dataclass
class StrayLinkReasoner(PanelReasoner):
    """:class:`PanelReasoner` writing ``link`` — a URL no source has — where a model may: after
    the first line of its synthesis, and in the re-framing CIBER finds supported. ``quoted``:
    a URL a page states, which its synthesis repeats (it stays linked)."""

    link: str = "https://invented.example/none"
    quoted: str = ""

    def reframe(self, claims: Sequence[Claim]) -> CiberOutput | Skipped:
        found = super().reframe(claims)
        if isinstance(found, Skipped) or not found.consistency_failures:
            return found
        failure = found.consistency_failures[0]
        written = f"{failure.failed_reframing}, as {self.link} shows"
        return found.model_copy(
            update={
                "consistency_failures": [failure.model_copy(update={"failed_reframing": written})]
            }
        )

    def synthesize(self, question: str, claims: Sequence[CitedClaim]) -> str:
        lines = super().synthesize(question, claims).split("\n")
        lines[0] += f" The whole story is at {self.link}."
        if self.quoted:
            lines.append(f"- The reference itself is at {self.quoted} [S1]")
        return "\n".join(lines)
