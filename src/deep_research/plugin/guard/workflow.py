"""The workflow's two tools during a run: launching it, and its agents' answers.

* **Workflow** (the main loop's call): only this plugin's workflow, by name, on the active run's
  brief — never an inline ``script`` or an edited ``scriptPath`` (either would run code the
  model wrote), and never from a subagent.
* **StructuredOutput** (a workflow agent's answer): our agents' answers go to
  :func:`deep_research.plugin.workflow.accept`, which checks and keeps each in the brief or
  refuses it with the reason the agent reads; the stepper's answer is replaced by the step code
  computed. Other agents' answers pass (they are answers, nothing runs).
"""

from __future__ import annotations

import os
from pathlib import Path

from deep_research.plugin.drivers import WORKFLOW_NAME
from deep_research.plugin.guard.agents import CONTRACTS, resolve_agent
from deep_research.plugin.guard.decision import (
    ALLOW,
    Call,
    Decision,
    deny,
    not_this_sessions_run,
    resolved,
)

WORKFLOW_APPROVED = (
    "deep-research guard: the plugin's own workflow, on the active run's brief; every check passed"
)
#: What a launch of our workflow sets (a resume names the earlier run).
LAUNCH_FIELDS = frozenset({"name", "args", "resumeFromRunId", "description"})
#: The agents whose answers the workflow's code keeps: every contract, the stepper, the writer.
WORKFLOW_AGENTS = CONTRACTS | {"stepper", "writer"}


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
    # Explicitly allowed, as our own CLI calls are: Claude Code would otherwise ask the user to
    # review a workflow's script (in -p mode, a refusal). The script is the plugin's own.
    return Decision(True, WORKFLOW_APPROVED, approve=True)


def _on_brief(call: Call, brief: Path) -> bool:
    """Whether the launch's ``args`` name ``brief``."""
    args = call.tool_input.get("args")
    named = args.get("brief") if isinstance(args, dict) else None
    return isinstance(named, str) and resolved(call.cwd, named) == os.path.realpath(brief)


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
