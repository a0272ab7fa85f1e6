"""What a headless run keeps in ``trace.json`` ``phases`` so it can resume: typed records.

Each completed phase's record is written atomically under the brief's lock before the phase is
marked done in :class:`RunRecord` ``completed``, so a run killed anywhere resumes from artifacts
that are whole. The records are pydantic models: what is written is validated on the way in and
read back by the same definition, never converted to and from dicts by hand.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from deep_research.brief import Brief, atomic_write_json, model_dump
from deep_research.models import Depth
from deep_research.normalize import SourceDraft
from deep_research.record import load_trace_or_empty
from deep_research.run.interface import SubQuestionPlan
from deep_research.run.ledger import LedgerRecord

RecordT = TypeVar("RecordT", bound=BaseModel)


class _Record(BaseModel):
    # Records written by an older version may carry keys this one no longer reads.
    model_config = ConfigDict(extra="ignore")


class RunRecord(_Record):
    """``phases.run``: the run's identity and its checkpoints."""

    question: str
    depth: Depth = "quick"
    adapter: str = ""
    reasoner: str = ""
    #: What ``--resume`` reopens without being told again: the corpus as given to ``--corpus``
    #: (a source's name, or the folder's absolute path) and the state folder's absolute path.
    corpus: str = ""
    state: str = ""
    completed: list[str] = Field(default_factory=list)
    incomplete: list[str] = Field(default_factory=list)
    wall_clock_seconds: float = 0.0
    spend: dict[str, float] = Field(default_factory=dict)
    #: Steps the reasoner declared it cannot do (``panel``, ``ciber``) → its reason; the verdict
    #: says once what READY would need instead of holding for it (reasoner-unable).
    unable: dict[str, str] = Field(default_factory=dict)
    #: Every metered model call, priced (absent for a run that called no model).
    ledger: LedgerRecord | None = None
    #: ``--depth auto``: the planner's first call chose the depth (recorded in ``phases.plan``).
    auto_depth: bool = False

    @field_validator("depth", mode="before")
    @classmethod
    def _known_depth(cls, value: object) -> str:
        return "full" if value == "full" else "quick"

    @field_serializer("wall_clock_seconds")
    def _rounded(self, value: float) -> float:
        return round(value, 3)


class SubQuestionRecord(_Record):
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


class SurveyRecord(_Record):
    url: str
    title: str | None = None
    headings: list[str] = Field(default_factory=list)


class PlanRecord(_Record):
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


class WorkerRecord(_Record):
    """One worker's outcome: its searches, what it retained, and whether it finished."""

    id: str
    complete: bool = True
    reason: str = ""
    queries: list[str] = Field(default_factory=list)
    fetches: int = 0
    sources: list[SourceDraft] = Field(default_factory=list)
    #: A local document's owner as its adapter declares it (author or top-level folder).
    owners: dict[str, str] = Field(default_factory=dict)

    def findings(self) -> int:
        return sum(len(source.findings) for source in self.sources)


class RoundRecord(_Record):
    """``phases.cast`` (round 1) and ``phases.round2``."""

    round: int
    workers: list[WorkerRecord] = Field(default_factory=list)


class SkipRecord(_Record):
    """A phase that ran and decided not to act, and why."""

    skipped: str


def write_phase(brief: Brief, name: str, record: BaseModel | dict[str, Any]) -> None:
    """Replace one ``phases`` entry of trace.json, keeping everything else as it is."""
    entry = model_dump(record) if isinstance(record, BaseModel) else record
    with brief.lock():
        trace = load_trace_or_empty(brief)
        phases = dict(trace.phases)
        phases[name] = entry
        atomic_write_json(brief.trace_path, model_dump(trace.model_copy(update={"phases": phases})))


def read_phase(brief: Brief, name: str) -> dict[str, Any]:
    """The raw ``phases`` entry (empty when absent)."""
    return dict(load_trace_or_empty(brief).phases.get(name, {}))


def read_record(brief: Brief, name: str, model: type[RecordT]) -> RecordT | None:
    """The ``phases`` entry as ``model``, or None when the phase left none."""
    entry = read_phase(brief, name)
    return model.model_validate(entry) if entry else None
