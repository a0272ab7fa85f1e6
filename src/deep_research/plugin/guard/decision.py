"""What every check returns, and the one event it checks."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deep_research.plugin.guard.cliargs import CliReader
from deep_research.plugin.runstate import ActiveRun

#: Longer than any path the file system opens (Linux PATH_MAX): a longer one names no file, and
#: resolving it component by component could outlast the decision's deadline.
MAX_PATH = 4096

APPROVED_REASON = (
    "deep-research guard: our CLI, called as a research run uses it; every check passed"
)


@dataclass(frozen=True)
class Decision:
    allow: bool
    reason: str = ""
    #: An explicit allow: Claude Code skips its permission prompt (our own CLI calls only).
    approve: bool = False
    #: What the tool runs with instead of the model's input (a workflow's launch gets its first
    #: step in its args, a step's last answer the next step, a stepper's answer the step).
    updated_input: dict[str, Any] | None = None


ALLOW = Decision(True)
APPROVED = Decision(True, APPROVED_REASON, approve=True)


def deny(reason: str) -> Decision:
    return Decision(False, reason)


def not_this_sessions_run(tool: str, run: ActiveRun) -> Decision:
    """A session the active run does not confine may not drive it: the agents it would start
    and the commands it would run on the run's brief would be unconfined."""
    return deny(
        f"{tool}: the active research run ({run.brief.name}) belongs to another Claude Code "
        "session, which it confines; continue it there, or end it with `deep-research finish "
        f"{run.brief}` and start it again here"
    )


@dataclass(frozen=True)
class Call:
    """One PreToolUse event, as the checks read it."""

    tool: str
    tool_input: Mapping[str, Any]
    #: The directory Claude Code reports for the call: where Bash runs and relative paths start.
    cwd: Path
    tool_use_id: str
    #: A subagent's id; None in the orchestrator's own loop (Claude Code marks only subagents).
    agent: str | None
    #: The subagent's type as Claude Code resolved it (``deep-research:fetcher``), or None.
    agent_type: str | None
    #: The active run, when it confines this call (its own session's, :meth:`ActiveRun.guards`).
    run: ActiveRun | None
    state: Path
    #: Our CLI's own parser, as the CLI passed it in: how a Bash line calling it is read.
    cli: CliReader
    #: The active run when another Claude Code session owns it: this call is not confined by
    #: it, but neither starts a second run nor drives this one (:mod:`.command`, :mod:`.workflow`).
    foreign: ActiveRun | None = None

    @property
    def during_run(self) -> bool:
        return self.run is not None

    def names(self, given: object, path: Path) -> bool:
        """Whether ``given``, a path in the call's input (relative to its cwd), is ``path``."""
        return isinstance(given, str) and resolved(self.cwd, given) == os.path.realpath(path)


def resolved(cwd: Path, given: str) -> str | None:
    """``given`` as an absolute path, from ``cwd``, symlinks and ``..`` resolved; None for one
    longer than :data:`MAX_PATH` (it names no file)."""
    if len(given) > MAX_PATH or len(str(cwd)) > MAX_PATH:
        return None
    return os.path.realpath(cwd / given)
