"""The fake Messages API in strict mode refuses what the API refuses, with the API's error
bodies and a request id, and thinks as the API's models think — the double is no more lenient
than what it stands for, so a request the real API would refuse fails here first."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from fakeapi import RETRY_AFTER_S, THINKING_TOKENS, StrictAnthropic, error, text

DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
ASK = {"max_tokens": 1024, "messages": [{"role": "user", "content": "go"}]}


def post(base: str, body: dict[str, Any], key: str = "test") -> tuple[int, dict[str, str], Any]:
    headers = {"Content-Type": "application/json", **({"x-api-key": key} if key else {})}
    sent = urllib.request.Request(
        base + "/v1/messages", data=json.dumps(body).encode(), method="POST", headers=headers
    )
    try:
        with DIRECT.open(sent, timeout=10) as answer:
            return answer.status, dict(answer.headers), json.loads(answer.read())
    except urllib.error.HTTPError as refused:
        with refused:
            return refused.code, dict(refused.headers), json.loads(refused.read())


DOCUMENT = {
    "type": "document",
    "source": {"type": "text", "media_type": "text/plain", "data": "Some page."},
    "citations": {"enabled": True},
}
SCHEMA = {"format": {"type": "json_schema", "schema": {"type": "object"}}}


@pytest.mark.parametrize(
    ("body", "status", "kind", "said"),
    [
        ({"model": "claude-retired-9", **ASK}, 404, "not_found_error", "model: claude-retired-9"),
        (
            {
                "model": "claude-haiku-4-5",
                "tools": [{"type": "web_search_20260209", "name": "web_search"}],
                **ASK,
            },
            400,
            "invalid_request_error",
            "'web_search_20260209' is not supported on model 'claude-haiku-4-5'",
        ),
        (
            {"model": "claude-opus-5-5", "thinking": {"type": "disabled"}, **ASK},
            400,
            "invalid_request_error",
            "thinking.type.disabled",
        ),
        (
            {
                "model": "claude-haiku-4-5",
                "thinking": {"type": "enabled", "budget_tokens": 4096},
                **ASK,
            },
            400,
            "invalid_request_error",
            "budget_tokens",
        ),
        (
            {
                "model": "claude-haiku-5-5",
                "max_tokens": 1024,
                "output_config": SCHEMA,
                "messages": [{"role": "user", "content": [DOCUMENT, text("read")]}],
            },
            400,
            "invalid_request_error",
            "citations",
        ),
    ],
    ids=["unknown-model", "tool-version", "thinking-off", "thinking-budget", "cited-structured"],
)
def test_what_the_api_refuses_is_refused(
    body: dict[str, Any], status: int, kind: str, said: str
) -> None:
    with StrictAnthropic(lambda body: [text("never asked")]) as api:
        code, headers, answer = post(api.base_url, body)
    assert code == status
    assert answer["type"] == "error" and answer["error"]["type"] == kind
    assert said in answer["error"]["message"]
    assert headers["request-id"].startswith("req_")


def test_a_thinking_model_spends_max_tokens_on_its_think() -> None:
    """Opus 5.5 thinks when ``thinking`` is omitted: 4,096 tokens are not enough for a think
    and an answer — the reply is cut, its answer lost. With room, the think comes first."""
    with StrictAnthropic(lambda body: [text('{"plan": "five sub-questions"}')]) as api:
        _, _, cut = post(api.base_url, {"model": "claude-opus-5-5", **ASK, "max_tokens": 4096})
        room = {"model": "claude-opus-5-5", **ASK, "max_tokens": 20_000}
        _, _, whole = post(api.base_url, {**room, "thinking": {"type": "adaptive"}})
        _, _, off = post(
            api.base_url, {"model": "claude-haiku-5-5", **ASK, "thinking": {"type": "disabled"}}
        )
    assert cut["stop_reason"] == "max_tokens"
    assert [b["type"] for b in cut["content"]] == ["thinking"]
    assert whole["stop_reason"] == "end_turn"
    assert [b["type"] for b in whole["content"]] == ["thinking", "text"]
    assert whole["usage"]["output_tokens"] > THINKING_TOKENS
    assert [b["type"] for b in off["content"]] == ["text"]


def test_retryable_errors_ask_the_apis_order_of_wait() -> None:
    assert error(429).headers == {"retry-after": str(RETRY_AFTER_S[429])}
    assert error(529).headers == {"retry-after": str(RETRY_AFTER_S[529])}
    assert RETRY_AFTER_S[429] >= 1 and RETRY_AFTER_S[529] >= 1  # seconds, not milliseconds
    assert error(500).headers == {}


def test_a_request_without_a_key_is_refused() -> None:
    with StrictAnthropic(lambda body: [text("never asked")]) as api:
        code, _, answer = post(api.base_url, {"model": "claude-haiku-5-5", **ASK}, key="")
    assert code == 401 and answer["error"]["type"] == "authentication_error"


def test_an_answer_longer_than_max_tokens_is_cut_there() -> None:
    long = "The gauges record the level every six minutes. " * 200
    with StrictAnthropic(lambda body: [text(long)]) as api:
        off = {"model": "claude-haiku-5-5", "thinking": {"type": "disabled"}}
        _, _, cut = post(api.base_url, {**off, **ASK, "max_tokens": 100})
        _, _, whole = post(api.base_url, {**off, **ASK, "max_tokens": 10_000})
    assert cut["stop_reason"] == "max_tokens" and len(cut["content"][0]["text"]) <= 400
    assert whole["stop_reason"] == "end_turn" and whole["content"][0]["text"] == long
