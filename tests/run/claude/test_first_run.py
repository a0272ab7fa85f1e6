"""What a first run with a real key meets, against the fake Messages API made as strict as the
API: a model the table does not hold, a model the API has retired, an API that cannot be reached,
``--batch`` at quick depth — each ends in one line with exit 2, no traceback and no brief with a
verdict — and the requests a run sends are the ones the current models take: thinking set
explicitly with room for it, the web search tool version the model supports.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from briefs import read_phase
from claude_world import claude_world, role_of
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.run.claude.catalog import THINKING_HEADROOM
from deep_research.run.claude.roles import MAX_OUTPUT_TOKENS
from fakeapi import THINKING_TOKENS, error
from scripted_run import TOPIC

RUN = ["run", TOPIC, "--reasoner", "claude", "--search", "web"]
#: The roles that think, and the tokens their answers need besides.
JUDGING = {role: MAX_OUTPUT_TOKENS[role] for role in ("plan", "synthesize", "triangulate")}


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str, str]:
    code = main([*RUN, "--state", str(tmp_path / "state"), *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


def assert_one_line_exit_2(code: int, out: str, err: str) -> str:
    assert code == 2, err
    assert "Traceback" not in err and out == ""
    assert err.count("\n") == 1, err
    return err.strip()


def no_verdict(tmp_path: Path) -> bool:
    """No brief under the state folder holds a verdict or a report."""
    briefs = tmp_path / "state" / "briefs"
    found = list(briefs.glob("*/report.md")) + list(briefs.glob("*/claims.json"))
    return not found


def test_a_model_outside_the_table_is_refused_before_any_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with claude_world(monkeypatch) as (_, api):
        code, out, err = run(tmp_path, capsys, "--model", "plan=claude-retired-9")
    said = assert_one_line_exit_2(code, out, err)
    assert "the plan role's model 'claude-retired-9' is not in the model table" in said
    assert api.requests == [] and no_verdict(tmp_path)


@pytest.mark.parametrize("retired", ["claude-haiku-5-5", "claude-opus-5-5"])
def test_a_model_the_api_has_retired_ends_the_run_in_one_line(
    retired: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The first call to the retired model (the scout's search on the small one, the plan on
    the strongest) gets the API's 404: the run ends there, with the API's words."""
    knobs = {"retired": frozenset({retired})}
    with claude_world(monkeypatch, api_knobs=knobs) as (_world, api):
        code, out, err = run(tmp_path, capsys)
    said = assert_one_line_exit_2(code, out, err)
    assert said.startswith("deep-research run: the Messages API refused the first call: HTTP 404")
    assert f"not_found_error: model: {retired} (model {retired}, request req_" in said
    assert said.endswith("check the model id (--model ROLE=ID)")
    assert no_verdict(tmp_path)
    assert len([m for m in api.messages if m.body["model"] == retired]) == 1  # not retried


def test_an_unreachable_api_ends_the_run_in_one_line_within_a_minute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with claude_world(monkeypatch):
        with socket.socket() as closed:  # a port nothing listens on
            closed.bind(("127.0.0.1", 0))
            port = closed.getsockname()[1]
        monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
        monkeypatch.delenv("DEEP_RESEARCH_TEST_RETRY_SCALE")  # the waits a user would see
        started = time.monotonic()
        code, out, err = run(tmp_path, capsys)
        took = time.monotonic() - started
    said = assert_one_line_exit_2(code, out, err)
    assert f"cannot reach the Messages API at http://127.0.0.1:{port}" in said
    assert took < 60
    assert no_verdict(tmp_path)


def test_batch_is_refused_at_quick_depth(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with claude_world(monkeypatch) as (_, api):
        code, out, err = run(tmp_path, capsys, "--depth", "quick", "--batch")
    said = assert_one_line_exit_2(code, out, err)
    assert "--batch" in said and "quick" in said
    assert api.requests == []


def test_every_request_is_shaped_for_its_model_and_a_thinking_planner_still_plans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The strongest model thinks whatever a request says (a realistic think: thousands of
    tokens that count toward ``max_tokens``): the plan, the queries and the synthesis leave it
    room, so none is cut short; the execution roles turn thinking off."""
    with claude_world(monkeypatch) as (_world, api):
        code, out, err = run(tmp_path, capsys, "--depth", "full", "--json")
    summary = json.loads(out)
    assert code == 0 and summary["verdict"] == "READY", err
    brief = Brief(Path(summary["brief"]))
    plan = read_phase(brief, "plan")
    assert "mechanically" not in json.dumps(plan), "the planner's answer fitted after its think"
    assert "failed" not in (summary.get("synthesis") or "")
    by_role: dict[str, list[dict[str, Any]]] = {}
    for message in api.messages:
        by_role.setdefault(role_of(message.body), []).append(message.body)
    assert set(by_role) >= {"plan", "search", "extract", "triangulate", "skeptic", "synthesize"}
    for role, bodies in by_role.items():
        for body in bodies:
            if role in JUDGING:
                answer = JUDGING[role]
                assert body["thinking"] == {"type": "adaptive"}
                assert body["max_tokens"] == answer + THINKING_HEADROOM
                assert body["max_tokens"] > THINKING_TOKENS + answer
            else:
                assert body["thinking"] == {"type": "disabled"}, role
    for body in by_role["search"]:
        assert [t["type"] for t in body["tools"]] == ["web_search_20250305"]
    # The extraction's instructions are over the small model's cacheable minimum: marked.
    assert all("cache_control" in body["system"][0] for body in by_role["extract"])
    assert not any(b.get("stop_reason") == "max_tokens" for b in api.billed)


def test_search_on_the_previous_small_model_uses_a_tool_version_it_supports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with claude_world(monkeypatch) as (_world, api):
        code, out, err = run(tmp_path, capsys, "--model", "search=claude-haiku-4-5", "--json")
    assert code in (0, 1), err
    summary = json.loads(out)
    assert summary["claims"] > 0
    searches = [m.body for m in api.messages if role_of(m.body) == "search"]
    assert searches and all(b["model"] == "claude-haiku-4-5" for b in searches)
    assert all(b["tools"][0]["type"] == "web_search_20250305" for b in searches)
    assert all(b["thinking"] == {"type": "disabled"} for b in searches)


def test_a_later_persistent_error_is_recorded_with_its_cause_not_as_a_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Once the small model has answered (the scout's search), a 400 on a page's extraction is
    that worker's failure, recorded with the API's words — the run goes on."""
    refuse = {"extract": lambda body: error(400, message="messages.0.content.0: too long")}
    with claude_world(monkeypatch, overrides=refuse) as (_world, _api):
        code, out, err = run(tmp_path, capsys, "--depth", "full")
    assert code in (0, 1) and "Traceback" not in err, err
    assert "HTTP 400 invalid_request_error: messages.0.content.0: too long" in out
    assert "a cap stopped it" not in out
