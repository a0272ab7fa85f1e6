"""A run's depth — ``quick`` or ``full`` — and how a person may spell it.

Its own module, and a light one: the hook guard reads the active run's depth on every tool call
and must not load the models (pydantic) to do so (``Brief.load_run`` reads it for every caller).
"""

from __future__ import annotations

from typing import Literal

from deep_research.errors import InputError

Depth = Literal["quick", "full"]


def normalize_depth(depth: str) -> Depth:
    """A depth as `start --depth` or run.json spells it: ``shallow`` is another name for quick."""
    if depth in ("quick", "shallow"):
        return "quick"
    if depth == "full":
        return "full"
    raise InputError(f"depth must be quick, shallow or full, not {depth!r}")
