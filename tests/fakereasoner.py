"""A scripted reasoner for runner tests: it implements the Reasoner seam, so nothing of ours is
mocked. Each knob reproduces one way a model misbehaves (asks for too much, never stops, hangs)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from deep_research.interface import (
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
from deep_research.models import CiberOutput, Claim, SkepticVote
from deep_research.reasoners import ExtractiveReasoner


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
                SubQuestionPlan(f"sq{n}", f"{question} (part {n})", self.queries,
                                self.max_searches)
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
