"""What to do next after a command that exits 1: one line, for whoever drives the run.

A non-zero exit alone tells a model driving the pipeline nothing: whether to go on, re-run a
phase, or stop and tell the person. ``trace``, ``verdict``, ``handoff`` and ``answer`` — and
the fetcher's ``fetch``, ``mcp-fetch`` and ``hosts check`` — print this line on stderr
(``next: …``) when they exit 1; the exit codes stay as docs/commands.md documents them.
A verdict's line is decided by the most severe rule that fired (its id in ``verdict_reasons``).
"""

from __future__ import annotations

from collections.abc import Sequence

from deep_research.decide.verdict import FLOOR_ACTIONS, read_reason

PREFIX = "next: "
IN_A_PLUGIN_RUN = "; in a plugin run deep-research next BRIEF gives the step"

#: Each HOLD or FAIL rule: what would change it.
_BY_RULE: dict[str, str] = {
    "refetch-failed": (
        "regenerate the brief (a new run): the pages it cites no longer hold their quotes"
    ),
    "verifier-violation": (
        "re-run deep-research trace BRIEF, then triangulate and verdict: a kept claim cites a "
        "source the trace rejected, or was never traced"
    ),
    "trace-not-reproduced": (
        "claims.json changed after the trace gate: re-run deep-research trace BRIEF, then "
        "triangulate and verdict"
    ),
    "ciber-missing": (
        "run CIBER (deep-research ciber apply BRIEF --input ciber.json) or record a valid skip "
        "(--skip REASON), then verdict again"
    ),
    "no-verified-claim": (
        "the sources did not answer the question: search again with other queries and other "
        "publishers; nothing in this brief may be used"
    ),
    "sources-unread": (
        "fetch the pages of the publishers the verdict names, then deep-research counters "
        f"BRIEF and verdict again{IN_A_PLUGIN_RUN}"
    ),
}


def after_verdict(verdict: str, reasons: Sequence[str]) -> str:
    """The line for a HOLD or FAIL verdict: the brief is not usable, and what would change it."""
    for line in reasons:
        reason = read_reason(line)
        if reason is None or reason.verdict not in ("HOLD", "FAIL"):
            continue
        rule, _, floor = reason.rule.partition(":")
        if rule == "floor-unmet":
            todo = FLOOR_ACTIONS.get(floor, f"re-run the phase that fell short ({floor})")
            return (
                f"{PREFIX}{verdict}: do not use the brief yet; {todo}, then deep-research "
                f"counters BRIEF and verdict again{IN_A_PLUGIN_RUN}"
            )
        if rule in _BY_RULE:
            return f"{PREFIX}{verdict}: do not use the brief yet; {_BY_RULE[rule]}"
    return f"{PREFIX}{verdict}: do not use the brief; its verdict_reasons say why"


def after_trace(mode: str) -> str:
    """The line for a trace that found failing citations."""
    if mode == "dossier":
        return (
            f"{PREFIX}rewrite or remove each sentence named above so that it cites a source "
            "stating it, then trace the dossier again"
        )
    return (
        f"{PREFIX}go on: the failing citations above are dropped by deep-research triangulate "
        f"BRIEF, never softened; re-run trace only after correcting claims.json{IN_A_PLUGIN_RUN}"
    )


#: A fetch that failed (refused, unreachable, robots, no text): the fetcher goes on.
AFTER_FETCH = (
    f"{PREFIX}this page is not evidence (its failure is recorded in the fetch log); fetch another "
    "page your searches listed, or answer with the pages you have"
)

#: A host not on the run's allow-list: only what this run's searches listed may be fetched.
AFTER_HOSTS = (
    f"{PREFIX}fetch only pages on hosts this run's searches listed (or the static list); search "
    "again to find others"
)
