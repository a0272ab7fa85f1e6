"""``deep-research next BRIEF``: the single next action of a plugin run, decided by code.

The orchestrator (a model) never chooses a step. It calls ``next``, does exactly what it prints,
and calls ``next`` again. ``next`` walks the one pipeline definition
(:data:`deep_research.run.pipeline.PIPELINE`, the same table the headless driver runs) in order
and reads the brief to find the first phase not yet done; that phase's handler names one action:

* ``run`` — a ``deep-research …`` command line to run as printed;
* ``write`` — a file the orchestrator writes, with its exact fields and an example;
* ``dispatch`` — agents to start in ONE message (never more than the run's fan-out ceiling),
  each with its exact prompt and the file its reply is saved to;
* ``done`` — the verdict, its reasons, and the commands that close the run.

A phase is done when its artifact says so (a saved return, a record in trace.json), so ``next``
is idempotent: asking twice gives the same action, and a run resumes from wherever it stopped.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from deep_research import role_contracts
from deep_research.brief.layout import Brief
from deep_research.brief.record import load_trace_or_empty, open_brief
from deep_research.brief.start_record import RecordedRun, StartRecord
from deep_research.brief.trace_phases import McpGatePhase
from deep_research.decide.phase_rules import (
    PlanFloors,
    ciber_skip,
    panel_claims,
    votes_wanted,
)
from deep_research.decide.verdict import read_reason
from deep_research.errors import DeepResearchError
from deep_research.models import ClaimsFile
from deep_research.plugin import replies
from deep_research.plugin.ingest import (
    claims_draft_of,
    pending,
    recorded_gaps,
    unadopted_contradictions,
)
from deep_research.plugin.runs import (
    Run,
    brief_run,
    ciber_skip_run,
    counters_run,
    mcp_gate_run,
)
from deep_research.plugin.tasks import (
    COUNTER_EVIDENCE,
    MAX_PAIRS_PER_VERIFIER,
    CiberTask,
    FetchTask,
    JudgingTask,
    McpFetchTask,
    SkepticTask,
    Task,
    TriangulateTask,
    VerifyTask,
)
from deep_research.run.pipeline import phase_functions, phases_for
from deep_research.settings import Settings, settings_for

ActionKind = Literal["run", "write", "dispatch", "done"]
#: The contracts of the files the orchestrator writes itself (roles/*.md): their steps are the
#: rules ``next`` prints, the same text the headless planner and synthesizer are sent.
PLANNER = "planner"
SYNTHESIZER = "synthesizer"
ORCHESTRATOR = "orchestrator"


class Dispatch(BaseModel):
    """One agent to start: its prompt (a :mod:`deep_research.plugin.tasks` record, as text)."""

    model_config = ConfigDict(defer_build=True)

    prompt: str
    save_to: str

    @classmethod
    def of(cls, task: Task, save_to: Path) -> Dispatch:
        """``task`` as dispatched, its reply saved to ``save_to``."""
        return cls(prompt=task.prompt(), save_to=str(save_to))


class Directive(BaseModel):
    """What a plugin run is told to do next, by ``next`` (an :class:`Action`, for the
    orchestrator) or by ``step`` (a workflow step, for its script): the kind of action, narrowed
    by each, the phase it serves, and why."""

    model_config = ConfigDict(defer_build=True)

    action: str
    phase: str
    why: str


class Action(Directive):
    """One step for the orchestrator; only the fields of its kind are set."""

    action: ActionKind
    command: str | None = None
    path: str | None = None
    example: Any = None
    rules: list[str] = Field(default_factory=list)
    bounds: dict[str, int] = Field(default_factory=dict)
    agent: str | None = None
    tasks: list[Dispatch] = Field(default_factory=list)
    verdict: str | None = None
    reasons: list[str] = Field(default_factory=list)
    then: list[str] = Field(default_factory=list)
    #: A ``run`` action's command, typed: the workflow's step runs it in process
    #: (:mod:`deep_research.plugin.runs`); ``--json`` prints only its line, ``command``.
    run: Run | None = Field(default=None, exclude=True)

    def text(self) -> str:
        """The action as a person reads it (``--json`` prints the model)."""
        lines = [f"{self.action} ({self.phase}): {self.why}"]
        if self.command:
            lines.append(f"  $ {self.command}")
        if self.path:
            lines.append(f"  write {self.path}")
            if self.example is not None:
                lines.append("  like: " + json.dumps(self.example, ensure_ascii=False))
        lines += [f"  - {rule}" for rule in self.rules]
        lines += [f"  {name}: {value}" for name, value in self.bounds.items()]
        if self.agent:
            lines.append(f"  {len(self.tasks)} × {self.agent}, in one message:")
            lines += [f"    {t.prompt}  →  save to {t.save_to}" for t in self.tasks]
        if self.verdict:
            lines.append(f"  verdict {self.verdict}")
            lines += [f"    {reason}" for reason in self.reasons]
        lines += [f"  then: {command}" for command in self.then]
        return "\n".join(lines)


@dataclass(frozen=True)
class View(RecordedRun):
    """What one call of ``next`` knows: the brief, what ``start`` recorded for its run (depth,
    caps, MCP server), the settings."""

    brief: Brief
    record: StartRecord
    settings: Settings

    @property
    def root(self) -> Path:
        return self.brief.root

    def cli(self, *words: str) -> str:
        return shlex.join(["deep-research", *words])

    def phases(self) -> set[str]:
        """The phases trace.json holds a record of (what each says is read as its record)."""
        return set(load_trace_or_empty(self.brief).phases)

    def claims(self) -> ClaimsFile | None:
        return self.brief.load_claims() if self.brief.claims_path.exists() else None


def _issued(
    view: View, task: JudgingTask, save_to: Path, document: ClaimsFile | None = None
) -> Dispatch:
    """A judging task as dispatched: its input file written first (the one file its agent
    reads, :mod:`deep_research.plugin.inputs`), then its prompt, which names that file."""
    from deep_research.plugin.inputs import write_input

    write_input(view.brief, task, document)
    return Dispatch.of(task, save_to)


# --- the plan -------------------------------------------------------------------------------


def _floors(view: View) -> tuple[int, int, int]:
    floors = PlanFloors.of(view.settings, view.depth)
    return floors.sub_questions, floors.queries, floors.counter_queries


def _plan(view: View) -> Any:
    from deep_research.decide.counters import load_plan

    return load_plan(view.root / "plan.json")


def _plan_with(plan: Any, field: str) -> dict[str, Any]:
    """The plan as it stands with ``field`` to fill in each sub-question: the example of a write
    that adds to plan.json shows every field the write must keep, not only the new one."""
    return {
        "sub_questions": [
            {**sq.model_dump(exclude_defaults=True), field: [*getattr(sq, field), "…"]}
            for sq in plan.sub_questions
        ]
    }


def _plan_problem(view: View) -> str | None:
    from deep_research.decide.counters import distinct

    path = view.root / "plan.json"
    if not path.exists():
        return "there is no plan yet"
    try:
        plan = _plan(view)
    except DeepResearchError as error:
        return f"plan.json is not usable: {error}"
    need_sq, need_q, _ = _floors(view)
    if len(plan.sub_questions) < need_sq:
        return f"plan.json has {len(plan.sub_questions)} sub-question(s); {need_sq} are needed"
    short = [sq.id for sq in plan.sub_questions if distinct(sq.queries) < need_q]
    if short:
        return f"sub-question(s) {', '.join(short)} have fewer than {need_q} distinct queries"
    most = _most_sub_questions(view)
    if len(plan.sub_questions) > most:
        return f"plan.json has {len(plan.sub_questions)} sub-questions; at most {most} are run"
    return None


def _most_sub_questions(view: View) -> int:
    from deep_research.plugin.runstate import HARD_MAX_SUB_QUESTIONS

    return HARD_MAX_SUB_QUESTIONS


def phase_plan(view: View) -> Action | None:
    problem = _plan_problem(view)
    if problem is None:
        return None
    need_sq, need_q, _ = _floors(view)
    example = {
        "sub_questions": [
            {
                "id": f"sq{n}",
                "question": "…",
                "scope": "what this sub-question must NOT cover",
                "queries": ["…"] * need_q,
            }
            for n in (1, 2)
        ]
    }
    return Action(
        action="write",
        phase="plan",
        why=problem,
        path=str(view.root / "plan.json"),
        example=example,
        bounds={
            "min_sub_questions": need_sq,
            "max_sub_questions": _most_sub_questions(view),
            "min_queries_per_sub_question": need_q,
        },
        rules=role_contracts.items(PLANNER, "Steps"),
    )


# --- fetch rounds ---------------------------------------------------------------------------


def _fetches_needed(view: View, round_: int) -> list[tuple[FetchTask, Path]]:
    """The fetchers a round still needs — one per sub-question, one retry for an incomplete
    one — each with the file its reply is saved to."""
    plan = _plan(view)
    needed = []
    # Round 2 is told which publishers round 1 read, to search past them first.
    read = _fetched_hosts(view) if round_ >= 2 else ()
    for sq in plan.sub_questions:
        queries = sq.queries if round_ == 1 else sq.counter_queries
        first = replies.fetcher_path(view.root, sq.id, round_)
        retry = replies.fetcher_path(view.root, sq.id, round_, retry=True)
        if first.exists() and not _incomplete(first):
            continue
        if first.exists() and retry.exists():
            continue  # retried once; the gap is recorded and the run goes on
        target = retry if first.exists() else first
        needed.append((_fetch_task(view, sq, round_, queries, read=read), target))
    return needed


def _fetch_tasks(view: View, round_: int) -> list[Dispatch]:
    return [Dispatch.of(task, to) for task, to in _fetches_needed(view, round_)]


def _fetch_task(
    view: View,
    sq: Any,
    round_: int,
    queries: Any,
    exclude: tuple[str, ...] = (),
    read: tuple[str, ...] = (),
) -> FetchTask:
    """A fetcher's task: the sub-question's id and text, its queries (round 2's are
    counter-queries, and the task says so), for a top-up the hosts already fetched, which it
    must leave aside, and for round 2 the same hosts, which it searches past first."""
    from deep_research.decide.counters import counted

    return FetchTask(
        brief=str(view.root),
        sub_question=sq.id,
        round=round_,
        queries=tuple(counted(queries)),
        scope=sq.scope,
        question=sq.question,
        purpose=COUNTER_EVIDENCE if round_ >= 2 else "",
        exclude_hosts=exclude,
        read_hosts=read,
    )


def _fetched_hosts(view: View) -> tuple[str, ...]:
    """The publishers the run has fetched a source from: a top-up looks for others."""
    from deep_research.decide.counters import fetched_hosts

    if not view.brief.sources_path.exists():
        return ()
    return tuple(fetched_hosts(view.brief.load_sources(), view.brief.load_fetch_log()))


def _mcp(view: View, phase: str, round_: int) -> Action | None:
    """With ``start --mcp NAME``: the server is gated once, by code, before the first dispatch;
    if it passed, an mcp-fetcher runs each sub-question's queries beside its fetcher."""
    from deep_research.plugin.mcpgate import GATE_PHASE

    name = view.record.mcp
    if name is None:
        return None
    from deep_research.decide.counters import counted

    gate = load_trace_or_empty(view.brief).phase(GATE_PHASE, McpGatePhase)
    if gate is None:
        why = f"the MCP server {name} is gated before its first use"
        return _command(view, phase, why, mcp_gate_run(name, view.root, view.root.parent.parent))
    if gate.ok is not True:
        return None  # the gate failed: the run goes on without the server (trace.json says why)
    plan = _plan(view)
    tasks = []
    for sq in plan.sub_questions:
        target = replies.fetcher_path(view.root, sq.id, round_, mcp=True)
        if target.exists():
            continue
        queries = sq.queries if round_ == 1 else sq.counter_queries
        task = McpFetchTask(
            brief=str(view.root),
            sub_question=sq.id,
            round=round_,
            queries=tuple(counted(queries)),
            scope=sq.scope,
            mcp=name,
            gate=gate.entry(),
            question=sq.question,
            purpose=COUNTER_EVIDENCE if round_ >= 2 else "",
        )
        tasks.append(Dispatch.of(task, target))
    left = _dispatches_left(view)
    if not tasks or left <= 0:
        return None
    why = f"round {round_}: {len(tasks)} MCP fetcher(s) through {name}"
    return _dispatch(view, phase, why, McpFetchTask.agent_type(), tasks, left=left, then_next=True)


