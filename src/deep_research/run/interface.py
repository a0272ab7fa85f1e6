"""The two seams of a headless run, as typed interfaces: where sources come from, and who reasons.

A :class:`SearchAdapter` finds documents and *retains* them in the brief exactly as the web
fetcher does (``corpus/<hash>.txt`` + a 2xx fetch-log entry), so every gate reads local and web
sources alike. A :class:`Reasoner` produces data only — sub-questions, findings with verbatim
quotes, votes, re-framings, a digest; the runner and the gates decide what any of it is worth.

Every number a reasoner returns (``max_searches``, the length of any list) is advisory: the
governor clamps it against constants the reasoner never sees (:mod:`deep_research.run.governor`).
A step a reasoner cannot do returns :class:`Skipped` with a reason, never a pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from deep_research.brief.layout import Brief
from deep_research.models import CiberOutput, Claim, Depth, Importance, SkepticVote


@dataclass(frozen=True)
class Hit:
    """One search result: a document identity and how well it matched."""

    url: str
    title: str | None
    score: float


@dataclass(frozen=True)
class Retained:
    """A document whose text is now in the brief's corpus, with its 2xx fetch-log entry."""

    url: str
    title: str | None
    text: str
    content_hash: str
    owner: str | None
    source_type: str = "unknown"


@dataclass(frozen=True)
class SurveyDoc:
    """What the scout saw of one document: its identity, title and headings."""

    url: str
    title: str | None
    headings: tuple[str, ...]


@dataclass(frozen=True)
class SubQuestionPlan:
    """One planned worker. ``max_searches`` comes from the reasoner: advisory, clamped."""

    id: str
    question: str
    queries: tuple[str, ...]
    max_searches: int
    scope: str = ""


@dataclass(frozen=True)
class Plan:
    sub_questions: tuple[SubQuestionPlan, ...]
    rationale: str = ""
    #: The planner's call on proportionality: ``quick`` when one round answers the question,
    #: ``full`` when it needs the adversarial rounds; None when it does not say. Honoured only
    #: under ``--depth auto``, and never above the caps.
    depth: Depth | None = None
    depth_reason: str = ""


@dataclass(frozen=True)
class FindingDraft:
    """A (claim, verbatim quote) pair a reasoner read in one retained document."""

    claim: str
    quote: str
    importance: Importance = "supporting"


@dataclass(frozen=True)
class Skipped:
    """A step the reasoner did not do, and why (recorded as a skip, never as a pass)."""

    reason: str


class CallFailed(Exception):
    """A reasoner's or source's model call that produced no usable answer after its retries:
    the worker it served ends ``complete: false`` (an infrastructure failure, not evidence)."""


@dataclass(frozen=True)
class Abstained:
    """A skeptic vote that was not cast (the call failed, the answer was malformed): it neither
    refutes nor upholds — an infrastructure failure is never evidence."""

    reason: str


@dataclass(frozen=True)
class CallPrice:
    """Worst case of one reasoner call, for the governor's preflight and live accounting."""

    tokens: int = 0
    usd: float = 0.0


@dataclass(frozen=True)
class EvidenceText:
    """A claim's located evidence, as a judge reads it (text from the corpus, not a summary):
    the located quote, and the retained text around it (``before`` + quote + ``after``)."""

    source: str
    quote: str
    before: str = ""
    after: str = ""


@dataclass(frozen=True)
class CitedClaim:
    """An emitted claim and the sources it may cite, for the digest."""

    id: str
    claim: str
    sq: str | None
    supporting: tuple[str, ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Capacity:
    """What work a source can give one run, as it declares it.

    ``documents``: the most distinct documents it can return — a local corpus's size; None when
    no bound is known (the web). The floors that count sources and fetches never ask a run for
    more than this (docs/contracts.md §10.2), and the verdict says so when they are lowered.
    Time needs no declaration: no floor reads the clock, so a corpus search, which waits on no
    network, owes nothing for being fast.
    """

    documents: int | None = None


class SearchAdapter(Protocol):
    """Where sources come from."""

    @property
    def name(self) -> str: ...

    def search(self, query: str, limit: int) -> list[Hit]:
        """Best matches first; at most ``limit``. An empty list is an answer, not an error."""
        ...

    def survey(self, question: str, limit: int) -> list[SurveyDoc]:
        """The scout's look at the shape of the topic: titles and headings of the top matches."""
        ...

    def retain(self, hit: Hit, brief: Brief) -> Retained | None:
        """Keep the hit's text in ``brief`` (corpus file + fetch-log entry); None if it failed."""
        ...

    def is_web(self) -> bool:
        """True when sources live on the web (only those are re-fetched in phase 6b)."""
        ...

    def capacity(self) -> Capacity:
        """What work this source can give a run (the floors scale with it)."""
        ...


class Reasoner(Protocol):
    """Who reasons: produces data for the runner and the gates to judge."""

    @property
    def name(self) -> str: ...

    @property
    def price(self) -> CallPrice:
        """Worst-case cost of one call (zero for a reasoner that uses no model)."""
        ...

    def decompose(self, question: str, survey: Sequence[SurveyDoc]) -> Plan: ...

    def follow_up(self, sub_question: SubQuestionPlan, found: Sequence[FindingDraft]) -> list[str]:
        """More queries for a worker after its planned ones; [] means the worker is done."""
        ...

    def counter_queries(self, sub_question: SubQuestionPlan) -> list[str]:
        """Round 2 (full depth): queries that look for evidence against the first round."""
        ...

    def extract(self, sub_question: SubQuestionPlan, document: Retained) -> list[FindingDraft]: ...

    def judge(
        self, claim: Claim, evidence: Sequence[EvidenceText]
    ) -> Sequence[SkepticVote | Abstained] | Skipped: ...

    def reframe(self, claims: Sequence[Claim]) -> CiberOutput | Skipped: ...

    def synthesize(self, question: str, claims: Sequence[CitedClaim]) -> str: ...


@dataclass(frozen=True)
class Panels:
    """Every claim's votes as far as they were cast; ``stopped`` is the cap (the governor's
    ``CapReached``) that ended the panel before every claim was settled, if one did."""

    votes: Mapping[str, Sequence[SkepticVote | Abstained]]
    stopped: Exception | None = None


@dataclass(frozen=True)
class PanelItem:
    """What a skeptic reads of one claim: the claim, its located evidence, and the text of the
    sub-question it answers ("" when the plan has none for it)."""

    claim: Claim
    evidence: Sequence[EvidenceText]
    sub_question: str = ""


@runtime_checkable
class PanelBatch(Protocol):
    """A model's panel that sits every claim at once — several claims per call, rounds of
    votes, Message Batches if the run asked for them — instead of claim by claim. Shown each
    claim's sub-question, its votes also say whether the evidence answers it
    (:mod:`deep_research.decide.relevance_votes`): in its runs the word-level relevance gate
    ranks findings and drops none."""

    def judge_all(self, items: Sequence[PanelItem]) -> Panels: ...
