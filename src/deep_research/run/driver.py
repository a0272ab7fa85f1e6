"""The headless pipeline: ``deep-research run``, phase by phase, checkpointed, under the governor.

Phases (each a function over the brief; the library function of each gate does the deciding)::

    plan → cast → normalize → [full: round2] → claims → trace → panel → triangulate
         → refetch (web sources only) → ciber → synthesize → verdict → render

Each completed phase is recorded in ``trace.json`` (``phases.run.completed``) after its
artifacts are written atomically, so a run killed at any point (``kill -9`` included) leaves a
brief that validates, and ``--resume`` continues with the first phase not recorded as done. A
phase interrupted half-way is redone from its start: its inputs are artifacts of the phases
before it, which were complete.

Ctrl-C (SIGINT) stops the run where it is: the phase under way is not recorded as done, so the
brief is exactly what a kill at that point leaves — valid and resumable — and the CLI exits 130
with one line on stderr.

Test-only: ``DEEP_RESEARCH_TEST_PAUSE=after:<phase>`` (or ``within:<phase>``) makes the run
write ``test pause: …`` to stderr and sleep once that phase is checkpointed (or once its work is
written but before its checkpoint), so a crash test can kill the process at a known point. It
only sleeps — it changes no artifact — and is unset in normal use.

Caps come from :mod:`deep_research.run.governor`. A cap that stops the run early does not skip the
gates: the run still traces, triangulates and decides on what it gathered, so every emitted
claim has passed them, and the brief is marked partial (``coverage_gaps`` entries
``incomplete:…`` and ``phases.run.incomplete``).
"""

from __future__ import annotations

import json
import shutil
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TextIO

from deep_research.brief import Brief, _acquire, atomic_write_json, atomic_write_text, model_dump
from deep_research.decide.freshness import decide as freshness_decide
from deep_research.errors import InputError
from deep_research.gates.trace import TraceOptions, emitted_claims, run_trace
from deep_research.models import Claim, ClaimsFile, Depth, SourceRow
from deep_research.normalize import normalize_payload
from deep_research.record import load_trace_or_empty, record_phase, save
from deep_research.run.governor import (
    Budget,
    CapReached,
    Limits,
    Spend,
    admit,
    fan_out,
    preflight,
    turn_cap,
)
from deep_research.run.interface import (
    CitedClaim,
    EvidenceText,
    FindingDraft,
    Reasoner,
    SearchAdapter,
    Skipped,
    SubQuestionPlan,
)
from deep_research.settings import Settings

PHASES_FULL = (
    "plan",
    "cast",
    "normalize",
    "round2",
    "claims",
    "trace",
    "panel",
    "triangulate",
    "refetch",
    "ciber",
    "synthesize",
    "verdict",
    "render",
)
# Quick depth is the same pipeline without the adversarial second round.
PHASES_QUICK = tuple(phase for phase in PHASES_FULL if phase != "round2")
SLUG_MAX = 60
INCOMPLETE = "incomplete:"
NOT_FOUND = "not_found:"


# --- naming ---------------------------------------------------------------------------------


def slugify(topic: str) -> str:
    """ASCII-folded, lower-case, ``[a-z0-9-]``, at most 60 characters, stable per topic."""
    folded = unicodedata.normalize("NFKD", topic).encode("ascii", "ignore").decode("ascii")
    words = "".join(ch if ch.isalnum() else " " for ch in folded.lower()).split()
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > SLUG_MAX:
            break
        slug = candidate
    if not slug and words:
        slug = words[0][:SLUG_MAX]
    if not slug:
        import hashlib

        slug = "topic-" + hashlib.sha256(topic.encode("utf-8")).hexdigest()[:8]
    return slug


def brief_dir(state: Path, slug: str) -> Path:
    return state / "briefs" / slug


# --- progress -------------------------------------------------------------------------------


CLEAR_LINE = "\r\x1b[K"  # carriage return, then erase to the end of the line
TICK_S = 0.5


def live_capable(stream: TextIO) -> bool:
    """A terminal that can rewrite a line: a TTY whose TERM is not ``dumb``.

    The live line uses no colour, only ``\\r`` and erase-to-end-of-line, so ``NO_COLOR`` has
    nothing to switch off; a pipe, a file or a dumb terminal gets the plain lines.
    """
    import os

    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or non-file stream
        return False
    return tty and os.environ.get("TERM", "") != "dumb"