def _dispatch(
    view: View,
    phase: str,
    why: str,
    agent: str,
    tasks: list[Dispatch],
    *,
    left: int | None = None,
    then_next: bool = False,
) -> Action:
    """One message of parallel ``agent`` tasks: at most the fan-out cap, and at most ``left``
    where a budget counts the dispatches (the fetchers')."""
    limit = view.caps.max_fanout if left is None else min(view.caps.max_fanout, left)
    rules = role_contracts.items(ORCHESTRATOR, "Dispatch")
    if then_next:
        rules += role_contracts.items(ORCHESTRATOR, "Then next")
    return Action(
        action="dispatch",
        phase=phase,
        why=why,
        agent=agent,
        tasks=tasks[:limit],
        rules=rules,
    )


def _incomplete(path: Path) -> bool:
    value = replies.read_reply(path)
    # An unreadable reply did no work.
    return not isinstance(value, dict) or value.get("complete") is False


def _dispatches_left(view: View) -> int:
    """Fetcher dispatches the guard will still let through (its ledger counts them)."""
    from deep_research.plugin.runstate import fetcher_budget, fetcher_rounds

    used = fetcher_rounds(view.brief)
    return fetcher_budget(view.brief, view.record) - len(used or [])


def budget_gaps(view: View) -> list[str]:
    """Fetchers the run could not dispatch any more: recorded as gaps, never waited for."""
    if _dispatches_left(view) > 0:
        return []
    rounds = (1, 2) if view.depth == "full" else (1,)
    return [
        f"incomplete:{task.sub_question} round {round_}: the run's fetcher dispatches were spent"
        for round_ in rounds
        for task, _ in _fetches_needed(view, round_)
    ]


