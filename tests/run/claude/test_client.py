"""The metered client against the fake Messages API: every way a call goes wrong is a failed
call with a reason — never an exception a phase did not ask for, never a verdict — and every
answer is in the ledger exactly as the API billed it."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from deep_research.errors import InputError
from deep_research.run.claude.client import MAX_ATTEMPTS, ClaudeClient, Failed
from deep_research.run.claude.prices import PRICES_AS_OF, usd
from deep_research.run.claude.roles import choose_models
from deep_research.run.governor import CapReached, Limits, new_budget
from deep_research.settings import Settings
from fakeapi import Block, FakeAnthropic, Reply, StrictAnthropic, error, output_schema, text

MODELS = choose_models({}, environ={})
#: A server that answers far past any deadline a test sets, so a wait bounded at half of it
#: shows the deadline held, and a busy machine's noise never reaches the bound.
HUNG_S = 20.0


class Answer(BaseModel):
    refuted: bool
    confidence: float


REQUEST: dict[str, Any] = {
    "max_tokens": 64,
    "messages": [{"role": "user", "content": "vote"}],
}


def client_for(api: FakeAnthropic, **budget: float) -> ClaudeClient:
    client = ClaudeClient(MODELS, api_key="test", base_url=api.base_url, retry_scale=0.001)
    if budget:
        client.bind(new_budget(Limits().lowered(**budget)))
    return client


def replies(*sequence: Reply | list[Block]) -> Callable[[dict[str, Any]], Reply | list[Block]]:
    """A script answering with ``sequence`` in turn, then repeating its last reply."""
    items: Iterator[Reply | list[Block]] = itertools.chain(sequence, itertools.repeat(sequence[-1]))
    return lambda body: next(items)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply([text('{"refuted": true')]), "malformed answer"),
        (Reply([text('{"refuted": "maybe", "confidence": 0.5}')]), "malformed answer: refuted"),
        (Reply([text("I would rather not.")]), "malformed answer"),
        (Reply([text('{"refuted": true, "confidence": 0.9}')], "refusal"), "refused"),
        (Reply([text('{"refuted": true, "conf')], "max_tokens"), "max_tokens"),
        (Reply(raw=b"<html>bad gateway</html>"), "not a message"),
    ],
    ids=["truncated-json", "wrong-type", "prose", "refusal", "max-tokens", "not-json-body"],
)
def test_a_bad_answer_is_a_failed_call(reply: Reply, reason: str) -> None:
    with StrictAnthropic(lambda body: reply, usage="measured") as api:
        client = client_for(api)
        outcome = client.structured("skeptic", Answer, REQUEST)
    assert isinstance(outcome, Failed) and reason in outcome.reason
    # The request asked for the schema the SDK derives from the model.
    schema = output_schema(api.messages[0].body)
    assert schema is not None and set(schema["required"]) == {"refuted", "confidence"}
    # A reply that came back is billed, and so booked, even when it is useless.
    assert len(client.ledger.entries) == len(api.billed)


def test_a_good_answer_is_validated_and_booked_as_billed() -> None:
    good = Reply([text(json.dumps({"refuted": False, "confidence": 0.7}))])
    with StrictAnthropic(lambda body: good, usage="measured") as api:
        client = client_for(api, usd=1.0)
        assert client.budget is not None
        client.budget.phase = "panel"
        outcome = client.structured("skeptic", Answer, REQUEST)
    assert outcome == Answer(refuted=False, confidence=0.7)
    (entry,) = client.ledger.entries
    (billed,) = api.billed
    assert (entry.input_tokens, entry.output_tokens) == (
        billed["input_tokens"],
        billed["output_tokens"],
    )
    assert entry.phase == "panel" and entry.model == MODELS["skeptic"]
    assert entry.usd == usd(
        MODELS["skeptic"],
        input_tokens=billed["input_tokens"],
        output_tokens=billed["output_tokens"],
    )
    # The reservation was settled to what the call cost: the budget holds the real spend.
    assert client.budget.spend.usd == pytest.approx(entry.usd)
    assert client.budget.spend.model_calls == 1
    assert client.ledger.price_table == PRICES_AS_OF


def test_429_and_529_are_retried_then_booked_once() -> None:
    ok = Reply([text(json.dumps({"refuted": True, "confidence": 0.9}))])
    with StrictAnthropic(replies(error(429), error(529), ok), usage="measured") as api:
        client = client_for(api, usd=1.0)
        outcome = client.structured("skeptic", Answer, REQUEST)
    assert outcome == Answer(refuted=True, confidence=0.9)
    assert len(api.messages) == 3 and len(api.billed) == 1
    assert len(client.ledger.entries) == 1 and client.ledger.failed_attempts == 2


def test_the_client_waits_what_the_api_asks() -> None:
    """A 429 asks 20 s (the fake's default, the API's order of magnitude): the client waits
    that long — here scaled by the test's knob to a twentieth, 1 s — not its own backoff."""
    ok = Reply([text(json.dumps({"refuted": True, "confidence": 0.9}))])
    with StrictAnthropic(replies(error(429), ok)) as api:
        client = ClaudeClient(MODELS, api_key="test", base_url=api.base_url, retry_scale=0.05)
        started = time.monotonic()
        assert not isinstance(client.structured("skeptic", Answer, REQUEST), Failed)
        waited = time.monotonic() - started
    assert 0.9 <= waited < 5


