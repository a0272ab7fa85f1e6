"""Backends by name: built-ins, plus plugins installed as real distributions with entry points."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from deep_research.errors import InputError
from deep_research.run.reasoners import ExtractiveReasoner
from deep_research.run.registry import load_registry

PLUGIN_MODULE = """
from deep_research.run.reasoners import ExtractiveReasoner
from deep_research.run.registry import ReasonerPlugin

class Echo(ExtractiveReasoner):
    @property
    def name(self):
        return "echo"

READY = ReasonerPlugin("echo", "an installed test reasoner", Echo, rank=5)
NO_KEY = ReasonerPlugin("keyed", "needs a key", Echo, unavailable=lambda: "ECHO_KEY is not set")

def make():
    return ReasonerPlugin("made", "built by a factory", Echo)

def broken():
    raise RuntimeError("cannot start")
"""

ENTRY_POINTS = """[deep_research.reasoners]
echo = echoplug:READY
keyed = echoplug:NO_KEY
made = echoplug:make
broken = echoplug:broken
extractive = echoplug:READY
"""


def install_plugin(site: Path) -> Path:
    """One module and one registration: what a backend costs, as a real installed distribution."""
    info = site / "echoplug-0.1.dist-info"
    info.mkdir(parents=True)
    (site / "echoplug.py").write_text(PLUGIN_MODULE, encoding="utf-8")
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: echoplug\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    return site


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = install_plugin(tmp_path / "site")
    monkeypatch.syspath_prepend(str(path))
    return path


def test_builtins_only_without_plugins() -> None:
    registry = load_registry(entry_points=False)
    assert [r.name for r in registry.available_reasoners()] == ["extractive"]
    assert [s.name for s in registry.available_sources()] == ["python-docs"]
    assert isinstance(registry.reasoner("auto"), ExtractiveReasoner)


def test_an_installed_plugin_is_offered_and_auto_prefers_its_rank(site: Path) -> None:
    registry = load_registry()
    assert [r.name for r in registry.available_reasoners()] == ["extractive", "echo", "made"]
    assert registry.reasoner("echo").name == "echo"
    assert registry.reasoner("auto").name == "echo"  # rank 5 beats the built-in's 0
    # A plugin cannot take a built-in's name: "extractive" is still the built-in.
    assert type(registry.reasoner("extractive")) is ExtractiveReasoner


def test_unavailable_broken_and_unknown_reasoners_are_one_line_errors(site: Path) -> None:
    registry = load_registry()
    with pytest.raises(InputError, match="'keyed' is not available here: ECHO_KEY is not set"):
        registry.reasoner("keyed")
    with pytest.raises(InputError, match=r"failed to load \(RuntimeError: cannot start\)"):
        registry.reasoner("broken")
    with pytest.raises(InputError, match="unknown reasoner 'nope'; use one of: auto, extractive"):
        registry.reasoner("nope")


def test_help_lists_only_what_is_installed_and_available(site: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), *sys.path])}
    command = [sys.executable, "-m", "deep_research.cli", "run", "--help"]
    shown = subprocess.run(command, capture_output=True, text=True, env=env, check=True).stdout
    flat = " ".join(shown.split())
    assert "echo (an installed test reasoner)" in flat and "made (built by a factory)" in flat
    assert "keyed" not in flat and "broken" not in flat and "claude" not in flat
    bare = subprocess.run([*command[:3], "run", "--help"], capture_output=True, text=True)
    assert "echo" not in bare.stdout  # without the plugin on the path, it is not offered


def test_a_named_source_and_a_folder(tmp_path: Path) -> None:
    registry = load_registry(entry_points=False)
    with pytest.raises(InputError, match="pass --corpus DIR"):
        registry.source(None, tmp_path)
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nChained comparisons evaluate each operand once.\n")
    assert registry.source(str(folder), tmp_path / "state").name == "local:docs"


def test_claude_and_web_are_offered_only_with_a_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deep_research.run.claude import ClaudeReasoner, WebSearchAdapter
    from deep_research.run.registry import Options

    registry = load_registry(entry_points=False)
    with pytest.raises(InputError, match="'claude' is not available here: ANTHROPIC_API_KEY"):
        registry.reasoner("claude")
    with pytest.raises(InputError, match="'web' is not available here: ANTHROPIC_API_KEY"):
        registry.source(registry.source_key(None, search="web"), tmp_path)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
    assert [r.name for r in registry.available_reasoners()] == ["extractive", "claude"]
    assert type(registry.reasoner("auto")) is ExtractiveReasoner  # a key never spends by itself
    chosen = registry.reasoner("claude", Options({"skeptic": "claude-sonnet-5"}, batch=True))
    assert isinstance(chosen, ClaudeReasoner) and chosen.batch
    assert chosen.client.models["skeptic"] == "claude-sonnet-5"
    # A run records the search source by its name, and a resumed run opens it by that name.
    assert registry.source_key(None, search="web") == "web"
    assert isinstance(registry.source("web", tmp_path), WebSearchAdapter)
    with pytest.raises(InputError, match="not both"):
        registry.source_key(str(tmp_path), search="web")
    with pytest.raises(InputError, match="unknown --search 'python-docs'; use one of: web"):
        registry.source_key(None, search="python-docs")
    with pytest.raises(InputError, match="need a model-backed reasoner"):
        registry.reasoner("extractive", Options(batch=True))


def test_model_options_are_role_equals_model(capsys: pytest.CaptureFixture[str]) -> None:
    from deep_research.cli import main
    from deep_research.run.claude.roles import parse_model_options

    assert parse_model_options(["skeptic=claude-haiku-4-5"]) == {"skeptic": "claude-haiku-4-5"}
    with pytest.raises(InputError, match="write ROLE=MODEL"):
        parse_model_options(["skeptic"])
    assert main(["run", "q", "--corpus", "python-docs", "--model", "skeptic"]) == 2
    assert "write ROLE=MODEL" in capsys.readouterr().err
