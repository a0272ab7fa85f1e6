"""Fetch safety and the run's fetch and search budgets, counted in the guard's ledger.

Every fetch (a WebFetch, ``deep-research fetch``, an MCP call) and every WebSearch the guard lets
through during a run is appended to ``<brief>/guard-log.jsonl`` under an exclusive lock, so
parallel hook processes count exactly; a spent budget denies. The ledger holds hosts and ids
only, never a URL's path or query nor a search's query (where an exfiltration attempt carries
its payload).
"""

from __future__ import annotations

import re
from typing import Any

from deep_research.brief.layout import Brief
from deep_research.errors import TargetRefused
from deep_research.fetch.hosts import load as load_allowlist
from deep_research.plugin.guard.deadline import uninterrupted
from deep_research.plugin.guard.decision import ALLOW, Call, Decision, deny
from deep_research.plugin.runstate import ActiveRun, append_ledger, locked, read_ledger
from deep_research.urls import host_of, redact

_LITERAL_URL = re.compile(r"https?://\S+", re.IGNORECASE)


def append(brief: Brief, row: dict[str, Any]) -> None:
    """One ledger row, written whole (the decision deadline waits for it)."""
    with uninterrupted():
        append_ledger(brief, row)


def check_target(url: str, run: ActiveRun | None, *, tool: str) -> Decision:
    """SSRF always (the checks that need no DNS); during a run also the allow-list. Spends
    nothing."""
    if not _LITERAL_URL.fullmatch(url.strip()):
        return deny(f"{tool}: the URL must be a literal http(s) URL, got {redact(url)[:80]!r}")
    # Imported here: it loads the TLS stack, which no other check needs.
    from deep_research.fetch.netpolicy import NetPolicy, check_url

    try:
        check_url(url, NetPolicy())
    except TargetRefused as refused:
        return deny(f"{tool}: unsafe target refused ({refused.reason}): {refused.detail}")
    if run is None:
        return ALLOW
    allowlist = load_allowlist(Brief(run.brief))
    if allowlist is None or not allowlist.allows(url):
        return deny(
            f"{tool}: host {host_of(url) or '?'} is not on this run's allow-list (hosts come "
            "from the run's search results and the static list; exact host or subdomain)"
        )
    return ALLOW


def check_fetch(url: str, run: ActiveRun | None, *, tool: str) -> Decision:
    """SSRF always; during a run also the allow-list and the budget (recorded when allowed)."""
    decision = check_target(url, run, tool=tool)
    if not decision.allow or run is None:
        return decision
    return spend_fetches(run, [(tool, host_of(url) or "?")])


def check_webfetch(call: Call) -> Decision:
    return check_fetch(str(call.tool_input.get("url") or ""), call.run, tool="WebFetch")


def spend_fetches(run: ActiveRun, fetches: list[tuple[str, str]]) -> Decision:
    """Fetches (tool, host) from the run's budget — a page or an MCP call alike — all or none."""
    brief = Brief(run.brief)
    with locked(brief):
        spent = sum(1 for row in read_ledger(brief) if row.get("event") == "fetch")
        if spent + len(fetches) > run.caps.max_fetches:
            tool = fetches[0][0]
            return deny(f"{tool}: the run's fetch budget is spent ({spent}/{run.caps.max_fetches})")
        for tool, target in fetches:
            append(brief, {"event": "fetch", "tool": tool, "host": target})
    return ALLOW


def check_search(call: Call) -> Decision:
    """One WebSearch from the run's search budget — subagents' included (recorded when allowed;
    the query is not)."""
    run = call.run
    if run is None:
        return ALLOW
    brief = Brief(run.brief)
    with locked(brief):
        spent = sum(1 for row in read_ledger(brief) if row.get("event") == "search")
        if spent >= run.caps.max_searches:
            return deny(
                f"WebSearch: the run's search budget is spent ({spent}/{run.caps.max_searches})"
            )
        append(brief, {"event": "search", "id": call.tool_use_id})
    if call.agent is not None and call.agent_type is not None and _a_fetcher(call.agent_type):
        # A workflow's agents get no grant from the skill's allowed-tools (2.1.197): a search
        # of our fetcher, counted above, is explicitly allowed, as our own CLI calls are.
        return Decision(True, SEARCH_APPROVED, approve=True)
    return ALLOW


SEARCH_APPROVED = "deep-research guard: a fetcher's search, counted against the run's budget"


def _a_fetcher(agent_type: str) -> bool:
    folded = "".join(agent_type.split()).casefold()
    return folded in {"deep-research:fetcher", "deep-research:mcp-fetcher"}
