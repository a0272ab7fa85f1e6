"""The workflow driver of a plugin run: ``deep-research step`` and the replies the hook keeps.

Claude Code runs ``workflows/research-run.js`` in the background. The script decides nothing:
code hands it each step, runs nothing but the step's agents, and is handed the next. The step
is computed here, from the same ``next`` the loop driver follows
(:func:`deep_research.plugin.next.next_action`, which walks :data:`run.pipeline.PIPELINE`):

* every ``run`` action (``ingest``, ``trace``, ``triangulate``, …) is executed in this process,
  in order, through the typed table of :mod:`deep_research.plugin.runs`, until a step needs a
  model — so the script never carries a command line;
* a ``dispatch`` becomes one script task per agent, a ``write`` one task for the ``writer``
  agent; each task carries its prompt and the JSON Schema its reply must meet (the contract's,
  from :mod:`deep_research.schemas` — the files under schemas/ — plus the task's id);
* ``done`` carries the verdict; ``stop`` says why the workflow cannot go on, for the main loop.

The step is kept in ``<brief>/workflow-step.json``. The hook guard hands the first to the
launch (in its ``args``, :func:`first_step`). Agents answer through Claude Code's
StructuredOutput tool, and the hook guard hands each answer to :func:`accept` before the tool
runs: a reply is checked and saved to the file ``next`` named for it, or refused with the exact
reason (the agent corrects it and calls again). The answer that completes a step carries the
next one (:data:`NEXT_FIELD`). Only when no answer can (an agent ended without one) does the
script start a ``stepper`` agent, which runs ``deep-research step`` and whose answer is replaced
by the step itself. No reply passes through the main model, and the script holds ids and small
JSON.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deep_research import role_contracts
from deep_research.brief.layout import Brief
from deep_research.brief.writers import atomic_write_bytes, atomic_write_json, atomic_write_text
from deep_research.errors import DeepResearchError
from deep_research.normalize.own_fields import claims_draft
from deep_research.plugin import replies
from deep_research.plugin.ingest import CLAIMS, note_dropped
from deep_research.plugin.next import ORCHESTRATOR, Action, Directive, next_action
from deep_research.plugin.progress import (
    WORKFLOW_STEP_FILE,
    finished_between,
    phase_line,
    run_phases,
)
from deep_research.plugin.runs import RUNNERS, run_in_process
from deep_research.plugin.tasks import PLUGIN, FetchTask, parse

#: The two agents only the workflow starts (agents/stepper.md, agents/writer.md).
STEPPER = "stepper"
WRITER = "writer"
#: ``run`` actions one step executes at most; a pipeline has fewer than 20 in all.
MAX_RUNS_PER_STEP = 40
#: A write whose agent ended without an answer this many times stops the workflow.
MAX_WRITE_FAILURES = 2
#: What a failed agent's reply file holds: a text no reader takes for an answer, so ``next``
#: treats the task as it treats an unusable reply (a fetcher's retry, a third skeptic, a gap).
NO_REPLY = "no reply: the workflow agent ended without answering"
#: The most characters of JSON one agent's answer may hold. The largest legitimate answer is a
#: writer's synthesis (200,000 characters at most, :class:`SynthesisReply`) or a fetcher's
#: findings (about 60,000 in the scripted full run); five times the larger, and a reply of tens
#: of megabytes is refused before it is parsed further or saved.
MAX_REPLY_CHARS = 1_000_000
#: Between a task's id and its seal in the ``"task"`` value the agent's prompt gives.
SEAL_MARK = "#"
#: The ledger row of an answer code kept: the task, and the agent it was kept from.
ANSWER_EVENT = "answer"
#: The field of an answer that hands the script its next step. The hook that keeps a step's
#: last outstanding answer writes it (updatedInput); a model never does — an answer carrying it
#: is refused. Claude Code checks the hook's replacement against the task's schema again (2.1.197
#: and 2.1.332: an undeclared field is refused, the answer lost), so every task's schema declares
#: it, optional.
NEXT_FIELD = "next"
NEXT_PROPERTY: dict[str, Any] = {
    "type": "object",
    "description": "the workflow's own field, filled in by code: never write it",
}
#: What the stepper is told when no answer carried the step (docs/plugin.md, agents/stepper.md).
STEPPER_PROMPT = "Run this command with Bash, exactly as written:\n{command}"

#: Each contract's reply schema, by agent (the schema files under schemas/).
REPLY_SCHEMA = {
    "fetcher": "fetcher-output",
    "mcp-fetcher": "fetcher-output",
    "triangulator": "triangulator-output",
    "verifier": "verifier-output",
    "skeptic": "skeptic-vote",
    "ciber": "ciber-output",
}
WriteKind = Literal["plan", "claims", "synthesis"]
StepKind = Literal["dispatch", "write", "done", "stop"]


#: The writer's claims.json: an object with its claims; the rest is next's check of the file.
CLAIMS_DRAFT: dict[str, Any] = {
    "type": "object",
    "required": ["claims"],
    "properties": {"claims": {"type": "array", "items": {"type": "object"}}},
}


class SynthesisReply(BaseModel):
    """The writer's answer for returns/synthesis.md: the text, as the file holds it."""

    model_config = ConfigDict(defer_build=True)

    text: str = Field(min_length=1, max_length=200_000)


