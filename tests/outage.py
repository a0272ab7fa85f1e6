"""A world with a disagreement: two publishers give two restart dates for one outage.

The brief is written as the fetcher and normalizer write one and traced by the real gate, so
the answer gate, the report and the handoff read what they read in production.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from briefs import PageSpec, write_brief
from deep_research.gates.trace import TraceOptions, run_trace

AUTHORITY = (
    "The Northwater treatment works stopped on 3 November after a filter bed collapsed.\n\n"
    "The official target for restarting the treatment works is March 2026, the regional "
    "water authority said in its statement."
)
CONTRACTOR = (
    "Contractor update.\n\nThe contractor's programme puts the restart of the treatment works "
    "in September 2026, six months after the authority's own target."
)
MARCH = "The official target for restarting the treatment works is March 2026."
SEPTEMBER = "The contractor's programme puts the restart of the treatment works in September 2026."
OPEN = {"ids": ["C1", "C2"], "topic": "Restart date of the treatment works"}


def outage(root: Path, contradictions: list[dict[str, Any]] | None = None) -> Path:
    """Two publishers giving two restart dates, traced; the contradiction recorded as open."""
    pages = [
        PageSpec(
            "https://water-authority.example/northwater",
            AUTHORITY,
            [(MARCH, AUTHORITY.split("\n\n")[1])],
            source_type="government",
        ),
        PageSpec(
            "https://builder-news.example/northwater",
            CONTRACTOR,
            [(SEPTEMBER, CONTRACTOR.split("\n\n")[1])],
        ),
    ]
    claims = [{"claim": MARCH, "supporting": ["S1"]}, {"claim": SEPTEMBER, "supporting": ["S2"]}]
    write_brief(
        root,
        pages,
        claims,
        {"unresolved_contradictions": [OPEN] if contradictions is None else contradictions},
    )
    run_trace(TraceOptions(brief=root))
    return root
