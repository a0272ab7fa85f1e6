"""What each verdict means to whoever reads a brief — defined here once.

A *usable* brief's verified claims may be handed to a consumer; the CLI's brief commands exit 0
on it and 1 otherwise. A *reusable* brief may answer the same question again while its evidence
is fresh; a quick-depth brief never is (freshness decides the rest).
"""

from __future__ import annotations

from typing import get_args

from deep_research.models import Verdict

VERDICTS: tuple[Verdict, ...] = get_args(Verdict)
USABLE: frozenset[Verdict] = frozenset({"READY", "PARTIAL", "PARTIAL_QUICK"})
REUSABLE: frozenset[Verdict] = frozenset({"READY", "PARTIAL"})


def is_usable(verdict: str | None) -> bool:
    """READY, PARTIAL or PARTIAL_QUICK; HOLD, FAIL and no verdict at all are not."""
    return verdict in USABLE


def is_reusable(verdict: str | None) -> bool:
    return verdict in REUSABLE