class ScriptTask(BaseModel):
    """One agent the script starts: what it is told and the shape its answer must take."""

    id: str
    agent: str
    label: str
    prompt: str
    schema_: dict[str, Any] = Field(alias="schema")

    model_config = ConfigDict(populate_by_name=True, defer_build=True)


class Tick(BaseModel):
    """A phase that finished during a step, and the line that says what it counted."""

    model_config = ConfigDict(defer_build=True)

    phase: str
    line: str


class Step(Directive):
    """One step of the workflow: the script reads every field but ``saves``/``write``/``served``."""

    action: StepKind
    tasks: list[ScriptTask] = Field(default_factory=list)
    verdict: str | None = None
    reasons: list[str] = Field(default_factory=list)
    then: list[str] = Field(default_factory=list)
    log: list[str] = Field(default_factory=list)
    #: The phases that finished since the previous step, in order — the ones code ran inside
    #: this step included — so the script ticks every phase in /workflows with its figure.
    finished: list[Tick] = Field(default_factory=list)
    #: Task id → the file its reply is saved to (code only).
    saves: dict[str, str] = Field(default_factory=dict)
    #: For a write: what is written, where (code only).
    write_kind: WriteKind | None = None
    write_path: str | None = None
    #: The stepper's answer was replaced by this step once; a second answer must run step again.
    served: bool = False
    #: Task id → the SHA-256 of the sealed ``"task"`` value only that task's prompt carries
    #: (code only; the value itself is in no file): what binds a reply to the agent given the task.
    seals: dict[str, str] = Field(default_factory=dict)
    #: A random name for this step as served (code only): the ledger's answer rows carry it, so
    #: a task id a later step issues again is a new task, and ``--failed`` is checked against it.
    serial: str = ""

    def for_script(self) -> dict[str, Any]:
        return self.model_dump(
            include={
                "action",
                "phase",
                "why",
                "tasks",
                "verdict",
                "reasons",
                "then",
                "log",
                "finished",
            },
            by_alias=True,
        )


# --- the step ---------------------------------------------------------------------------------