def test_persistent_overload_fails_after_the_attempts_and_costs_nothing() -> None:
    with StrictAnthropic(lambda body: error(529)) as api:
        client = client_for(api, usd=1.0)
        outcome = client.structured("skeptic", Answer, REQUEST)
    assert isinstance(outcome, Failed) and "HTTP 529" in outcome.reason
    assert len(api.messages) == MAX_ATTEMPTS
    assert client.ledger.entries == [] and client.ledger.failed_attempts == MAX_ATTEMPTS
    assert client.budget is not None
    assert client.budget.spend.usd == 0 and client.budget.spend.model_calls == 0  # refunded


def test_another_4xx_is_not_retried_and_a_refused_key_stops_the_run() -> None:
    ok = Reply([text(json.dumps({"refuted": True, "confidence": 0.9}))])
    with StrictAnthropic(replies(ok, error(400, message="messages: bad"))) as api:
        client = client_for(api)
        assert not isinstance(client.structured("skeptic", Answer, REQUEST), Failed)
        # Once the model has answered, a 400 is this call's failure, with its cause.
        outcome = client.structured("skeptic", Answer, REQUEST)
        assert isinstance(outcome, Failed)
        assert "HTTP 400 invalid_request_error: messages: bad" in outcome.reason
        assert len(api.messages) == 2
    with (
        StrictAnthropic(lambda body: error(401, "authentication_error")) as api,
        pytest.raises(InputError, match="refused the key"),
    ):
        client_for(api).structured("skeptic", Answer, REQUEST)


@pytest.mark.parametrize(
    ("status", "advice"),
    [
        (400, "refused the request as invalid"),
        (402, "billing"),
        (403, "permissions"),
        (404, "check the model id"),
    ],
)
def test_a_refusal_of_the_first_call_ends_the_run_in_one_line(status: int, advice: str) -> None:
    """Before the model has answered once, a 400/402/403/404 means no call to it will: one
    line naming the error type, its message, the model and the request id — not a failed call
    that the run would go on from."""
    with StrictAnthropic(lambda body: error(status, message="no such thing")) as api:
        with pytest.raises(InputError) as caught:
            client_for(api).structured("skeptic", Answer, REQUEST)
        assert len(api.messages) == 1  # not retried
    said = str(caught.value)
    assert "\n" not in said and advice in said
    assert f"HTTP {status} " in said and ": no such thing" in said
    assert "model claude-haiku-5-5" in said and "request req_" in said


def test_a_retired_model_is_refused_by_the_api_and_ends_the_run() -> None:
    retired = frozenset({"claude-haiku-5-5"})
    with (
        StrictAnthropic(lambda body: [text("{}")], retired=retired) as api,
        pytest.raises(InputError, match="not_found_error: model: claude-haiku-5-5"),
    ):
        client_for(api).structured("skeptic", Answer, REQUEST)


def test_an_unreachable_api_ends_the_run_in_one_line() -> None:
    with StrictAnthropic(lambda body: [text("{}")]) as api:
        base = api.base_url  # the port is closed once the fake has stopped
    client = ClaudeClient(MODELS, api_key="test", base_url=base, retry_scale=0.001)
    with pytest.raises(InputError) as caught:
        client.structured("skeptic", Answer, REQUEST)
    said = str(caught.value)
    assert said.startswith(f"cannot reach the Messages API at {base}") and "\n" not in said
    assert client.ledger.failed_attempts == MAX_ATTEMPTS


def test_a_hung_api_cannot_outlive_the_deadline() -> None:
    with StrictAnthropic(lambda body: Reply([text("{}")], delay_s=HUNG_S)) as api:
        client = client_for(api, deadline_s=0.6)
        started = time.monotonic()
        outcome = client.structured("skeptic", Answer, REQUEST)
        took = time.monotonic() - started
    assert isinstance(outcome, Failed) and "deadline" in outcome.reason
    assert took < HUNG_S / 2, "the call was cut at the run's deadline, not at the server's leisure"


