"""Which file a Bash command runs, and whether it is our CLI.

Our CLI is the plugin's launcher, ``$CLAUDE_PLUGIN_ROOT/bin/deep-research``. Claude Code runs
Bash with the hooks' own PATH and every enabled plugin's ``bin/`` appended after it (2.1.197), so
the guard finds a bare ``deep-research`` exactly as bash will: the first executable of that name
along PATH, then along the plugin's ``bin/``. A command word with a slash names its file
directly (from the shell's directory when relative). Either way the file must be the launcher
itself: in the launcher's own folder, as the launcher finds its plugin root (``cd`` to its
folder, then ``pwd -P``). Any other file called deep-research — earlier on PATH, or at a path
that merely ends in ``/deep-research`` — is not ours, whatever it would run.

Outside Claude Code's plugin loader (no ``CLAUDE_PLUGIN_ROOT``: the guard called by hand or in
tests) the launcher is the console script installed beside the interpreter running the guard.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from deep_research.plugin.guard.decision import MAX_PATH

CLI_NAME = "deep-research"


def launcher() -> Path:
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if root:
        return Path(root) / "bin" / CLI_NAME
    return Path(sys.executable).parent / CLI_NAME


def found_on_path(word: str, cwd: Path) -> Path | None:
    """The file bash runs for ``word`` in the Bash tool (None when there is none)."""
    if len(word) > MAX_PATH:
        return None  # names no file
    if "/" in word:
        return cwd / word
    folders = os.environ.get("PATH", "").split(os.pathsep)
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if root:
        folders.append(str(Path(root) / "bin"))
    for folder in folders:
        base = Path(folder or ".")  # an empty entry is the current directory, as in bash
        candidate = (base if base.is_absolute() else cwd / base) / word
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def is_launcher(path: Path) -> bool:
    """``path`` is the launcher's own directory entry, however the folders were spelled."""
    ours = launcher()
    if path.name != CLI_NAME:
        return False
    return os.path.realpath(path.parent) == os.path.realpath(ours.parent) and ours.is_file()


def named_like_cli(word: str) -> bool:
    return word.rsplit("/", 1)[-1] == CLI_NAME
