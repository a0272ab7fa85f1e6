"""What a judging agent does during a run: read its brief's ``inputs/`` files, and answer.

A triangulator, verifier, skeptic or CIBER agent is given everything it judges in one file code
wrote for its task (:mod:`deep_research.plugin.inputs`). Its contract says to read no other, and
this holds it to that: its Read (and Grep, and the older NotebookRead) of any path outside
``<brief>/inputs/`` is denied — claims.json, the corpus, another brief, the user's files — with the
folder to read instead, and so is its Glob or LS of anything else there (a Glob pattern is a path
too: an absolute one, or one climbing out with ``..``, is denied). Every other tool a judge calls is
denied by allow-list — a web tool, a shell, an edit, whatever a later Claude Code adds — but its
answer (StructuredOutput, checked as every workflow answer is) and ToolSearch, which loads a
deferred tool's definition and reads nothing. Claude Code marks a subagent's tool calls with
``agent_id`` and ``agent_type`` (``deep-research:verifier``), in 2.1.197 and 2.1.332 alike, for
agents the Agent tool dispatches and for workflow agents; the orchestrator's own calls carry
neither. So the orchestrator's, the fetchers' and the writer's reads pass as before
(:data:`.tools.ALWAYS_ALLOWED`).

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
#: The tools that read files or list them, and the field naming where. Grep, Glob or LS with
#: no path looks in the working directory — the project, claims.json included — so it is
#: denied too.
READERS: dict[str, str] = {
    "Read": "file_path",
    "Grep": "path",
    "NotebookRead": "notebook_path",
    "Glob": "path",
    "LS": "path",
}
#: A judge's other tools: its answer (checked as every workflow answer is) and ToolSearch.
ANSWERING = frozenset({"StructuredOutput", "ToolSearch"})


def a_judge_calls(event: Mapping[str, Any]) -> bool:
    """Whether ``event`` is a judging agent's tool call."""
    return bool(event.get("agent_id")) and resolve_agent(event.get("agent_type")) in JUDGES


def check_judge_read(call: Call) -> Decision:
    """A judging agent's read or listing: admitted only inside its run's brief's ``inputs/``;
    any other tool of a judge (but its answer) is denied during a run."""
    run = call.run
    if run is None:
        return ALLOW
    who = resolve_agent(call.agent_type)
    if call.tool not in READERS:
        return deny(
            f"{call.tool[:80]}: a {who} reads its task's input (Read, Grep, Glob, LS, inside "
            f"{run.brief}/{INPUTS}/) and answers with StructuredOutput; it calls no other tool"
        )
    inputs = Path(os.path.realpath(run.brief)) / INPUTS
    given = str(call.tool_input.get(READERS[call.tool]) or "")
    real = resolved(call.cwd, given or ".")
    pattern = str(call.tool_input.get("pattern") or "") if call.tool == "Glob" else ""
    climbs = pattern.startswith(("/", "~")) or ".." in Path(pattern).parts
    if real is not None and Path(real).is_relative_to(inputs) and not climbs:
        return ALLOW
    if climbs:
        return deny(
            f"Glob: a {who} lists only inside {inputs}/; the pattern {pattern[:160]!r} leaves it"
        )
    shown = repr(given[:160]) if given else f"the working directory ({str(call.cwd)[:160]})"
    return deny(
        f"{call.tool}: a {who} reads only its task's input, the file `input=` names in its "
        f"prompt under {inputs}/; not {shown}"
    )
