"""Settings fixed at `start`: every gate of a plugin run decides under them, an override there is
refused, and a brief decided under non-default settings says so wherever it is read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from briefs import build, read_claims
from deep_research.cli import main
from deep_research.decide.verdict import run_verdict
from deep_research.errors import InputError
from deep_research.settings import Settings, settings_for

TOPIC = "How many heat pumps were sold in 2023?"
LOWERED = (
    "this verdict was decided with settings changed from their defaults: "
    "full_distinct_sources=3 (default 30) [non-default-settings]"
)


def _start(state: Path, monkeypatch: pytest.MonkeyPatch, **environ: str) -> Path:
    """`deep-research start` under ``environ``; returns the brief it made."""
    monkeypatch.setenv("XDG_STATE_HOME", str(state / "xdg"))
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    for key, value in environ.items():
        monkeypatch.setenv(key, value)
    assert main(["start", TOPIC, "--state", str(state)]) == 0
    for key in environ:
        monkeypatch.delenv(key)
    (root,) = (state / "briefs").iterdir()
    return root


def _plugin_brief(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **environ: str) -> Path:
    """A plugin run's brief: run.json from `start`, then the brief that passes every gate."""
    root = _start(tmp_path / "state", monkeypatch, **environ)
    run_json = (root / "run.json").read_bytes()
    shutil.rmtree(root)
    build(root, ciber=False)  # the library gates, under the defaults
    (root / "run.json").write_bytes(run_json)
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}


def test_start_records_the_run_settings_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _start(tmp_path / "state", monkeypatch, DEEP_RESEARCH_TAU_THRESHOLD="0.8")
    recorded = json.loads((root / "run.json").read_text())["settings"]
    assert recorded == Settings(tau_threshold=0.8).as_record()
    # Later commands read the record, not the environment they happen to run in.
    assert settings_for(root, environ={}) == Settings(tau_threshold=0.8)


def test_start_refuses_a_bad_setting_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_FULL_ROUNDS", "two")
    capsys.readouterr()
    assert main(["start", TOPIC, "--state", str(tmp_path / "state")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize("command", ["triangulate", "verdict", "fresh"])
def test_a_set_override_on_a_plugin_run_is_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
) -> None:
    root = _plugin_brief(tmp_path, monkeypatch)
    before = _snapshot(root)
    capsys.readouterr()
    assert main([command, str(root), "--set", "full_distinct_sources=3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--set full_distinct_sources=3 refused" in err
    assert _snapshot(root) == before


def test_votes_and_ciber_refuse_a_set_override_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _plugin_brief(tmp_path, monkeypatch)
    votes = tmp_path / "votes.json"
    votes.write_text(json.dumps({"C1": [None]}))
    before = _snapshot(root)
    assert main(["votes", str(root), "--input", str(votes), "--set", "kill_votes=3"]) == 2
    skip = ["--skip", "insufficient-high-confidence-claims"]
    assert main(["ciber", "apply", str(root), *skip, "--set", "ciber_min_high_claims=9"]) == 2
    assert _snapshot(root) == before


def test_an_environment_override_on_a_plugin_run_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _plugin_brief(tmp_path, monkeypatch)
    before = _snapshot(root)
    monkeypatch.setenv("DEEP_RESEARCH_FULL_DISTINCT_SOURCES", "3")
    capsys.readouterr()
    assert main(["verdict", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "DEEP_RESEARCH_FULL_DISTINCT_SOURCES=3 refused" in err
    assert _snapshot(root) == before
    # The value the run was started under is no override.
    monkeypatch.setenv("DEEP_RESEARCH_FULL_DISTINCT_SOURCES", "30")
    assert main(["verdict", str(root)]) == 1  # HOLD: CIBER has not run yet


def test_every_gate_of_a_plugin_run_uses_the_settings_it_started_under(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Started with a lowered floor: the gates use it without being told, and the brief says so.
    root = _plugin_brief(tmp_path, monkeypatch, DEEP_RESEARCH_FULL_DISTINCT_SOURCES="3")
    assert main(["triangulate", str(root)]) == 0
    assert main(["ciber", "apply", str(root), "--skip", "insufficient-high-confidence-claims"]) == 2
    clean = tmp_path / "ciber.json"
    clean.write_text(json.dumps({"ciber_passed": True, "consistency_failures": []}))
    assert main(["ciber", "apply", str(root), "--input", str(clean)]) == 0
    assert main(["verdict", str(root)]) == 0
    document = read_claims(root)
    assert document["verdict"] == "READY"
    assert document["floors"]["distinct_sources"]["required"] == 3
    assert document["verdict_reasons"][-1] == LOWERED
    # A caller that bypasses the CLI cannot decide it under other numbers either.
    with pytest.raises(InputError, match="deep-research start fixed it at 3"):
        run_verdict(root, Settings())
    assert main(["render", str(root)]) == 0
    assert f"- {LOWERED}" in (root / "report.md").read_text()
    capsys.readouterr()
    assert main(["handoff", str(root)]) == 0
    handoff = json.loads(capsys.readouterr().out)
    assert handoff["non_default_settings"] == {"full_distinct_sources": {"value": 3, "default": 30}}


def test_a_brief_outside_a_plugin_run_takes_set_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: `--set` lowered a floor and only settings_hash differed from a default verdict.
    root = build(tmp_path / "brief")
    lowered = ["--set", "full_distinct_sources=3", "--set", "tau_threshold=0.5"]
    assert main(["triangulate", str(root), *lowered]) == 0
    assert main(["verdict", str(root), *lowered]) == 0
    document = read_claims(root)
    assert document["verdict_reasons"] == [
        "READY: every check passed at full depth [all-gates-passed]",
        "this verdict was decided with settings changed from their defaults: "
        "tau_threshold=0.5 (default 0.85), full_distinct_sources=3 (default 30) "
        "[non-default-settings]",
    ]
    assert document["non_default_settings"] == {
        "tau_threshold": {"value": 0.5, "default": 0.85},
        "full_distinct_sources": {"value": 3, "default": 30},
    }
    capsys.readouterr()
    assert main(["handoff", str(root)]) == 0
    assert (
        json.loads(capsys.readouterr().out)["non_default_settings"]
        == (document["non_default_settings"])
    )


def test_a_brief_decided_under_the_defaults_says_nothing_about_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = build(tmp_path / "brief")
    assert main(["verdict", str(root)]) == 0
    assert not any("settings" in line for line in read_claims(root)["verdict_reasons"])
    capsys.readouterr()
    assert main(["handoff", str(root)]) == 0
    assert json.loads(capsys.readouterr().out)["non_default_settings"] == {}


def test_a_malformed_settings_record_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _plugin_brief(tmp_path, monkeypatch)
    record = json.loads((root / "run.json").read_text())
    record["settings"]["full_rounds"] = -1
    (root / "run.json").write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["verdict", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "settings.full_rounds" in err
