"""A claim merged from several sources: the cites that hold together (docs/contracts.md §4.2).

A claim a writer merged from several findings ("about 18 per cent — close to one fifth") may
state figures no single source states all of: each source gives one. Checked pair by pair, every
pair misses a figure and the claim is lost though its sources, together, state every word of it.

So a pair whose only failure is a missing figure (``literal_missing``) still **holds** when:

* its located text states at least one literal of the claim;
* it is *silent* on each figure it misses — its located text states no literal of a kind that
  could state it (a source giving "September 2026" where the claim says "March 2026" states
  another date: it disagrees, it does not join);
* every literal of the claim is established by some pair that holds (a fully supported pair, or
  another such partial one).

The pairs that hold become ``supported``, marked :data:`JOINED` so a reader sees that the
source states only part of the claim; the rest keep their outcome. A missing name never joins:
a source naming something else is not silent about it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from deep_research.gates.pair import PairResult
from deep_research.gates.support import LITERAL_MISSING

JOINED = "literals_joined"

#: The quote literal kinds that could state a claim literal of each kind (the compatible kinds
#: of docs/contracts.md §5.2): a located text stating one of these is not silent on the figure.
STATING: dict[str, frozenset[str]] = {
    "number": frozenset({"number", "ordinal", "money"}),
    "ordinal": frozenset({"number", "ordinal"}),
    "money": frozenset({"money", "number"}),
    "percent": frozenset({"percent"}),
    "date": frozenset({"date", "year"}),
    "year": frozenset({"date", "year", "number"}),
}


def _missing(result: PairResult) -> set[str]:
    return {m for item in result.evidence for m in item.checks.literals.missing}


def _claim_literals(result: PairResult) -> set[str]:
    return {m for item in result.evidence for m in item.checks.literals.claim}


def _joinable(result: PairResult) -> bool:
    if result.outcome != "partially_supported" or result.reasons != (LITERAL_MISSING,):
        return False
    kinds = {k for item in result.evidence for k in item.checks.literals.missing_kinds}
    silent = all(k in STATING and not (STATING[k] & result.stated_kinds) for k in kinds)
    return silent and bool(_claim_literals(result) - _missing(result))


def joined(results: Sequence[PairResult]) -> list[PairResult]:
    """``results`` with the partial pairs that hold together made supported (module doc)."""
    partial = [r for r in results if _joinable(r)]
    if not partial:
        return list(results)
    holding = [r for r in results if r.outcome == "supported"] + partial
    uncovered = set.intersection(*(_missing(r) for r in holding))
    if uncovered:
        return list(results)
    kept = {id(r) for r in partial}
    return [_hold(r) if id(r) in kept else r for r in results]


def _hold(result: PairResult) -> PairResult:
    reasons = (JOINED,)
    evidence = tuple(
        item.model_copy(
            update={
                "checks": item.checks.model_copy(
                    update={"outcome": "supported", "reasons": list(reasons)}
                )
            }
        )
        for item in result.evidence
    )
    return replace(result, outcome="supported", reasons=reasons, evidence=evidence)
