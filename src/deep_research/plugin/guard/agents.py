"""Agent dispatches during a run: only the plugin's contracts, each with a task ``next`` issued,
under the run's fan-out ceiling, fetcher budget and round cap.

An agent type counts as Claude Code resolves it, so case, spacing and the plugin's
``deep-research:`` namespace change nothing (``Fetcher``, ``deep-research: fetcher`` and
``fetcher`` are one agent, one budget). A type that is not one of agents/*.md — a built-in
``general-purpose``, another plugin's agent — is denied during a run. Which task a dispatch is,
and its round, come from its prompt read back as the record ``next`` wrote it from
(:func:`deep_research.plugin.tasks.parse`: the one definition of the prompts), never from prose.
"""

from __future__ import annotations

import time
from typing import Any

from deep_research.brief.layout import Brief
from deep_research.plugin.guard.budgets import append
from deep_research.plugin.guard.decision import (
    ALLOW,
    Call,
    Decision,
    deny,
    not_this_sessions_run,
)
from deep_research.plugin.runstate import fetcher_budget, in_flight, locked, read_ledger
from deep_research.plugin.tasks import (
    FETCHING,
    PLUGIN,
    TASKS,
    FetchTask,
    declared_round,
    parse,
)

NAMESPACE = f"{PLUGIN}:"
#: agents/*.md, by name (tests/plugin/test_guard.py checks the two agree): one per task shape.
CONTRACTS = frozenset(kind.agent for kind in TASKS.values())
#: The agents whose dispatches the run's fetcher budget counts.
FETCHERS = frozenset(kind.agent for kind in FETCHING)
#: What a dispatch of the run sets, beside ``run_in_background: false``, always stated (2.1.332
#: starts agents in the background unless told not to). Never a background agent (its
#: PostToolUse comes at launch, so the agent would stop counting against the ceiling while it
#: runs, and its reply is not there to save), ``isolation`` (a remote agent runs where these
#: hooks do not), ``mode``, ``name``/``team_name`` or ``cwd``.
DISPATCH_FIELDS = frozenset({"description", "prompt", "subagent_type", "model"})


def resolve_agent(name: object) -> str:
    """An agent type as one name: no whitespace, folded case, no ``deep-research:`` prefix."""
    folded = "".join(str(name or "").split()).casefold()
    return folded.removeprefix(NAMESPACE)


def check_agent(call: Call) -> Decision:
    run = call.run
    if run is None:
        foreign = call.foreign
        prompt = call.tool_input.get("prompt")
        task = parse(prompt) if foreign is not None and isinstance(prompt, str) else None
        if foreign is not None and task is not None and call.names(task.brief, foreign.brief):
            return not_this_sessions_run("Agent", foreign)
        return ALLOW
    if call.agent is not None:
        return deny("Agent: a subagent dispatches no agents during a research run")
    agent = resolve_agent(call.tool_input.get("subagent_type") or "general-purpose")
    if agent not in CONTRACTS:
        return deny(
            f"Agent: {agent[:60]!r} is not one of the plugin's agents; during a research run "
            f"only {', '.join(sorted(CONTRACTS))} run, as `deep-research next` dispatches them"
        )
    # Explicitly false: 2.1.332 starts an agent that leaves it out in the background.
    if call.tool_input.get("run_in_background") is not False:
        return deny(
            "Agent: a research run's agents run in the foreground (run_in_background: false), "
            "so each reply is saved before the next step"
        )
    extra = sorted(set(call.tool_input) - DISPATCH_FIELDS - {"run_in_background"})
    if extra:
        return deny(
            f"Agent: a research run's dispatch sets description, subagent_type and prompt only, "
            f"not {', '.join(name[:40] for name in extra[:5])}"
        )
    prompt = call.tool_input.get("prompt")
    task = parse(prompt) if isinstance(prompt, str) else None
    if task is None:
        return deny(
            "Agent: the prompt is not a task `deep-research next` issued; dispatch each task "
            "with its prompt exactly as printed"
        )
    if task.agent != agent:
        return deny(f"Agent: this task is for the {task.agent} agent, not {agent}")
    if not call.names(task.brief, run.brief):
        return deny(f"Agent: the task names another brief than the active run's ({run.brief})")
    round_ = declared_round(task)
    if round_ is not None and round_ > run.caps.max_rounds:
        return deny(f"Agent: round {round_} exceeds the run's round cap ({run.caps.max_rounds})")
    marks = task.ledger_marks() if isinstance(task, FetchTask) else {}
    return _admit(call, agent, round_, marks)


def _admit(call: Call, agent: str, round_: int | None, marks: dict[str, Any]) -> Decision:
    """Under the ledger's lock: the fan-out ceiling, the fetcher budget, then the record."""
    run = call.run
    assert run is not None
    is_fetcher = agent in FETCHERS
    brief = Brief(run.brief)
    with locked(brief):
        rows = read_ledger(brief)
        running = in_flight(rows, time.time())
        if running >= run.caps.max_fanout:
            return deny(
                f"Agent: fan-out ceiling reached ({running} agents in flight, ceiling "
                f"{run.caps.max_fanout}); wait for results before dispatching more"
            )
        if is_fetcher:
            dispatches = (row for row in rows if row.get("event") == "dispatch")
            fetchers = sum(1 for row in dispatches if row.get("fetcher"))
            budget = fetcher_budget(brief, run.record)
            if fetchers >= budget:
                return deny(
                    f"Agent: the run's fetcher dispatches are spent ({fetchers} of {budget}: "
                    "per planned sub-question and round: one, a retry and a top-up)"
                )
        row: dict[str, Any] = {
            "event": "dispatch",
            "id": call.tool_use_id,
            "agent": NAMESPACE + agent,
            "fetcher": is_fetcher,
        }
        if is_fetcher:
            # What `counters` counts rounds by: a round is only as real as its dispatches.
            row["round"] = round_ or 1
        # A top-up and the hosts it leaves aside: what shows a dispatch could find something.
        row.update(marks)
        append(brief, row)
    return ALLOW