class Progress:
    """Progress on stderr: one plain line per event (safe for logs, pipes and CI), and on a
    terminal also a live status line under them (phase, workers, fetches, claims, spend,
    elapsed) rewritten in place.

    Thread-safe: cast workers report from their own threads and a ticker redraws the line, so
    every write and every counter change holds one lock. Use it as a context manager so the
    ticker stops and the status line is finished with a newline, even on Ctrl-C.
    """

    def __init__(
        self, stream: TextIO | None = None, quiet: bool = False, live: bool | None = None
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.live = not quiet and (live_capable(self.stream) if live is None else live)
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._phase = ""
        self._step = (0, 0)
        self._workers = (0, 0)
        self._claims: int | None = None
        self._budget: Budget | None = None
        self._drawn = False
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, phase: str, message: str) -> None:
        if self.quiet:
            return
        elapsed = time.monotonic() - self.started
        line = f"[{elapsed:6.1f}s] {phase:<11} {message}\n"
        with self._lock:
            if self.live:
                # The event becomes a permanent line above the status line, then it is redrawn.
                self.stream.write(CLEAR_LINE + line)
                self._draw()
            else:
                self.stream.write(line)
            self.stream.flush()

    # --- the live status line (no-ops unless live) ---

    def watch(self, budget: Budget) -> None:
        with self._lock:
            self._budget = budget

    def begin(self, phase: str, index: int, total: int) -> None:
        with self._lock:
            self._phase, self._step = phase, (index, total)
            self._refresh()

    def workers(self, total: int) -> None:
        with self._lock:
            self._workers = (0, total)
            self._refresh()

    def worker_done(self) -> None:
        with self._lock:
            done, total = self._workers
            self._workers = (done + 1, total)
            self._refresh()

    def claims(self, count: int) -> None:
        with self._lock:
            self._claims = count
            self._refresh()

    def status(self) -> str:
        """The status line's text (without control codes)."""
        elapsed = time.monotonic() - self.started
        index, total = self._step
        done, workers = self._workers
        spend = self._budget.as_record() if self._budget is not None else {}
        claims = "-" if self._claims is None else str(self._claims)
        return (
            f"[{elapsed:6.1f}s] {self._phase} {index}/{total} · workers {done}/{workers} · "
            f"fetches {int(spend.get('fetches', 0))} · claims {claims} · "
            f"{int(spend.get('searches', 0))} searches, {int(spend.get('model_calls', 0))} "
            f"model calls, ${spend.get('usd', 0.0):.2f}"
        )

    def _refresh(self) -> None:
        if self.live and self._phase:
            self._draw()
            self.stream.flush()

    def _draw(self) -> None:
        if not self._phase:
            return
        # Cut to the terminal's width: a wrapped line could not be rewritten with one \r.
        self.stream.write(CLEAR_LINE + self.status()[: self._columns() - 1])
        self._drawn = True

    def _columns(self) -> int:
        import os

        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        return columns if columns > 1 else 80  # a fresh pty reports 0 columns

    def _tick(self) -> None:
        # Between events the elapsed time and the budget's counters still move.
        while not self._stop.wait(TICK_S):
            with self._lock:
                self._refresh()

    def __enter__(self) -> Progress:
        if self.live:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            if self.live and self._drawn:
                # The last state stays on screen as a permanent line; the next output starts
                # on a clean line.
                self._draw()
                self.stream.write("\n")
                self.stream.flush()
                self._drawn = False
            # A worker wedged past the deadline may still report later: from now on, plain
            # lines only, so nothing is drawn under the summary.
            self.live = False


# --- run state (checkpoints) ----------------------------------------------------------------


@dataclass
class RunState:
    """What ``trace.json`` ``phases.run`` holds: the run's identity and its checkpoints."""

    question: str
    depth: Depth
    adapter: str
    reasoner: str
    completed: list[str] = field(default_factory=list)
    incomplete: list[str] = field(default_factory=list)
    wall_clock_seconds: float = 0.0
    spend: dict[str, float] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "depth": self.depth,
            "adapter": self.adapter,
            "reasoner": self.reasoner,
            "completed": list(self.completed),
            "incomplete": list(self.incomplete),
            "wall_clock_seconds": round(self.wall_clock_seconds, 3),
            "spend": dict(self.spend),
        }

    @staticmethod
    def from_record(record: dict[str, Any]) -> RunState:
        return RunState(
            question=str(record["question"]),
            depth="full" if record.get("depth") == "full" else "quick",
            adapter=str(record.get("adapter", "")),
            reasoner=str(record.get("reasoner", "")),
            completed=[str(item) for item in record.get("completed", [])],
            incomplete=[str(item) for item in record.get("incomplete", [])],
            wall_clock_seconds=float(record.get("wall_clock_seconds", 0.0)),
            spend={str(k): float(v) for k, v in dict(record.get("spend", {})).items()},
        )


def _json(value: Any) -> Any:
    # trace.json holds JSON values only; this round-trip proves it before the write.
    return json.loads(json.dumps(value, ensure_ascii=False))


def write_phase(brief: Brief, name: str, entry: dict[str, Any]) -> None:
    """Replace one ``phases`` entry of trace.json, keeping everything else as it is."""
    trace = load_trace_or_empty(brief)
    phases = dict(trace.phases)
    phases[name] = _json(entry)
    atomic_write_json(brief.trace_path, model_dump(trace.model_copy(update={"phases": phases})))


def read_phase(brief: Brief, name: str) -> dict[str, Any]:
    return dict(load_trace_or_empty(brief).phases.get(name, {}))


