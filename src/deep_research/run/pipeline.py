"""The pipeline as data: every phase, the depths it runs at, what it needs, writes and skips.

One definition for both drivers: the headless driver runs these phases in this order, and the
plugin's next-step command reads the same table, so the order cannot drift between prose and
code. A phase *needs* artifacts earlier phases wrote and *writes* its own; a skip rule names a
condition code checks (never the model) and the reason the phase records instead of acting.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from deep_research.decide.phase_rules import CIBER_SKIPS
from deep_research.models import Depth

PhaseName = Literal[
    "plan",
    "cast",
    "normalize",
    "round2",
    "claims",
    "trace",
    "entail",
    "panel",
    "triangulate",
    "refetch",
    "ciber",
    "synthesize",
    "verdict",
    "render",
]

SkipCondition = Literal[
    "round-cap",  # the run's round cap is below 2
    "no-supported-claim",  # no claim is Supported after the trace: nothing for the panel
    "no-entailment-judge",  # the run's reasoner has no entailment judge
    "local-corpus",  # no web source: nothing to re-fetch
    "nothing-cited",  # no claim cites a source this run fetched: nothing to re-fetch
    "depth-quick",  # CIBER does not run at quick depth
    "refetch-hard-fail",  # the re-fetch failed: the brief is FAIL whatever CIBER finds
    "insufficient-high-confidence-claims",  # CIBER needs at least two high-confidence claims
    "verdict-fail",  # a FAIL brief is not rendered
]

BOTH: frozenset[Depth] = frozenset({"quick", "full"})
FULL_ONLY: frozenset[Depth] = frozenset({"full"})


@dataclass(frozen=True)
class Phase:
    name: PhaseName
    summary: str
    needs: tuple[str, ...]
    writes: tuple[str, ...]
    depths: frozenset[Depth] = BOTH
    #: Each condition code checks, in the order it checks them, and the reason it records.
    skips: Mapping[SkipCondition, str] = field(default_factory=dict)

    def skip_reason(self, when: SkipCondition) -> str:
        """The recorded reason for ``when``; a KeyError names a rule this phase does not have."""
        if when not in self.skips:
            raise KeyError(f"phase {self.name} has no skip rule {when!r}")
        return self.skips[when]


PIPELINE: tuple[Phase, ...] = (
    Phase(
        "plan",
        "survey the sources and split the question into sub-questions (clamped, preflighted)",
        needs=(),
        writes=("claims.json", "trace.json#phases.plan"),
    ),
    Phase(
        "cast",
        "round 1: one worker per sub-question searches, retains and extracts findings",
        needs=("trace.json#phases.plan",),
        writes=("corpus/", "fetch-log.jsonl", "trace.json#phases.cast"),
    ),
    Phase(
        "normalize",
        "the workers' findings become canonical source rows",
        needs=("trace.json#phases.cast",),
        writes=("sources.jsonl",),
    ),
    Phase(
        "round2",
        "round 2: counter-queries per sub-question, findings merged into the rows",
        needs=("sources.jsonl", "trace.json#phases.plan"),
        writes=("corpus/", "fetch-log.jsonl", "sources.jsonl", "trace.json#phases.round2"),
        depths=FULL_ONLY,
        skips={"round-cap": "rounds: the round cap stopped the run before round 2"},
    ),
    Phase(
        "claims",
        "findings grouped into candidate claims, each with its supporting sources",
        needs=("sources.jsonl",),
        writes=("claims.json",),
    ),
    Phase(
        "trace",
        "the trace gate: every (claim, source) pair traced to its retained text",
        needs=("claims.json", "sources.jsonl", "corpus/"),
        writes=("claims.json", "trace.json"),
    ),
    Phase(
        "entail",
        "the entailment judge on each traced load-bearing (claim, source); spans checked by code",
        needs=("claims.json", "trace.json"),
        writes=("claims.json", "trace.json#phases.entail"),
        depths=FULL_ONLY,
        skips={"no-entailment-judge": "this run's reasoner has no entailment judge"},
    ),
    Phase(
        "panel",
        "the skeptic panel votes on every traced load-bearing claim",
        needs=("claims.json", "trace.json"),
        writes=("claims.json", "trace.json#phases.votes"),
        skips={"no-supported-claim": "no claim reached the panel"},
    ),
    Phase(
        "triangulate",
        "independence groups, τ, dissemination and confidence; what failed is stripped",
        needs=("claims.json", "trace.json", "sources.jsonl"),
        writes=("claims.json", "trace.json"),
    ),
    Phase(
        "refetch",
        "a deterministic sample re-fetched live, else from the web archive",
        needs=("claims.json", "sources.jsonl"),
        writes=("trace.json",),
        depths=FULL_ONLY,  # a quick brief is never reused, so nothing is re-checked for it
        skips={
            "local-corpus": "local corpus: no web source to re-fetch",
            "nothing-cited": "no claim cites a fetched source: nothing to re-fetch",
        },
    ),
    Phase(
        "ciber",
        "CIBER re-frames the high-confidence claims; the diagnosis is applied mechanically",
        needs=("claims.json", "trace.json"),
        writes=("claims.json", "trace.json"),
        # Recorded as the reason itself (``ciber_skipped``), in the order code checks them.
        skips={reason: reason for reason in CIBER_SKIPS},
    ),
    Phase(
        "synthesize",
        "a digest of the emitted claims, with the wall clock recorded",
        needs=("claims.json",),
        writes=("claims.json", "trace.json"),
    ),
    Phase(
        "verdict",
        "the verdict by precedence and floors, after re-tracing claims.json",
        needs=("claims.json", "trace.json", "sources.jsonl", "corpus/"),
        writes=("claims.json", "trace.json", "audit.json"),
    ),
    Phase(
        "render",
        "report.md from the decided brief",
        needs=("claims.json", "sources.jsonl"),
        writes=("report.md",),
        skips={"verdict-fail": "refused: the verdict is FAIL"},
    ),
)

BY_NAME: dict[str, Phase] = {phase.name: phase for phase in PIPELINE}


def phase_functions(namespace: Mapping[str, Any]) -> dict[str, Any]:
    """Each phase's function in a driver's module, in pipeline order, by one naming rule.

    Both drivers build their table with it (``phase_<name>`` for every phase), so a driver that
    lacks a phase fails as it is imported, not halfway through a run.
    """
    return {phase.name: namespace[f"phase_{phase.name}"] for phase in PIPELINE}


def phases_for(depth: Depth) -> tuple[Phase, ...]:
    """The phases a run at ``depth`` goes through, in order."""
    return tuple(phase for phase in PIPELINE if depth in phase.depths)


def phase_names(depth: Depth) -> tuple[str, ...]:
    return tuple(phase.name for phase in phases_for(depth))