def _dispatch_or_ingest(view: View, phase: str, round_: int) -> Action | None:
    from deep_research.plugin.mcpgate import GATE_PHASE

    if view.record.mcp is not None and GATE_PHASE not in view.phases():
        return _mcp(view, phase, round_)  # the gate comes before any dispatch
    tasks = _fetch_tasks(view, round_)
    left = _dispatches_left(view)
    if tasks and left <= 0:
        tasks = []  # a spent budget goes on with what was gathered; the gaps say what is missing
    if tasks:
        why = f"round {round_}: {len(tasks)} fetcher(s) still to run"
        return _dispatch(view, phase, why, FetchTask.agent_type(), tasks, left=left, then_next=True)
    beside = _mcp(view, phase, round_)
    if beside is not None:
        return beside
    waiting = [r for r in replies.saved(view.root) if r.kind == "fetcher" and r.round == round_]
    if pending(view.brief, waiting):
        return Action(
            action="run",
            phase=phase,
            why=f"round {round_}: fetcher returns saved but not yet normalized",
            command=(ingest := brief_run("ingest", view.root)).line(),
            run=ingest,
        )
    return _top_up(view, phase, round_)


# --- a round that fell short: one top-up with new queries -----------------------------------

#: The plan field a round's top-up queries go in.
TOP_UP_FIELD = {1: "more_queries", 2: "more_counter_queries"}


