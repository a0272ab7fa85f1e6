"""``--reasoner claude``: the :class:`~deep_research.run.interface.Reasoner` seam on the SDK.

Each method is one role (:mod:`deep_research.run.claude.roles`) and produces data only:

* ``decompose`` — the planner's first call decides proportionality (quick or full, with its
  reason; honoured under ``--depth auto``) and the disjoint sub-questions. A failed call plans
  mechanically (the question as its own sub-question) and says so;
* ``extract`` — findings cited into the retained text
  (:mod:`deep_research.run.claude.cited_extraction`), one call per distinct document in the
  run, whichever worker retained it;
* ``follow_up`` — gap-fill, asked once per sub-question and only when its planned searches found
  nothing (the adversarial round is round 2's job);
* ``counter_queries`` — one triangulate call returns the negation queries of every sub-question;
* ``judge_all`` and ``reframe`` — the panel, several claims per call, and CIBER
  (:mod:`deep_research.run.claude.panel`);
* ``synthesize`` — the digest of the emitted claims; a failed call falls back to listing them.

A failed call is an abstention, a skip or ``CallFailed`` (the worker ends ``complete: false``),
never a verdict. Every number the model returns is clamped before it bounds anything.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from deep_research.models import CiberOutput, Claim, SkepticVote
from deep_research.run.claude.cited_extraction import extraction_request, findings_from
from deep_research.run.claude.client import CallFailed, ClaudeClient, Failed
from deep_research.run.claude.panel import reframe, run_panels
from deep_research.run.claude.roles import MAX_OUTPUT_TOKENS, instructions
from deep_research.run.governor import (
    MAX_SEARCHES_PER_WORKER,
    MAX_WORKERS,
    Budget,
    CallCosts,
)
from deep_research.run.interface import (
    Abstained,
    CallPrice,
    CitedClaim,
    EvidenceText,
    FindingDraft,
    PanelItem,
    Panels,
    Plan,
    Retained,
    Skipped,
    SubQuestionPlan,
    SurveyDoc,
)
from deep_research.settings import Settings

CLAUDE = "claude"
MAX_QUERY_CHARS = 200
MAX_TEXT_CHARS = 600
GAP_FILL_QUERIES = 2
COUNTER_QUERIES = 2
Asked = Literal["quick", "full", "auto"]


# --- what the model answers with (structured outputs) ----------------------------------------


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


class PlannedSubQuestion(_Out):
    id: str = ""
    question: str
    scope: str = ""
    queries: list[str] = Field(default_factory=list)
    max_searches: int = 1


class PlanOut(_Out):
    depth: Literal["quick", "full"]
    depth_reason: str
    sub_questions: list[PlannedSubQuestion]
    rationale: str = ""


class QueriesFor(_Out):
    sq: str
    queries: list[str]


class QueriesOut(_Out):
    queries: list[QueriesFor]


def _text(value: str, limit: int = MAX_TEXT_CHARS) -> str:
    return " ".join(value.split())[:limit]


def _queries(values: Sequence[str], limit: int) -> tuple[str, ...]:
    cleaned = [_text(q, MAX_QUERY_CHARS) for q in values]
    return tuple(dict.fromkeys(q for q in cleaned if q))[:limit]


@dataclass
class ClaudeReasoner:
    """Roles on Claude models, through one metered client."""

    client: ClaudeClient
    batch: bool = False
    settings: Settings = field(default_factory=Settings)
    asked_depth: Asked = "auto"
    question: str = ""
    plans: dict[str, SubQuestionPlan] = field(default_factory=dict)
    _read: dict[str, list[FindingDraft]] = field(default_factory=dict)
    _found: dict[str, list[str]] = field(default_factory=dict)
    _gap_asked: set[str] = field(default_factory=set)
    _counters: dict[str, list[str]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def name(self) -> str:
        return CLAUDE

    @property
    def price(self) -> CallPrice:
        return CallPrice()  # metered: every call is booked by the client itself

    # --- metering (the governor's Metered protocol) -----------------------------------------

    def bind(self, budget: Budget, settings: Settings, depth: str) -> None:
        self.client.bind(budget)
        self.settings = settings
        self.asked_depth = "quick" if depth == "quick" else "full" if depth == "full" else "auto"

    def costs(self) -> CallCosts:
        worst = self.client.models.worst
        vote = worst("skeptic", batch=self.batch)
        return CallCosts(
            plan=worst("plan"),
            follow_up=worst("triangulate"),
            extract=worst("extract"),
            vote=vote,
            ciber=worst("ciber"),
            synthesize=worst("synthesize"),
            follow_ups=1,  # gap-fill is asked once per sub-question, and only if it found nothing
        )

    # --- plan -------------------------------------------------------------------------------

    def _bounds(self) -> str:
        """Each depth's floors and the caps, named as the planner contract names them."""
        s = self.settings
        bounds = {
            "quick": {
                "min_sub_questions": s.quick_sub_questions,
                "min_queries_per_sub_question": s.quick_queries_per_sub_question,
            },
            "full": {
                "min_sub_questions": s.full_sub_questions,
                "min_queries_per_sub_question": s.full_queries_per_sub_question,
            },
            "max_sub_questions": MAX_WORKERS,
            "max_searches_per_sub_question": MAX_SEARCHES_PER_WORKER,
        }
        return json.dumps(bounds)

    def decompose(self, question: str, survey: Sequence[SurveyDoc]) -> Plan:
        self.question = question
        seen = "\n".join(f"- {doc.title or ''} <{doc.url}>" for doc in survey[:10]) or "(nothing)"
        request = {
            "max_tokens": MAX_OUTPUT_TOKENS["plan"],
            "system": instructions("plan"),
            "messages": [
                {
                    "role": "user",
                    "content": (
                        f"Question: {question}\n\nDepth: {self.asked_depth}\n"
                        f"Bounds: {self._bounds()}\n\nSurvey:\n{seen}"
                    ),
                }
            ],
        }
        out = self.client.structured("plan", PlanOut, request)
        if isinstance(out, Failed):
            plan = Plan(
                (SubQuestionPlan("sq1", question, (_text(question, MAX_QUERY_CHARS),), 1),),
                f"planned mechanically: the planner call failed ({out.reason})",
                depth=None,
                depth_reason=f"planner call failed: {out.reason}",
            )
        else:
            plans = []
            for number, sq in enumerate(out.sub_questions[:MAX_WORKERS], start=1):
                queries = _queries(sq.queries, MAX_SEARCHES_PER_WORKER) or (_text(sq.question),)
                plans.append(
                    SubQuestionPlan(
                        f"sq{number}",  # the model's ids are not trusted to be unique
                        _text(sq.question),
                        queries,
                        max(1, min(sq.max_searches, MAX_SEARCHES_PER_WORKER)),
                        _text(sq.scope),
                    )
                )
            plan = Plan(tuple(plans), _text(out.rationale), out.depth, _text(out.depth_reason))
        with self._lock:
            self.plans = {sq.id: sq for sq in plan.sub_questions}
        return plan

    # --- cast -------------------------------------------------------------------------------

    def extract(self, sub_question: SubQuestionPlan, document: Retained) -> list[FindingDraft]:
        with self._lock:
            if document.content_hash in self._read:
                return list(self._read[document.content_hash])
            known = [claim for claims in self._found.values() for claim in claims]
        request = extraction_request(
            self.question or sub_question.scope or sub_question.question,
            sub_question,
            document,
            known,
        )
        answer = self.client.call("extract", request)
        if isinstance(answer, Failed):
            raise CallFailed(f"extraction of {document.url}: {answer.reason}")
        if answer.message.stop_reason in ("refusal", "max_tokens"):
            raise CallFailed(
                f"extraction of {document.url}: stopped by {answer.message.stop_reason}"
            )
        findings, count = findings_from(answer.message.content, document.text)
        ledger = self.client.ledger
        ledger.count("citations_kept", count.kept)
        ledger.count("citations_dropped", count.dropped)
        ledger.count("paragraphs_uncited", count.uncited)
        with self._lock:
            self._read[document.content_hash] = findings
            found = self._found.setdefault(sub_question.id, [])
            found += [f.claim for f in findings if f.claim not in found]
        return findings

    def follow_up(self, sub_question: SubQuestionPlan, found: Sequence[FindingDraft]) -> list[str]:
        with self._lock:
            if found or sub_question.id in self._gap_asked:
                return []
            self._gap_asked.add(sub_question.id)
        out = self._queries_for([sub_question], f"gap-fill ≤ {GAP_FILL_QUERIES}")
        return list(_queries(out.get(sub_question.id, []), GAP_FILL_QUERIES))

    def counter_queries(self, sub_question: SubQuestionPlan) -> list[str]:
        with self._lock:
            if sub_question.id in self._counters:
                return list(self._counters[sub_question.id])
            pending = [sq for sq in self.plans.values() if sq.id not in self._counters]
        if sub_question.id not in {sq.id for sq in pending}:
            pending.append(sub_question)
        need = max(1, self.settings.full_counter_queries_per_sub_question)
        out = self._queries_for(pending, f"counter-queries {need}–{COUNTER_QUERIES}")
        with self._lock:
            for sq in pending:
                self._counters[sq.id] = list(_queries(out.get(sq.id, []), COUNTER_QUERIES))
            return list(self._counters[sub_question.id])

    def _queries_for(
        self, sub_questions: Sequence[SubQuestionPlan], ask: str
    ) -> dict[str, list[str]]:
        with self._lock:
            found = {sq.id: list(self._found.get(sq.id, []))[:8] for sq in sub_questions}
        lines = [f"Research question: {self.question}", ""]
        for sq in sub_questions:
            lines.append(f"{sq.id}: {sq.question} (scope: {sq.scope or 'the question'})")
            lines += [f"  found: {claim}" for claim in found[sq.id]] or ["  found: nothing"]
        lines += ["", f"Asked: {ask}"]
        request = {
            "max_tokens": MAX_OUTPUT_TOKENS["triangulate"],
            "system": instructions("triangulate"),
            "messages": [{"role": "user", "content": "\n".join(lines)}],
        }
        out = self.client.structured("triangulate", QueriesOut, request)
        if isinstance(out, Failed):
            raise CallFailed(
                f"queries for {', '.join(sq.id for sq in sub_questions)}: {out.reason}"
            )
        wanted = {sq.id for sq in sub_questions}
        result: dict[str, list[str]] = {}
        for item in out.queries:
            if item.sq in wanted:
                result.setdefault(item.sq, []).extend(item.queries)
        return result

    # --- verify -----------------------------------------------------------------------------

    def judge(
        self, claim: Claim, evidence: Sequence[EvidenceText]
    ) -> Sequence[SkepticVote | Abstained] | Skipped:
        panels = self.judge_all([PanelItem(claim, evidence)])
        if panels.stopped is not None:
            raise panels.stopped
        return panels.votes[claim.id]

    def judge_all(self, items: Sequence[PanelItem]) -> Panels:
        """Every claim's panel, several claims per call (as Message Batches under ``--batch``)."""
        return run_panels(self.client, items, self.settings, batch=self.batch)

    def reframe(self, claims: Sequence[Claim]) -> CiberOutput | Skipped:
        outcome = reframe(self.client, claims)
        if isinstance(outcome, Failed):
            # Not a skip (that would declare CIBER beyond this reasoner): the ciber phase did not
            # run, and the verdict holds the brief for it.
            raise CallFailed(f"the CIBER call failed: {outcome.reason}")
        return outcome

    # --- synthesize -------------------------------------------------------------------------

    def synthesize(self, question: str, claims: Sequence[CitedClaim]) -> str:
        listed = "\n".join(
            f"- {c.claim} " + "".join(f"[{s}]" for s in c.supporting) for c in claims
        )
        if not claims:
            return f"No verified claim answers: {question}"
        request = {
            "max_tokens": MAX_OUTPUT_TOKENS["synthesize"],
            "system": instructions("synthesize"),
            "messages": [
                {"role": "user", "content": f"Question: {question}\n\nVerified claims:\n{listed}"}
            ],
        }
        answer = self.client.call("synthesize", request)
        if isinstance(answer, Failed) or answer.message.stop_reason != "end_turn":
            why = answer.reason if isinstance(answer, Failed) else answer.message.stop_reason
            return (
                f"*The synthesis call failed ({why}); the verified claims, as emitted:*\n\n"
                + listed
            )
        return answer.text.strip()
