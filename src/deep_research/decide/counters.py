"""``deep-research counters``: the work counters of a plugin run, recorded in trace.json.

The headless runner fills ``trace.json`` ``counters`` as it goes; inside Claude Code the
orchestrator is a model, and a model's own tally of its work is exactly what the verdict's floors
must not rest on. So every counter code can see is recomputed here from the brief's artifacts:

* ``distinct_sources``: rows of sources.jsonl; ``rounds``: the highest ``round`` among them —
  and, in a plugin run, no higher than the highest round a fetcher was dispatched for:
  ``normalize --round 2`` alone is a label, not a second round of research. Those dispatch
  rounds come from the guard's ledger, which the command reads through the plugin's own code
  and hands over as numbers (a decision never imports a runner).
* ``round1_fetches``: round-1 sources that fetch-log.jsonl shows a 2xx page fetch for. Sources,
  not log lines: a re-fetch or a repeated fetch of one page is not more research. The verdict
  counts the later rounds' fetched sources the same way (:func:`fetched_sources`).
* ``refetch_sample``: the records of the re-fetch phase (its list, never its ``sampled`` number).
* ``searches_exhausted``: set when a round's top-up found no publisher the run had not
  fetched (:func:`exhausted`), from what the plugin's records hold of it — the guard ledger's
  searches and the hosts they listed, the fetchers' replies — handed over as :class:`TopUp`
  values, like the dispatch rounds.
* ``wall_clock_seconds``: from ``started_at`` in run.json (written by ``deep-research start``)
  to now — recorded for the reader, read by no floor: a floor met by waiting measures nothing.

Only the plan is the orchestrator's: which sub-questions, which queries, which counter-queries.
It comes in as plan.json; every number is the length of a list in it (distinct entries, clamped
to a constant), so a count field the model adds is ignored, and a padded list cannot lift a
floor past what one run could have done.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from deep_research.brief import (
    atomic_write_json,
    model_dump,
    parse_json,
    read_text,
    validate_model,
)
from deep_research.errors import SchemaViolation
from deep_research.fetch.fetchlog import succeeded
from deep_research.models import (
    Counters,
    FetchLogEntry,
    SearchesExhausted,
    SourceRow,
    TraceFile,
)
from deep_research.record import load_trace_or_empty, open_brief, writes_brief
from deep_research.trace_phases import CountersPhase, RefetchPhase
from deep_research.urls import canonical_or_none, host_of, source_urls

#: A plan longer than this is clamped: no run within the hard caps does more.
MAX_SUB_QUESTIONS = 12
MAX_QUERIES = 16

Query = Annotated[str, Field(min_length=1, max_length=500)]


class PlanSubQuestion(BaseModel):
    # extra="ignore": a count the model writes beside a list (``"query_count": 10``) is dropped
    # unread rather than refused — the list is the only thing counted.
    model_config = ConfigDict(extra="ignore", defer_build=True)

    id: Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_.-]+$")]
    question: str = ""
    scope: str = ""
    queries: list[Query] = Field(default_factory=list)
    counter_queries: list[Query] = Field(default_factory=list)
    # A round's top-up queries, asked for only when the round fell short of its floor; they
    # lift no query floor (those count the lists above).
    more_queries: list[Query] = Field(default_factory=list)
    more_counter_queries: list[Query] = Field(default_factory=list)


class Plan(BaseModel):
    """plan.json as the orchestrator writes it in phase 1 and extends in phase 4."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    sub_questions: list[PlanSubQuestion] = Field(min_length=1)


def load_plan(path: Path) -> Plan:
    plan = validate_model(
        Plan, parse_json(read_text(path, what="plan.json"), what=str(path)), what=str(path)
    )
    ids = [sq.id for sq in plan.sub_questions]
    if len(set(ids)) != len(ids):
        raise SchemaViolation("sub-question ids repeat", source=str(path))
    return plan


def unique(queries: Sequence[str]) -> int:
    # The same query typed twice (or re-spaced, re-cased) is one search, not two.
    return len({" ".join(q.split()).casefold() for q in queries if q.strip()})


def distinct(queries: Sequence[str]) -> int:
    return min(unique(queries), MAX_QUERIES)


def fetched_sources(sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]) -> list[SourceRow]:
    """The sources fetch-log.jsonl shows a 2xx page fetch for (a snippet is not a fetch)."""
    fetched = {
        c
        for entry in log
        if entry.purpose == "page" and succeeded(entry)
        for url in (entry.url, entry.final_url)
        if (c := canonical_or_none(url)) is not None
    }
    return [s for s in sources if source_urls(s) & fetched]


def fetched_hosts(sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]) -> list[str]:
    """The publishers (hosts) the run has fetched a source from, sorted: what a top-up fetcher
    is told to leave aside."""
    return sorted(
        {host for row in fetched_sources(sources, log) if (host := host_of(row.url)) is not None}
    )


@dataclass(frozen=True)
class TopUp:
    """One round's top-up as the plugin run recorded it, handed over as plain data.

    ``fetchers``: its fetcher dispatches in the guard's ledger; ``searches``: the searches the
    ledger holds between its first dispatch and the next round's; ``listed``: every host those
    searches listed; ``before``: the URLs the run's fetcher replies reported before it;
    ``brought``: the URLs its own replies reported."""

    round: int
    fetchers: int
    searches: int
    listed: frozenset[str]
    before: tuple[str, ...]
    brought: tuple[str, ...]