def shortfall(view: View, round_: int) -> str | None:
    """The work floor round ``round_`` left unmet that more fetching can still meet — the same
    counts the verdict's floors take (decide.counters, decide.verdict) — or None."""
    if view.depth != "full" or not view.brief.sources_path.exists():
        return None
    from deep_research.decide.counters import fetched_sources, round1_fetches

    s = view.settings
    sources = view.brief.load_sources()
    log = view.brief.load_fetch_log()
    if round_ == 1:
        got = round1_fetches(sources, log)
        if got < s.full_round1_fetches:
            return f"round 1 fetched {got} source(s); the floor is {s.full_round1_fetches}"
        return None
    later = sum(1 for row in fetched_sources(sources, log) if row.round >= 2)
    if later < s.full_round2_fetches:
        return f"round 2 fetched {later} source(s); the floor is {s.full_round2_fetches}"
    if len(sources) < s.full_distinct_sources:
        return (
            f"the run has {len(sources)} distinct sources; the floor is {s.full_distinct_sources}"
        )
    return None


def _asked_before(sq: Any, round_: int) -> set[str]:
    earlier = sq.queries if round_ == 1 else [*sq.queries, *sq.counter_queries]
    return {" ".join(q.split()).casefold() for q in earlier}


def _new_queries(sq: Any, round_: int) -> list[str]:
    before = _asked_before(sq, round_)
    wanted = getattr(sq, TOP_UP_FIELD[round_])
    return [q for q in wanted if " ".join(q.split()).casefold() not in before]