@dataclass
class Context:
    """Everything one run's phases share."""

    brief: Brief
    slug: str
    adapter: SearchAdapter
    reasoner: Reasoner
    settings: Settings
    limits: Limits
    budget: Budget
    state: RunState
    progress: Callable[[str, str], None]
    started: float = field(default_factory=time.monotonic)

    def checkpoint(self, phase: str) -> None:
        if phase not in self.state.completed:
            self.state.completed.append(phase)
        self.save_state()

    def save_state(self) -> None:
        self.state.spend = self.budget.as_record()
        write_phase(self.brief, "run", self.state.as_record())

    def mark_incomplete(self, reason: str) -> None:
        if reason not in self.state.incomplete:
            self.state.incomplete.append(reason)
            self.progress("governor", f"partial: {reason}")

    def live(self) -> Progress | None:
        """The status-line side of the progress; a plain callable (tests) only gets events."""
        return self.progress if isinstance(self.progress, Progress) else None


# --- plan -----------------------------------------------------------------------------------


def _plan_record(plans: Sequence[SubQuestionPlan]) -> list[dict[str, Any]]:
    return [
        {
            "id": p.id,
            "question": p.question,
            "queries": list(p.queries),
            "max_searches": p.max_searches,
            "scope": p.scope,
        }
        for p in plans
    ]


def load_plan(brief: Brief) -> list[SubQuestionPlan]:
    record = read_phase(brief, "plan")
    return [
        SubQuestionPlan(
            str(item["id"]),
            str(item["question"]),
            tuple(str(q) for q in item["queries"]),
            int(item["max_searches"]),
            str(item.get("scope", "")),
        )
        for item in record.get("sub_questions", [])
    ]


def phase_plan(ctx: Context) -> None:
    question = ctx.state.question
    ctx.budget.charge_search()
    survey = ctx.adapter.survey(question, ctx.limits.hits_per_search)
    try:
        ctx.budget.charge_call(ctx.reasoner.price)
    except CapReached as exc:
        raise InputError(
            f"the budget cannot cover one worker: planning alone hits the {exc.cap} cap "
            f"({exc.detail}); raise --max-usd or use --reasoner extractive"
        ) from None
    plan = ctx.reasoner.decompose(question, survey)
    asked = list(plan.sub_questions)
    admitted = admit(asked, ctx.limits)
    if len(asked) > len(admitted):
        ctx.progress("plan", f"reasoner asked for {len(asked)} workers; admitted {len(admitted)}")
    # Every number from the reasoner is clamped before it bounds anything.
    clamped = [
        SubQuestionPlan(
            sq.id,
            sq.question,
            sq.queries[: turn_cap(sq, ctx.limits)],
            turn_cap(sq, ctx.limits),
            sq.scope,
        )
        for sq in admitted
    ]
    check = preflight(clamped, ctx.reasoner.price, ctx.limits)
    if check.dropped:
        ctx.mark_incomplete(f"usd: worst case over budget, sub-questions {check.dropped} dropped")
    kept = check.admitted
    write_phase(
        ctx.brief,
        "plan",
        {
            "survey": [
                {"url": doc.url, "title": doc.title, "headings": list(doc.headings)}
                for doc in survey
            ],
            "asked": len(asked),
            "sub_questions": _plan_record(kept),
            "preflight": check.as_record(),
            "limits": ctx.limits.as_record(),
        },
    )
    document = ClaimsFile(
        topic=ctx.slug,
        question=question,
        generated=datetime.now(UTC).date(),
        depth=ctx.state.depth,
        sub_questions=[{"id": p.id, "question": p.question} for p in kept],
    )
    trace = load_trace_or_empty(ctx.brief)
    counters = trace.counters.model_copy(update={"sub_questions": len(kept)})
    trace = trace.model_copy(
        update={"topic": ctx.slug, "depth": ctx.state.depth, "counters": counters}
    )
    with ctx.brief.lock():
        save(ctx.brief, document, trace)
    ctx.progress("plan", f"{len(kept)} sub-question(s): " + "; ".join(p.question for p in kept))


# --- cast: one worker per sub-question ------------------------------------------------------


@dataclass
class WorkerReport:
    id: str
    complete: bool = True
    reason: str = ""
    queries: list[str] = field(default_factory=list)
    fetches: int = 0
    sources: list[dict[str, Any]] = field(default_factory=list)
    owners: dict[str, str] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "complete": self.complete,
            "reason": self.reason,
            "queries": self.queries,
            "fetches": self.fetches,
            "sources": self.sources,
            "owners": self.owners,
        }


