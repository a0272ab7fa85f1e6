"""``--search web``: the server tool finds pages, a paused turn is continued, and every hit is
read through our guarded fetcher — a result is never evidence by itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from deep_research.brief.layout import Brief
from deep_research.fetch.hosts import load as load_hosts
from deep_research.run.claude.client import CallFailed, ClaudeClient
from deep_research.run.claude.roles import SEARCH_USES, choose_models
from deep_research.run.claude.search import MAX_CONTINUATIONS, WebSearchAdapter
from deep_research.run.interface import Hit
from fakeapi import Block, FakeAnthropic, Reply, StrictAnthropic, error, text, web_search
from localhttp import LocalServer, Route, article, loopback_policy

MODELS = choose_models({}, environ={})


def adapter(api: FakeAnthropic, server: LocalServer | None = None) -> WebSearchAdapter:
    client = ClaudeClient(MODELS, api_key="test", base_url=api.base_url, retry_scale=0.001)
    resolver = {"news.example": ["127.0.0.1"], "elsewhere.example": ["127.0.0.1"]}
    policy = loopback_policy(server.port, resolver=resolver) if server is not None else None
    return WebSearchAdapter(client, policy)


def test_a_paused_search_is_continued_and_its_hits_kept() -> None:
    def script(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "assistant":  # the paused turn, sent back
            return Reply([*web_search("q", "https://b.example/2", use_id="srv2"), text("done")])
        return Reply(web_search("q", "https://a.example/1"), stop_reason="pause_turn")

    with StrictAnthropic(script, usage="measured") as api:
        hits = adapter(api).search("heat pumps 2023", 5)
    assert [h.url for h in hits] == ["https://a.example/1", "https://b.example/2"]
    first, second = (m.body for m in api.messages)
    (tool,) = first["tools"]
    assert tool["type"].startswith("web_search") and tool["max_uses"] == SEARCH_USES
    # The continuation carries the paused turn's blocks back as they came.
    assert second["messages"][-1]["role"] == "assistant"
    assert [b["type"] for b in second["messages"][-1]["content"]] == [
        "server_tool_use",
        "web_search_tool_result",
    ]


def test_a_search_that_never_stops_pausing_is_cut_at_the_constant() -> None:
    paused = Reply(web_search("q", "https://a.example/1"), stop_reason="pause_turn")
    with StrictAnthropic(lambda body: paused) as api:
        hits = adapter(api).search("q", 5)
    assert len(api.messages) == 1 + MAX_CONTINUATIONS
    assert [h.url for h in hits] == ["https://a.example/1"]


def test_nothing_found_is_an_answer_and_a_failure_is_not() -> None:
    failed: list[Block] = [
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": "s1",
            "content": {"type": "web_search_tool_result_error", "error_code": "unavailable"},
        },
        text("done"),
    ]
    with StrictAnthropic(lambda body: [*web_search("q"), text("done")]) as api:
        assert adapter(api).search("q", 5) == []
    # A search engine's error is not "nothing found": the worker abstains with its cause.
    with (
        StrictAnthropic(lambda body: failed) as api,
        pytest.raises(CallFailed, match="the search tool failed: unavailable"),
    ):
        adapter(api).search("q", 5)
    with StrictAnthropic(lambda body: error(529)) as api:
        with pytest.raises(CallFailed, match="529"):
            adapter(api).search("q", 5)
        assert adapter(api).survey("q", 5) == []  # the scout is advisory


def test_a_hit_is_read_by_our_fetcher_once_and_its_host_allowed(tmp_path: Path) -> None:
    body = "Installers fitted 2.9 million heat pumps across the twelve member states in 2023."
    with LocalServer() as server:
        server.routes["/a"] = Route(body=article(body, "Heat pumps"))
        server.routes["/away"] = Route(
            status=302, headers={"Location": f"http://elsewhere.example:{server.port}/a"}
        )
        found = [f"http://news.example:{server.port}/a", f"http://news.example:{server.port}/away"]
        with StrictAnthropic(lambda body: [*web_search("q", *found), text("done")]) as api:
            web = adapter(api, server)
            hits = web.search("heat pumps", 5)
            brief = Brief(tmp_path / "b")
            retained = web.retain(hits[0], brief)
            again = web.retain(Hit(hits[0].url, None, 1.0), brief)
            redirected = web.retain(hits[1], brief)
    assert retained is not None and again == retained
    assert body in retained.text
    assert brief.read_corpus(retained.content_hash) == retained.text  # kept in the corpus
    assert server.hits.count("/a") == 1  # one fetch, however often it is asked for
    hosts = load_hosts(brief)
    assert hosts is not None and hosts.search == ("news.example",)
    # A redirect to a host no search returned is refused by the allow-list.
    assert redirected is None
    refused = [e for e in brief.load_fetch_log() if e.outcome == "refused"]
    assert refused and refused[-1].reason is not None and "allow-list" in refused[-1].reason
    assert json.loads((brief.root / "allowed-hosts.json").read_text())["search"]