def _top_up(view: View, phase: str, round_: int) -> Action | None:
    """Once per round: when the round fell short of a floor, its searches listed hosts the run
    has neither read nor tried, and dispatches are left, new queries for every sub-question and
    one more fetcher each, told to leave the hosts already read aside — so the HOLD it would
    cause is cleared by work, not recorded. A top-up whose exclusions would cover every host
    the searches list could only fail: when none is left unread, the round is done and the
    verdict's floors ask no more than the run found (docs/contracts.md §10.2)."""
    from deep_research.plugin.runstate import unread_listed

    plan = _plan(view)
    started = [
        sq
        for sq in plan.sub_questions
        if replies.fetcher_path(view.root, sq.id, round_, more=True).exists()
    ]
    # Round 2's own fetchers come first: a top-up spends only dispatches no later round needs.
    later = len(plan.sub_questions) if round_ == 1 and view.depth == "full" else 0
    left = _dispatches_left(view) - later
    short = None if started else shortfall(view, round_)
    if not started and (short is None or left <= 0 or not unread_listed(view.brief)):
        return None
    field = TOP_UP_FIELD[round_]
    if not started:
        lacking = [sq.id for sq in plan.sub_questions if not _new_queries(sq, round_)]
        if lacking:
            return Action(
                action="write",
                phase=phase,
                why=f"{short}: a top-up needs new queries for {', '.join(lacking)}",
                path=str(view.root / "plan.json"),
                example=_plan_with(plan, field),
                rules=role_contracts.filled(
                    ORCHESTRATOR, "Top-up queries", field=field, sources=view.brief.sources_path
                ),
            )
    tasks = []
    exclude = _fetched_hosts(view)
    for sq in plan.sub_questions:
        target = replies.fetcher_path(view.root, sq.id, round_, more=True)
        if target.exists():
            continue
        task = _fetch_task(view, sq, round_, _new_queries(sq, round_), exclude)
        tasks.append(Dispatch.of(task, target))
    if not tasks or left <= 0:
        return None  # topped up once (or out of dispatches): the round is done
    why = f"round {round_} top-up: {len(tasks)} fetcher(s) with new queries"
    return _dispatch(view, phase, why, FetchTask.agent_type(), tasks, left=left, then_next=True)


def phase_cast(view: View) -> Action | None:
    return _dispatch_or_ingest(view, "cast", 1)


def phase_normalize(view: View) -> Action | None:
    # Round 1's returns are normalized by `ingest` as the cast phase's last step.
    return None


def phase_round2(view: View) -> Action | None:
    _, _, need_counter = _floors(view)
    from deep_research.decide.counters import distinct

    plan = _plan(view)
    short = [sq.id for sq in plan.sub_questions if distinct(sq.counter_queries) < need_counter]
    if short:
        return Action(
            action="write",
            phase="round2",
            why=f"round 2 needs counter-queries for {', '.join(short)}",
            path=str(view.root / "plan.json"),
            example=_plan_with(plan, "counter_queries"),
            rules=role_contracts.filled(
                ORCHESTRATOR, "Counter-queries", need=need_counter, sources=view.brief.sources_path
            ),
        )
    return _dispatch_or_ingest(view, "round2", 2)


# --- claims ---------------------------------------------------------------------------------


def phase_claims(view: View) -> Action | None:
    document = view.claims()
    if document is not None and document.claims:
        return None
    graph = replies.triangulator_path(view.root)
    if not graph.exists():
        last_round = 2 if view.depth == "full" else 1
        return Action(
            action="dispatch",
            phase="claims",
            why="the findings need a claim graph",
            agent=TriangulateTask.agent_type(),
            tasks=[_issued(view, TriangulateTask(brief=str(view.root), round=last_round), graph)],
            rules=role_contracts.items(ORCHESTRATOR, "Save one reply"),
        )
    plan = _plan(view)
    gaps = list(dict.fromkeys([*recorded_gaps(view.brief), *budget_gaps(view)]))
    example = {
        "topic": view.root.name,
        "depth": view.depth,
        "sub_questions": [{"id": sq.id, "question": sq.question} for sq in plan.sub_questions],
        "claims": [
            {
                "id": "C1",
                "claim": "one falsifiable statement",
                "sq": plan.sub_questions[0].id,
                "supporting": ["S1", "S2"],
                "findings": ["S1.F1", "S2.F3"],
                "importance": "central",
            }
        ],
        "coverage_gaps": gaps,
    }
    return Action(
        action="write",
        phase="claims",
        why="claims.json is written from the claim graph",
        path=str(view.brief.claims_path),
        example=example,
        rules=role_contracts.filled(
            ORCHESTRATOR, "Claims", graph=graph, sources=view.brief.sources_path, depth=view.depth
        ),
    )


