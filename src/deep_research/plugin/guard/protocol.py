"""The hook protocol: one event in on stdin, one answer out, as Claude Code reads a command hook.

* **deny** — the reason on stderr, exit 2: Claude Code blocks the call and shows the reason to
  the model.
* **explicit allow** — our own CLI call that passed every check: exit 0 with
  ``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", …}}``
  on stdout. Claude Code then skips its permission prompt, which it would otherwise show when
  the model invokes the skill itself (a skill's ``allowed-tools`` apply only to a user's
  ``/deep-research:deep-research``). The user's deny and ask rules still apply.
* **pass** — everything else not denied: exit 0, nothing printed; the user's own permission
  rules decide.

PreToolUse fails closed: an event that does not parse, an error while deciding, or no decision
within :data:`~.deadline.DECISION_DEADLINE_S` is a deny. PostToolUse fails open. A workflow's
launch and its agents' answers may compute the run's next step (commands that fetch included):
they get :data:`~.deadline.STEP_DEADLINE_S`, inside the longer timeout hooks.json gives them.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from deep_research.plugin.guard.cliargs import CliReader
from deep_research.plugin.guard.deadline import STEP_DEADLINE_S, DecisionTimeout, deadline
from deep_research.plugin.guard.decision import ALLOW, Decision, deny
from deep_research.plugin.guard.posttool import record
from deep_research.plugin.guard.tools import decide
from deep_research.plugin.runstate import session_state, state_dir


def hook_output(decision: Decision) -> str:
    """What the hook prints on stdout for an allowed call: JSON for an explicit allow, else
    nothing (Claude Code's permission rules then decide)."""
    if not (decision.allow and (decision.approve or decision.updated_input is not None)):
        return ""
    output: dict[str, Any] = {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "permissionDecisionReason": decision.reason,
    }
    if decision.updated_input is not None:
        output["updatedInput"] = decision.updated_input
    return json.dumps({"hookSpecificOutput": output}, ensure_ascii=False)


def parse_event(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except RecursionError:
        # A hook event nested past the interpreter's limit is not an event: deny, never crash.
        raise ValueError("the hook event is nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError("the hook event is not a JSON object")
    return value


def run_guard(text: str, phase: str, state: Path | None, cli: CliReader) -> Decision:
    """``deep-research guard``: one event in, one decision out, within the deadline; ``cli``
    reads a Bash line calling our CLI with the CLI's own parser (the CLI passes it in).

    The state folder is ``--state``, else ``$DEEP_RESEARCH_STATE``, else the one `start`
    recorded for the event's session, else ``state/`` under ``$CLAUDE_PROJECT_DIR`` or the
    event's ``cwd``.
    """
    try:
        with deadline():
            try:
                event = parse_event(text)
            except ValueError as exc:
                if phase == "pre":
                    return deny(f"guard: the hook event is not valid JSON ({exc})")
                return ALLOW
        seconds = STEP_DEADLINE_S if event.get("tool_name") in STEPPING_TOOLS else None
        with deadline(seconds):
            return _run(event, phase, state, cli)
    except DecisionTimeout:
        if phase != "pre":
            return ALLOW
        return deny("guard: no decision in time, so the call is denied; retry it")


#: The tools whose decision may compute the workflow's next step.
STEPPING_TOOLS = frozenset({"Workflow", "StructuredOutput"})


def _run(event: dict[str, Any], phase: str, state: Path | None, cli: CliReader) -> Decision:
    if state is None and not os.environ.get("DEEP_RESEARCH_STATE"):
        try:
            state = session_state(event.get("session_id"))
        except Exception as exc:
            if phase == "pre":
                return deny(f"guard: this session's run record is unreadable ({exc})")
            return ALLOW
    if state is None:
        project = os.environ.get("CLAUDE_PROJECT_DIR") or str(event.get("cwd") or ".")
        state = state_dir(None, project)
    if phase == "post":
        with contextlib.suppress(Exception):
            record(event, state)
        return ALLOW
    return decide(event, state, cli)
