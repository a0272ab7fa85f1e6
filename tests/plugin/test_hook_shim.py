"""Ordinary sessions pay nothing: hooks/guard answers in the shell every call no run confines.

hooks/guard runs here as Claude Code runs it — a process fed the event on stdin, the plugin's
own bin/deep-research behind it — with the launcher's environment stood in by a recording
interpreter: every start of Python leaves a line, so a test counts exactly which calls the shim
handed to the guard. Where a test needs the guard's real answer the interpreter runs this
Python; where it only counts hand-offs it is a stub that denies without starting Python.

A run confines the Claude Code session that started it (``start`` records its id in
active-run.json) and no other. The events are in Claude Code's own layout (tests/ordinary_calls.py).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO, STUB_GUARD, fake_launcher_env
from deep_research.brief.layout import Brief
from deep_research.errors import DeepResearchError
from deep_research.fetch.hosts import load as load_allowlist
from deep_research.plugin import guard, runstate
from deep_research.plugin.drivers import WORKFLOW_NAME
from guard_events import Run, event, fetch_prompt, run_guard, start_run, use_plugin_env
from ordinary_calls import hook_event, session_events

OWNER = "0b7d1c2e-run-session"  # the session that started the run
OTHER = "5c9e4f10-other-session"  # a second session in the same project


@pytest.fixture(autouse=True)
def _plugin_env(monkeypatch: pytest.MonkeyPatch) -> None:
    use_plugin_env(monkeypatch)


@dataclass
class Hook:
    """hooks/guard in ``project``, and the starts of Python behind it."""

    project: Path
    data: Path
    starts_file: Path

    def __call__(self, payload: str, phase: str = "pre") -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "CLAUDE_PLUGIN_DATA": str(self.data),
            "CLAUDE_PROJECT_DIR": str(self.project),
        }
        return subprocess.run(
            [str(REPO / "hooks" / "guard"), phase],
            input=payload,
            capture_output=True,
            text=True,
            env=env,
            cwd=self.project,
            check=False,
            timeout=60,
        )

    def starts(self) -> int:
        """How many times Python was started so far."""
        if not self.starts_file.exists():
            return 0
        return len(self.starts_file.read_text(encoding="utf-8").splitlines())


def make_hook(tmp_path: Path, *, stub: bool) -> Hook:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    data = tmp_path / ("stub-data" if stub else "plugin-data")
    starts = tmp_path / ("stub-starts" if stub else "python-starts")
    fake_launcher_env(data / "venv", starts=starts, stub=stub)
    return Hook(project, data, starts)


@pytest.fixture
def hook(tmp_path: Path) -> Hook:
    """The real guard behind the shim."""
    return make_hook(tmp_path, stub=False)


@pytest.fixture
def counted(tmp_path: Path) -> Hook:
    """A stub behind the shim: each hand-off is counted and denied, no Python starts."""
    return make_hook(tmp_path, stub=True)


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return start_run(tmp_path)


def start_owned(project: Path, monkeypatch: pytest.MonkeyPatch, session: str | None) -> Run:
    """A run started from Bash in ``session`` (None: outside Claude Code)."""
    with monkeypatch.context() as patch:
        if session is not None:
            patch.setenv(runstate.SESSION_ENV, session)
        return start_run(project)


def test_start_binds_the_run_to_its_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = start_owned(tmp_path, monkeypatch, OWNER)
    pointer = runstate.pointer_path(run.state).read_text(encoding="utf-8")
    assert f'\n  "session": "{OWNER}"' in pointer  # the line hooks/guard reads
    active = runstate.load_active(run.state)
    assert active is not None and active.session == OWNER
    unbound = start_owned(tmp_path / "outside", monkeypatch, None)
    assert '"session"' not in runstate.pointer_path(unbound.state).read_text(encoding="utf-8")


def test_a_hand_edited_session_confines_every_session(
    counted: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = start_owned(counted.project, monkeypatch, OWNER)
    pointer = runstate.pointer_path(run.state)
    pointer.write_text(pointer.read_text().replace(OWNER, f"{OTHER} x"), encoding="utf-8")
    active = runstate.load_active(run.state)
    assert active is not None and active.session is None
    assert counted(hook_event("Read", {"file_path": "a"}, OTHER, counted.project)).returncode == 2
    assert counted.starts() == 1


@pytest.mark.parametrize(
    ("owner", "session_id", "guarded"),
    [
        (OWNER, OWNER, True),
        (OWNER, OTHER, False),
        (OWNER, None, True),  # no id: fail closed
        (OWNER, "", True),
        (OWNER, 7, True),
        (None, OTHER, True),  # a run started outside Claude Code confines every session
        (None, None, True),
    ],
)
def test_a_run_guards_its_own_session(
    run: Run, owner: str | None, session_id: object, guarded: bool
) -> None:
    active = runstate.load_active(run.state)
    assert active is not None
    assert runstate.ActiveRun(active.brief, active.record, owner).guards(session_id) is guarded


# --- (a) no run: a hundred ordinary calls, no Python --------------------------------------


@pytest.mark.parametrize("record_elsewhere", [False, True], ids=["no-record", "record-elsewhere"])
def test_ordinary_calls_with_no_run_start_no_python(hook: Hook, record_elsewhere: bool) -> None:
    if record_elsewhere:  # another session's run, started after a `cd`, recorded per session
        record = runstate.session_record(OTHER)
        assert record is not None
        record.parent.mkdir(parents=True)
        record.write_text(json.dumps({"state": str(hook.project.parent / "far")}))
    events = session_events(OTHER if not record_elsewhere else "7e11-this-session", hook.project)
    assert len(events) == 100
    answers = [hook(payload) for payload in events]
    assert [(a.returncode, a.stdout, a.stderr) for a in answers] == [(0, "", "")] * 100
    assert hook.starts() == 0
    # Controls: what the guard decides even with no run reaches it — WebFetch's SSRF check and
    # our own CLI (approved) — so the count above could have been anything but 0.
    metadata = {"url": "http://169.254.169.254/latest/meta-data/", "prompt": "x"}
    denied = hook(hook_event("WebFetch", metadata, OTHER, hook.project))
    assert denied.returncode == 2 and "unsafe target refused" in denied.stderr
    ours = hook(hook_event("Bash", {"command": "deep-research --version"}, OTHER, hook.project))
    assert json.loads(ours.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
    assert hook.starts() == 2


# --- (b) another session's run: the same hundred, none denied -----------------------------


def test_ordinary_calls_beside_another_sessions_run_pass(
    hook: Hook, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = start_owned(hook.project, monkeypatch, OWNER)
    events = session_events(OTHER, hook.project)
    answers = [hook(payload) for payload in events]
    assert [(a.returncode, a.stderr) for a in answers] == [(0, "")] * 100
    # Only the two Explore dispatches reach the guard (another session may not dispatch the
    # run's tasks), and it admits them; every other call is answered in the shell.
    assert hook.starts() == sum('"tool_name":"Agent"' in payload for payload in events) == 2
    # The guard compares sessions too: in process, every one of the hundred is allowed.
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(hook.project))
    assert all(run_guard(payload, "pre").allow for payload in events)
    # The control: the run's own session is confined as before (its Bash, edits, MCP calls…).
    own = [run_guard(payload, "pre") for payload in session_events(OWNER, hook.project)]
    assert sum(not decision.allow for decision in own) >= 50
    assert run.ledger()  # the run's own searches were counted against its budget


# --- (c) the run's own session: confined as before ----------------------------------------


def test_the_runs_own_session_is_confined_as_before(
    counted: Hook, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every call of the owning session reaches the guard, which decides exactly as for a run
    that confines every session (the guard before runs had owners)."""
    start_owned(counted.project, monkeypatch, OWNER)
    events = session_events(OWNER, counted.project)
    answers = [counted(payload) for payload in events]
    assert [(a.returncode, a.stderr.strip()) for a in answers] == [(2, STUB_GUARD)] * 100
    assert counted.starts() == 100
    unbound = start_owned(tmp_path / "unbound", monkeypatch, None)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(counted.project))
    owned = [run_guard(payload, "pre") for payload in events]
    before = [unbound.decide(payload.replace(OWNER, OTHER)) for payload in events]
    assert [d.allow for d in owned] == [d.allow for d in before]
    assert sum(not d.allow for d in owned) >= 50


