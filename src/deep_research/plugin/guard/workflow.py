"""The workflow's two tools during a run: launching it, and its agents' answers.

* **Workflow** (the main loop's call): only this plugin's workflow, by name, on the active run's
  brief — never an inline ``script`` or an edited ``scriptPath`` (either would run code the
  model wrote), never from a subagent, and never a second one while one runs on the brief
  (each launch is a ledger row; a resume names the stopped run and passes). A launch let
  through gets the run's first step from code, in its ``args`` (``updatedInput``).
* **StructuredOutput** (a workflow agent's answer): our agents' answers go to
  :func:`deep_research.plugin.workflow.accept`, which checks and keeps each in the brief or
  refuses it with the reason the agent reads; the stepper's answer is replaced by the step code
  computed. Other agents' answers pass (they are answers, nothing runs).
"""

from __future__ import annotations

import contextlib
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from deep_research.brief.layout import Brief
from deep_research.plugin.drivers import WORKFLOW_NAME
from deep_research.plugin.guard.agents import CONTRACTS, resolve_agent
from deep_research.plugin.guard.decision import (
    ALLOW,
    Call,
    Decision,
    deny,
    not_this_sessions_run,
)
from deep_research.plugin.runstate import RESUME_EVENT, append_ledger, locked, read_ledger

WORKFLOW_APPROVED = (
    "deep-research guard: the plugin's own workflow, on the active run's brief; every check passed"
)
#: What a launch of our workflow sets (a resume names the earlier run).
LAUNCH_FIELDS = frozenset({"name", "args", "resumeFromRunId", "description"})
#: The agents whose answers the workflow's code keeps: every contract, the stepper, the writer.
WORKFLOW_AGENTS = CONTRACTS | {"stepper", "writer"}
#: The ledger row of a launch the guard let through.
LAUNCH_EVENT = "workflow"
#: The ledger row of a launch refused after its row was written (no first step): not running.
UNLAUNCHED_EVENT = "workflow-unlaunched"
#: A launched workflow counts as running until it ends (its step is ``done`` or ``stop``) or
#: shows no sign of work — a step, a kept answer, a launch — for this long. A step's agents
#: answer within minutes; a workflow stopped in /workflows leaves no other trace.
WORKFLOW_IDLE_S = 20 * 60


def check_workflow(call: Call) -> Decision:
    run = call.run
    if run is None:
        foreign = call.foreign
        if foreign is not None and _on_brief(call, foreign.brief):
            return not_this_sessions_run("Workflow", foreign)
        return ALLOW
    if call.agent is not None:
        return deny("Workflow: a subagent starts no workflow during a research run")
    extra = sorted(set(call.tool_input) - LAUNCH_FIELDS)
    if extra:
        return deny(
            f"Workflow: during a research run only {WORKFLOW_NAME} runs, by name — not "
            f"{', '.join(name[:40] for name in extra[:4])}"
        )
    if call.tool_input.get("name") != WORKFLOW_NAME:
        return deny(f"Workflow: during a research run only {WORKFLOW_NAME} runs")
    if not _on_brief(call, run.brief):
        return deny(f'Workflow: args must be {{"brief": "{run.brief}"}}, the active run\'s brief')
    brief = Brief(run.brief)
    with locked(brief):
        rows = read_ledger(brief)
        running = _running(brief, rows, time.time())
        # A resume continues the run Claude Code names (it resumes no run still going).
        if running is not None and "resumeFromRunId" not in call.tool_input:
            at = datetime.fromtimestamp(float(running.get("at", 0.0)), UTC)
            return deny(
                f"Workflow: {WORKFLOW_NAME} is already running on {run.brief} (launched "
                f"{at:%H:%M:%S} UTC, tool use {str(running.get('id'))[:60]}); one workflow per "
                "brief — watch it in /workflows, or stop it there and resume it "
                f"(resumeFromRunId), or launch again after {WORKFLOW_IDLE_S // 60} idle minutes"
            )
        append_ledger(brief, {"event": LAUNCH_EVENT, "id": call.tool_use_id})
    # The script starts from the step code computes now, handed in its args (the model's args
    # name the brief; a step it wrote is replaced). Computed after the lock is let go: the step
    # takes it itself.
    from deep_research.errors import DeepResearchError
    from deep_research.plugin.workflow import first_step

    try:
        handed = first_step(brief.root)
    except (DeepResearchError, OSError, ValueError) as exc:
        with locked(brief):
            append_ledger(brief, {"event": UNLAUNCHED_EVENT, "id": call.tool_use_id})
        return deny(
            f"Workflow: the run's first step could not be computed ({str(exc)[:300]}); go on "
            f"with `deep-research next {run.brief} --json`"
        )
    args = {"brief": call.tool_input["args"]["brief"], "step": handed}
    # Explicitly allowed, as our own CLI calls are: Claude Code would otherwise ask the user to
    # review a workflow's script (in -p mode, a refusal). The script is the plugin's own.
    return Decision(
        True, WORKFLOW_APPROVED, approve=True, updated_input={**call.tool_input, "args": args}
    )


def _running(brief: Brief, rows: list[dict[str, Any]], now: float) -> dict[str, Any] | None:
    """The launch row of the workflow still running on ``brief``, if one is."""
    unlaunched = {row.get("id") for row in rows if row.get("event") == UNLAUNCHED_EVENT}
    launches = [
        row for row in rows if row.get("event") == LAUNCH_EVENT and row.get("id") not in unlaunched
    ]
    if not launches:
        return None
    # A session that took the run over (`resume`) ended the claim of every launch before it.
    resumed = [row for row in rows if row.get("event") == RESUME_EVENT]
    if resumed and rows.index(resumed[-1]) > rows.index(launches[-1]):
        return None
    # Imported here: the hook's common path loads no pydantic (tests/plugin/test_guard.py).
    from deep_research.plugin.progress import WORKFLOW_STEP_FILE
    from deep_research.plugin.workflow import load_step

    step = load_step(brief.root)
    if step is not None and step.action in ("done", "stop"):
        return None
    last = max(float(row.get("at", 0.0)) for row in rows)
    with contextlib.suppress(OSError):  # no step yet: the rows alone say when it was busy
        last = max(last, (brief.root / WORKFLOW_STEP_FILE).stat().st_mtime)
    return launches[-1] if now - last < WORKFLOW_IDLE_S else None


def _on_brief(call: Call, brief: Path) -> bool:
    """Whether the launch's ``args`` name ``brief``."""
    args = call.tool_input.get("args")
    return call.names(args.get("brief") if isinstance(args, dict) else None, brief)


def check_structured_output(call: Call) -> Decision:
    from deep_research.plugin.workflow import accept

    run = call.run
    if run is None or call.agent is None:
        return ALLOW
    agent = resolve_agent(call.agent_type)
    if agent not in WORKFLOW_AGENTS:
        return ALLOW
    verdict = accept(Path(run.brief), agent, dict(call.tool_input), call.agent)
    if not verdict.allow:
        return deny(f"StructuredOutput: {verdict.reason}")
    return Decision(True, verdict.reason, updated_input=verdict.replace)
