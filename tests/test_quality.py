"""The code stays clean under the project's linters: ruff check, ruff format and mypy --strict."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from conftest import REPO


@pytest.mark.parametrize(
    "command",
    [
        [sys.executable, "-m", "ruff", "check", "src", "tests", "benchmarks", "shared/scripts"],
        [
            sys.executable,
            "-m",
            "ruff",
            "format",
            "--check",
            "src",
            "tests",
            "benchmarks",
            "shared/scripts",
        ],
        # A cold strict run takes most of a minute: run mypy itself in the inner loop.
        pytest.param([sys.executable, "-m", "mypy"], marks=pytest.mark.slow),
    ],
    ids=["ruff", "ruff-format", "mypy"],
)
def test_linter_is_clean(command: list[str]) -> None:
    if shutil.which("ruff") is None and command[2] == "ruff":
        pytest.skip("ruff is not installed (pip install -e '.[dev]')")
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
