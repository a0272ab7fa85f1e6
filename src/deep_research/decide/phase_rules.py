"""Each phase's rules, written once for both drivers: what it sends, how many agents, when code
skips it, and the settings it reads.

The pipeline's order, depths and recorded skip reasons are data in
:mod:`deep_research.run.pipeline`; what a phase does when it runs is decided here. The headless
driver (:mod:`deep_research.run.phases`, :mod:`deep_research.run.claude.panel`) and the plugin's
step code (:mod:`deep_research.plugin.next`) both call these functions with the run's
:class:`~deep_research.settings.Settings`, so a setting changes both drivers the same way:

* plan — the floors a plan is topped up to, by depth (:class:`PlanFloors`);
* panel — the claims it sits for (:func:`panel_claims`) and how many skeptic votes a claim
  still needs (:func:`votes_wanted`, read up to ``panel_size``);
* CIBER — when code skips it (:func:`ciber_skip`) and the claims it re-frames
  (:func:`ciber_claims`, the first ``ciber_top_n`` high ones).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations_with_replacement

from deep_research.decide.ciber import SkipReason, skip_problem
from deep_research.decide.triangulate import load_bearing
from deep_research.decide.votes import ABSTAIN, REFUTE, UPHOLD, settled
from deep_research.depth import Depth
from deep_research.models import Claim, ClaimsFile, VoteRecord
from deep_research.settings import Settings

#: CIBER's skips in the order code checks them: a quick brief never runs it; a brief whose
#: re-fetch failed is FAIL whatever CIBER finds, so no call is spent on it; too few high claims
#: leave nothing to re-frame against each other.
CIBER_SKIPS: tuple[SkipReason, ...] = (
    "depth-quick",
    "refetch-hard-fail",
    "insufficient-high-confidence-claims",
)


@dataclass(frozen=True)
class PlanFloors:
    """What a plan must hold at its depth: sub-questions, queries per sub-question, and
    counter-queries per sub-question (round 2 runs at full depth only)."""

    sub_questions: int
    queries: int
    counter_queries: int

    @staticmethod
    def of(settings: Settings, depth: Depth) -> PlanFloors:
        if depth == "quick":
            return PlanFloors(
                settings.quick_sub_questions, settings.quick_queries_per_sub_question, 0
            )
        return PlanFloors(
            settings.full_sub_questions,
            settings.full_queries_per_sub_question,
            settings.full_counter_queries_per_sub_question,
        )


def panel_claims(document: ClaimsFile) -> list[Claim]:
    """The claims the skeptic panel sits for: the traced (Supported) load-bearing ones, the set
    the verdict reads the panel's word on (docs/contracts.md §7). An untraced claim never goes:
    the panel must not be what confirms a quote no text holds."""
    return load_bearing([claim for claim in document.claims if claim.support_class == "Supported"])


def votes_wanted(cast: Sequence[VoteRecord], settings: Settings) -> int:
    """How many more skeptic votes a claim needs now, to be asked together: none once its panel
    is full or its outcome settled (:func:`~deep_research.decide.votes.settled`), else the
    fewest further votes after which some outcome could be settled.

    No sequence of fewer votes can settle the claim, so asking them together casts exactly the
    votes one-at-a-time casting would reach too: a driver that asks them in parallel and one
    that asks one per round cast the same number. At the default panel (3 votes, 2 kill,
    2 survive) this is two votes, then a third only on a split."""
    cast = cast[: settings.panel_size]
    remaining = settings.panel_size - len(cast)
    if remaining <= 0 or settled(cast, settings) is not None:
        return 0
    for more in range(1, remaining):
        # The outcome reads counts, not order: each multiset of further votes is tried once.
        for rest in combinations_with_replacement((REFUTE, UPHOLD, ABSTAIN), more):
            if settled([*cast, *rest], settings) is not None:
                return more
    return remaining


def ciber_skip(document: ClaimsFile, settings: Settings) -> SkipReason | None:
    """The reason code skips CIBER for this brief (the first of :data:`CIBER_SKIPS` the brief
    makes valid, as :func:`~deep_research.decide.ciber.skip_problem` checks it), or None: CIBER
    runs."""
    for reason in CIBER_SKIPS:
        if skip_problem(reason, document, settings) is None:
            return reason
    return None


def ciber_claims(document: ClaimsFile, top_n: int) -> list[Claim]:
    """The claims CIBER re-frames: the first ``top_n`` (the setting ``ciber_top_n``) of
    confidence ``high``, in claims.json's order."""
    return [claim for claim in document.claims if claim.confidence == "high"][:top_n]
