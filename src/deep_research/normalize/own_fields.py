"""What a model may write into claims.json: its own fields, by one allow-list, and nothing else.

The writer drafts claims.json (roles/orchestrator.md "Claims"); every other field of the file —
the verdict and its reasons, confidences, independence, support classes, evidence, votes,
entailment, τ, floors, the synthesis, the run's question and date — is written by code alone. A
draft carrying one has it dropped here (and the drop named, for the run's record), never merged:
a model cannot stop a run with ``"verdict": "FAIL"``, nor pass one with ``READY``, ``"high"``
or an answer the answer gate never read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, TypeAdapter

from deep_research.models import Claim, ClaimsFile

#: claims.json's fields the writer states (roles/orchestrator.md "Claims", the example ``next``
#: gives): the claims, the run's sub-questions and depth as shown, the gaps it keeps and adds,
#: and the contradictions it names between its claims (data the confidence gate only lowers on).
#: ``question`` and ``generated`` pass too: ingest stamps both from run.json before any reader.
CLAIMS_DRAFT_FIELDS = frozenset(
    {
        "topic",
        "depth",
        "sub_questions",
        "claims",
        "coverage_gaps",
        "unresolved_contradictions",
        "question",
        "generated",
    }
)
#: A claim's fields the writer states: the statement, what it cites, its importance, a figure it
#: computes (docs/contracts.md §5.3, checked by trace) and a claim it says it contradicts.
CLAIM_DRAFT_FIELDS = frozenset(
    {"id", "claim", "sq", "supporting", "findings", "importance", "derived", "contradicts"}
)


@dataclass(frozen=True)
class Owned:
    """A draft reduced to its own fields, and the fields dropped from it (``claims[].x`` for a
    claim's field), each named once in the order met."""

    kept: dict[str, Any]
    dropped: list[str] = field(default_factory=list)

    def note(self, what: str) -> str | None:
        """One line for the run's record, or None when nothing was dropped."""
        if not self.dropped:
            return None
        return f"{what}: dropped field(s) code computes: {', '.join(self.dropped)}"


def _defaults(model: type[BaseModel]) -> dict[str, Any]:
    """Each optional field's default as JSON: a computed field left at it says nothing."""
    found = {}
    for name, info in model.model_fields.items():
        if not info.is_required():
            default = info.get_default(call_default_factory=True)
            found[info.alias or name] = TypeAdapter(Any).dump_python(default, mode="json")
    return found


CLAIMS_DEFAULTS = _defaults(ClaimsFile)
CLAIM_DEFAULTS = _defaults(Claim)


def _own(
    value: Mapping[str, Any], own: frozenset[str], defaults: Mapping[str, Any], prefix: str
) -> tuple[dict[str, Any], list[str]]:
    """The own fields of ``value`` and the names of the others that say something: a computed
    field at its default (a full dump of an empty file) is kept, as it changes nothing."""
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    for name, item in value.items():
        if name in own or (name in defaults and item == defaults[name]):
            kept[name] = item
        else:
            dropped.append(prefix + name)
    return kept, dropped


def claims_draft(value: Mapping[str, Any]) -> Owned:
    """The writer's claims.json with only its own fields (a claim that is not an object is kept
    as it came, for the file's schema check to refuse)."""
    kept, dropped = _own(value, CLAIMS_DRAFT_FIELDS, CLAIMS_DEFAULTS, "")
    claims = kept.get("claims")
    if isinstance(claims, list):
        own_claims: list[Any] = []
        for claim in claims:
            if isinstance(claim, Mapping):
                claim, more = _own(claim, CLAIM_DRAFT_FIELDS, CLAIM_DEFAULTS, "claims[].")
                dropped += more
            own_claims.append(claim)
        kept["claims"] = own_claims
    return Owned(kept, list(dict.fromkeys(dropped)))
