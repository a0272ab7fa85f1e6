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
* ``rounds`` also counts a round whose fetchers searched and looked at every host their
  searches listed, though every page was one an earlier round read (:func:`search_work`).
* ``searches_exhausted``: set when no host the run's searches listed was left unread;
  ``unread_hosts``: those left (:func:`search_work`) — from the guard ledger's searches and the
  hosts they listed, handed over as :class:`RoundSearches` values, like the dispatch rounds.
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

from deep_research.brief.readers import parse_json, read_text
from deep_research.brief.record import load_trace_or_empty, open_brief, writes_brief
from deep_research.brief.trace_phases import CountersPhase, RefetchPhase
from deep_research.brief.writers import atomic_write_json, model_dump
from deep_research.errors import SchemaViolation
from deep_research.fetch.fetchlog import fetched_page_urls
from deep_research.models import (
    Counters,
    FetchLogEntry,
    SearchesExhausted,
    SourceRow,
    TraceFile,
    logged_urls,
    validate_model,
)
from deep_research.urls import host_of, source_urls

#: A plan longer than this is clamped: no run within the hard caps does more.
MAX_SUB_QUESTIONS = 12
MAX_QUERIES = 16

Query = Annotated[str, Field(min_length=1, max_length=500)]
#: A sub-question's text and scope, each: a fetcher's prompt carries both, and with every other
#: field at its bound the prompt stays under the task parser's limit (tasks.MAX_PROMPT), so a
#: long plan is refused when written rather than its fetchers going uncounted.
PlanText = Annotated[str, Field(max_length=2_000)]


class PlanSubQuestion(BaseModel):
    # extra="ignore": a count the model writes beside a list (``"query_count": 10``) is dropped
    # unread rather than refused — the list is the only thing counted.
    model_config = ConfigDict(extra="ignore", defer_build=True)

    id: Annotated[str, Field(min_length=1, max_length=40, pattern=r"^[A-Za-z0-9_.-]+$")]
    question: PlanText = ""
    scope: PlanText = ""
    queries: list[Query] = Field(default_factory=list)
    counter_queries: list[Query] = Field(default_factory=list)
    # A round's top-up queries, asked for only when the round fell short of its floor; they
    # lift no query floor (those count the lists above).
    more_queries: list[Query] = Field(default_factory=list)
    more_counter_queries: list[Query] = Field(default_factory=list)


class PlanFile(BaseModel):
    """plan.json as the orchestrator writes it in phase 1 and extends in phase 4."""

    model_config = ConfigDict(extra="ignore", defer_build=True)

    sub_questions: list[PlanSubQuestion] = Field(min_length=1)


def load_plan(path: Path) -> PlanFile:
    plan = validate_model(
        PlanFile, parse_json(read_text(path, what="plan.json"), what=str(path)), what=str(path)
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


def counted(queries: Sequence[str]) -> list[str]:
    """The queries a task carries: the first :data:`MAX_QUERIES` distinct ones, in order (the
    ones :func:`distinct` counts; a longer list is clamped as the plan's count is)."""
    kept: dict[str, str] = {}
    for query in queries:
        key = " ".join(query.split()).casefold()
        if key and key not in kept and len(kept) < MAX_QUERIES:
            kept[key] = query
    return list(kept.values())


def fetched_sources(sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]) -> list[SourceRow]:
    """The sources fetch-log.jsonl shows a 2xx page fetch for (a snippet is not a fetch)."""
    fetched = fetched_page_urls(log)
    return [s for s in sources if source_urls(s) & fetched]


def fetched_hosts(sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]) -> list[str]:
    """The publishers (hosts) the run has fetched a source from, sorted: what a top-up fetcher
    is told to leave aside."""
    return sorted(
        {host for row in fetched_sources(sources, log) if (host := host_of(row.url)) is not None}
    )


#: At most this many unread hosts are recorded (the verdict names a few; the count is enough).
MAX_UNREAD_HOSTS = 20


@dataclass(frozen=True)
class RoundSearches:
    """One research round as the plugin run's guard ledger recorded it, handed over as plain
    data: its fetcher dispatches (the round's own, retries and top-up), the searches the ledger
    holds from its first dispatch to the next round's, every host those searches listed, and
    how many of those searches have no record of what they listed (``unlisted``)."""

    round: int
    fetchers: int
    searches: int
    listed: frozenset[str]
    unlisted: int = 0


def tried_hosts(log: Sequence[FetchLogEntry]) -> set[str]:
    """Every host a page fetch was attempted on, whatever came of it: a publisher looked at."""
    pages = logged_urls(log, lambda entry: entry.purpose == "page")
    return {host for url in pages if (host := host_of(url))}