def test_a_call_over_the_budget_is_never_sent() -> None:
    with StrictAnthropic(lambda body: [text("{}")]) as api:
        client = client_for(api, usd=0.0001)
        with pytest.raises(CapReached) as caught:
            client.structured("skeptic", Answer, {**REQUEST, "max_tokens": 4096})
        assert caught.value.name == "usd"
        assert api.messages == []
        client = client_for(api, tokens=100)
        with pytest.raises(CapReached, match="tokens"):
            client.structured("skeptic", Answer, {**REQUEST, "max_tokens": 4096})
        assert api.messages == []


def test_models_per_role_default_to_the_current_generation_and_are_overridable() -> None:
    models = choose_models({}, environ={})
    assert models["plan"] == models["synthesize"] == "claude-opus-5-5"
    assert models["triangulate"] == "claude-sonnet-5-5"
    assert {models[r] for r in ("extract", "search", "skeptic", "ciber")} == {"claude-haiku-5-5"}
    env = {"DEEP_RESEARCH_MODEL_SKEPTIC": "claude-sonnet-5"}
    assert choose_models({}, environ=env)["skeptic"] == "claude-sonnet-5"
    chosen = choose_models({"skeptic": "claude-opus-5"}, environ=env)
    assert chosen["skeptic"] == "claude-opus-5"  # the flag beats the environment
    with pytest.raises(InputError, match="unknown role"):
        choose_models({"judge": "claude-opus-5"}, environ={})
    with pytest.raises(InputError, match="not in the model table") as caught:
        choose_models({"skeptic": "claude-imaginary-9"}, environ={})
    assert str(caught.value).startswith("the skeptic role's model 'claude-imaginary-9'")
    with pytest.raises(InputError, match="the plan role's model 'claude-opus-4-1'"):
        choose_models({}, environ={"DEEP_RESEARCH_MODEL_PLAN": "claude-opus-4-1"})


def test_the_price_table_prices_each_kind_of_token() -> None:
    # Haiku: $1 in, $5 out, $1.25 cache write, $0.10 cache read per MTok; $0.01 a search.
    one = usd(
        "claude-haiku-4-5",
        input_tokens=1_000_000,
        output_tokens=1_000_000,
        cache_write_tokens=1_000_000,
        cache_read_tokens=1_000_000,
        web_searches=3,
    )
    assert one == pytest.approx(1 + 5 + 1.25 + 0.10 + 0.03)
    batch = usd("claude-haiku-4-5", input_tokens=1_000_000, web_searches=1, batch=True)
    assert batch == pytest.approx(0.5 + 0.01)  # half the tokens, not the searches
    assert Settings().panel_size == 3


def test_the_table_prices_a_prompt_length_tier_and_a_cheaper_cache_read() -> None:
    """Haiku 5.5 bills a prompt over 100,000 tokens (input + cache writes + cache reads) at its
    higher rates on every token, output included; Opus 5.5 reads its cache at 0.05 × input."""
    short = usd("claude-haiku-5-5", input_tokens=100_000, output_tokens=1_000_000)
    assert short == pytest.approx(0.10 * 0.1 + 0.50)
    long = usd(
        "claude-haiku-5-5", input_tokens=50_000, cache_read_tokens=50_001, output_tokens=1_000_000
    )
    assert long == pytest.approx(0.50 * 0.05 + 0.05 * 0.050001 + 2.50)
    read = usd("claude-opus-5-5", cache_read_tokens=1_000_000)
    assert read == pytest.approx(0.20) and read == pytest.approx(4.0 * 0.05)
    assert usd("claude-sonnet-5", input_tokens=1_000_000, output_tokens=1_000_000) == 12.0


def test_a_thinking_role_reserves_its_headroom_and_an_execution_role_does_not() -> None:
    from deep_research.run.claude.catalog import THINKING_HEADROOM, thinking_for

    assert thinking_for("claude-opus-5-5", False, 4096) == ({"type": "adaptive"}, 4096 + 16_000)
    assert thinking_for("claude-sonnet-5-5", False, 2048) == ({"type": "between_tools"}, 2048)
    assert thinking_for("claude-haiku-5-5", False, 1024) == ({"type": "disabled"}, 1024)
    manual = thinking_for("claude-haiku-4-5", True, 2048)
    assert manual == ({"type": "enabled", "budget_tokens": THINKING_HEADROOM}, 2048 + 16_000)


def test_preflight_prices_each_role_on_its_own_model() -> None:
    from deep_research.run.claude import open_reasoner

    reasoner = open_reasoner()
    costs = reasoner.costs()
    assert costs.plan.usd > costs.follow_up.usd > costs.vote.usd  # opus, sonnet, haiku
    assert costs.follow_ups == 1
    batched = open_reasoner(batch=True).costs()
    assert batched.vote.usd == pytest.approx(costs.vote.usd / 2)
    assert batched.plan == costs.plan  # only the panel goes as batches
