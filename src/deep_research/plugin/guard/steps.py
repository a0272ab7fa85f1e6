"""The step ``deep-research next`` printed last, as far as writing goes: the files it named.

A ``write`` action names its ``path``; a ``dispatch`` names each task's ``save_to`` (where the
orchestrator saves an agent's reply). ``next`` records those paths in the brief each time it
prints an action, and during a run the write tools may write those files and no other. The
record is written only by our CLI: Bash runs nothing else during a run, and no step ever names
the record itself.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path

from deep_research.brief.writers import atomic_write_json

NEXT_STEP_FILE = "next-step.json"


def remember_step(brief: Path, paths: Iterable[str]) -> None:
    """Record the files the step just printed names for writing (absolute, as the shell that
    ran ``next`` reads them)."""
    atomic_write_json(brief / NEXT_STEP_FILE, {"writes": [os.path.abspath(p) for p in paths]})


def named_paths(brief: Path) -> list[str]:
    """The files the last step named; none when there is no readable record (nothing is then
    writable until ``next`` is called)."""
    try:
        value = json.loads((brief / NEXT_STEP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    writes = value.get("writes") if isinstance(value, dict) else None
    if not isinstance(writes, list):
        return []
    return [path for path in writes if isinstance(path, str)]
