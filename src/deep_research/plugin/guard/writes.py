"""The write tools (Write, Edit, MultiEdit, NotebookEdit).

During a run they write only a file the current step named (:mod:`.steps`) — a plan, a saved
reply, the claims, the synthesis — and never, whatever a step says, anything under a ``.claude``
folder (settings, commands, hooks: a ``disableAllHooks`` there would switch the guard off) or
the plugin's own code. So the run's records (run.json, the ledger, the allow-list, trace.json,
the corpus, the judging agents' input files, the step record itself), the state folder's MCP
configuration and everything outside the brief stay the CLI's. A subagent writes nothing: its
result is its reply.

Always, run or not: the active-run pointer and the per-session run records, which say whether a
run is active at all. Paths are compared after resolving symlinks and ``..``, from the
directory Claude Code reports.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from deep_research.brief.layout import RUN_FILE
from deep_research.plugin.guard.decision import ALLOW, Call, Decision, deny, resolved
from deep_research.plugin.guard.steps import NEXT_STEP_FILE, named_paths
from deep_research.plugin.runstate import pointer_path, sessions_dir
from deep_research.plugin.tasks import INPUTS

WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
#: Written only by the CLI; named in a denial so the model learns which command writes it.
CLI_RECORDS = frozenset(
    {
        RUN_FILE,
        "guard-log.jsonl",
        "allowed-hosts.json",
        "trace.json",
        "sources.jsonl",
        "fetch-log.jsonl",
        "audit.json",
        NEXT_STEP_FILE,
    }
)


WRITE_APPROVED = "deep-research guard: a file the current step of `deep-research next` names"


def check_write(call: Call) -> Decision:
    tool = call.tool
    target = str(call.tool_input.get("file_path") or call.tool_input.get("notebook_path") or "")
    if not target:
        return deny(f"{tool}: the call names no file") if call.during_run else ALLOW
    real = resolved(call.cwd, target)
    if real is None:
        return deny(f"{tool}: the path is too long to name a file") if call.during_run else ALLOW
    path = Path(real)
    record = _run_record(path, call.state)
    if record is not None:
        return deny(f"{tool}: {record} is written only by the deep-research CLI")
    run = call.run
    if run is None:
        return ALLOW
    if call.agent is not None:
        return deny(f"{tool}: a subagent writes no file during a research run; reply instead")
    if any(part.casefold() == ".claude" for part in path.parts):
        return deny(
            f"{tool}: nothing under .claude/ (settings, commands, hooks) is written during a "
            "research run"
        )
    if any(_inside(path, root) for root in _code_roots()):
        return deny(f"{tool}: the plugin's own code cannot be changed during a research run")
    brief = Path(os.path.realpath(run.brief))
    record = _cli_record(path, brief)
    if record is not None:
        return deny(
            f"{tool}: {record} is written only by the deep-research CLI during a run; run the "
            "command that produces it instead (trace, ingest, counters, …)"
        )
    named = [os.path.realpath(name) for name in named_paths(run.brief)]
    if _inside(path, brief) and str(path) in named:
        # Explicitly allowed: after a workflow's completion notice the skill's allowed-tools
        # no longer apply (a new turn), and the loop the skill falls back to writes these.
        return Decision(True, WRITE_APPROVED, approve=True)
    shown = ", ".join(named[:3]) + (", …" if len(named) > 3 else "")
    shown = shown or "none: call `deep-research next` for the step"
    return deny(
        f"{tool}: during a research run only the files the current step of `deep-research "
        f"next` names are written ({shown})"
    )


def _cli_record(path: Path, brief: Path) -> str | None:
    """Which of the brief's CLI-written records ``path`` is, if any."""
    if _fold(path.parent) == _fold(brief) and path.name.casefold() in CLI_RECORDS:
        return path.name
    for folder in ("corpus", ".robots", INPUTS):
        if _inside(path, brief / folder):
            return f"{folder}/"
    return None


def _fold(path: Path | str) -> str:
    return os.path.normcase(str(path)).casefold()


def _inside(path: Path, root: Path) -> bool:
    """``path`` is ``root`` or below it, names compared case-insensitively (macOS, Windows)."""
    folded = _fold(root)
    return _fold(path) == folded or any(_fold(parent) == folded for parent in path.parents)


def _run_record(path: Path, state: Path) -> str | None:
    """Which record of whether a run is active ``path`` is, if any."""
    if _fold(path) == _fold(os.path.realpath(pointer_path(state))):
        return "active-run.json"
    sessions = Path(os.path.realpath(sessions_dir()))
    if _inside(path, sessions) and _fold(path) != _fold(sessions):
        return "the session's run record"
    return None


def _code_roots() -> list[Path]:
    """The plugin's own code: what the guard and the CLI run from."""
    roots = [Path(__file__).resolve().parents[2]]  # the installed deep_research package
    for name in ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA"):
        if folder := os.environ.get(name):
            roots.append(Path(os.path.realpath(folder)))
    if sys.prefix != sys.base_prefix:  # a virtual environment: its interpreter and packages
        roots.append(Path(os.path.realpath(sys.prefix)))
    return roots
