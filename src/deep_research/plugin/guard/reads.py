"""What a judging agent reads during a run: its brief's ``inputs/`` files, nothing else.

A triangulator, verifier, skeptic or CIBER agent is given everything it judges in one file code
wrote for its task (:mod:`deep_research.plugin.inputs`). Its contract says to read no other,
and this holds it to that: its Read (and Grep, and the older NotebookRead) of any path outside
``<brief>/inputs/`` is denied — claims.json, the corpus, another brief, the user's files — with
the folder to read instead. Claude Code marks a subagent's tool calls with ``agent_id`` and
``agent_type`` (``deep-research:verifier``), in 2.1.197 and 2.1.332 alike, for agents the Agent
tool dispatches and for workflow agents; the orchestrator's own calls carry neither. So the
orchestrator's, the fetchers' and the writer's reads pass as before (:data:`.tools.ALWAYS_ALLOWED`).

The folder, not the one file of the agent's task: the event names the agent, never the dispatch
it came from, so the guard cannot tell which task's file is its own. Every file there is code's
view of the same brief, so a judge reading a sibling's input reads nothing it could not be given.
Paths are compared after resolving symlinks and ``..``, from the directory Claude Code reports.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deep_research.plugin.guard.agents import resolve_agent
from deep_research.plugin.guard.decision import ALLOW, Call, Decision, deny, resolved
from deep_research.plugin.tasks import INPUTS, TASKS, JudgingTask

#: The judging agents, by name (``triangulator``, ``verifier``, ``skeptic``, ``ciber``).
JUDGES = frozenset(kind.agent for kind in TASKS.values() if issubclass(kind, JudgingTask))
#: The tools that read a file's text, and the field naming what they read. Grep with no path
#: searches the working directory — the project, claims.json included — so it is denied too.
READERS: dict[str, str] = {"Read": "file_path", "Grep": "path", "NotebookRead": "notebook_path"}


def a_judge_reads(tool: str, event: Mapping[str, Any]) -> bool:
    """Whether ``event`` is a judging agent's call of a tool that reads text."""
    return (
        tool in READERS
        and bool(event.get("agent_id"))
        and resolve_agent(event.get("agent_type")) in JUDGES
    )


def check_judge_read(call: Call) -> Decision:
    """A judging agent's read: admitted only inside its run's brief's ``inputs/``."""
    run = call.run
    if run is None:
        return ALLOW
    inputs = Path(os.path.realpath(run.brief)) / INPUTS
    given = str(call.tool_input.get(READERS[call.tool]) or "")
    real = resolved(call.cwd, given or ".")
    if real is not None and Path(real).is_relative_to(inputs):
        return ALLOW
    who = resolve_agent(call.agent_type)
    shown = repr(given[:160]) if given else f"the working directory ({str(call.cwd)[:160]})"
    return deny(
        f"{call.tool}: a {who} reads only its task's input, the file `input=` names in its "
        f"prompt under {inputs}/; not {shown}"
    )