@dataclass(frozen=True)
class SearchWork:
    """What the run's searches offered against what it read: the rounds whose fetchers did
    their work, the listed hosts left unread, and the exhaustion record (when none was)."""

    worked_rounds: tuple[int, ...]
    unread: tuple[str, ...]
    exhausted: SearchesExhausted | None


def search_work(
    searched: Sequence[RoundSearches], sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]
) -> SearchWork:
    """A round worked when its fetchers searched and every host those searches listed was read
    or tried — new pages or pages an earlier round read, alike. A host listed and never looked
    at is unread: a source of the question the run did not read. When no listed host is unread,
    the searches are exhausted: the run read what the world its searches reach offered. A
    search whose listing was not recorded could have offered anything: its round neither
    counts nor exhausts the searches."""
    looked = set(fetched_hosts(sources, log)) | tried_hosts(log)
    ran = [item for item in searched if item.fetchers > 0 and item.searches > 0]
    known = [item for item in ran if item.unlisted == 0]
    worked = tuple(sorted({item.round for item in known if item.listed <= looked}))
    listed = frozenset().union(*(item.listed for item in ran))
    unread = tuple(sorted(listed - looked))
    found = None
    if ran and len(known) == len(ran) and not unread:
        found = SearchesExhausted(
            round=max(item.round for item in ran),
            fetchers=sum(item.fetchers for item in ran),
            searches=sum(item.searches for item in ran),
            publishers=len(listed),
            distinct_sources=len(sources),
        )
    return SearchWork(worked, unread[:MAX_UNREAD_HOSTS], found)


def round1_fetches(sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]) -> int:
    count = sum(1 for s in fetched_sources(sources, log) if s.round == 1)
    return min(count, len(log))  # the verdict's consistency check: never above the log


def rounds(
    sources: Sequence[SourceRow],
    fetcher_rounds: Sequence[int] | None,
    worked: Sequence[int] = (),
) -> int:
    """Highest source round, capped by the rounds of the fetcher dispatches the guard saw
    (``None``: no ledger, so a brief assembled outside a plugin run) — or a higher round whose
    fetchers searched and looked at every host their searches listed (``worked``, from
    :func:`search_work`), though every page they found was one an earlier round had read."""
    labelled = max((s.round for s in sources), default=0)
    if fetcher_rounds is None:
        return labelled
    return max(min(labelled, max(fetcher_rounds, default=0)), *worked, 0)


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
    plan: PlanFile,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    trace: TraceFile,
    started_at: datetime,
    now: datetime,
    fetcher_rounds: Sequence[int] | None = None,
    searched: Sequence[RoundSearches] = (),
) -> CountersReport:
    kept = plan.sub_questions[:MAX_SUB_QUESTIONS]
    clamped = []
    if len(plan.sub_questions) > len(kept):
        clamped.append(f"sub_questions {len(plan.sub_questions)} clamped to {MAX_SUB_QUESTIONS}")
    for sq in kept:
        for name in ("queries", "counter_queries"):
            if unique(getattr(sq, name)) > MAX_QUERIES:
                clamped.append(f"{sq.id} {name} clamped to {MAX_QUERIES}")
    work = search_work(searched, sources, log)
    counters = Counters(
        sub_questions=len(kept),
        queries_per_sub_question={sq.id: distinct(sq.queries) for sq in kept},
        round1_fetches=round1_fetches(sources, log),
        distinct_sources=len(sources),
        rounds=rounds(sources, fetcher_rounds, work.worked_rounds),
        counter_queries_per_sub_question={
            sq.id: distinct(sq.counter_queries) for sq in kept if sq.counter_queries
        },
        refetch_sample=refetch_sample(trace),
        # A start time in the future (an edited run.json) counts as no time spent.
        wall_clock_seconds=round(max(0.0, (now - started_at).total_seconds()), 3),
        searches_exhausted=work.exhausted,
        unread_hosts=list(work.unread),
    )
    return CountersReport(counters, clamped)


@writes_brief
def run_counters(
    root: Path,
    plan_path: Path | None = None,
    now: datetime | None = None,
    *,
    fetcher_rounds: Sequence[int] | None = None,
    searched: Sequence[RoundSearches] = (),
) -> CountersReport:
    """Recompute every counter and write it into trace.json; every input is read and checked
    before the first write, so bad input writes nothing. ``fetcher_rounds``: the round of each
    fetcher dispatch in the plugin run's guard ledger, None when there is no ledger;
    ``searched``: each round's searches as the ledger recorded them."""
    brief = open_brief(root)
    plan = load_plan(plan_path or brief.root / "plan.json")
    run = brief.load_run()
    sources = brief.load_sources() if brief.sources_path.exists() else []
    log = brief.load_fetch_log()
    moment = now or datetime.now(UTC)
    trace = load_trace_or_empty(brief)
    report = compute(plan, sources, log, trace, run.started_at, moment, fetcher_rounds, searched)
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