def _command(view: View, phase: str, why: str, run: Run) -> Action:
    return Action(action="run", phase=phase, why=why, command=run.line(), run=run)


def phase_trace(view: View) -> Action | None:
    if "trace" in view.phases():
        return None
    document = view.claims()
    if document is not None and (
        document.question != view.record.topic
        or document.generated != view.record.started_at.date()
    ):
        why = "claims.json gets the run's question and date, as start recorded them"
        return _command(view, "trace", why, brief_run("ingest", view.root))
    if document is not None and unadopted_contradictions(view.brief, document):
        why = "claims.json gets the contradictions the triangulator recorded"
        return _command(view, "trace", why, brief_run("ingest", view.root))
    return _command(view, "trace", "every citation is traced", brief_run("trace", view.root))


# --- the entailment judge -------------------------------------------------------------------


def _judge_pairs(document: ClaimsFile) -> list[tuple[str, str]]:
    """(claim, source) for every load-bearing traced claim and each source whose text the trace
    gate located for it: the pairs the verdict's confidence rests on."""
    from deep_research.decide.triangulate import load_bearing

    traced = [claim for claim in document.claims if claim.support_class == "Supported"]
    pairs = []
    for claim in load_bearing(traced):
        located = {item.source for item in claim.evidence if item.span}
        pairs += [(claim.id, source) for source in sorted(located)]
    return pairs


def _verify_batches(view: View, document: ClaimsFile) -> list[tuple[str, tuple[str, ...]]]:
    """The pairs no saved reply covers, as (claim, sources): one verifier per claim, a claim of
    more than :data:`MAX_PAIRS_PER_VERIFIER` sources split. A pair a saved reply was asked —
    judged, left out or unreadable — is never asked again, as a pair reply never was."""
    asked = {
        (item.claim, source)
        for item in replies.saved(view.root)
        if item.kind == "verifier"
        for source in item.sources
    }
    waiting: dict[str, list[str]] = {}
    for claim, source in _judge_pairs(document):
        if (claim, source) not in asked:
            waiting.setdefault(claim, []).append(source)
    return [
        (claim, tuple(sources[at : at + MAX_PAIRS_PER_VERIFIER]))
        for claim, sources in waiting.items()
        for at in range(0, len(sources), MAX_PAIRS_PER_VERIFIER)
    ]


def phase_entail(view: View) -> Action | None:
    document = view.claims()
    if document is None or "entail" in view.phases():
        return None
    batches = _verify_batches(view, document)
    tasks = [
        _issued(
            view,
            VerifyTask(brief=str(view.root), claim_id=claim, source_ids=sources),
            replies.verifier_path(view.root, claim, sources),
            document,
        )
        for claim, sources in batches
    ]
    if tasks:
        pairs = sum(len(sources) for _, sources in batches)
        why = f"{pairs} (claim, source) pair(s) still to be judged for entailment"
        return _dispatch(view, "entail", why, VerifyTask.agent_type(), tasks)
    judged = [r for r in replies.saved(view.root) if r.kind == "verifier"]
    if judged and pending(view.brief, judged):
        return _command(
            view, "entail", "the judgements are checked", brief_run("ingest", view.root)
        )
    return None


# --- the skeptic panel ----------------------------------------------------------------------


def _panel_tasks(view: View, document: ClaimsFile) -> list[Dispatch]:
    from deep_research.decide.votes import parse_vote

    tasks = []
    size = view.settings.panel_size
    for claim in panel_claims(document):
        votes = [replies.skeptic_path(view.root, claim.id, n) for n in range(1, size + 1)]
        # A saved reply is read as ingest reads it: an unreadable one abstains.
        cast = [parse_vote(replies.read_reply(path)) for path in votes if path.exists()]
        missing = [path for path in votes if not path.exists()]
        for path in missing[: votes_wanted(cast, view.settings)]:
            task = SkepticTask(brief=str(view.root), claim_id=claim.id)
            tasks.append(_issued(view, task, path, document))
    return tasks


