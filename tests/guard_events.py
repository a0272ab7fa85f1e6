"""Hook events as Claude Code sends them to the guard, and a research run to send them in.

Events have the shape Claude Code 2.1.197 sends (hook_event_name, tool_name, tool_input,
tool_use_id, session_id, cwd; a subagent's also agent_id and agent_type). The guard runs as the
plugin's hook does: ``CLAUDE_PLUGIN_ROOT`` is this checkout, and PATH holds no other
deep-research, so a bare ``deep-research`` is the plugin's launcher (Claude Code appends the
plugin's bin/ to Bash's PATH).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO
from deep_research.brief.layout import Brief
from deep_research.cli import build_parser
from deep_research.plugin import guard, runstate
from deep_research.plugin.tasks import FetchTask

SCOPE = "Enforcement actions under the EU AI Act, 2024-2025"
FETCHER = "deep-research:fetcher"


def use_plugin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(REPO))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.delenv("DEEP_RESEARCH_STATE", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)


def run_guard(payload: str, phase: str, state: Path | None = None) -> guard.Decision:
    """The guard as ``deep-research guard`` runs it: with the CLI's parser passed in."""
    return guard.run_guard(payload, phase, state, guard.CliReader(build_parser))


def event(
    tool: str,
    tool_input: dict[str, Any],
    cwd: Path,
    *,
    phase: str = "PreToolUse",
    use_id: str = "toolu_01",
    response: Any = None,
    agent: str | None = None,
    agent_type: str = FETCHER,
) -> str:
    body: dict[str, Any] = {
        "session_id": "5f2b-test",
        "transcript_path": str(cwd / "transcript.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "hook_event_name": phase,
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": use_id,
    }
    if response is not None:
        body["tool_response"] = response
    if agent is not None:  # what Claude Code 2.1.197 adds to a subagent's tool calls
        body |= {"agent_id": agent, "agent_type": agent_type}
    return json.dumps(body)


def run_cli(payload: str, cwd: Path, phase: str = "pre") -> subprocess.CompletedProcess[str]:
    """``deep-research guard`` as a process, as hooks/guard runs it."""
    return subprocess.run(
        [sys.executable, "-m", "deep_research.cli", "guard", "--phase", phase],
        input=payload,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ),
        check=False,
        timeout=60,
    )


def fetch_prompt(
    brief: Path,
    sq: str = "sq1",
    round_: int = 1,
    queries: tuple[str, ...] = ("q",),
    scope: str = SCOPE,
) -> str:
    """A fetcher's prompt, built as ``deep-research next`` builds it."""
    return FetchTask(str(brief), sq, round_, queries, scope).prompt()


@dataclass
class Run:
    """An active research run in ``project`` (fetch budget 3, fan-out 2, two rounds; the
    allow-list holds ec.europa.eu), and the guard's answers inside it."""

    project: Path

    @property
    def state(self) -> Path:
        return self.project / "state"

    @property
    def brief(self) -> Path:
        return self.state / "briefs" / runstate.slugify(SCOPE)

    def decide(self, payload: str) -> guard.Decision:
        return run_guard(payload, "pre", self.state)

    def post(self, payload: str) -> guard.Decision:
        return run_guard(payload, "post", self.state)

    def bash(
        self, command: str, *, agent: str | None = None, agent_type: str = FETCHER
    ) -> guard.Decision:
        payload = event(
            "Bash", {"command": command}, self.project, agent=agent, agent_type=agent_type
        )
        return self.decide(payload)

    def fetcher_bash(self, command: str) -> guard.Decision:
        return self.bash(command, agent="a1", agent_type=FETCHER)

    def dispatch(
        self, prompt: str, agent: str = FETCHER, use_id: str = "toolu_d"
    ) -> guard.Decision:
        tool_input = {
            "subagent_type": agent,
            "description": "task",
            "prompt": prompt,
            "run_in_background": False,
        }
        return self.decide(event("Agent", tool_input, self.project, use_id=use_id))

    def done(self, use_id: str) -> None:
        self.post(
            event("Agent", {}, self.project, phase="PostToolUse", use_id=use_id, response="ok")
        )

    def write(self, path: Path | str, tool: str = "Write", **extra: Any) -> guard.Decision:
        tool_input = {"file_path": str(path), "content": "{}"}
        return self.decide(event(tool, tool_input, self.project, **extra))

    def ledger(self) -> list[dict[str, Any]]:
        return runstate.read_ledger(Brief(self.brief))


def start_run(project: Path, **requested: int) -> Run:
    caps = {"max_fetches": 3, "max_fanout": 2, "max_rounds": 2, **requested}
    runstate.start_run(
        SCOPE,
        depth="full",
        state=project / "state",
        requested=dict(caps),
        static_hosts=["ec.europa.eu"],
    )
    return Run(project)
