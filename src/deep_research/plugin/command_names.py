"""The names of the commands ``next`` asks for, by who runs them.

Kept apart from :mod:`deep_research.plugin.runs` (which types a command with pydantic) so the
hook guard, which allows exactly these during a run, reads them without loading the models.
"""

from __future__ import annotations

from typing import Literal

#: The commands a step runs in process: each works on the brief alone.
InProcess = Literal[
    "ingest",
    "trace",
    "triangulate",
    "refetch",
    "ciber",
    "counters",
    "verdict",
    "render",
    "mcp-gate",
]
#: The commands only the loop's orchestrator runs (the step stops and names them).
ByTheLoop = Literal["start", "finish"]
