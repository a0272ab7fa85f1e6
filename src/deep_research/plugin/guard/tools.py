"""Which check each tool gets: every tool reaches the guard (hooks/hooks.json matches all), and
during a run a tool on neither list below is denied.

* Checked: WebFetch and WebSearch (fetch safety, allow-list, budgets), Bash (:mod:`.command`),
  Agent/Task (:mod:`.agents`), the write tools (:mod:`.writes`), Skill/SlashCommand (the
  plugin's own skills only, during a run), and Workflow and StructuredOutput (our workflow only;
  its agents' answers are checked and kept by code: :mod:`.workflow`).
* Allowed as they are: tools that only read or keep Claude Code's own bookkeeping (a to-do list,
  a background command's output, the final structured answer) — except a judging agent's reads
  during a run, which stay in its brief's ``inputs/`` (:mod:`.reads`).
* Everything else — MCP tools (``mcp__…``; during a run MCP goes through ``deep-research
  mcp-fetch``, gated and counted), other shells, configuration, scheduling, teams, worktrees,
  and any tool a later Claude Code adds — is denied during a run and allowed outside one.

A run confines the Claude Code session that started it — its subagents and workflow agents
carry that session's id — and no other: another session's calls in the same project are decided
as with no run active (:meth:`~deep_research.plugin.runstate.ActiveRun.guards`), except that
they may not drive that run (:func:`~.decision.not_this_sessions_run`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from deep_research.plugin.guard.agents import check_agent, resolve_agent
from deep_research.plugin.guard.budgets import check_search, check_webfetch
from deep_research.plugin.guard.cliargs import CliReader
from deep_research.plugin.guard.command import check_bash
from deep_research.plugin.guard.decision import ALLOW, Call, Decision, deny
from deep_research.plugin.guard.reads import ANSWERING, a_judge_calls, check_judge_read
from deep_research.plugin.guard.workflow import check_structured_output, check_workflow
from deep_research.plugin.guard.writes import check_write
from deep_research.plugin.runstate import load_active

#: Our skills (skills/*/SKILL.md), by name without the plugin's namespace.
OUR_SKILLS = frozenset({"deep-research", "research-render"})
#: Tools that read, or keep Claude Code's own bookkeeping: nothing leaves, nothing is written.
ALWAYS_ALLOWED = frozenset(
    {
        "Read",
        "Grep",
        "Glob",
        "LS",
        "NotebookRead",
        "TodoWrite",
        "TaskCreate",
        "TaskGet",
        "TaskList",
        "TaskUpdate",
        "TaskOutput",
        "BashOutput",
        "TaskStop",
        "KillShell",
        "KillBash",
        "ToolSearch",
        "AskUserQuestion",
        "ExitPlanMode",
    }
)


def check_skill(call: Call) -> Decision:
    return _our_skill(str(call.tool_input.get("skill") or ""), call)


def check_slash_command(call: Call) -> Decision:
    line = str(call.tool_input.get("command") or "").strip()
    name = line.split(maxsplit=1)[0].removeprefix("/") if line else ""
    return _our_skill(name, call)


def _our_skill(name: str, call: Call) -> Decision:
    if call.run is None or resolve_agent(name) in OUR_SKILLS:
        return ALLOW
    return deny(
        f"{call.tool}: during a research run only the plugin's own skills load "
        f"({', '.join(sorted(OUR_SKILLS))}); do what `deep-research next` printed"
    )


CHECKS: dict[str, Callable[[Call], Decision]] = {
    "WebFetch": check_webfetch,
    "WebSearch": check_search,
    "Bash": check_bash,
    "Agent": check_agent,
    "Task": check_agent,  # the Agent tool's name in older clients
    "Write": check_write,
    "Edit": check_write,
    "MultiEdit": check_write,
    "NotebookEdit": check_write,
    "Skill": check_skill,
    "SlashCommand": check_slash_command,
    "Workflow": check_workflow,
    "StructuredOutput": check_structured_output,
}


def decide(event: Mapping[str, Any], state: Path, cli: CliReader) -> Decision:
    """The PreToolUse decision for one event. Errors deny (fail closed)."""
    tool = str(event.get("tool_name") or "")
    # A judging agent's calls are confined by their own allow-list (:mod:`.reads`), but its
    # answer, checked as every workflow answer is.
    judged = tool not in ANSWERING and a_judge_calls(event)
    if tool in ALWAYS_ALLOWED and not judged:
        return ALLOW  # decided before the run is even read: most calls of a session
    try:
        run = load_active(state)
    except Exception as exc:
        return deny(
            f"guard: the active run's record is unreadable ({exc}); fix or remove "
            f"{state / 'active-run.json'}"
        )
    foreign = None
    if run is not None and not run.guards(event.get("session_id")):
        # Another session's run: this session's calls are decided as with no run active.
        foreign, run = run, None
    tool_input = event.get("tool_input")
    agent = str(event.get("agent_id") or "") or None
    call = Call(
        tool=tool,
        tool_input=tool_input if isinstance(tool_input, Mapping) else {},
        cwd=Path(str(event.get("cwd") or ".")),
        tool_use_id=str(event.get("tool_use_id") or ""),
        # Claude Code marks a subagent's calls with its id and type (2.1.197); the
        # orchestrator's own calls carry no id.
        agent=agent,
        agent_type=str(event.get("agent_type") or "") if agent else None,
        run=run,
        state=state,
        cli=cli,
        foreign=foreign,
    )
    check = check_judge_read if judged else CHECKS.get(tool)
    try:
        if check is not None:
            return check(call)
    except Exception as exc:  # any failure while deciding denies
        return deny(f"guard: could not check {tool} ({type(exc).__name__}: {exc})")
    if run is None:
        return ALLOW
    if tool.startswith("mcp__"):
        return deny(
            f"{tool[:120]}: MCP tools are not called directly during a research run; an "
            "mcp-fetcher calls them through `deep-research mcp-fetch` (gated, kept, counted)"
        )
    return deny(
        f"{tool[:120]}: not available during a research run; what a run needs is Bash "
        "(deep-research), Read, Grep, Glob, WebSearch, Agent and the files `next` names "
        "for Write — `deep-research finish` ends the run"
    )