def _reordered(payload: str) -> str:
    body = json.loads(payload)
    session = body.pop("session_id")
    return json.dumps({**body, "session_id": session}, separators=(",", ":"))


def _without_session(payload: str) -> str:
    body = json.loads(payload)
    del body["session_id"]
    return json.dumps(body, separators=(",", ":"))


MCP = "mcp__github__get_issue"


def _ls(session: str, cwd: Path, command: str = "ls") -> str:
    return hook_event("Bash", {"command": command}, session, cwd)


@pytest.mark.parametrize(
    ("payload", "the_runs"),
    [
        # Another session's id written into the call's input, as a key and as text.
        (
            lambda cwd: hook_event(
                MCP, {"session_id": OTHER, "q": f'"session_id":"{OTHER}"'}, OWNER, cwd
            ),
            True,
        ),
        (lambda cwd: _ls(OWNER, cwd, f"echo {OTHER}"), True),
        # The id not where Claude Code writes it, spaced, missing or empty.
        (lambda cwd: _reordered(_ls(OWNER, cwd)), True),
        (lambda cwd: json.dumps(json.loads(_ls(OWNER, cwd))), True),
        (lambda cwd: _without_session(_ls(OWNER, cwd, f"ls {OTHER}")), True),
        (lambda cwd: _ls("", cwd), True),
        # An id the shim cannot read as a word: the guard reads it (another session's).
        (lambda cwd: _ls('x"y', cwd), False),
    ],
    ids=["key-in-input", "id-in-command", "reordered", "spaced", "missing", "empty", "quoted"],
)
def test_a_forged_or_missing_session_does_not_open_the_fast_path(
    counted: Hook,
    monkeypatch: pytest.MonkeyPatch,
    payload: Callable[[Path], str],
    the_runs: bool,
) -> None:
    start_owned(counted.project, monkeypatch, OWNER)
    text = payload(counted.project)
    answer = counted(text)
    assert (answer.returncode, answer.stderr.strip(), counted.starts()) == (2, STUB_GUARD, 1)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(counted.project))
    assert run_guard(text, "pre").allow is not the_runs


