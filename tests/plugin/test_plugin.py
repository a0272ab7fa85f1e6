"""The Claude Code plugin: manifests, and the real `claude plugin validate --strict`.

The validator runs offline. CI (``.ci/run``) installs a pinned CLI and sets
``DEEP_RESEARCH_REQUIRE_CLAUDE=1``, so there a missing ``claude`` binary fails instead of skipping.
With both manifests present, ``claude plugin validate .`` checks only the marketplace; the
components (skills, agents, hooks) are checked when the validator is pointed at plugin.json.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, claude_binary


def test_manifest_names_the_plugin() -> None:
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "deep-research"
    assert not (REPO / "plugin.json").exists()  # a top-level manifest is never read


def test_marketplace_lists_this_directory() -> None:
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    assert [(p["name"], p["source"]) for p in market["plugins"]] == [("deep-research", "./")]


@pytest.mark.parametrize("target", [".", ".claude-plugin/plugin.json"])
@pytest.mark.usefixtures("claude_release")
def test_claude_plugin_validate_strict_is_clean(target: str) -> None:
    env = {**os.environ, "HOME": os.environ.get("HOME", str(Path.home()))}
    done = subprocess.run(
        [claude_binary(), "plugin", "validate", "--strict", target],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Validation passed" in output
    assert "warning" not in output.lower(), output