def research(ctx: Context, sq: SubQuestionPlan, queries: Sequence[str]) -> WorkerReport:
    """One worker: search, retain, extract — at most ``turn_cap`` searches, whatever it is told."""
    report = WorkerReport(sq.id)
    cap = turn_cap(sq, ctx.limits)
    pending = list(queries)
    found: list[FindingDraft] = []
    seen: set[str] = set()
    try:
        for _ in range(cap):
            if not pending:
                ctx.budget.charge_call(ctx.reasoner.price)
                pending = list(ctx.reasoner.follow_up(sq, found))[:cap]
                if not pending:
                    break
            query = pending.pop(0)
            ctx.budget.charge_search()
            hits = ctx.adapter.search(query, ctx.limits.hits_per_search)
            report.queries.append(query)
            for hit in hits[: ctx.limits.hits_per_search]:
                if hit.url in seen:
                    continue
                seen.add(hit.url)
                ctx.budget.charge_fetch()
                retained = ctx.adapter.retain(hit, ctx.brief)
                report.fetches += 1
                if retained is None:
                    continue
                ctx.budget.charge_call(ctx.reasoner.price)
                drafts = ctx.reasoner.extract(sq, retained)
                found.extend(drafts)
                report.owners[retained.url] = retained.owner or ""
                report.sources.append(
                    {
                        "url": retained.url,
                        "title": retained.title,
                        "tier": "raw",
                        "status": 200,
                        "content_hash": retained.content_hash,
                        "source_type": retained.source_type,
                        "retrieved_at": datetime.now(UTC).replace(microsecond=0).isoformat(),
                        "via": {"query": query, "adapter": ctx.adapter.name},
                        "findings": [
                            {"claim": d.claim, "quote": d.quote, "importance": d.importance}
                            for d in drafts
                        ],
                    }
                )
        else:
            if not pending:
                # The turns ran out: one more question tells "done" from "cut short".
                ctx.budget.charge_call(ctx.reasoner.price)
                pending = list(ctx.reasoner.follow_up(sq, found))
            if pending:
                report.complete = False
                report.reason = f"turn cap: {cap} searches used and the worker wanted more"
    except CapReached as exc:
        report.complete = False
        report.reason = f"cap {exc.cap}: {exc.detail}"
    return report


def _cast(
    ctx: Context,
    plans: Sequence[SubQuestionPlan],
    round_: int,
    queries: Callable[[SubQuestionPlan], Sequence[str]],
) -> list[WorkerReport]:
    ctx.progress("cast", f"round {round_}: {len(plans)} worker(s) in parallel")
    live = ctx.live()
    if live is not None:
        live.workers(len(plans))

    def work(sq: SubQuestionPlan) -> WorkerReport:
        try:
            return research(ctx, sq, queries(sq))
        finally:
            # Counted as it ends, failed or not; a wedged worker never counts as done.
            if live is not None:
                live.worker_done()

    outcomes = fan_out(plans, work, ctx.budget, ctx.limits.workers)
    reports = []
    for sq, outcome in zip(plans, outcomes, strict=True):
        report = outcome.value or WorkerReport(sq.id, complete=False, reason=outcome.error or "")
        if not report.complete:
            ctx.mark_incomplete(f"{sq.id} complete: false ({report.reason})")
        reports.append(report)
        ctx.progress(
            "cast",
            f"{sq.id}: {len(report.queries)} search(es), {report.fetches} "
            f"document(s), {sum(len(s['findings']) for s in report.sources)} "
            f"finding(s){'' if report.complete else ' — incomplete'}",
        )
    return reports


def phase_cast(ctx: Context) -> None:
    plans = load_plan(ctx.brief)
    reports = _cast(ctx, plans, 1, lambda sq: sq.queries)
    write_phase(ctx.brief, "cast", {"round": 1, "workers": [r.as_record() for r in reports]})


def phase_round2(ctx: Context) -> None:
    """Full depth: counter-queries per sub-question (and gap-fill) as a second round."""
    plans = load_plan(ctx.brief)
    if ctx.limits.rounds < 2:
        ctx.mark_incomplete("rounds: the round cap stopped the run before round 2")
        write_phase(ctx.brief, "round2", {"round": 2, "workers": []})
        return
    counters: dict[str, list[str]] = {}
    for sq in plans:
        ctx.budget.charge_call(ctx.reasoner.price)
        counters[sq.id] = list(ctx.reasoner.counter_queries(sq))[: turn_cap(sq, ctx.limits)]
    reports = _cast(ctx, plans, 2, lambda sq: counters[sq.id])
    write_phase(ctx.brief, "round2", {"round": 2, "workers": [r.as_record() for r in reports]})
    rows = _normalize_reports(ctx, brief_rows(ctx.brief), reports, 2)
    _write_sources(ctx.brief, rows)
    trace = load_trace_or_empty(ctx.brief)
    counter_map = {r.id: len(r.queries) for r in reports}
    counters_model = trace.counters.model_copy(
        update={
            "rounds": 2,
            "counter_queries_per_sub_question": counter_map,
            "distinct_sources": len(rows),
        }
    )
    atomic_write_json(
        ctx.brief.trace_path, model_dump(trace.model_copy(update={"counters": counters_model}))
    )


# --- normalize ------------------------------------------------------------------------------


def brief_rows(brief: Brief) -> list[SourceRow]:
    return brief.load_sources() if brief.sources_path.exists() else []


def _worker_reports(brief: Brief, phase: str) -> list[WorkerReport]:
    record = read_phase(brief, phase)
    return [
        WorkerReport(
            id=str(item["id"]),
            complete=bool(item["complete"]),
            reason=str(item["reason"]),
            queries=[str(q) for q in item["queries"]],
            fetches=int(item["fetches"]),
            sources=list(item["sources"]),
            owners=dict(item["owners"]),
        )
        for item in record.get("workers", [])
    ]


def _normalize_reports(
    ctx: Context, rows: list[SourceRow], reports: Sequence[WorkerReport], round_: int
) -> list[SourceRow]:
    owners: dict[str, str] = {}
    for report in reports:
        owners |= report.owners
        if not report.sources:
            continue
        result = normalize_payload(
            json.dumps({"sources": report.sources}, ensure_ascii=False),
            existing=rows,
            sub_question=report.id,
            round=round_,
        )
        for rejection in result.rejections:
            ctx.progress("normalize", f"rejected: {rejection.describe()}")
        rows = result.rows
    # The normalizer computes owner from the web domain; a local document's owner is declared
    # by its adapter (author or top-level folder), which is what independence must compare.
    return [
        row.model_copy(update={"owner": owners[row.url]}) if owners.get(row.url) else row
        for row in rows
    ]