def test_a_run_started_after_a_cd_still_reaches_the_guard(
    counted: Hook, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's pointer is not in the project's state folder; the session record names it."""
    elsewhere = start_owned(tmp_path / "after-cd", monkeypatch, OWNER)
    record = runstate.session_record(OWNER)
    assert record is not None
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"state": str(elsewhere.state)}))
    listing = {"command": "ls"}
    assert counted(hook_event("Bash", listing, OWNER, counted.project)).returncode == 2
    assert counted.starts() == 1
    assert counted(hook_event("Bash", listing, OTHER, counted.project)).returncode == 0
    assert counted.starts() == 1


@pytest.mark.parametrize("session", [OWNER, None], ids=["owned", "unbound"])
def test_post_events_reach_the_guard_only_for_a_confined_session(
    counted: Hook, monkeypatch: pytest.MonkeyPatch, session: str | None
) -> None:
    start_owned(counted.project, monkeypatch, session)
    search = hook_event("WebSearch", {"query": "q"}, OTHER, counted.project)
    post = search.replace('"PreToolUse"', '"PostToolUse"')
    counted(post, "post")
    assert counted.starts() == (0 if session else 1)
    counted(post.replace(OTHER, OWNER), "post")
    assert counted.starts() == (1 if session else 2)


def test_another_sessions_searches_do_not_widen_the_runs_allow_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = start_owned(tmp_path, monkeypatch, OWNER)
    hits = {"results": [{"title": "t", "url": "https://www.oecd.org/ai/"}]}

    def searched(session: str) -> None:
        post = json.loads(event("WebSearch", {"query": "q"}, run.project, phase="PostToolUse"))
        post |= {"session_id": session, "tool_response": hits}
        assert run.post(json.dumps(post)).allow

    searched(OTHER)
    allowlist = load_allowlist(Brief(run.brief))
    assert allowlist is not None and not allowlist.allows("https://www.oecd.org/ai/")
    searched(OWNER)
    allowlist = load_allowlist(Brief(run.brief))
    assert allowlist is not None and allowlist.allows("https://www.oecd.org/ai/")


# --- another session may not drive the run --------------------------------------------------


def _drive(run: Run, session: str, tool: str, tool_input: dict[str, object]) -> guard.Decision:
    body = json.loads(event(tool, tool_input, run.project))
    return run.decide(json.dumps({**body, "session_id": session}))


@pytest.mark.parametrize(
    ("tool", "make_input", "other_session", "own_session"),
    [
        (
            "Bash",
            lambda b: {"command": "deep-research start 'Another question'"},
            "in another Claude Code session",
            "a research run is active",
        ),
        (
            "Bash",
            lambda b: {"command": f"deep-research next {b}"},
            "belongs to another Claude Code session",
            None,
        ),
        (
            "Bash",
            lambda b: {"command": f"deep-research fetch 'https://ec.europa.eu/x' --brief {b}"},
            "belongs to another Claude Code session",
            "not a command the orchestrator runs",
        ),
        ("Bash", lambda b: {"command": f"deep-research finish {b}"}, None, None),
        ("Bash", lambda b: {"command": f"deep-research resume {b}"}, None, None),
        (
            "Workflow",
            lambda b: {"name": WORKFLOW_NAME, "args": {"brief": str(b)}},
            "belongs to another Claude Code session",
            None,
        ),
        (
            "Agent",
            lambda b: {
                "subagent_type": "deep-research:fetcher",
                "description": "d",
                "prompt": fetch_prompt(b),
                "run_in_background": False,
            },
            "belongs to another Claude Code session",
            None,
        ),
        (
            "Agent",
            lambda b: {"subagent_type": "Explore", "description": "d", "prompt": "look"},
            None,
            "not one of the plugin's agents",
        ),
        (
            "Workflow",
            lambda b: {"name": "other-plugin:review", "args": {}},
            None,
            "only deep-research:research-run runs",
        ),
    ],
    ids=[
        "start",
        "next",
        "fetch",
        "finish",
        "resume",
        "workflow",
        "dispatch",
        "explore",
        "other-workflow",
    ],
)
def test_another_session_may_not_drive_the_run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    tool: str,
    make_input: Callable[[Path], dict[str, object]],
    other_session: str | None,
    own_session: str | None,
) -> None:
    """None: allowed. From another session: a second start and anything on the run's brief but
    `finish` and `resume` is refused; from the run's own session the run's rules apply as before."""
    run = start_owned(tmp_path, monkeypatch, OWNER)
    tool_input = make_input(run.brief)
    for session, expected in ((OTHER, other_session), (OWNER, own_session)):
        decision = _drive(run, session, tool, tool_input)
        if expected is None:
            assert decision.allow, (session, decision.reason)
        else:
            assert not decision.allow and expected in decision.reason, (session, decision)


def test_a_session_that_resumes_the_run_drives_it_and_the_first_no_longer_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `claude -p` the CLI stopped leaves its run active and its workflow launched: the next
    session takes the run over with `resume`, relaunches the workflow at once (the stopped
    launch no longer counts as running) and is confined by it; the first session is free."""
    run = start_owned(tmp_path, monkeypatch, OWNER)
    launch = {"name": WORKFLOW_NAME, "args": {"brief": str(run.brief)}}
    assert _drive(run, OWNER, "Workflow", launch).allow
    again = _drive(run, OWNER, "Workflow", launch)  # one workflow per brief, as before
    assert not again.allow and "already running" in again.reason, again
    with monkeypatch.context() as patch:
        patch.setenv(runstate.SESSION_ENV, OTHER)
        assert runstate.resume_run(run.state, run.brief) is True
    active = runstate.load_active(run.state)
    assert active is not None and active.session == OTHER
    assert _drive(run, OTHER, "Workflow", launch).allow
    assert _drive(run, OTHER, "Bash", {"command": f"deep-research wait {run.brief}"}).allow
    taken = _drive(run, OWNER, "Bash", {"command": f"deep-research next {run.brief}"})
    assert not taken.allow and "belongs to another Claude Code session" in taken.reason
    # Resumed again from the same session, nothing changes hands.
    with monkeypatch.context() as patch:
        patch.setenv(runstate.SESSION_ENV, OTHER)
        assert runstate.resume_run(run.state, run.brief) is False


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("other-brief", "no unfinished run on"),  # a brief folder the pointer does not name
        ("missing", "brief directory not found"),
    ],
)
def test_resume_names_only_the_active_runs_brief(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, expected: str
) -> None:
    run = start_owned(tmp_path, monkeypatch, OWNER)
    other = run.brief.parent / name
    if name != "missing":
        other.mkdir()
    before = runstate.pointer_path(run.state).read_text(encoding="utf-8")
    with pytest.raises(DeepResearchError, match=expected):
        runstate.resume_run(run.state, other)
    assert runstate.pointer_path(run.state).read_text(encoding="utf-8") == before


