"""What a headless run keeps in ``trace.json`` ``phases`` so it can resume: typed records.

Each completed phase's record is written atomically under the brief's lock before the phase is
marked done in the run record's ``completed`` (:class:`deep_research.brief.trace_phases.RunRecord`:
the verdict and the report read it too), so a run killed anywhere resumes from artifacts
that are whole. The records are pydantic models: what is written is validated on the way in and
read back by the same definition, never converted to and from dicts by hand.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from deep_research.brief.layout import Brief
from deep_research.brief.record import load_trace_or_empty
from deep_research.brief.writers import atomic_write_json, model_dump
from deep_research.models import PhasePart, PhaseRecord, PhaseT, TraceEntryName
from deep_research.normalize import SourceDraft
from deep_research.run.interface import SubQuestionPlan


class SubQuestionRecord(PhasePart):
    id: str
    question: str
    queries: list[str]
    max_searches: int
    scope: str = ""

    @staticmethod
    def of(plan: SubQuestionPlan) -> SubQuestionRecord:
        return SubQuestionRecord(
            id=plan.id,
            question=plan.question,
            queries=list(plan.queries),
            max_searches=plan.max_searches,
            scope=plan.scope,
        )

    def plan(self) -> SubQuestionPlan:
        return SubQuestionPlan(
            self.id, self.question, tuple(self.queries), self.max_searches, self.scope
        )


class SurveyRecord(PhasePart):
    url: str
    title: str | None = None
    headings: list[str] = Field(default_factory=list)


class PlanRecord(PhaseRecord):
    """``phases.plan``: what the scout saw and the sub-questions admitted after clamping."""

    survey: list[SurveyRecord] = Field(default_factory=list)
    asked: int = 0
    sub_questions: list[SubQuestionRecord] = Field(default_factory=list)
    preflight: dict[str, Any] = Field(default_factory=dict)
    limits: dict[str, Any] = Field(default_factory=dict)
    #: ``--depth auto``: the depth the planner chose and why (``{"depth": …, "reason": …}``).
    proportionality: dict[str, str] | None = None

    def plans(self) -> list[SubQuestionPlan]:
        return [sq.plan() for sq in self.sub_questions]


class WorkerRecord(PhasePart):
    """One worker's outcome: its searches, what it retained, and whether it finished."""

    id: str
    complete: bool = True
    reason: str = ""
    queries: list[str] = Field(default_factory=list)
    fetches: int = 0
    sources: list[SourceDraft] = Field(default_factory=list)
    #: A local document's owner as its adapter declares it (author or top-level folder).
    owners: dict[str, str] = Field(default_factory=dict)
    #: Documents its searches listed that it did not read (past its hits per search): what
    #: the verdict weighs before it reads a small world as exhausted.
    unread: list[str] = Field(default_factory=list)

    def findings(self) -> int:
        return sum(len(source.findings) for source in self.sources)


class RoundRecord(PhaseRecord):
    """``phases.cast`` (round 1) and ``phases.round2``."""

    round: int
    workers: list[WorkerRecord] = Field(default_factory=list)


class SkipRecord(PhaseRecord):
    """A phase that ran and decided not to act, and why."""

    skipped: str


def write_phase(brief: Brief, name: TraceEntryName, record: PhaseRecord) -> None:
    """Replace one ``phases`` entry of trace.json, keeping everything else as it is."""
    with brief.lock():
        trace = load_trace_or_empty(brief).with_phase(name, record)
        atomic_write_json(brief.trace_path, model_dump(trace))


def read_record(brief: Brief, name: TraceEntryName, model: type[PhaseT]) -> PhaseT | None:
    """The ``phases`` entry as ``model``, or None when the phase left none."""
    return load_trace_or_empty(brief).phase(name, model)