def _write_sources(brief: Brief, rows: Sequence[SourceRow]) -> None:
    atomic_write_text(
        brief.sources_path,
        "".join(json.dumps(model_dump(row), ensure_ascii=False) + "\n" for row in rows),
    )


def phase_normalize(ctx: Context) -> None:
    reports = _worker_reports(ctx.brief, "cast")
    rows = _normalize_reports(ctx, [], reports, 1)
    # No document at all is an answer too: the brief goes on to say "not found" per
    # sub-question (the claims phase records it), with every gate run on the empty set.
    _write_sources(ctx.brief, rows)
    trace = load_trace_or_empty(ctx.brief)
    counters = trace.counters.model_copy(
        update={
            "queries_per_sub_question": {r.id: len(r.queries) for r in reports},
            "round1_fetches": min(sum(r.fetches for r in reports), len(ctx.brief.load_fetch_log())),
            "distinct_sources": len(rows),
            "rounds": 1,
        }
    )
    atomic_write_json(
        ctx.brief.trace_path, model_dump(trace.model_copy(update={"counters": counters}))
    )
    ctx.progress("normalize", f"{len(rows)} source(s) in sources.jsonl")


# --- claims ---------------------------------------------------------------------------------


def _claim_key(text: str) -> str:
    return " ".join(text.casefold().split())


def finders_of(reports: Sequence[WorkerReport]) -> dict[str, list[str]]:
    """Claim key → every sub-question whose worker found it, in plan order."""
    found: dict[str, list[str]] = {}
    for report in reports:
        for source in report.sources:
            for finding in source["findings"]:
                finders = found.setdefault(_claim_key(str(finding["claim"])), [])
                if report.id not in finders:
                    finders.append(report.id)
    return found


def build_claims(
    rows: Sequence[SourceRow], limit: int, finders: dict[str, list[str]] | None = None
) -> list[Claim]:
    """One claim per distinct finding claim; every source offering it supports it.

    A claim found by several sub-questions goes to the one holding the fewest claims so far
    (plan order breaks ties): each sub-question that found something reports something, rather
    than the first one taking every shared finding and the rest reading as gaps.
    """
    grouped: dict[str, dict[str, Any]] = {}
    for row in rows:
        for finding in row.findings:
            key = _claim_key(finding.claim)
            entry = grouped.setdefault(
                key,
                {
                    "claim": finding.claim,
                    "finders": list((finders or {}).get(key) or row.sub_questions[:1]),
                    "supporting": [],
                    "findings": [],
                    "importance": finding.importance,
                },
            )
            if row.id not in entry["supporting"]:
                entry["supporting"].append(row.id)
            entry["findings"].append(finding.id)
    ordered = sorted(grouped.values(), key=lambda e: -len(e["supporting"]))[:limit]
    held: dict[str, int] = {}
    claims = []
    for number, e in enumerate(ordered, start=1):
        # min keeps the first of equals: plan order breaks ties.
        sq = min(e["finders"], key=lambda s: held.get(s, 0), default=None)
        if sq is not None:
            held[sq] = held.get(sq, 0) + 1
        claims.append(
            Claim(
                id=f"C{number}",
                claim=e["claim"],
                sq=sq,
                supporting=e["supporting"],
                findings=e["findings"],
                importance=e["importance"],
            )
        )
    return claims


def _gaps(ctx: Context, reports: Sequence[WorkerReport]) -> list[str]:
    gaps = []
    for report in reports:
        if not any(source["findings"] for source in report.sources):
            gaps.append(
                f"{NOT_FOUND}{report.id}: no passage in {ctx.adapter.name} answers it "
                f"after {len(report.queries)} search(es)"
            )
    gaps += [f"{INCOMPLETE}{reason}" for reason in ctx.state.incomplete]
    return gaps


def phase_claims(ctx: Context) -> None:
    rows = brief_rows(ctx.brief)
    reports = _worker_reports(ctx.brief, "cast") + _worker_reports(ctx.brief, "round2")
    claims = build_claims(rows, ctx.limits.claims, finders_of(reports))
    document = ctx.brief.load_claims()
    gaps = _gaps(ctx, _worker_reports(ctx.brief, "cast"))
    updated = document.model_copy(update={"claims": claims, "coverage_gaps": gaps})
    with ctx.brief.lock():
        atomic_write_text(
            ctx.brief.claims_path, updated.model_dump_json(by_alias=True, indent=2) + "\n"
        )
    ctx.progress("claims", f"{len(claims)} candidate claim(s)")
    live = ctx.live()
    if live is not None:
        live.claims(len(claims))


# --- the gates (library functions) ----------------------------------------------------------