def test_a_subagent_cannot_take_the_run_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = start_owned(tmp_path, monkeypatch, OWNER)
    body = json.loads(event("Bash", {"command": f"deep-research resume {run.brief}"}, run.project))
    decision = run.decide(
        json.dumps({**body, "session_id": OWNER, "agent_id": "a1", "agent_type": "fetcher"})
    )
    assert not decision.allow and "only the orchestrator" in decision.reason, decision


# --- the workflow's launch and answers: one entry of their own ------------------------------


@pytest.mark.parametrize(
    ("tool", "tool_input", "decides"),
    [
        ("StructuredOutput", {"task": "fetcher-sq1-r1#ab"}, "step"),
        ("Workflow", {"name": WORKFLOW_NAME, "args": {}}, "step"),
        # A model cannot move a call to the other entry: what it writes follows tool_input.
        ("Bash", {"command": 'ls "tool_name":"StructuredOutput",'}, "pre"),
        ("Write", {"file_path": "x", "content": '"tool_name":"Workflow",'}, "pre"),
    ],
)
def test_each_call_of_the_runs_session_is_decided_by_exactly_one_entry(
    counted: Hook, monkeypatch: pytest.MonkeyPatch, tool: str, tool_input: Any, decides: str
) -> None:
    """hooks.json sends the workflow's launch and its agents' answers to `guard step` (a
    longer timeout: they may compute the next step) as well as to the catch-all `guard pre`:
    the shim lets exactly one of the two hand each call to the guard."""
    start_owned(counted.project, monkeypatch, OWNER)
    payload = hook_event(tool, tool_input, OWNER, counted.project, agent="a1")
    answers = {phase: counted(payload, phase) for phase in ("pre", "step")}
    handed = {phase for phase, done in answers.items() if done.returncode == 2}
    assert handed == {decides} and counted.starts() == 1
    assert answers[decides].stderr.strip() == STUB_GUARD