def phase_panel(view: View) -> Action | None:
    document = view.claims()
    if document is None:
        return None
    tasks = _panel_tasks(view, document)
    if tasks:
        why = f"{len(tasks)} skeptic vote(s) still to cast on the traced central claims"
        return _dispatch(view, "panel", why, SkepticTask.agent_type(), tasks)
    votes = [r for r in replies.saved(view.root) if r.kind == "skeptic"]
    if votes and pending(view.brief, votes):
        return _command(view, "panel", "the votes are recorded", brief_run("ingest", view.root))
    return None


def phase_triangulate(view: View) -> Action | None:
    if "triangulate" in view.phases():
        return None
    why = "independence, τ and confidence are computed"
    return _command(view, "triangulate", why, brief_run("triangulate", view.root))


def phase_refetch(view: View) -> Action | None:
    if "refetch" in view.phases():
        return None
    why = "a sample of the cited pages is re-fetched"
    return _command(view, "refetch", why, brief_run("refetch", view.root))


def phase_ciber(view: View) -> Action | None:
    document = view.claims()
    if document is None or "ciber" in view.phases():
        return None
    skip = ciber_skip(document, view.settings)
    if skip is not None:
        why = f"CIBER is validly skipped: {skip}"
        return _command(view, "ciber", why, ciber_skip_run(view.root, skip))
    diagnoses = [r for r in replies.saved(view.root) if r.kind == "ciber"]
    if diagnoses and pending(view.brief, diagnoses):
        return _command(
            view, "ciber", "the CIBER diagnosis is applied", brief_run("ingest", view.root)
        )
    saved_to = replies.ciber_path(view.root)
    if saved_to.exists():  # applied nothing: the reply was unusable; one retry, then go on
        saved_to = replies.ciber_path(view.root, retry=True)
        if saved_to.exists():
            return None  # CIBER did not run; the verdict says so
    return Action(
        action="dispatch",
        phase="ciber",
        why="the high-confidence claims are re-framed",
        agent=CiberTask.agent_type(),
        tasks=[
            _issued(
                view,
                CiberTask(brief=str(view.root), top_n=view.settings.ciber_top_n, k_per_claim=3),
                saved_to,
                document,
            )
        ],
        rules=role_contracts.items(ORCHESTRATOR, "Save one reply"),
    )


def phase_synthesize(view: View) -> Action | None:
    from deep_research.gates.trace import emitted_claims

    document = view.claims()
    if document is None or document.synthesis:
        return None
    text = replies.synthesis_path(view.root)
    if text.exists():
        return _command(view, "synthesize", "the answer is checked", brief_run("ingest", view.root))
    why = "the answer is written from the verified claims only"
    refused = replies.synthesis_path(view.root, refused=True)
    if refused.exists():  # once more, with what the answer gate asked for
        from deep_research.gates.answer import check_answer

        said = refused.read_text(encoding="utf-8", errors="replace")
        why = f"the answer was refused; {check_answer(view.brief, said, document).next_step()}"
    emitted = [f"{c.id} [{', '.join(c.supporting)}]: {c.claim}" for c in emitted_claims(document)]
    return Action(
        action="write",
        phase="synthesize",
        why=why,
        path=str(text),
        # The contract's rules, then the claims they speak of: the data, one line each.
        rules=[*role_contracts.items(SYNTHESIZER, "Rules"), *emitted],
    )


def phase_verdict(view: View) -> Action | None:
    phases = view.phases()
    if "counters" not in phases:
        why = "the work counters are recorded from the artifacts"
        return _command(view, "verdict", why, counters_run(view.root, view.root / "plan.json"))
    if "verdict" not in phases:
        return _command(view, "verdict", "the verdict is decided", brief_run("verdict", view.root))
    return None


def phase_render(view: View) -> Action | None:
    document = view.claims()
    if document is None or document.verdict == "FAIL" or (view.root / "report.md").exists():
        return None
    return _command(view, "render", "report.md is written", brief_run("render", view.root))


