"""Findings that state the same fact: one claim, however many documents word it.

Two publishers rarely write a fact in the same words. If each wording became its own claim, every
claim would have one source and independence, τ and confidence would say nothing about a local
corpus. So the headless runner's claims phase groups findings by fact (docs/contracts.md §6.6):
a finding joins the first earlier group whose first finding (its *representative*, whose
wording the claim keeps) states the same fact — all of these hold:

* **the same literals, both ways**: the literal check of the trace gate
  (:func:`deep_research.gates.literals.check`) finds every figure, date and name of the
  representative's claim in the finding's quote, and every one of the finding's claim in the
  representative's quote — so the merged claim is traced against each source's own quote and
  passes or fails there, and no figure of either wording is lost in the merge;
* **high content overlap**: of the content words (:func:`deep_research.gates.overlap.
  content_tokens`) of the shorter wording, at least :data:`SAME_FACT_OVERLAP` are in the other,
  and at least :data:`MIN_SHARED` in all;
* **the same polarity**: both negate, or neither does ("is thread-safe" and "is not
  thread-safe" share every content word).

Grouping is a decision about findings, not a gate: a wrong merge cannot make a claim pass,
because the trace gate checks the kept wording against every source's quotes afterwards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from deep_research.gates.literals import check
from deep_research.gates.overlap import content_tokens

#: Share of the shorter wording's content words the other must hold.
SAME_FACT_OVERLAP = 0.6
#: Content words two wordings must share at the least (short sentences share little by chance).
MIN_SHARED = 3

_NEGATION = re.compile(
    r"\b(?:not|no|never|nor|neither|none|cannot|without|nothing|nobody)\b|n't\b", re.IGNORECASE
)


def claim_key(text: str) -> str:
    """Two claims with this key are one claim, whatever else holds (case and spacing aside)."""
    return " ".join(text.casefold().split())


def negates(text: str) -> bool:
    return _NEGATION.search(text) is not None


@dataclass(frozen=True)
class Wording:
    """One finding as the grouping compares it."""

    claim: str
    quote: str

    @property
    def tokens(self) -> frozenset[str]:
        return content_tokens(self.claim)


def overlap(a: frozenset[str], b: frozenset[str]) -> tuple[int, float]:
    """Shared content words and their share of the smaller set."""
    shared = len(a & b)
    return shared, (shared / min(len(a), len(b)) if a and b else 0.0)


def same_fact(a: Wording, b: Wording) -> bool:
    """Whether ``a`` and ``b`` state the same fact (the rules of the module docstring)."""
    if claim_key(a.claim) == claim_key(b.claim):
        return True
    shared, share = overlap(a.tokens, b.tokens)
    if shared < MIN_SHARED or share < SAME_FACT_OVERLAP:
        return False
    if negates(a.claim) != negates(b.claim):
        return False
    return check(a.claim, [b.quote]).ok and check(b.claim, [a.quote]).ok


@dataclass
class FactGroups:
    """Assigns each finding, in order, the key of its fact's group (the first wording's key)."""

    representatives: list[tuple[str, Wording]] = field(default_factory=list)
    #: Every claim key seen → its group's key (a wording seen again joins the same group).
    groups: dict[str, str] = field(default_factory=dict)

    def key(self, claim: str, quote: str) -> str:
        own = claim_key(claim)
        if own not in self.groups:
            wording = Wording(claim, quote)
            self.groups[own] = next(
                (key for key, first in self.representatives if same_fact(first, wording)), own
            )
            if self.groups[own] == own:
                self.representatives.append((own, wording))
        return self.groups[own]
