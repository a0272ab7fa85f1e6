"""The entries of trace.json ``phases``: one typed record per shape a phase writes.

Each command that records a phase builds its record and writes it with
:meth:`~deep_research.models.TraceFile.with_phase` (through
:func:`deep_research.brief.record.record_phase` when the settings it decided under are recorded
beside it); each reader asks :meth:`~deep_research.models.TraceFile.phase` for the record. The
JSON is what the writers wrote before there were records, key for key: the field order below is
the file's. The headless run's own checkpoints (plan, rounds, skipped steps) are in
:mod:`deep_research.run.checkpoint`; its ``run`` record is here, because the verdict and the
report read it too.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, JsonValue, field_serializer, field_validator

from deep_research.models import (
    Depth,
    Floor,
    PhasePart,
    PhaseRecord,
    SettingChange,
    Span,
    Verdict,
)

# --- the trace gate, contradictions, the entailment judge -----------------------------------


class TracePhase(PhaseRecord):
    """``phases.trace``: the trace gate's summary."""

    mode: str
    total_cites_checked: int
    supported: int
    pass_rate: float | None
    coverage: float | None
    violations: int


class FoundContradiction(PhasePart):
    ids: list[str]
    topic: str


class ContradictionsPhase(PhaseRecord):
    """``phases.contradictions``: what the contradiction finder added to claims.json."""

    found: list[FoundContradiction]
    settings_hash: str | None = None  # stamped by record_phase


class JudgedPair(PhasePart):
    """A verifier verdict that was admitted, with the span its quote was found at."""

    claim: str
    source: str
    verdict: str
    span: Span | None


class IgnoredVerdict(PhasePart):
    """A verifier verdict that was not admitted, and why (``item`` counts from 1)."""

    item: int
    claim: str | None
    source: str | None
    reason: str
    detail: str


class EntailPhase(PhaseRecord):
    """``phases.entail``: the judge's verdicts as given, and what was made of them."""

    raw: list[JsonValue]
    checked: list[JudgedPair]
    ignored: list[IgnoredVerdict]
    stripped: list[str]


# --- the skeptic panel, triangulation, CIBER ------------------------------------------------


class DiscardedVote(PhasePart):
    """A vote that was cast but not counted (``vote`` counts from 1)."""

    claim: str
    vote: int
    reason: str


class VotesPhase(PhaseRecord):
    """``phases.votes``: the panel's votes as cast; ``deep-research votes`` adds the outcomes
    (the headless run records the votes alone)."""

    sparse = True
    raw: dict[str, list[JsonValue]]
    outcomes: dict[str, str] | None = None
    survives: int | None = None
    killed: int | None = None
    unverified: int | None = None
    discarded: list[DiscardedVote] | None = None
    settings_hash: str | None = None  # stamped by record_phase


class WorkerOverlap(PhasePart):
    """Two sub-question workers whose fetched URLs overlap above the setting."""

    a: str
    b: str
    jaccard: float


class SourceLink(PhasePart):
    """Two sources found to be one voice, and why."""

    a: str
    b: str
    reason: str


class TriangulatePhase(PhaseRecord):
    """``phases.triangulate``: τ and what independence made of the claims."""

    triangulation_score: float
    claims: int
    stripped: list[str]
    independent_count: dict[str, int]
    coverage_gaps: list[str]
    worker_overlap: list[WorkerOverlap]
    links: list[SourceLink]
    settings_hash: str | None = None  # stamped by record_phase


class CiberPhase(PhaseRecord):
    """``phases.ciber``: a valid skip's reason, or the diagnosis applied."""

    sparse = True
    ciber_skipped: str | None = None
    raw: dict[str, JsonValue] | None = None
    agent_ciber_passed: bool | None = None
    ciber_passed: bool | None = None
    failures_per_claim: dict[str, int] | None = None
    settings_hash: str | None = None  # stamped by record_phase


# --- the re-fetch, the counters, the verdict ------------------------------------------------


RefetchOutcome = Literal["pass", "fail", "unreachable"]


class RefetchedSource(PhasePart):
    """One sampled source: fetched again, and whether its cited quotes are still there."""

    source: str
    url: str
    outcome: RefetchOutcome
    tier: str | None = None
    live: str = ""
    archive: str | None = None
    words: int | None = None
    content_hash: str | None = None
    located: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)


class RefetchPhase(PhaseRecord):
    """``phases.refetch``: the sample's outcome and each source's record."""

    cited_sources: int
    sampled: int
    passed: int
    failed: int
    excluded: int
    refetch_pass_rate: float | None
    archive_base: str
    records: list[RefetchedSource]


class CountersPhase(PhaseRecord):
    """``phases.counters``: when ``deep-research counters`` counted, and what it clamped."""

    computed_at: datetime
    clamped: list[str]

    @field_serializer("computed_at")
    def _to_the_second(self, value: datetime) -> str:
        return value.isoformat(timespec="seconds")


class VerdictPhase(PhaseRecord):
    """``phases.verdict``: the verdict, its reasons and the floors it was decided on, and the
    seal of the records it read (:mod:`deep_research.decide.seal`; absent from a verdict an
    earlier version recorded, which this one reads back as it was)."""

    sparse = True
    verdict: Verdict
    verdict_reasons: list[str]
    floors: dict[str, Floor]
    settings_hash: str
    non_default_settings: dict[str, SettingChange]
    sealed: dict[str, JsonValue] | None = None


# --- the plugin run: the MCP gate, the returns ingested -------------------------------------


class McpGatePhase(PhaseRecord):
    """``phases.mcp_gate``: the reviewed MCP server's gate result — passed, with its tools, or
    failed, with the gate's error and reason."""

    sparse = True
    ok: bool | None = None
    error: str | None = None
    reason: str | None = None
    name: str | None = None
    fingerprint: str | None = None
    tools: list[str] | None = None
    recorded: str | None = None


class IngestPhase(PhaseRecord):
    """``phases.ingest``: every agent return consumed (file name → content hash), and the
    coverage gaps the returns declared, and the fields code computes a model's draft carried and
    lost (one line per draft, :mod:`deep_research.normalize.own_fields`)."""

    files: dict[str, str]
    gaps: list[str]
    dropped: list[str] = Field(default_factory=list)


# --- the headless run -----------------------------------------------------------------------


class LedgerEntry(PhasePart):
    """One model call, as the API reported it and as the price table priced it."""

    phase: str
    role: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    web_searches: int = 0
    usd: float = 0.0
    batch: bool = False
    stop_reason: str | None = None

    @property
    def tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_write_tokens
            + self.cache_read_tokens
        )


class LedgerRecord(PhasePart):
    """``phases.run.ledger``: the entries and the failed attempts."""

    price_table: str = ""
    entries: list[LedgerEntry] = Field(default_factory=list)
    failed_attempts: int = 0
    #: What the metered parts counted besides calls (citations kept and dropped, …).
    counters: dict[str, int] = Field(default_factory=dict)


class RunRecord(PhaseRecord):
    """``phases.run``: the headless run's identity and its checkpoints."""

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