def phase_trace(ctx: Context) -> None:
    report = run_trace(TraceOptions(brief=ctx.brief.root))
    summary = report.as_dict()
    ctx.progress(
        "trace",
        f"{summary['supported']}/{summary['total_cites_checked']} citation(s) "
        f"traced to retained text; {len(report.violations)} violation(s)",
    )


def phase_panel(ctx: Context) -> None:
    from deep_research.decide.votes import apply_votes

    document = ctx.brief.load_claims()
    candidates = [c for c in document.claims if c.support_class == "Supported"]
    raw: dict[str, list[object]] = {}
    skipped: str | None = None
    try:
        for claim in candidates:
            evidence = [
                EvidenceText(e.source, e.quote)
                for e in claim.evidence
                if e.checks.outcome == "supported"
            ]
            ctx.budget.charge_call(ctx.reasoner.price)
            votes = ctx.reasoner.judge(claim, evidence)
            if isinstance(votes, Skipped):
                skipped = votes.reason
                break
            raw[claim.id] = [v.model_dump(by_alias=True) for v in votes[:3]]
    except CapReached as exc:
        ctx.mark_incomplete(f"panel stopped by cap {exc.cap}")
    trace = load_trace_or_empty(ctx.brief)
    if skipped is not None or not raw:
        reason = skipped or "no claim reached the panel"
        write_phase(ctx.brief, "panel", {"skipped": reason})
        ctx.progress("panel", f"skipped: {reason}")
        return
    updated = apply_votes(document, raw, ctx.settings)
    with ctx.brief.lock():
        save(ctx.brief, updated, record_phase(trace, "votes", {"raw": raw}, ctx.settings))
    ctx.progress("panel", f"{len(raw)} claim(s) judged")


def phase_triangulate(ctx: Context) -> None:
    from deep_research.decide.triangulate import run_triangulate

    report = run_triangulate(ctx.brief.root, ctx.settings)
    ctx.progress(
        "triangulate",
        f"τ {report.tau}; {report.claims} claim(s) kept, {len(report.stripped)} stripped",
    )


def phase_refetch(ctx: Context) -> None:
    if not ctx.adapter.is_web():
        write_phase(
            ctx.brief, "run.refetch", {"skipped": "local corpus: no web source to re-fetch"}
        )
        return
    from deep_research.fetch.refetch import run_refetch

    report = run_refetch(ctx.brief.root)
    ctx.progress("refetch", f"pass rate {report.pass_rate}")


def phase_ciber(ctx: Context) -> None:
    from deep_research.decide.ciber import run_ciber_apply, skip_problem

    document = ctx.brief.load_claims()
    if "ciber" in load_trace_or_empty(ctx.brief).phases or document.ciber_passed is not None:
        # A run killed after CIBER was applied but before this phase was checkpointed: the gate
        # takes one diagnosis per brief and refuses a second, and the first one stands.
        ctx.progress("ciber", "already applied before the interruption")
        return
    if ctx.state.depth == "quick":
        run_ciber_apply(ctx.brief.root, None, "depth-quick", ctx.settings)
        ctx.progress("ciber", "skipped: depth-quick")
        return
    if skip_problem("insufficient-high-confidence-claims", document, ctx.settings) is None:
        run_ciber_apply(ctx.brief.root, None, "insufficient-high-confidence-claims", ctx.settings)
        ctx.progress("ciber", "skipped: insufficient-high-confidence-claims")
        return
    high = [c for c in document.claims if c.confidence == "high"][:10]
    ctx.budget.charge_call(ctx.reasoner.price)
    output = ctx.reasoner.reframe(high)
    if isinstance(output, Skipped):
        # Not a valid skip at full depth: the verdict holds the brief (rule 3), as it should.
        write_phase(ctx.brief, "run.ciber", {"not_run": output.reason})
        ctx.progress("ciber", f"not run: {output.reason}")
        return
    path = ctx.brief.root / ".ciber-input.json"
    atomic_write_json(path, output.model_dump(mode="json"))
    try:
        run_ciber_apply(ctx.brief.root, path, None, ctx.settings)
    finally:
        path.unlink(missing_ok=True)


def phase_synthesize(ctx: Context) -> None:
    document = ctx.brief.load_claims()
    emitted = emitted_claims(document)
    cited = [CitedClaim(c.id, c.claim, c.sq, tuple(c.supporting)) for c in emitted]
    order = {
        str(sq.get("id")): i for i, sq in enumerate(document.sub_questions) if isinstance(sq, dict)
    }
    cited.sort(key=lambda c: (order.get(c.sq or "", len(order)), int(c.id[1:])))
    ctx.budget.charge_call(ctx.reasoner.price)
    text = ctx.reasoner.synthesize(ctx.state.question, cited)
    gaps = [g for g in document.coverage_gaps if not g.startswith(INCOMPLETE)]
    gaps += [f"{INCOMPLETE}{reason}" for reason in ctx.state.incomplete]
    updated = document.model_copy(update={"synthesis": text, "coverage_gaps": gaps})
    trace = load_trace_or_empty(ctx.brief)
    elapsed = ctx.state.wall_clock_seconds + (time.monotonic() - ctx.started)
    trace = trace.model_copy(
        update={
            "counters": trace.counters.model_copy(update={"wall_clock_seconds": round(elapsed, 3)})
        }
    )
    with ctx.brief.lock():
        save(ctx.brief, updated, trace)
    ctx.progress("synthesize", f"digest of {len(cited)} verified claim(s) by {ctx.reasoner.name}")


