"""Figures the claim's author declares as computed from quoted figures.

When ``derived`` is given, the claim figure equal to its result (within half a unit of its last
written digit) is satisfied iff every input is a figure in the quotes and the operation on the
inputs gives the claim figure within that precision (or its ``about`` band). ``difference`` is
first − second, ``ratio`` first / second (for a percent figure the ratio may be a fraction or a
percentage), ``percent_change`` (second − first) / first × 100.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, DivisionByZero, InvalidOperation
from typing import Literal

from deep_research.gates.literals.intervals import Interval, claim_interval, quantum, tolerance
from deep_research.gates.literals.tokens import LiteralToken


@dataclass(frozen=True)
class Derivation:
    """A figure the claim's author declares as computed from quoted figures."""

    operation: Literal["sum", "difference", "ratio", "product", "percent_change"]
    inputs: tuple[Decimal, ...]
    result: Decimal


def _apply(operation: str, inputs: Sequence[Decimal]) -> Decimal | None:
    try:
        if operation == "sum":
            return sum(inputs, Decimal(0))
        if operation == "product":
            product = Decimal(1)
            for value in inputs:
                product *= value
            return product
        if len(inputs) != 2:
            return None
        first, second = inputs
        if operation == "difference":
            return first - second
        if operation == "ratio":
            return first / second
        if operation == "percent_change":
            return (second - first) / first * 100
    except (DivisionByZero, InvalidOperation, ZeroDivisionError):
        return None
    return None


def derived_satisfied(
    claim: LiteralToken, quote_tokens: Sequence[LiteralToken], derived: Derivation
) -> bool:
    assert claim.value is not None
    slack = tolerance(claim) if claim.qualifier in ("approx", "nearly") else quantum(claim) / 2
    if abs(claim.value - derived.result) > slack:
        return False
    present = {quote.value for quote in quote_tokens if quote.value is not None}
    if not derived.inputs or any(value not in present for value in derived.inputs):
        return False
    computed = _apply(derived.operation, derived.inputs)
    if computed is None:
        return False
    candidates = [computed]
    if claim.kind == "percent" and derived.operation == "ratio":
        candidates.append(computed * 100)
    outer = claim_interval(claim)
    if claim.qualifier == "eq":
        outer = Interval(claim.value - slack, claim.value + slack)
    return any(Interval(value, value).within(outer) for value in candidates)