def step(root: Path, failed: Sequence[str] = ()) -> Step:
    """Run every ``run`` action ``next`` asks for, then return (and keep) the first step that
    needs a model. ``failed`` names the tasks of the previous step whose agents ended without an
    answer: each is recorded as an unusable reply, so the run goes on as ``next`` rules."""
    from deep_research.brief.record import open_brief

    brief = open_brief(root)
    previous = load_step(root)
    log = _record_failures(brief, previous, failed)
    if isinstance(log, Step):
        return _keep(root, log)
    ran: set[str] = set()
    for _ in range(MAX_RUNS_PER_STEP):
        action = next_action(root)
        if action.action != "run":
            return _keep(root, _convert(brief, action, log))
        command = action.command or ""
        if action.run is None or action.run.command not in RUNNERS:  # start, finish
            why = f"{action.why}: the main loop runs `deep-research next` and follows it"
            return _keep(root, Step(action="stop", phase=action.phase, why=why, log=log))
        if command in ran:
            why = f"`{command}` did not do its work (it is asked for again): {log[-1]}"
            return _keep(root, Step(action="stop", phase=action.phase, why=why, log=log))
        ran.add(command)
        log.append(f"{action.phase}: {action.why} — `{command}` {run_in_process(action.run)}")
    why = f"more than {MAX_RUNS_PER_STEP} commands in one step"
    return _keep(root, Step(action="stop", phase="verdict", why=why, log=log))


def _record_failures(
    brief: Brief, previous: Step | None, failed: Sequence[str]
) -> list[str] | Step:
    log: list[str] = []
    if previous is None or not failed:
        return log
    if not previous.served:
        # Only the script, which was handed the step, reports its agents; a `--failed` for a
        # step nobody was handed (a second call, another caller) records nothing.
        return [f"--failed {','.join(failed)[:200]} ignored: the step was not handed out"]
    answered = _answered(brief, previous.serial)
    for task_id in dict.fromkeys(failed):
        if task_id in answered or not any(t.id == task_id for t in previous.tasks):
            log.append(f"{task_id[:80]}: not marked failed (answered, or no task of the step)")
        elif task_id in previous.saves:
            target = Path(previous.saves[task_id])
            if not target.exists():
                atomic_write_text(target, NO_REPLY + "\n")
                log.append(f"{task_id}: the agent ended without an answer; recorded as unusable")
        elif previous.action == "write" and any(t.id == task_id for t in previous.tasks):
            count = _bump_write_failures(brief.root, task_id)
            log.append(f"{task_id}: the writer ended without an answer ({count} time(s))")
            if count >= MAX_WRITE_FAILURES:
                why = f"the {task_id} writer ended without an answer {count} times"
                return Step(action="stop", phase=previous.phase, why=why, log=log)
    return log


def _answered(brief: Brief, serial: str) -> set[str]:
    """The tasks of the served step ``serial`` whose answers code kept (the ledger's rows)."""
    from deep_research.plugin.runstate import read_ledger

    return {
        str(row.get("id"))
        for row in read_ledger(brief)
        if row.get("event") == ANSWER_EVENT and row.get("step") == serial
    }


def _bump_write_failures(root: Path, task_id: str) -> int:
    path = root / "workflow-failures.json"
    try:
        counts = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        counts = {}
    if not isinstance(counts, dict):
        counts = {}
    counts[task_id] = int(counts.get(task_id) or 0) + 1
    atomic_write_json(path, counts)
    return int(counts[task_id])


def _convert(brief: Brief, action: Action, log: list[str]) -> Step:
    if action.action == "done":
        return Step(
            action="done",
            phase=action.phase,
            why=action.why,
            verdict=action.verdict,
            reasons=action.reasons,
            then=action.then,
            log=[*log, *action.rules],
        )
    if action.action == "write":
        return _write_step(brief, action, log)
    return _dispatch_step(brief, action, log)


def _dispatch_step(brief: Brief, action: Action, log: list[str]) -> Step:
    from deep_research.plugin.guard.agents import resolve_agent

    agent = resolve_agent(action.agent)
    tasks, saves = [], {}
    for task in action.tasks:
        task_id = Path(task.save_to).stem
        # The prompt and schema as printed; the served step seals both (:func:`_sealed`).
        schema = reply_schema(agent, task_id)
        tasks.append(
            ScriptTask(
                id=task_id,
                agent=f"{PLUGIN}:{agent}",
                label=task_id,
                prompt=task.prompt,
                schema_=schema,
            )
        )
        saves[task_id] = task.save_to
        _count_fetcher(brief, agent, task.save_to, task.prompt)
    return Step(
        action="dispatch", phase=action.phase, why=action.why, tasks=tasks, saves=saves, log=log
    )