def phase_verdict(ctx: Context) -> None:
    from deep_research.decide.verdict import run_verdict

    report = run_verdict(ctx.brief.root, ctx.settings)
    ctx.progress("verdict", report.verdict)


def phase_render(ctx: Context) -> None:
    from deep_research.render import run_render

    document = ctx.brief.load_claims()
    if document.verdict == "FAIL":
        ctx.progress("render", "refused: the verdict is FAIL (deep-research render --force)")
        return
    run_render(ctx.brief.root, force=False, write=True)
    ctx.progress("render", str(ctx.brief.root / "report.md"))


PHASE_FUNCTIONS: dict[str, Callable[[Context], None]] = {
    "plan": phase_plan,
    "cast": phase_cast,
    "normalize": phase_normalize,
    "round2": phase_round2,
    "claims": phase_claims,
    "trace": phase_trace,
    "panel": phase_panel,
    "triangulate": phase_triangulate,
    "refetch": phase_refetch,
    "ciber": phase_ciber,
    "synthesize": phase_synthesize,
    "verdict": phase_verdict,
    "render": phase_render,
}


# --- the run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunResult:
    slug: str
    brief: Path
    verdict: str | None
    reasons: list[str]
    claims: int
    stripped: int
    sources: int
    incomplete: list[str]
    not_found: list[str]
    reasoner: str
    adapter: str
    report: Path | None
    spend: dict[str, float]
    reused: bool = False

    @property
    def partial(self) -> bool:
        return bool(self.incomplete)

    def as_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "brief": str(self.brief),
            "verdict": self.verdict,
            "verdict_reasons": self.reasons,
            "claims": self.claims,
            "stripped": self.stripped,
            "sources": self.sources,
            "partial": self.partial,
            "incomplete": self.incomplete,
            "not_found": self.not_found,
            "reasoner": self.reasoner,
            "adapter": self.adapter,
            "report": str(self.report) if self.report else None,
            "spend": self.spend,
            "reused": self.reused,
        }

    def summary_lines(self) -> list[str]:
        lines = [
            f"verdict: {self.verdict}"
            + (" (reused)" if self.reused else "")
            + (" — PARTIAL RUN (a cap stopped it)" if self.partial else ""),
        ]
        lines += [f"  {reason}" for reason in self.reasons[:4]]
        lines.append(
            f"claims: {self.claims} emitted, {self.stripped} stripped · sources: "
            f"{self.sources} · reasoner: {self.reasoner} · corpus: {self.adapter}"
        )
        lines += [f"not found: {gap}" for gap in self.not_found[:5]]
        lines += [f"incomplete: {reason}" for reason in self.incomplete[:5]]
        lines.append(f"brief: {self.brief}")
        lines.append(f"report: {self.report}" if self.report else "report: (not rendered)")
        return lines


def result_of(brief: Brief, state: RunState, slug: str, *, reused: bool = False) -> RunResult:
    document = brief.load_claims()
    emitted = emitted_claims(document)
    report = brief.root / "report.md"
    return RunResult(
        slug=slug,
        brief=brief.root,
        verdict=document.verdict,
        reasons=list(document.verdict_reasons),
        claims=len(emitted),
        stripped=len(document.stripped),
        sources=len(brief_rows(brief)),
        incomplete=list(state.incomplete),
        not_found=[
            g.removeprefix(NOT_FOUND) for g in document.coverage_gaps if g.startswith(NOT_FOUND)
        ],
        reasoner=state.reasoner,
        adapter=state.adapter,
        report=report if report.is_file() else None,
        spend=dict(state.spend),
        reused=reused,
    )


def _run_lock(brief: Brief) -> Any:
    from contextlib import contextmanager

    @contextmanager
    def held() -> Any:
        brief.root.mkdir(parents=True, exist_ok=True)
        lock = brief.root / ".run.lock"
        # The gates take the brief's own .lock per write; this one keeps two runs apart.
        _acquire(lock)
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)

    return held()


def execute(
    brief: Brief,
    slug: str,
    state: RunState,
    adapter: SearchAdapter,
    reasoner: Reasoner,
    settings: Settings,
    limits: Limits,
    progress: Callable[[str, str], None],
    *,
    stop_after: str | None = None,
) -> RunResult:
    """Run every phase not yet completed, in order, checkpointing after each."""
    # Caps are per run, not per process: a resumed run starts from what it already spent.
    budget = Budget(
        limits, time.monotonic() + limits.deadline_s, spend=Spend.from_record(state.spend)
    )
    ctx = Context(brief, slug, adapter, reasoner, settings, limits, budget, state, progress)
    phases = PHASES_FULL if state.depth == "full" else PHASES_QUICK
    live = ctx.live()
    if live is not None:
        live.watch(budget)
    with _run_lock(brief):
        ctx.save_state()
        where = "at the start"
        try:
            for index, phase in enumerate(phases, start=1):
                if phase in state.completed:
                    continue
                where = f"during {phase}"
                if live is not None:
                    live.begin(phase, index, len(phases))
                try:
                    PHASE_FUNCTIONS[phase](ctx)
                    _test_pause("within", phase)
                except CapReached as exc:
                    # A cap outside a worker (plan, synthesis): record it and go on to the gates.
                    ctx.mark_incomplete(f"{phase}: cap {exc.cap}: {exc.detail}")
                ctx.checkpoint(phase)
                where = f"after {phase}"
                _test_pause("after", phase)
                if phase == stop_after:
                    break
        except KeyboardInterrupt:
            # Nothing to save: the checkpoints on disk are the resumable state, and a phase not
            # recorded as done is redone from its start. The CLI turns this into exit 130.
            progress("interrupted", f"{where}; continue with: deep-research run --resume {slug}")
            raise
        state.wall_clock_seconds += time.monotonic() - ctx.started
        ctx.save_state()
    return result_of(brief, state, slug)