HANDLERS: dict[str, Callable[[View], Action | None]] = phase_functions(globals())


#: The phase whose work a HOLD reason counts (by the rule id its reason ends with).
CLEARED_BY = {
    "floor-unmet:sub_questions": "plan",
    "floor-unmet:queries_per_sub_question": "plan",
    "floor-unmet:round1_fetches": "cast",
    "floor-unmet:distinct_sources": "cast and round2",
    "floor-unmet:rounds": "round2",
    "floor-unmet:counter_queries_per_sub_question": "round2",
    "floor-unmet:round2_fetches": "round2",
    "floor-unmet:refetch_sample": "refetch",
    "sources-unread": "cast and round2: the pages the searches listed and no fetcher read",
    "verifier-violation": "trace",
    "trace-not-reproduced": "trace",
    "ciber-missing": "ciber",
    "no-verified-claim": "plan: the sources found do not answer the question; ask a narrower one",
}


def _hold_lines(reasons: list[str]) -> list[str]:
    lines = []
    for line in reasons:
        reason = read_reason(line)
        if reason is not None and reason.verdict == "HOLD" and reason.rule in CLEARED_BY:
            lines.append(f"{reason.rule}: the work of phase {CLEARED_BY[reason.rule]}")
    return lines


def _regenerate(view: View) -> Action | None:
    """A FAIL brief starts again once, in a new brief; the failed one is kept aside by start."""
    from deep_research.plugin.runstate import load_active

    record = view.record
    if record.replaces is not None and record.replaces.verdict == "FAIL":
        return None  # this run is the regeneration: its FAIL stands
    state = view.root.parent.parent
    try:
        active = load_active(state)
    except DeepResearchError:
        active = None
    why = "FAIL: the pages no longer say what was fetched; the research starts again"
    if active is not None and active.brief == view.root:
        closing = Run(command="finish", words=(str(view.root), "--state", str(state)))
        return _command(view, "verdict", why + " (first the failed run is closed)", closing)
    caps = record.caps
    words = [record.topic, "--depth", view.depth, "--state", str(state)]
    words += ["--max-fetches", str(caps.max_fetches), "--fan-out", str(caps.max_fanout)]
    words += ["--rounds", str(caps.max_rounds), "--max-searches", str(caps.max_searches)]
    if record.mcp is not None:
        words += ["--mcp", record.mcp]
    again = Run(command="start", words=tuple(words))
    return _command(view, "verdict", why + " in a new brief", again)


def _done(view: View) -> Action:
    document = view.claims()
    verdict = document.verdict if document is not None else None
    reasons = list(document.verdict_reasons) if document is not None else []
    root = str(view.root)
    if verdict == "FAIL":
        again = _regenerate(view)
        if again is not None:
            return again
    why = "every phase is complete"
    rules: list[str] = []
    if verdict == "HOLD":
        why = "HOLD: the run did all the work its caps allow; what is missing is named below"
        rules = _hold_lines(reasons)
    return Action(
        action="done",
        phase="verdict",
        why=why,
        verdict=verdict,
        reasons=reasons,
        rules=rules,
        then=[view.cli("handoff", root), view.cli("finish", root)],
    )


def next_action(root: Path, settings: Settings | None = None) -> Action:
    """The one thing to do next in the plugin run at ``root``."""
    brief = open_brief(root)
    run = brief.load_run()
    # What next writes: the folder the replies it asks for are saved in (and, as it issues a
    # judging task, that task's input file).
    replies.returns_dir(root).mkdir(exist_ok=True)
    # The run's own settings, frozen at start: the floors next asks for are the verdict's.
    view = View(brief, run, settings or settings_for(root))
    draft = claims_draft_of(brief)
    if draft is not None and draft.dropped:
        # A draft holding a field code computes (a verdict, a confidence, an answer) is read
        # for nothing until ingest drops it: the value is code's, whatever the model wrote.
        why = "claims.json keeps only the writer's fields; code computes the rest"
        return _command(view, "trace", why, brief_run("ingest", view.root))
    document = view.claims()
    if document is not None and document.verdict == "FAIL":
        return _done(view)  # nothing more is done in a failed brief: it is regenerated
    for phase in phases_for(run.depth):
        action = HANDLERS[phase.name](view)
        if action is not None:
            return action
    return _done(view)
