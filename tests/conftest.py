"""Shared fixtures. The labelled eval data ships in benchmarks/data ($DEEP_RESEARCH_EVAL_DIR
overrides it)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from deep_research.cli import main
from deep_research.fetch import extract, extractworker
from deep_research.plugin.mcpgate import fingerprint_path

# Loopback HTTP servers and the socket tripwire, as fixtures for every test module.
pytest_plugins = ["localhttp"]

# Property tests judge answers, never speed: on a loaded machine input generation and each
# example are slow, and that is no failure (speed is the benchmarks' business).
settings.register_profile("project", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("project")

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def away_from_the_user(patch: pytest.MonkeyPatch, state_home: Path) -> None:
    """Tests never read or write the user's per-session run records, even when the suite itself
    runs inside a Claude Code session, and never reach the real Messages API: a key or endpoint
    of the user's is never used (the one live check reads the key when its module loads)."""
    patch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    patch.setenv("XDG_STATE_HOME", str(state_home))
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        patch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _no_claude_session(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every test runs :func:`away_from_the_user`; a session fixture calls it itself, as it is
    built before this runs."""
    away_from_the_user(monkeypatch, tmp_path_factory.mktemp("xdg-state"))


#: The extractor as the package sets it, read before any test swaps it: marked tests get exactly
#: this back, so they exercise the production default whatever it is.
PRODUCTION_EXTRACTOR = extract.run_extractor


def extract_in_process(
    body: bytes, media_type: str, charset: str | None, timeout_s: float
) -> extract.WorkerReply:
    """The extractor's answer computed in this process and sent through the same JSON reply
    :func:`~deep_research.fetch.extract.extract_bounded` parses; no deadline, no memory cap."""
    reply = extractworker.answer(body, media_type, charset)
    return extract.WorkerReply(json.dumps(reply, ensure_ascii=False).encode("utf-8", "replace"), 0)


@pytest.fixture(autouse=True, scope="session")
def _extraction_in_process() -> Iterator[None]:
    """Pages are extracted in the test process, in module and session fixtures too: a Python
    started per page was most of the suite's time."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(extract, "run_extractor", extract_in_process)
        yield


@pytest.fixture(autouse=True)
def _extraction_process_when_marked(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tests of the process's bounds (deadline, memory cap, the worker's own answer) are marked
    ``extract_process`` and get the real one back."""
    if request.node.get_closest_marker("extract_process") is not None:
        monkeypatch.setattr(extract, "run_extractor", PRODUCTION_EXTRACTOR)


def newest_claude_binary() -> str:
    """The newest Claude Code release the workflow is checked on (``$DEEP_RESEARCH_CLAUDE_NEWEST``;
    .ci/run installs it beside the pinned one), or skip — fail under
    ``DEEP_RESEARCH_REQUIRE_CLAUDE=1``."""
    found = os.environ.get("DEEP_RESEARCH_CLAUDE_NEWEST")
    if not found:
        if os.environ.get("DEEP_RESEARCH_REQUIRE_CLAUDE") == "1":
            pytest.fail("DEEP_RESEARCH_REQUIRE_CLAUDE=1 but DEEP_RESEARCH_CLAUDE_NEWEST is unset")
        pytest.skip("the newest checked claude CLI is not installed (.ci/run installs it)")
    return found


def claude_binary() -> str:
    """The ``claude`` CLI (``$DEEP_RESEARCH_CLAUDE``, else on PATH), or skip the test.

    CI (``.ci/run``) installs a pinned CLI and sets ``DEEP_RESEARCH_REQUIRE_CLAUDE=1``, so there a
    missing binary fails instead of skipping.
    """
    found = os.environ.get("DEEP_RESEARCH_CLAUDE") or shutil.which("claude")
    if found is None:
        if os.environ.get("DEEP_RESEARCH_REQUIRE_CLAUDE") == "1":
            pytest.fail("DEEP_RESEARCH_REQUIRE_CLAUDE=1 but no `claude` binary on PATH")
        pytest.skip("the claude CLI is not installed (.ci/run installs a pinned one)")
    return found


#: The Claude Code releases every live test runs on: the pinned (on PATH, the oldest supported)
#: and the newest checked (``$DEEP_RESEARCH_CLAUDE_NEWEST``); .ci/run installs both.
CLAUDE_RELEASES = ("pinned", "newest")


@pytest.fixture(params=CLAUDE_RELEASES)
def claude_release(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """A live test (``@pytest.mark.usefixtures("claude_release")``) runs once per release:
    :func:`claude_binary` answers that release's CLI for the test's duration."""
    pinned = claude_binary()
    binary = newest_claude_binary() if request.param == "newest" else pinned
    monkeypatch.setenv("DEEP_RESEARCH_CLAUDE", binary)
    return str(request.param)


def _eval_dir() -> Path:
    override = os.environ.get("DEEP_RESEARCH_EVAL_DIR")
    return Path(override) if override else REPO / "benchmarks" / "data"


def load_eval(name: str) -> list[dict[str, Any]]:
    """Rows of one eval file, or skip the test cleanly when the eval folder is absent."""
    path = _eval_dir() / name
    if not path.is_file():
        pytest.skip(f"eval data not present: {path}")
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture
def wice_rows() -> Iterator[list[dict[str, Any]]]:
    yield load_eval("wice_quotes_dev.jsonl")


@pytest.fixture
def vitaminc_rows() -> Iterator[list[dict[str, Any]]]:
    yield load_eval("vitaminc_dev.jsonl")


# --- the MCP fixture server (tests/fixtures/mcp/tiny_server.py) ----------------------------

SERVER = str(FIXTURES / "mcp" / "tiny_server.py")
SECRET = "do-not-leak-4f9a"


def write_config(state: Path, *extra_args: str, **fields: Any) -> None:
    spec: dict[str, Any] = {
        "command": sys.executable,
        "args": [SERVER, *extra_args],
        "version": "1.2.3",
    }
    spec.update(fields)
    spec = {k: v for k, v in spec.items() if v is not None}
    state.mkdir(parents=True, exist_ok=True)
    (state / "mcp-config.json").write_text(json.dumps({"servers": {"tiny": spec}}))


@pytest.fixture(scope="session")
def mcp_recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The MCP fixture server's reviewed fingerprint, recorded once per session (a start ~1 s)."""
    state = tmp_path_factory.mktemp("recorded")
    write_config(state)
    assert main(["mcp-gate", "tiny", "--state", str(state), "--record"]) == 0
    return fingerprint_path(state, "tiny")


@pytest.fixture
def mcp_state(tmp_path: Path, mcp_recorded: Path) -> Path:
    target = fingerprint_path(tmp_path, "tiny")
    target.parent.mkdir(parents=True)
    shutil.copy(mcp_recorded, target)
    return tmp_path


# --- the real claude CLI, isolated (tests/plugin/test_plugin_live*.py) ------------------------


def package_version() -> str:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return str(project["version"])


#: What the stand-in interpreter of ``fake_launcher_env(..., stub=True)`` says: no Python ran.
STUB_GUARD = "stub guard: the call reached the launcher"


def fake_launcher_env(
    venv: Path, stamp: str | None = None, *, starts: Path | None = None, stub: bool = False
) -> None:
    """What bin/deep-research checks for an installed environment, its Python running this
    interpreter. A script, not a symlink: a symlinked virtualenv Python, moved out of its
    environment, no longer finds that environment's packages. ``starts``: a file that gets one
    line per start of that Python (its arguments). ``stub``: no Python at all — every start
    prints :data:`STUB_GUARD` and exits 2 (a hook's deny), so a test counts cheaply which calls
    a hook hands on."""
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    # This checkout's src/ first: the package may be installed from another checkout.
    path = f'PYTHONPATH="{REPO / "src"}${{PYTHONPATH:+:$PYTHONPATH}}"'
    record = f'echo "$*" >>"{starts}"\n' if starts is not None else ""
    run = f"echo '{STUB_GUARD}' >&2; exit 2" if stub else f'{path} exec "{sys.executable}" "$@"'
    python.write_text(f"#!/bin/sh\n{record}{run}\n", encoding="utf-8")
    python.chmod(0o755)
    # bin/deep-research compares the stamp with "<version> <plugin root, symlinks resolved>".
    (venv / ".deep-research-stamp").write_text(
        stamp if stamp is not None else f"{package_version()} {REPO.resolve()}", encoding="utf-8"
    )


def install_launcher_env(home: Path, starts: Path | None = None) -> None:
    """The launcher's environment under ``home``, so the hooks Claude Code runs there run the
    checkout under test (``starts``: see :func:`fake_launcher_env`)."""
    venv = home / ".claude" / "plugins" / "data" / "deep-research-inline" / "venv"
    fake_launcher_env(venv, starts=starts)


def claude_env(home: Path, api_url: str) -> dict[str, str]:
    """A claude process that sees no user configuration and can reach only the fake API."""
    return {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "test-key",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "HTTPS_PROXY": api_url,
        "HTTP_PROXY": api_url,
        "NO_PROXY": "127.0.0.1",
    }


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first, in their file order. pytest-xdist's work-stealing scheduler hands
    each worker a contiguous share and lets an idle worker take the end of another's queue: the
    long live runs then start at once, while the short tests fill the gaps, instead of one
    worker's last minutes being a single live run."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
