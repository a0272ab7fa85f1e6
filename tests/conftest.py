"""Shared fixtures. The labelled eval data lives outside the repository (../shared/eval)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# Loopback HTTP servers and the socket tripwire, as fixtures for every test module.
pytest_plugins = ["localhttp"]

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


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


def _eval_dir() -> Path:
    override = os.environ.get("DEEP_RESEARCH_EVAL_DIR")
    return Path(override) if override else REPO.parent / "shared" / "eval"


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
