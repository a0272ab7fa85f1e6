"""``deep-research mcp-gate``: the three MCP gates against a real stdio MCP server (the SDK's own
server API, in tests/fixtures/mcp/tiny_server.py), started with this interpreter."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import SECRET, write_config
from deep_research.cli import main
from deep_research.plugin.mcpgate import PINNED_ARG, fingerprint, fingerprint_path


def gate(capsys: pytest.CaptureFixture[str], state: Path, *flags: str) -> tuple[int, Any, str]:
    code = main(["mcp-gate", "tiny", "--state", str(state), *flags])
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


@pytest.fixture
def recorded(mcp_recorded: Path) -> Path:
    return mcp_recorded


@pytest.fixture
def state(mcp_state: Path) -> Path:
    return mcp_state


def test_record_prints_the_tool_list_and_writes_the_fingerprint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(tmp_path)
    code, result, err = gate(capsys, tmp_path)
    assert (code, result["error"]) == (1, "manifest-audit-failed")  # nothing reviewed yet
    assert "--record" in result["reason"] and "tool search_docs:" in err

    code, result, err = gate(capsys, tmp_path, "--record")
    assert code == 0 and "tool read_page:" in err and "tool search_docs:" in err
    stored = json.loads(fingerprint_path(tmp_path, "tiny").read_text())
    assert stored["fingerprint"] == result["fingerprint"] == fingerprint(stored["tools"])
    assert stored["server_version"] == "1.2.3"


def test_passes_with_the_recorded_fingerprint(
    state: Path, recorded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(state)
    code, result, _ = gate(capsys, state)
    assert code == 0
    assert result == {
        "ok": True,
        "name": "tiny",
        "fingerprint": json.loads(recorded.read_text())["fingerprint"],
        "tools": ["read_page", "search_docs"],
    }


@pytest.mark.parametrize(
    ("flag", "drift"),
    [
        ("--extra-tool", "added: run_shell"),
        ("--change-schema", "changed: search_docs"),
        ("--change-description", "changed: search_docs"),
    ],
)
def test_a_changed_tool_list_fails_the_manifest_audit(
    state: Path, capsys: pytest.CaptureFixture[str], flag: str, drift: str
) -> None:
    write_config(state, flag)
    code, result, err = gate(capsys, state)
    assert (code, result["error"]) == (1, "manifest-audit-failed")
    assert drift in result["reason"]
    assert "tool search_docs:" in err  # shown for the re-review


@pytest.mark.parametrize("version", [None, "^1.2", "latest"])
def test_an_unpinned_spec_fails_the_version_pin(
    state: Path, capsys: pytest.CaptureFixture[str], version: str | None
) -> None:
    write_config(state, version=version)
    code, result, _ = gate(capsys, state)
    assert (code, result["error"]) == (1, "version-pin-failed")


def test_a_version_the_server_does_not_report_fails_the_version_pin(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(state, "--version", "1.3.0")
    code, result, _ = gate(capsys, state)
    assert (code, result["error"]) == (1, "version-pin-failed")
    assert "'1.3.0'" in result["reason"]


def test_exact_pins_are_told_from_ranges() -> None:
    pinned = ["docs-mcp==1.2.3", "docs_mcp[cli]==0.4.1rc1", "@scope/server@2.0.1", "srv@v1.0.0"]
    loose = [
        "docs-mcp",
        "docs-mcp>=1.2",
        "docs-mcp~=1.2",
        "srv@latest",
        "srv@^1.2.0",
        "-y",
        "@scope/server",
        "srv==1",
    ]
    assert [a for a in pinned if not PINNED_ARG.match(a)] == []
    assert [a for a in loose if PINNED_ARG.match(a)] == []


def test_a_pinned_package_argument_is_a_pin(
    state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(state, "docs-mcp==1.2.3", version=None)
    code, result, _ = gate(capsys, state)
    assert code == 0, result


def test_an_undeclared_secret_fails_least_privilege_before_the_server_starts(
    state: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    dump = state / "env.json"
    write_config(state, "--dump-env", str(dump), env=["GITHUB_TOKEN"])
    code, result, err = gate(capsys, state)
    assert (code, result["error"]) == (1, "least-privilege-failed")
    assert "GITHUB_TOKEN" in result["reason"]
    assert SECRET not in json.dumps(result) + err
    assert not dump.exists()  # never started, so it never saw the secret


def test_the_server_gets_only_its_declared_credentials(
    state: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DOCS_TOKEN", SECRET)
    monkeypatch.setenv("OTHER_SERVICE_API_KEY", SECRET)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    dump = state / "env.json"
    write_config(state, "--dump-env", str(dump), env=["DOCS_TOKEN"], credentials=["DOCS_TOKEN"])
    code, result, err = gate(capsys, state)
    assert code == 0, result
    received = set(json.loads(dump.read_text()))
    assert "DOCS_TOKEN" in received
    assert not received & {"OTHER_SERVICE_API_KEY", "AWS_SECRET_ACCESS_KEY"}
    assert SECRET not in json.dumps(result) + err


def test_a_hung_server_times_out(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(state, "--hang")
    started = time.monotonic()
    code, result, _ = gate(capsys, state, "--timeout", "0.5")
    assert (code, result["error"]) == (1, "manifest-audit-failed")
    assert "within 0.5s" in result["reason"]
    assert time.monotonic() - started < 15  # the SDK's own stop grace period, then a kill


def test_a_server_that_dies_fails_closed(state: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(state, version="1.2.3")
    spec = json.loads((state / "mcp-config.json").read_text())
    spec["servers"]["tiny"]["args"] = ["-c", "import sys; sys.exit(3)"]
    (state / "mcp-config.json").write_text(json.dumps(spec))
    code, result, _ = gate(capsys, state, "--timeout", "10")
    assert (code, result["error"]) == (1, "manifest-audit-failed")


BAD_CONFIGS: dict[str, Any] = {
    "no servers object": {"tiny": {}},
    "unknown server": {"servers": {"other": {"command": "x"}}},
    "no command": {"servers": {"tiny": {"args": []}}},
    "env with values": {"servers": {"tiny": {"command": "x", "env": {"TOKEN": SECRET}}}},
    "args not strings": {"servers": {"tiny": {"command": "x", "args": [1]}}},
    "no such program": {
        "servers": {"tiny": {"command": "/nonexistent/mcp-server", "version": "1.0.0"}}
    },
}


@pytest.mark.parametrize("config", BAD_CONFIGS.values(), ids=BAD_CONFIGS.keys())
def test_a_bad_config_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: Any
) -> None:
    (tmp_path / "mcp-config.json").write_text(json.dumps(config))
    code, result, err = gate(capsys, tmp_path)
    assert (code, result) == (2, None)
    assert err.count("\n") == 1 and err.startswith("deep-research mcp-gate: ")
    assert SECRET not in err


@pytest.mark.parametrize("case", ["missing", "not json", "bad name"])
def test_an_unusable_config_or_name_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    if case == "not json":
        (tmp_path / "mcp-config.json").write_text("{")
    name = "../escape" if case == "bad name" else "tiny"
    assert main(["mcp-gate", name, "--state", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
