"""The phases of a headless run: one function over the brief for each entry of the pipeline.

Which phases run, in which order and at which depth is data in :mod:`deep_research.run.pipeline`;
each function here does its phase's work and lets the library function of each gate do the
deciding. A phase writes its artifacts atomically and its checkpoint record
(:mod:`deep_research.run.checkpoint`) before the driver marks it done, so a phase interrupted
half-way is redone from its start, from artifacts of the phases before it, which were complete.

Caps come from :mod:`deep_research.run.governor`. A cap that stops the run early does not skip the
gates: the run still traces, triangulates and decides on what it gathered, so every emitted
claim has passed them, and the brief is marked partial (``coverage_gaps`` entries
``incomplete:…`` and ``phases.run.incomplete``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Literal

from deep_research.brief.layout import Brief
from deep_research.brief.record import load_trace_or_empty, record_phase, save
from deep_research.brief.trace_phases import RunRecord, VotesPhase
from deep_research.brief.writers import atomic_write_json, atomic_write_text, jsonl_line, model_dump
from deep_research.decide.counters import MAX_UNREAD_HOSTS
from deep_research.decide.phase_rules import PlanFloors, ciber_claims, ciber_skip, panel_claims
from deep_research.decide.relevance_votes import sub_question_texts
from deep_research.decide.samefact import FactGroups, claim_key
from deep_research.errors import InputError
from deep_research.gaps import INCOMPLETE, NOT_FOUND
from deep_research.gates.relevance import relevance_ranks, relevant_rows, retained_texts
from deep_research.gates.trace import TraceOptions, emitted_claims, run_trace
from deep_research.models import (
    Claim,
    ClaimsFile,
    SearchesExhausted,
    SkepticVote,
    SourceRow,
    Via,
)
from deep_research.normalize import FindingDraft as IntakeFinding
from deep_research.normalize import SourceDraft, merge_sources
from deep_research.run.checkpoint import (
    PlanRecord,
    RoundRecord,
    SkipRecord,
    SubQuestionRecord,
    SurveyRecord,
    WorkerRecord,
    read_record,
    write_phase,
)
from deep_research.run.evidence import as_judged, panel_evidence
from deep_research.run.floorplan import counter_queries, meet_floors
from deep_research.run.governor import (
    Budget,
    CapReached,
    Limits,
    admit,
    fan_out,
    preflight,
    preflight_round,
    run_costs,
    turn_cap,
)
from deep_research.run.interface import (
    CallFailed,
    CitedClaim,
    EvidenceText,
    FindingDraft,
    PanelBatch,
    PanelItem,
    Reasoner,
    SearchAdapter,
    Skipped,
    SubQuestionPlan,
)
from deep_research.run.pipeline import BY_NAME, phase_functions
from deep_research.run.progress import Progress
from deep_research.run.reasoners import ExtractiveReasoner, clauses
from deep_research.settings import Settings
from deep_research.urls import host_of

# --- the run's shared context ------------------------------------------------------------


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
    state: RunRecord
    progress: Callable[[str, str], None]
    started: float = field(default_factory=time.monotonic)

    def checkpoint(self, phase: str) -> None:
        if phase not in self.state.completed:
            self.state.completed.append(phase)
        self.save_state()

    def save_state(self) -> None:
        self.state.spend = self.budget.as_record()
        ledger = self.budget.ledger.as_record()
        self.state.ledger = ledger if ledger.entries or ledger.failed_attempts else None
        write_phase(self.brief, "run", self.state)

    def mark_incomplete(self, reason: str) -> None:
        if reason not in self.state.incomplete:
            self.state.incomplete.append(reason)
            self.progress("governor", f"partial: {reason}")

    def live(self) -> Progress | None:
        """The status-line side of the progress; a plain callable (tests) only gets events."""
        return self.progress if isinstance(self.progress, Progress) else None


# --- plan -----------------------------------------------------------------------------------


def load_plan(brief: Brief) -> list[SubQuestionPlan]:
    record = read_record(brief, "plan", PlanRecord)
    return record.plans() if record is not None else []


def phase_plan(ctx: Context) -> None:
    question = ctx.state.question
    try:
        ctx.budget.charge_search()
        survey = ctx.adapter.survey(question, ctx.limits.hits_per_search)
        ctx.budget.charge_call(ctx.reasoner.price)
        plan = ctx.reasoner.decompose(question, survey)
    except CapReached as exc:
        raise InputError(
            f"the budget cannot cover one worker: planning alone hits the {exc.name} cap "
            f"({exc.detail}); raise --max-usd or use --reasoner extractive"
        ) from None
    proportionality = None
    if ctx.state.auto_depth:
        # The planner's call, within the caps: anything but a reasoned "full" is quick.
        ctx.state.depth = "full" if plan.depth == "full" else "quick"
        proportionality = {"depth": ctx.state.depth, "reason": plan.depth_reason or "not given"}
        ctx.progress("plan", f"depth {ctx.state.depth}: {proportionality['reason']}")
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
    floors = PlanFloors.of(ctx.settings, ctx.state.depth)
    parts = None
    if isinstance(ctx.reasoner, ExtractiveReasoner):
        # A one-part question stays one: sub-questions the floors would add are the question
        # again ("What does the corpus say about…"), answered by the same passages.
        parts = len(clauses(question))
        floors = replace(floors, sub_questions=min(floors.sub_questions, parts))
    topped = meet_floors(clamped, question, survey, floors, ctx.limits)
    if [(p.id, p.queries) for p in topped] != [(p.id, p.queries) for p in clamped]:
        ctx.progress("plan", "plan topped up to the floors (sub-questions, queries)")
    check = preflight(topped, run_costs(ctx.reasoner, ctx.reasoner.price, ctx.adapter), ctx.limits)
    if check.dropped:
        ctx.mark_incomplete(f"usd: worst case over budget, sub-questions {check.dropped} dropped")
    kept = check.admitted
    record = PlanRecord(
        survey=[
            SurveyRecord(url=doc.url, title=doc.title, headings=list(doc.headings))
            for doc in survey
        ],
        asked=len(asked),
        sub_questions=[SubQuestionRecord.of(sq) for sq in kept],
        preflight=check.as_record(),
        limits=ctx.limits.as_record(),
        proportionality=proportionality,
    )
    write_phase(ctx.brief, "plan", record)
    document = ClaimsFile(
        topic=ctx.slug,
        question=question,
        generated=datetime.now(UTC).date(),
        depth=ctx.state.depth,
        sub_questions=[{"id": p.id, "question": p.question} for p in kept],
    )
    trace = load_trace_or_empty(ctx.brief)
    counters = trace.counters.model_copy(
        update={
            "sub_questions": len(kept),
            "corpus_documents": ctx.adapter.capacity().documents,
            "question_parts": parts,
        }
    )
    trace = trace.model_copy(
        update={"topic": ctx.slug, "depth": ctx.state.depth, "counters": counters}
    )
    with ctx.brief.lock():
        save(ctx.brief, document, trace)
    ctx.progress("plan", f"{len(kept)} sub-question(s): " + "; ".join(p.question for p in kept))


# --- cast: one worker per sub-question ------------------------------------------------------


def research(
    ctx: Context,
    sq: SubQuestionPlan,
    queries: Sequence[str],
    read: Collection[str] = (),
    read_hosts: Collection[str] = (),
) -> WorkerRecord:
    """One worker: search, retain, extract — at most ``turn_cap`` searches, whatever it is told.

    Each search reads its best matches the worker has not read yet (``read``: documents already
    retained — round 2 passes round 1's): a query whose top hits were read already reads the
    next ones, so every search is new work. Hits on hosts in ``read_hosts`` (publishers already
    read) come after the others. What a search listed and the worker did not read is recorded
    (``unread``)."""
    report = WorkerRecord(id=sq.id)
    cap = turn_cap(sq, ctx.limits)
    pending = list(queries)
    found: list[FindingDraft] = []
    seen: set[str] = set(read)
    passed: set[str] = set()
    try:
        for _ in range(cap):
            if not pending:
                ctx.budget.charge_call(ctx.reasoner.price)
                pending = list(ctx.reasoner.follow_up(sq, found))[:cap]
                if not pending:
                    break
            query = pending.pop(0)
            ctx.budget.charge_search()
            hits = ctx.adapter.search(query, ctx.limits.hits_per_search + len(seen))
            report.queries.append(query)
            if not hits and not pending:
                # Nothing found and nothing planned: the worker ends here; asking for more
                # queries after an empty search is how a research loop never stops.
                report.reason = f"the search {query!r} returned nothing"
                break
            fresh = sorted(
                (hit for hit in hits if hit.url not in seen),
                key=lambda hit: host_of(hit.url) in read_hosts,
            )
            passed.update(hit.url for hit in fresh[ctx.limits.hits_per_search :])
            for hit in fresh[: ctx.limits.hits_per_search]:
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
                    SourceDraft(
                        url=retained.url,
                        title=retained.title,
                        tier="raw",
                        status=200,
                        content_hash=retained.content_hash,
                        source_type=retained.source_type,
                        retrieved_at=datetime.now(UTC).replace(microsecond=0),
                        via=Via(query=query, adapter=ctx.adapter.name),
                        findings=[
                            IntakeFinding(claim=d.claim, quote=d.quote, importance=d.importance)
                            for d in drafts
                        ],
                    )
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
        report.reason = f"cap {exc.name}: {exc.detail}"
    except CallFailed as exc:
        report.complete = False
        report.reason = f"a model call failed: {exc}"
    report.unread = sorted(passed - seen)
    return report


def _keep_chosen(report: WorkerRecord, reasoner: ExtractiveReasoner) -> None:
    """Leave on the worker's sources only the findings its sub-question's answer keeps
    (:meth:`ExtractiveReasoner.chosen`); a source keeps its row whatever it lost: it was read."""
    keys = [claim_key(f.claim) for source in report.sources for f in source.findings]
    keep = reasoner.chosen(report.id, keys)
    report.sources = [
        source.model_copy(
            update={"findings": [f for f in source.findings if claim_key(f.claim) in keep]}
        )
        for source in report.sources
    ]


def _cast(
    ctx: Context,
    plans: Sequence[SubQuestionPlan],
    round_: int,
    queries: Callable[[SubQuestionPlan], Sequence[str]],
    read: Mapping[str, Collection[str]] | None = None,
    read_hosts: Collection[str] = (),
) -> list[WorkerRecord]:
    ctx.progress("cast", f"round {round_}: {len(plans)} worker(s) in parallel")
    live = ctx.live()
    if live is not None:
        live.workers(len(plans))

    def work(sq: SubQuestionPlan) -> WorkerRecord:
        try:
            return research(ctx, sq, queries(sq), (read or {}).get(sq.id, ()), read_hosts)
        finally:
            # Counted as it ends, failed or not; a wedged worker never counts as done.
            if live is not None:
                live.worker_done()

    outcomes = fan_out(plans, work, ctx.budget, ctx.limits.workers)
    reports = [
        outcome.value or WorkerRecord(id=sq.id, complete=False, reason=outcome.error or "")
        for sq, outcome in zip(plans, outcomes, strict=True)
    ]
    if isinstance(ctx.reasoner, ExtractiveReasoner):
        for report in reports:
            _keep_chosen(report, ctx.reasoner)
    for sq, report in zip(plans, reports, strict=True):
        if not report.complete:
            ctx.mark_incomplete(f"{sq.id} complete: false ({report.reason})")
        ctx.progress(
            "cast",
            f"{sq.id}: {len(report.queries)} search(es), {report.fetches} "
            f"document(s), {report.findings()} "
            f"finding(s){'' if report.complete else ' — incomplete'}",
        )
    return reports


def phase_cast(ctx: Context) -> None:
    plans = load_plan(ctx.brief)
    reports = _cast(ctx, plans, 1, lambda sq: sq.queries)
    write_phase(ctx.brief, "cast", RoundRecord(round=1, workers=reports))


def phase_round2(ctx: Context) -> None:
    """Full depth: counter-queries per sub-question (and gap-fill) as a second round."""
    plans = load_plan(ctx.brief)
    if ctx.limits.rounds < 2:
        ctx.mark_incomplete(BY_NAME["round2"].skip_reason("round-cap"))
        write_phase(ctx.brief, "round2", RoundRecord(round=2))
        return
    check = preflight_round(
        plans, run_costs(ctx.reasoner, ctx.reasoner.price, ctx.adapter), ctx.budget
    )
    if check.dropped:
        ctx.mark_incomplete(f"usd: round 2's worst case over the budget left, {check.dropped} cut")
    plans = check.admitted
    counters: dict[str, list[str]] = {}
    floors = PlanFloors.of(ctx.settings, "full")
    for sq in plans:
        ctx.budget.charge_call(ctx.reasoner.price)
        asked = ctx.reasoner.counter_queries(sq)
        counters[sq.id] = counter_queries(sq, asked, floors, turn_cap(sq, ctx.limits))
    # Round 2 reads only documents round 1 did not: the adversarial round's work is new
    # evidence (its floor counts sources first found in it), not a second read of the same text;
    # and it reads other publishers' documents before more of those round 1 read.
    first = {row.url for row in brief_rows(ctx.brief)}
    hosts = {host for url in first if (host := host_of(url)) is not None}
    reports = _cast(
        ctx, plans, 2, lambda sq: counters[sq.id], {sq.id: first for sq in plans}, hosts
    )
    write_phase(ctx.brief, "round2", RoundRecord(round=2, workers=reports))
    rows = _normalize_reports(ctx, brief_rows(ctx.brief), reports, 2)
    _write_sources(ctx.brief, rows)
    exhausted, unread = search_work([*_worker_reports(ctx.brief, "cast"), *reports], rows)
    _update_counters(
        ctx.brief,
        rounds=2,
        counter_queries_per_sub_question={r.id: len(r.queries) for r in reports},
        distinct_sources=len(rows),
        searches_exhausted=exhausted,
        unread_hosts=unread,
    )
    if exhausted is not None:
        ctx.progress("round2", f"the searches listed nothing unread: {len(rows)} source(s) in all")


def search_work(
    reports: Sequence[WorkerRecord], rows: Sequence[SourceRow]
) -> tuple[SearchesExhausted | None, list[str]]:
    """What both rounds' searches offered against what the run read (as a plugin run's
    ``counters`` decides it, :func:`deep_research.decide.counters.search_work`): the exhaustion
    record when every document they listed was read, else None; and the hosts of the documents
    listed and never read."""
    read = {row.url for row in rows}
    unread = sorted({url for report in reports for url in report.unread} - read)
    searched = [report for report in reports if report.queries]
    hosts = sorted({host for url in unread if (host := host_of(url)) is not None})
    if unread or not searched:
        return None, hosts[:MAX_UNREAD_HOSTS]
    record = SearchesExhausted(
        round=2,
        fetchers=len(searched),
        searches=sum(len(report.queries) for report in searched),
        publishers=len({host for url in read if (host := host_of(url)) is not None}),
        distinct_sources=len(rows),
    )
    return record, []


def _update_counters(brief: Brief, **values: object) -> None:
    """Record work counters in trace.json (under the brief's lock, like every trace write)."""
    with brief.lock():
        trace = load_trace_or_empty(brief)
        counters = trace.counters.model_copy(update=values)
        atomic_write_json(
            brief.trace_path, model_dump(trace.model_copy(update={"counters": counters}))
        )


# --- normalize ------------------------------------------------------------------------------


def brief_rows(brief: Brief) -> list[SourceRow]:
    return brief.load_sources() if brief.sources_path.exists() else []


def _worker_reports(brief: Brief, phase: Literal["cast", "round2"]) -> list[WorkerRecord]:
    record = read_record(brief, phase, RoundRecord)
    return record.workers if record is not None else []


def _normalize_reports(
    ctx: Context, rows: list[SourceRow], reports: Sequence[WorkerRecord], round_: int
) -> list[SourceRow]:
    owners: dict[str, str] = {}
    for report in reports:
        owners |= report.owners
        if not report.sources:
            continue
        result = merge_sources(report.sources, existing=rows, sub_question=report.id, round=round_)
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
    with brief.lock():
        atomic_write_text(
            brief.sources_path,
            "".join(jsonl_line(model_dump(row)) for row in rows),
        )


def phase_normalize(ctx: Context) -> None:
    reports = _worker_reports(ctx.brief, "cast")
    rows = _normalize_reports(ctx, [], reports, 1)
    # No document at all is an answer too: the brief goes on to say "not found" per
    # sub-question (the claims phase records it), with every gate run on the empty set.
    _write_sources(ctx.brief, rows)
    _update_counters(
        ctx.brief,
        queries_per_sub_question={r.id: len(r.queries) for r in reports},
        round1_fetches=min(sum(r.fetches for r in reports), len(ctx.brief.load_fetch_log())),
        distinct_sources=len(rows),
        rounds=1,
    )
    ctx.progress("normalize", f"{len(rows)} source(s) in sources.jsonl")


# --- claims ---------------------------------------------------------------------------------


def finders_of(reports: Sequence[WorkerRecord]) -> dict[str, list[str]]:
    """Claim key → every sub-question whose worker found it, in plan order."""
    found: dict[str, list[str]] = {}
    for report in reports:
        for source in report.sources:
            for finding in source.findings:
                finders = found.setdefault(claim_key(finding.claim), [])
                if report.id not in finders:
                    finders.append(report.id)
    return found


def build_claims(
    rows: Sequence[SourceRow],
    limit: int,
    finders: dict[str, list[str]] | None = None,
    ranks: Mapping[str, float] | None = None,
) -> list[Claim]:
    """One claim per fact (:mod:`deep_research.decide.samefact`: findings that state the same
    fact, however worded, are one claim); every source offering it supports it. Given ``ranks``
    (finding id → :func:`~deep_research.gates.relevance.relevance_ranks`), the claims the words
    say answer come first; then those with more sources, then the higher ranked: the first
    ``limit`` are kept.

    A claim found by several sub-questions goes to the one holding the fewest claims so far
    (plan order breaks ties): each sub-question that found something reports something, rather
    than the first one taking every shared finding and the rest reading as gaps.
    """
    grouped: dict[str, dict[str, Any]] = {}
    facts = FactGroups()
    for row in rows:
        for finding in row.findings:
            entry = grouped.setdefault(
                facts.key(finding.claim, finding.quote, row.id),
                {
                    "claim": finding.claim,
                    "finders": [],
                    "supporting": [],
                    "findings": [],
                    "importance": finding.importance,
                },
            )
            own = (finders or {}).get(claim_key(finding.claim)) or row.sub_questions[:1]
            entry["finders"] += [sq for sq in own if sq not in entry["finders"]]
            if row.id not in entry["supporting"]:
                entry["supporting"].append(row.id)
            entry["findings"].append(finding.id)

    def rank(entry: dict[str, Any]) -> float:
        return max((ranks or {}).get(finding, 0.0) for finding in entry["findings"])

    ordered = sorted(
        grouped.values(),
        key=lambda e: (-math.floor(rank(e)), -len(e["supporting"]), -rank(e)),
    )[:limit]
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


def _gaps(ctx: Context, reports: Sequence[WorkerRecord], kept: set[str]) -> list[str]:
    """A sub-question none of whose findings answers the question (``kept``: the claim keys
    that do) is not found."""
    gaps = []
    for report in reports:
        found = (claim_key(f.claim) for source in report.sources for f in source.findings)
        if not kept.intersection(found):
            # The extractive reasoner names the passage that came nearest, when it read one.
            near = (
                ctx.reasoner.nearest_passage(report.id)
                if isinstance(ctx.reasoner, ExtractiveReasoner)
                else None
            )
            gaps.append(
                f"{NOT_FOUND}{report.id}: no passage in {ctx.adapter.name} answers it "
                f"after {len(report.queries)} search(es)" + (f"; {near}" if near else "")
            )
    gaps += [f"{INCOMPLETE}{reason}" for reason in ctx.state.incomplete]
    return gaps


def phase_claims(ctx: Context) -> None:
    rows = brief_rows(ctx.brief)
    # The relevance gate: a finding that does not answer the research question is no claim.
    # A model's plan words the question's parts itself; the extractive plan only repeats it.
    # The extractive reasoner applies the gate itself, to each sentence with the subject it
    # carries (the name it documents, its heading, the sentence quoted with it) and above a
    # score threshold; judged again bare, a docstring's sentence loses the name it documents.
    # A model's panel, shown each claim's sub-question, votes on whether it answers it
    # (decide/relevance_votes): then the words only rank the findings, and drop none.
    ranks = None
    if ctx.reasoner.name != "extractive":
        planned = {sq.id: sq.question for sq in load_plan(ctx.brief)}
        texts = retained_texts(ctx.brief, rows)
        if isinstance(ctx.reasoner, PanelBatch):
            ranks = relevance_ranks(rows, ctx.state.question, texts, planned)
        else:
            rows = relevant_rows(rows, ctx.state.question, texts, planned)
    kept = {claim_key(f.claim) for row in rows for f in row.findings}
    reports = _worker_reports(ctx.brief, "cast") + _worker_reports(ctx.brief, "round2")
    claims = build_claims(rows, ctx.limits.claims, finders_of(reports), ranks)
    document = ctx.brief.load_claims()
    gaps = _gaps(ctx, _worker_reports(ctx.brief, "cast"), kept)
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


def phase_entail(ctx: Context) -> None:
    # No headless reasoner judges entailment yet; the skip is recorded so the brief says so.
    reason = BY_NAME["entail"].skip_reason("no-entailment-judge")
    write_phase(ctx.brief, "entail", SkipRecord(skipped=reason))
    ctx.progress("entail", f"skipped: {reason}")


def phase_panel(ctx: Context) -> None:
    from deep_research.decide.votes import apply_votes

    document = ctx.brief.load_claims()
    candidates = panel_claims(document)
    raw: dict[str, list[object]] = {}
    skipped: str | None = None

    def evidence(claim: Claim) -> list[EvidenceText]:
        return panel_evidence(ctx.brief, claim)

    try:
        panels = None
        if isinstance(ctx.reasoner, PanelBatch):
            # Every claim's panel at once: several claims per call, round by round.
            asked = sub_question_texts(document)
            panels = ctx.reasoner.judge_all(
                [PanelItem(c, evidence(c), asked.get(c.sq or "", "")) for c in candidates]
            )
        for claim in candidates:
            ctx.budget.charge_call(ctx.reasoner.price)
            votes = (
                panels.votes.get(claim.id, [])
                if panels is not None
                else ctx.reasoner.judge(claim, evidence(claim))
            )
            if isinstance(votes, Skipped):
                skipped = votes.reason
                ctx.state.unable["panel"] = votes.reason
                break
            if panels is not None and not votes:
                continue  # a cap stopped the panel before this claim's first vote
            raw[claim.id] = [
                v.model_dump(by_alias=True) if isinstance(v, SkepticVote) else {"error": v.reason}
                for v in votes[: ctx.settings.panel_size]
            ]
        if panels is not None and panels.stopped is not None:
            raise panels.stopped
    except CapReached as exc:
        ctx.mark_incomplete(f"panel stopped by cap {exc.name}")
    trace = load_trace_or_empty(ctx.brief)
    if skipped is not None or not raw:
        reason = skipped or BY_NAME["panel"].skip_reason("no-supported-claim")
        write_phase(ctx.brief, "panel", SkipRecord(skipped=reason))
        ctx.progress("panel", f"skipped: {reason}")
        return
    updated = apply_votes(document, raw, ctx.settings)
    with ctx.brief.lock():
        save(ctx.brief, updated, record_phase(trace, "votes", VotesPhase(raw=raw), ctx.settings))
    ctx.progress("panel", f"{len(raw)} claim(s) judged")


def phase_triangulate(ctx: Context) -> None:
    from deep_research.decide.contradictions import run_contradictions, sub_questions_of
    from deep_research.decide.triangulate import run_triangulate

    # Contradictions first: a contradicted claim is contested, which triangulate's confidence
    # reads. Both steps are idempotent, so a kill between them redoes both.
    reports = _worker_reports(ctx.brief, "cast") + _worker_reports(ctx.brief, "round2")
    claims = ctx.brief.load_claims().claims
    found_by = sub_questions_of(claims, brief_rows(ctx.brief), finders_of(reports))
    for entry in run_contradictions(ctx.brief.root, ctx.settings, found_by):
        ctx.progress("triangulate", f"contradiction: {entry.topic} ({' vs '.join(entry.ids)})")
    report = run_triangulate(ctx.brief.root, ctx.settings)
    ctx.progress(
        "triangulate",
        f"τ {report.triangulation_score}; {report.claims} claim(s) kept, "
        f"{len(report.stripped)} stripped",
    )


def phase_refetch(ctx: Context) -> None:
    if not ctx.adapter.is_web():
        reason = BY_NAME["refetch"].skip_reason("local-corpus")
        write_phase(ctx.brief, "run.refetch", SkipRecord(skipped=reason))
        return
    from deep_research.decide.refetch_rate import refetchable, run_refetch

    if not refetchable(ctx.brief):
        reason = BY_NAME["refetch"].skip_reason("nothing-cited")
        write_phase(ctx.brief, "run.refetch", SkipRecord(skipped=reason))
        ctx.progress("refetch", f"skipped: {reason}")
        return
    report = run_refetch(ctx.brief.root)
    ctx.progress("refetch", f"pass rate {report.pass_rate}")


def phase_ciber(ctx: Context) -> None:
    from deep_research.decide.ciber import run_ciber_apply

    document = ctx.brief.load_claims()
    if "ciber" in load_trace_or_empty(ctx.brief).phases or document.ciber_passed is not None:
        # A run killed after CIBER was applied but before this phase was checkpointed: the gate
        # takes one diagnosis per brief and refuses a second, and the first one stands.
        ctx.progress("ciber", "already applied before the interruption")
        return
    # The gate decides whether the skip is valid; only a valid one is taken.
    reason = ciber_skip(document, ctx.settings)
    if reason is not None:
        run_ciber_apply(ctx.brief.root, None, reason, ctx.settings)
        ctx.progress("ciber", f"skipped: {reason}")
        return
    # CIBER reads each claim's located evidence as the page has it, never a quote as written.
    high = ciber_claims(document, ctx.settings.ciber_top_n)
    high = [as_judged(ctx.brief, claim) for claim in high]
    ctx.budget.charge_call(ctx.reasoner.price)
    output = ctx.reasoner.reframe(high)
    if isinstance(output, Skipped):
        # Not a valid skip (ciber-missing), but nothing a re-run changes: the verdict says what
        # READY would need (reasoner-unable) from this declaration, recorded with the run's state.
        ctx.state.unable["ciber"] = output.reason
        ctx.save_state()
        ctx.progress("ciber", f"not run: {output.reason}")
        return
    path = ctx.brief.root / ".ciber-input.json"
    atomic_write_json(path, output.model_dump(mode="json"))
    try:
        run_ciber_apply(ctx.brief.root, path, None, ctx.settings)
    finally:
        path.unlink(missing_ok=True)


def phase_synthesize(ctx: Context) -> None:
    from deep_research.gates.answer import check_answer

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
    # Stored as the answer check lets it be shown: claims.json never holds a struck clause.
    checked = check_answer(ctx.brief, text or "", document)
    updated = document.model_copy(update={**checked.stored(), "coverage_gaps": gaps})
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
    from deep_research.gates.answer import check_answer
    from deep_research.render import run_render

    document = ctx.brief.load_claims()
    if document.verdict == "FAIL":
        reason = BY_NAME["render"].skip_reason("verdict-fail")
        ctx.progress("render", f"{reason} (deep-research render --force)")
        return
    run_render(ctx.brief.root, force=False, write=True, check_answer=check_answer)
    ctx.progress("render", str(ctx.brief.root / "report.md"))


PHASE_FUNCTIONS: dict[str, Callable[[Context], None]] = phase_functions(globals())