TEST_PAUSE_ENV = "DEEP_RESEARCH_TEST_PAUSE"
TEST_PAUSE_S = 60.0


def _test_pause(when: str, phase: str) -> None:
    """Sleep at the point named by ``DEEP_RESEARCH_TEST_PAUSE`` (see the module docstring)."""
    import os

    if os.environ.get(TEST_PAUSE_ENV) != f"{when}:{phase}":
        return
    sys.stderr.write(f"test pause: {when} {phase}\n")
    sys.stderr.flush()
    # Long enough for any test to see the line and kill; a stray setting only costs a minute.
    time.sleep(TEST_PAUSE_S)


def _supersede(root: Path) -> None:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    target = root.parent / ".superseded" / f"{root.name}-{stamp}"
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(root), str(target))


@dataclass(frozen=True)
class RunRequest:
    question: str
    state_dir: Path
    depth: Depth = "quick"
    resume: str | None = None
    refresh: bool = False


def start(
    request: RunRequest,
    adapter: SearchAdapter,
    reasoner: Reasoner,
    settings: Settings,
    limits: Limits,
    progress: Callable[[str, str], None],
    *,
    today: date | None = None,
    stop_after: str | None = None,
) -> RunResult:
    """A new run, a resumed one, or a fresh-enough brief reused (unless ``refresh``)."""
    slug = request.resume or slugify(request.question)
    brief = Brief(brief_dir(request.state_dir, slug))
    existing = read_phase(brief, "run") if brief.trace_path.exists() else {}
    if request.resume is not None:
        if not existing:
            raise InputError(f"no run to resume at {brief.root}; start it without --resume")
        state = RunState.from_record(existing)
        progress("resume", f"{slug}: done so far: {', '.join(state.completed) or 'nothing'}")
        return execute(
            brief, slug, state, adapter, reasoner, settings, limits, progress, stop_after=stop_after
        )
    if brief.root.exists():
        if existing and "verdict" in existing.get("completed", []) and not request.refresh:
            decision = freshness_decide(
                brief.load_claims(), today or datetime.now(UTC).date(), settings
            )
            if decision.decision == "reuse":
                progress("fresh", f"reusing {slug}: {decision.reason}")
                return result_of(brief, RunState.from_record(existing), slug, reused=True)
            progress("fresh", f"regenerating {slug}: {decision.reason}")
        elif existing and not request.refresh:
            raise InputError(
                f"{brief.root} holds an unfinished run; continue it with --resume {slug}, "
                "or start over with --refresh"
            )
        _supersede(brief.root)
    state = RunState(request.question, request.depth, adapter.name, reasoner.name)
    return execute(
        brief, slug, state, adapter, reasoner, settings, limits, progress, stop_after=stop_after
    )


def state_root(state: Path | None) -> Path:
    import os

    if state is not None:
        return state
    return Path(os.environ.get("DEEP_RESEARCH_STATE") or "state")


def run_command(
    question: str | None,
    *,
    depth: str = "quick",
    corpus: str | None = None,
    reasoner: str = "auto",
    max_usd: float | None = None,
    resume: str | None = None,
    refresh: bool = False,
    state: Path | None = None,
    settings: Settings,
    quiet: bool = False,
    stream: TextIO | None = None,
) -> RunResult:
    """``deep-research run``: build the seams from the options, then :func:`start`."""
    from deep_research.run.governor import default_limits
    from deep_research.run.localcorpus import open_corpus
    from deep_research.run.reasoners import make_reasoner

    if depth not in ("quick", "full"):
        raise InputError(f"--depth {depth!r}: use quick or full")
    root = state_root(state)
    chosen = make_reasoner(reasoner)
    if resume is None and not (question or "").strip():
        raise InputError("give the research question, or --resume SLUG to continue a run")
    if corpus is None:
        raise InputError(
            "no source adapter: pass --corpus DIR or --corpus python-docs (web search is not "
            "available in the headless runner yet)"
        )
    adapter = open_corpus(corpus, root)
    limits = default_limits(depth)
    if max_usd is not None:
        limits = limits.lowered(usd=max_usd)
    request = RunRequest(
        question=(question or "").strip(),
        state_dir=root,
        depth="full" if depth == "full" else "quick",
        resume=resume,
        refresh=refresh,
    )
    with Progress(stream, quiet=quiet) as progress:
        return start(request, adapter, chosen, settings, limits, progress)