def reply_schema(agent: str, task_id: str) -> dict[str, Any]:
    """The contract's schema with the task's id as one more required field."""
    from deep_research.schemas import schema_for

    schema = _as_tool_schema(schema_for(REPLY_SCHEMA[agent]))
    schema.setdefault("properties", {})["task"] = {
        "const": task_id,
        "description": "the task id the prompt gives, as given",
    }
    schema["required"] = [*schema.get("required", []), "task"]
    return dict(schema)


def _as_tool_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A schema file's body as a tool's input schema: Claude Code refuses to start an agent
    whose schema names a draft (``$schema``) or an id of its own (seen in 2.1.197)."""
    body = json.loads(json.dumps(schema))
    body.pop("$schema", None)
    body.pop("$id", None)
    return dict(body)


def _count_fetcher(brief: Brief, agent: str, save_to: str, prompt: str) -> None:
    """A fetcher the workflow starts counts against the run's fetcher budget and round cap as a
    dispatch through the Agent tool does (the guard's ledger), once per task. Its round is read
    from the file ``next`` named for its reply, never from the prompt alone: a prompt the task
    parser will not read (over its length limit) still counts."""
    from deep_research.plugin.guard.agents import FETCHERS
    from deep_research.plugin.runstate import append_ledger, locked, read_ledger

    named = replies.parse_name(Path(save_to))
    if agent not in FETCHERS or named is None or named.kind != "fetcher":
        return
    task_id = Path(save_to).stem
    task = parse(prompt)
    with locked(brief):
        rows = read_ledger(brief) if (brief.root / "guard-log.jsonl").exists() else []
        if any(row.get("event") == "dispatch" and row.get("id") == task_id for row in rows):
            return  # a resumed workflow starts the same task again: it is counted once
        append_ledger(
            brief,
            {
                "event": "dispatch",
                "id": task_id,
                "agent": f"{PLUGIN}:{agent}",
                "fetcher": True,
                "round": named.round,
                "via": "workflow",
                **(task.ledger_marks() if isinstance(task, FetchTask) else {}),
            },
        )


def _write_step(brief: Brief, action: Action, log: list[str]) -> Step:
    from deep_research.decide.counters import PlanFile

    path = Path(action.path or "")
    kind: WriteKind
    if path.name == "plan.json":
        kind, schema = "plan", PlanFile.model_json_schema()
    elif path.name == "claims.json":
        # The draft's shape only: what claims.json holds beyond it is computed by code, and
        # next checks the draft as the loop's Write of it is checked (schemas/claims).
        kind, schema = "claims", CLAIMS_DRAFT
    else:
        kind, schema = "synthesis", SynthesisReply.model_json_schema()
    # The writer's contract (agents/writer.md) says how each file is answered.
    how = role_contracts.filled(ORCHESTRATOR, "Workflow write", file=path.name, brief=brief.root)
    lines = [action.why, *how]
    lines += [f"- {rule}" for rule in action.rules]
    lines += [f"- {name}: {value}" for name, value in action.bounds.items()]
    if action.example is not None:
        lines.append("Like: " + json.dumps(action.example, ensure_ascii=False))
    task = ScriptTask(
        id=f"write-{kind}",
        agent=f"{PLUGIN}:{WRITER}",
        label=f"write {path.name}",
        prompt="\n".join(lines),
        schema_=schema,
    )
    return Step(
        action="write",
        phase=action.phase,
        why=action.why,
        tasks=[task],
        log=log,
        write_kind=kind,
        write_path=str(path),
    )


def _keep(root: Path, value: Step) -> Step:
    previous = load_step(root)
    phases = run_phases(root)
    finished = finished_between(
        phases,
        previous.phase if previous is not None else None,
        value.phase,
        done=value.action == "done",
    )
    ticks = [Tick(phase=name, line=phase_line(root, name, phases)) for name in finished]
    value = value.model_copy(update={"finished": ticks})
    atomic_write_json(root / WORKFLOW_STEP_FILE, value.model_dump(by_alias=True))
    return value


def load_step(root: Path) -> Step | None:
    try:
        return Step.model_validate_json((root / WORKFLOW_STEP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, ValidationError):
        return None


# --- the answers, as the hook hands them over ---------------------------------------------------


@dataclass(frozen=True)
class HookAnswer:
    """What the hook answers a StructuredOutput call: allow (with the object ``agent()`` gets
    instead, for the stepper) or refuse with the reason the agent reads."""

    allow: bool
    reason: str = ""
    replace: dict[str, Any] | None = None


def accept(
    root: Path, agent: str, answer: Mapping[str, Any], agent_id: str | None = None
) -> HookAnswer:
    """Check and keep one agent's answer in the brief at ``root``; ``agent`` is its resolved
    type (``fetcher``, ``stepper``, …), ``agent_id`` the id Claude Code gives that agent."""
    current = load_step(root)
    if agent == STEPPER:
        return _serve(root, current)
    if current is None:
        return HookAnswer(
            False, f"no workflow step is open for {root}; the workflow is launched first"
        )
    size = len(json.dumps(dict(answer), ensure_ascii=False, default=str))
    if size > MAX_REPLY_CHARS:
        return HookAnswer(
            False,
            f"the answer is {size:,} characters; at most {MAX_REPLY_CHARS:,} are kept — quote "
            "only the passages that carry each finding and answer again",
        )
    if NEXT_FIELD in answer:
        return HookAnswer(
            False, f'"{NEXT_FIELD}" is the workflow\'s own field: answer without it, as before'
        )
    if agent != WRITER and agent not in REPLY_SCHEMA:
        return HookAnswer(False, f"StructuredOutput: {agent!r} is no agent of this workflow")
    from deep_research.plugin.runstate import locked

    brief = Brief(root)
    with locked(brief):  # two answers to one task: one is kept, the other refused
        if agent == WRITER:
            verdict = _accept_write(brief, current, answer, agent_id or "")
        else:
            verdict = _accept_reply(brief, current, agent, answer, agent_id or "")
        # Under the lock: of a step's answers, exactly one is the last to be kept.
        last = verdict.allow and current.served and _all_answered(brief, current)
    if not last:
        return verdict
    handed = _next_for_script(root)
    if handed is None:
        return verdict
    return HookAnswer(
        True,
        f"{verdict.reason}; the step's last answer, so it carries the next step",
        replace={**answer, NEXT_FIELD: handed},
    )


def _all_answered(brief: Brief, current: Step) -> bool:
    return {task.id for task in current.tasks} <= _answered(brief, current.serial)


def _next_for_script(root: Path) -> dict[str, Any] | None:
    """The next step, handed out, for the script inside the last answer; None when it cannot
    be computed here — the answer is kept all the same, and the script's stepper runs `step`."""
    try:
        return first_step(root)
    except (DeepResearchError, OSError, ValueError):
        return None


def _serve(root: Path, current: Step | None) -> HookAnswer:
    if current is None or current.served:
        return HookAnswer(
            False,
            f"run `deep-research step {shlex.quote(str(root))} --json` with Bash first (the "
            "command your prompt gives), then call StructuredOutput",
        )
    return HookAnswer(True, "the step, from `deep-research step`", replace=hand_out(root, current))


def hand_out(root: Path, current: Step) -> dict[str, Any]:
    """The step kept at ``root`` as the script gets it, marked handed out: each dispatched task
    sealed for its agent alone, every task's schema declaring :data:`NEXT_FIELD`, and the
    prompt of the stepper that runs only if no answer brings the step after it."""
    sealed = [_sealed(task) for task in current.tasks] if current.action == "dispatch" else []
    tasks = [task for task, _ in sealed] or current.tasks
    seals = {task.id: _digest(value) for task, value in sealed}
    serial = secrets.token_hex(8)
    served = current.model_copy(update={"tasks": [_with_next(task) for task in tasks]})
    script = served.for_script()
    if current.action in ("dispatch", "write"):
        # Every task of the step named as failed: `step` marks only those the ledger holds no
        # kept answer for, so code, not the script, says which agents failed.
        words = ["deep-research", "step", str(root), "--json", "--failed"]
        command = shlex.join([*words, ",".join(task.id for task in current.tasks)])
        script["fallback"] = STEPPER_PROMPT.format(command=command)
    kept = current.model_copy(update={"served": True, "seals": seals, "serial": serial})
    atomic_write_json(root / WORKFLOW_STEP_FILE, kept.model_dump(by_alias=True))
    return script


def first_step(root: Path) -> dict[str, Any]:
    """The step computed now, handed out: what the hook puts in a launch's ``args`` and in a
    step's last answer."""
    return hand_out(root, step(root))


def _with_next(task: ScriptTask) -> ScriptTask:
    schema = json.loads(json.dumps(task.schema_))
    schema.setdefault("properties", {})[NEXT_FIELD] = NEXT_PROPERTY
    return task.model_copy(update={"schema_": schema})


def _sealed(task: ScriptTask) -> tuple[ScriptTask, str]:
    """The task as its agent gets it: a ``"task"`` value no other agent is told (the id and a
    random seal), in its prompt and as its schema's constant; and that value."""
    value = f"{task.id}{SEAL_MARK}{secrets.token_hex(8)}"
    answer = role_contracts.filled(ORCHESTRATOR, "Workflow task", task=value)
    prompt = "\n\n".join([task.prompt, "\n".join(answer)])
    schema = reply_schema(resolve(task.agent), value)
    return task.model_copy(update={"prompt": prompt, "schema_": schema}), value


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def _accept_reply(
    brief: Brief, current: Step, agent: str, answer: Mapping[str, Any], agent_id: str
) -> HookAnswer:
    from deep_research.schemas import best_error

    given = answer.get("task")
    task_id = given.partition(SEAL_MARK)[0] if isinstance(given, str) else ""
    refused = _not_yours(brief, current, agent, task_id, given, agent_id)
    if refused is not None:
        return HookAnswer(False, refused)
    target = Path(current.saves[task_id])
    reply = {key: value for key, value in answer.items() if key != "task"}
    error = best_error(REPLY_SCHEMA[agent], reply)
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "the answer"
        return HookAnswer(False, f"{where}: {error.message[:300]}")
    problem = _not_this_task(target, reply)
    if problem is not None:
        return HookAnswer(False, problem)
    atomic_write_bytes(target, (json.dumps(reply, ensure_ascii=False, indent=1) + "\n").encode())
    _record_answer(brief, current, task_id, agent_id)
    return HookAnswer(True, f"{task_id}: saved to {target}")


def _record_answer(brief: Brief, current: Step, task_id: str, agent_id: str) -> None:
    """The ledger row binding a kept answer to the agent it came from, in its served step."""
    from deep_research.plugin.runstate import append_ledger

    row = {"event": ANSWER_EVENT, "id": task_id, "agent_id": agent_id, "step": current.serial}
    append_ledger(brief, row)


def _not_yours(
    brief: Brief, current: Step, agent: str, task_id: str, given: object, agent_id: str
) -> str | None:
    """Why an answer for ``task_id`` is not kept from this agent (None: it is its own, open,
    unanswered task). No reason names another agent's task: a sibling learns nothing to copy."""
    from deep_research.plugin.runstate import read_ledger

    if not task_id:
        return '"task" must be the value your prompt gives, exactly as given'
    mine = any(t.id == task_id and resolve(t.agent) == agent for t in current.tasks)
    if not mine or task_id not in current.saves:
        return (
            f"task {task_id[:80]!r} is not open: the workflow has moved past it or it is no "
            f'{agent} task; nothing is kept for it — end, or answer with the "task" value '
            "your own prompt gives"
        )
    seal = current.seals.get(task_id)
    if seal is None or not isinstance(given, str) or _digest(given) != seal:
        return (
            f"task {task_id[:80]!r} was issued to another agent: answer only your own task, "
            '"task" exactly as your prompt gives it'
        )
    answers = [row for row in read_ledger(brief) if row.get("event") == ANSWER_EVENT]
    if any(row.get("id") == task_id and row.get("step") == current.serial for row in answers):
        return f"task {task_id[:80]!r} is already answered and kept; nothing more is kept — end"
    target = Path(current.saves[task_id])
    if target.exists() and target.read_text(encoding="utf-8", errors="replace").strip() != NO_REPLY:
        return f"task {task_id[:80]!r} is already answered and kept; nothing more is kept — end"
    if agent_id and any(row.get("agent_id") == agent_id for row in answers):
        return "you have answered your task already; an agent answers its own task once — end"
    return None


def _not_this_task(target: Path, reply: Mapping[str, Any]) -> str | None:
    """Why a schema-valid reply still answers another task than the one its file is named for:
    a fetcher's other sub-question, a verifier's other claim, a source it was not asked to
    judge, or one judged twice (None: it is this task's)."""
    saved = replies.parse_name(target)
    if saved is None:
        return None
    if saved.kind == "fetcher" and reply.get("sub_question") not in (None, saved.sub_question):
        return f'"sub_question" must be "{saved.sub_question}", this task\'s sub-question'
    if saved.kind != "verifier":
        return None
    if reply.get("claim_id") != saved.claim:
        return f'"claim_id" must be "{saved.claim}", this task\'s claim'
    judged = [item.get("source_id") for item in reply.get("judgements", [])]
    asked = ", ".join(saved.sources)
    if not set(judged) <= set(saved.sources):
        return f"judge only the sources this task names ({asked}), one judgement each"
    if len(set(judged)) != len(judged):
        return f"one judgement per source ({asked}): a source is judged twice"
    return None


def resolve(agent_type: str) -> str:
    from deep_research.plugin.guard.agents import resolve_agent

    return resolve_agent(agent_type)


def _accept_write(
    brief: Brief, current: Step, answer: Mapping[str, Any], agent_id: str
) -> HookAnswer:
    root = brief.root
    if current.action != "write" or current.write_path is None or current.write_kind is None:
        return HookAnswer(
            False, "no file is to be written at this step; the script asks the stepper"
        )
    path = Path(current.write_path)
    dropped: str | None = None
    if current.write_kind == "synthesis":
        text = answer.get("text")
        if not isinstance(text, str) or not text.strip():
            return HookAnswer(False, '"text" must hold the answer\'s text')
        data = text.rstrip("\n").encode("utf-8") + b"\n"
    else:
        kept = dict(answer)
        if current.write_kind == "claims":
            # The writer's own fields only: every other field of claims.json is code's.
            draft = claims_draft(answer)
            kept, dropped = draft.kept, draft.note(CLAIMS)
        data = (json.dumps(kept, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    before = path.read_bytes() if path.exists() else None
    atomic_write_bytes(path, data)
    problem = _still_asked(root, current)
    if problem is None:
        _record_answer(brief, current, current.tasks[0].id if current.tasks else "", agent_id)
        if dropped is not None:
            note_dropped(Brief(root), dropped)
            return HookAnswer(True, f"saved {path}; {dropped}")
        return HookAnswer(True, f"saved {path}")
    if before is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    else:
        atomic_write_bytes(path, before)
    return HookAnswer(False, f"{path.name} is not accepted: {problem}")


def _still_asked(root: Path, current: Step) -> str | None:
    """Why ``next`` still asks for the same write after it (None: the write did its work)."""
    try:
        after = next_action(root)
    except DeepResearchError as exc:
        return str(exc)
    except ValueError as exc:  # a model the file does not fit
        return str(exc)[:500]
    if (
        after.action == "write"
        and after.path == current.write_path
        and after.phase == current.phase
    ):
        return after.why
    return None
