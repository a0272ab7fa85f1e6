"""The trace gate's verdict for one (claim, source) pair: what the gate returns per pair, and what
the joint check (:mod:`deep_research.gates.joint`) and the answer check read back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from deep_research.models import Evidence, Violation

PairOutcome = Literal[
    "supported", "partially_supported", "unsupported", "unresolvable", "uncertain"
]


@dataclass(frozen=True)
class PairResult:
    """The trace verdict for one (claim, source) pair."""

    unit: str  # claim id, or "sentence N" in dossier mode
    source: str
    outcome: PairOutcome
    reasons: tuple[str, ...]
    evidence: tuple[Evidence, ...] = ()
    stated_kinds: frozenset[str] = frozenset()  # kinds of literal the located text states

    @property
    def violation(self) -> Violation | None:
        if self.outcome == "supported":
            return None
        finding = next((item.finding for item in self.evidence if item.finding), None)
        return Violation(
            claim=self.unit if self.unit.startswith("C") else None,
            source=self.source,
            finding=finding,
            reason=self.reasons[0] if self.reasons else self.outcome,
            detail=f"{self.unit} cites {self.source}: {self.outcome} ({', '.join(self.reasons)})",
        )
