"""``--search web``: the server-side web search tool finds pages; our fetcher reads them.

A search is one model call on the search role with the ``web_search`` server tool and its
``max_uses`` from :mod:`deep_research.run.claude.roles` (one search per query, two for the
scout's survey — constants the model never sees). A ``pause_turn`` stop is continued by sending
the reply back, at most :data:`MAX_CONTINUATIONS` times. Every result's URL and title become a
:class:`~deep_research.run.interface.Hit`; its snippet and encrypted content are never read, so
a search result is never evidence by itself.

Retaining a hit fetches it through the project's guarded fetcher (SSRF guard, robots.txt, byte
cap, the run host allow-list) into the brief's corpus and fetch log, exactly as ``deep-research
fetch`` does. The hosts of every search result feed ``allowed-hosts.json`` first, so a redirect
to a host no search returned is refused. A URL already retained in this run is not fetched
again, whichever worker asks.

The tool's version is the search model's (:mod:`deep_research.run.claude.catalog`). Only a
result list that is empty is "nothing found" (``[]``); a failed call, or a search the tool
answered with an error (``too_many_requests``, ``unavailable``, …) and no results, raises
:class:`~deep_research.run.claude.client.CallFailed` with that cause, so the worker ends
``complete: false`` — an error of the search engine is never evidence that nothing exists.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deep_research.brief.layout import Brief
from deep_research.fetch.fetcher import Fetcher, FetchPolicy, policy_from_env
from deep_research.fetch.hosts import add_hosts
from deep_research.run.claude.catalog import model
from deep_research.run.claude.client import CallFailed, ClaudeClient, Failed
from deep_research.run.claude.roles import (
    MAX_OUTPUT_TOKENS,
    SCOUT_USES,
    SEARCH_USES,
    instructions,
)
from deep_research.run.governor import Budget, CallCosts
from deep_research.run.interface import CallPrice, Capacity, Hit, Retained, SurveyDoc
from deep_research.settings import Settings
from deep_research.urls import host_of

WEB = "web"
MAX_CONTINUATIONS = 3
#: The one error code of the tool that is not the engine failing: the search ran out of its
#: ``max_uses`` (what it found before that stands).
EXHAUSTED = "max_uses_exceeded"


@dataclass
class SearchResult:
    hits: list[Hit]
    error: str | None = None


@dataclass
class WebSearchAdapter:
    """A :class:`~deep_research.run.interface.SearchAdapter` over the web search tool."""

    client: ClaudeClient
    policy: FetchPolicy | None = None
    _hosts: set[str] = field(default_factory=set)
    _retained: dict[tuple[Path, str], Retained | None] = field(default_factory=dict)
    _fetching: dict[tuple[Path, str], threading.Lock] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def name(self) -> str:
        return WEB

    def is_web(self) -> bool:
        return True

    def capacity(self) -> Capacity:
        return Capacity()  # the web: no bound on the documents a run can find

    # --- metering (the governor's Metered protocol) ---------------------------------------

    def bind(self, budget: Budget, settings: Settings, depth: str) -> None:
        self.client.bind(budget)

    def costs(self) -> CallCosts:
        search = self.client.models.worst("search")
        return CallCosts(*(CallPrice(),) * 6, search=search)

    # --- searching --------------------------------------------------------------------------

    def _search(self, prompt: str, uses: int) -> SearchResult:
        messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
        version = model(self.client.models["search"]).web_search
        tool = {"type": version, "name": "web_search", "max_uses": uses}
        hits: dict[str, Hit] = {}
        error = None
        for _ in range(1 + MAX_CONTINUATIONS):
            answer = self.client.call(
                "search",
                {
                    "max_tokens": MAX_OUTPUT_TOKENS["search"],
                    "system": instructions("search"),
                    "tools": [tool],
                    "messages": messages,
                },
            )
            if isinstance(answer, Failed):
                raise CallFailed(f"web search: {answer.reason}")
            for block in answer.message.content:
                if block.type != "web_search_tool_result":
                    continue
                content = block.content
                if not isinstance(content, list):
                    code = str(getattr(content, "error_code", "") or "search error")
                    error = error if code == EXHAUSTED else code
                    continue
                for result in content:
                    if result.url not in hits:
                        hits[result.url] = Hit(result.url, result.title, 1.0 / (1 + len(hits)))
            if answer.message.stop_reason != "pause_turn":
                break
            # A long search turn paused by the server: sending it back lets it continue.
            messages = [
                *messages,
                {
                    "role": "assistant",
                    "content": [b.model_dump(exclude_none=True) for b in answer.message.content],
                },
            ]
        if error is not None and not hits:
            raise CallFailed(f"web search: the search tool failed: {error}")
        with self._lock:
            self._hosts |= {host for url in hits if (host := host_of(url)) is not None}
        return SearchResult(list(hits.values()), error)

    def search(self, query: str, limit: int) -> list[Hit]:
        return self._search(f"Query: {query}", SEARCH_USES).hits[: max(0, limit)]

    def survey(self, question: str, limit: int) -> list[SurveyDoc]:
        try:
            found = self._search(f"Topic: {question}", SCOUT_USES)
        except CallFailed:
            return []  # the scout is advisory: a plan can be made without it
        return [SurveyDoc(hit.url, hit.title, ()) for hit in found.hits[: max(0, limit)]]

    # --- retaining --------------------------------------------------------------------------

    def retain(self, hit: Hit, brief: Brief) -> Retained | None:
        key = (brief.root.resolve(), hit.url)
        with self._lock:
            one = self._fetching.setdefault(key, threading.Lock())
        with one:  # two workers asking for one URL: the second waits and reads the first's
            with self._lock:
                if key in self._retained:
                    return self._retained[key]
                add_hosts(brief, sorted(self._hosts | {h for h in [host_of(hit.url)] if h}))
            return self._fetch(hit, brief, key)

    def _fetch(self, hit: Hit, brief: Brief, key: tuple[Path, str]) -> Retained | None:
        with Fetcher(brief, self.policy or policy_from_env()) as fetcher:
            result = fetcher.fetch(hit.url)
        retained = None
        if result.ok and result.text is not None and result.entry.content_hash:
            retained = Retained(
                url=hit.url,
                title=hit.title,
                text=result.text,
                content_hash=result.entry.content_hash,
                owner=None,
            )
        with self._lock:
            self._retained[key] = retained
        return retained
