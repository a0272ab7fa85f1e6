"""Which driver runs a plugin run: Claude Code's workflow, or the ``next`` loop in the session.

The workflow (workflows/research-run.js) runs in the background and keeps the user's session
free; the loop does the same steps through the main conversation. Both follow
:func:`deep_research.plugin.next.next_action`, so they reach the same verdict. ``start`` picks
the workflow unless something Claude Code reads says workflows are off — the two environment
variables and the settings keys its own check reads (2.1.197 and 2.1.332) — so the choice is
code's. A Claude Code without the Workflow tool (older than :data:`MINIMUM_WORKFLOW_VERSION`, or
a plan whose workflows are off by default) is caught by the skill: no Workflow tool means the
loop.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

Driver = Literal["workflow", "loop"]
#: The oldest Claude Code release whose workflows the plugin is checked against.
MINIMUM_WORKFLOW_VERSION = "2.1.197"
#: How the Workflow tool names ours: ``<plugin>:<meta.name>``. Not ``deep-research``: Claude Code
#: lists workflows beside skills, and a workflow named like the skill takes the skill's place
#: (2.1.197: the Skill call ``deep-research:deep-research`` then launched the workflow).
WORKFLOW_NAME = "deep-research:research-run"
_OFF = {"0", "false", "no", "off"}
_ON = {"1", "true", "yes", "on"}


def settings_files(env: Mapping[str, str]) -> list[Path]:
    """Claude Code's settings files, as far as they can turn workflows off: managed, user,
    project and local."""
    home = Path(env.get("HOME") or Path.home())
    config = Path(env.get("CLAUDE_CONFIG_DIR") or home / ".claude")
    project = Path(env.get("CLAUDE_PROJECT_DIR") or os.getcwd())
    return [
        Path("/etc/claude-code/managed-settings.json"),
        config / "settings.json",
        project / ".claude" / "settings.json",
        project / ".claude" / "settings.local.json",
    ]


def _read(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def workflow_off_reason(env: Mapping[str, str] | None = None) -> str | None:
    """Why Claude Code will not run our workflow, or None when it can."""
    env = os.environ if env is None else env
    if env.get("CLAUDE_CODE_DISABLE_WORKFLOWS", "").strip().lower() in _ON:
        return "CLAUDE_CODE_DISABLE_WORKFLOWS is set"
    if env.get("CLAUDE_CODE_WORKFLOWS", "").strip().lower() in _OFF:
        return "CLAUDE_CODE_WORKFLOWS is off"
    for path in settings_files(env):
        settings = _read(path)
        if settings.get("disableWorkflows") is True:
            return f"disableWorkflows is set in {path}"
        if settings.get("enableWorkflows") is False:
            return f"enableWorkflows is false in {path}"
    return None


def choose(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """What ``start`` prints about the driver: which one, why, and how to launch the workflow."""
    off = workflow_off_reason(env)
    if off is not None:
        return {"driver": "loop", "why": f"workflows are off ({off}): the next loop runs it"}
    return {"driver": "workflow", "why": "Claude Code runs the workflow in the background"}