def _source_hosts(urls: Sequence[str], sources: Sequence[SourceRow]) -> set[str]:
    wanted = {c for url in urls if (c := canonical_or_none(url)) is not None}
    return {host for row in sources if source_urls(row) & wanted if (host := host_of(row.url))}


def exhausted(
    top_ups: Sequence[TopUp], sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]
) -> SearchesExhausted | None:
    """The first top-up whose searches returned no new publisher, or None.

    A top-up is that only when it did its work: it searched, every host its searches listed
    was one the run had already fetched or one some fetch tried (a page with nothing to quote is
    still a publisher looked at), and it brought no source from a new host. A top-up that did not
    search proves nothing; one that left a listed host untried shows a lazy fetcher, not an
    exhausted world, and no top-up of the run then counts as exhausted."""
    tried = {
        host
        for entry in log
        if entry.purpose == "page"
        for url in (entry.url, entry.final_url)
        if url and (host := host_of(url))
    }
    found = None
    for top_up in sorted(top_ups, key=lambda item: item.round):
        if top_up.fetchers < 1 or top_up.searches < 1:
            continue
        known = _source_hosts(top_up.before, sources)
        if top_up.listed - known - tried:
            return None  # any top-up that left a listed publisher untried: the run was lazy
        new = _source_hosts(top_up.brought, sources) - known
        if not new and found is None:
            found = SearchesExhausted(
                round=top_up.round,
                top_up_fetchers=top_up.fetchers,
                searches=top_up.searches,
                distinct_sources=len(sources),
            )
    return found


def round1_fetches(sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]) -> int:
    count = sum(1 for s in fetched_sources(sources, log) if s.round == 1)
    return min(count, len(log))  # the verdict's consistency check: never above the log


def rounds(sources: Sequence[SourceRow], fetcher_rounds: Sequence[int] | None) -> int:
    """Highest source round, capped by the rounds of the fetcher dispatches the guard saw
    (``None``: no ledger, so a brief assembled outside a plugin run)."""
    labelled = max((s.round for s in sources), default=0)
    if fetcher_rounds is None:
        return labelled
    return min(labelled, max(fetcher_rounds, default=0))


def refetch_sample(trace: TraceFile) -> int:
    refetch = trace.phase("refetch", RefetchPhase)
    return len(refetch.records) if refetch is not None else 0


@dataclass(frozen=True)
class CountersReport:
    counters: Counters
    clamped: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"counters": model_dump(self.counters), "clamped": self.clamped}


def compute(
    plan: Plan,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    trace: TraceFile,
    started_at: datetime,
    now: datetime,
    fetcher_rounds: Sequence[int] | None = None,
    top_ups: Sequence[TopUp] = (),
) -> CountersReport:
    kept = plan.sub_questions[:MAX_SUB_QUESTIONS]
    clamped = []
    if len(plan.sub_questions) > len(kept):
        clamped.append(f"sub_questions {len(plan.sub_questions)} clamped to {MAX_SUB_QUESTIONS}")
    for sq in kept:
        for name in ("queries", "counter_queries"):
            if unique(getattr(sq, name)) > MAX_QUERIES:
                clamped.append(f"{sq.id} {name} clamped to {MAX_QUERIES}")
    counters = Counters(
        sub_questions=len(kept),
        queries_per_sub_question={sq.id: distinct(sq.queries) for sq in kept},
        round1_fetches=round1_fetches(sources, log),
        distinct_sources=len(sources),
        rounds=rounds(sources, fetcher_rounds),
        counter_queries_per_sub_question={
            sq.id: distinct(sq.counter_queries) for sq in kept if sq.counter_queries
        },
        refetch_sample=refetch_sample(trace),
        # A start time in the future (an edited run.json) counts as no time spent.
        wall_clock_seconds=round(max(0.0, (now - started_at).total_seconds()), 3),
        searches_exhausted=exhausted(top_ups, sources, log),
    )
    return CountersReport(counters, clamped)


@writes_brief
def run_counters(
    root: Path,
    plan_path: Path | None = None,
    now: datetime | None = None,
    *,
    fetcher_rounds: Sequence[int] | None = None,
    top_ups: Sequence[TopUp] = (),
) -> CountersReport:
    """Recompute every counter and write it into trace.json; every input is read and checked
    before the first write, so bad input writes nothing. ``fetcher_rounds``: the round of each
    fetcher dispatch in the plugin run's guard ledger, None when there is no ledger."""
    brief = open_brief(root)
    plan = load_plan(plan_path or brief.root / "plan.json")
    run = brief.load_run()
    sources = brief.load_sources() if brief.sources_path.exists() else []
    log = brief.load_fetch_log()
    moment = now or datetime.now(UTC)
    trace = load_trace_or_empty(brief)
    report = compute(plan, sources, log, trace, run.started_at, moment, fetcher_rounds, top_ups)
    counted = CountersPhase(computed_at=moment, clamped=list(report.clamped))
    # The depth is the one `start` fixed: the verdict refuses a trace.json whose depth differs
    # from claims.json, and a plugin run has no other writer of trace.json's depth.
    updated = trace.with_phase("counters", counted).model_copy(
        update={
            "counters": report.counters,
            "depth": run.depth,
            "topic": trace.topic or run.slug,
        }
    )
    atomic_write_json(brief.trace_path, model_dump(updated))
    return report
