"""Message Batches through the metered client, against a fake that runs a batch as the API does:
in_progress → (canceling →) ended, with errored, expired and canceled requests counted as such.

A batch cancelled at the run's deadline is still polled until it ends, and what it completed is
read and booked (the API bills it); a transient error while polling is retried, not taken for
the batch's failure."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from deep_research.run.claude.client import ClaudeClient, Failed
from deep_research.run.claude.roles import choose_models
from deep_research.run.governor import Budget, Limits
from fakeapi import FakeAnthropic, Reply, StrictAnthropic, error, text

MODELS = choose_models({}, environ={})
VOTE = json.dumps({"votes": []})


def request(n: int) -> dict[str, Any]:
    return {"max_tokens": 256, "messages": [{"role": "user", "content": f"request {n}"}]}


def client(api: FakeAnthropic, deadline_s: float = 60.0) -> ClaudeClient:
    made = ClaudeClient(MODELS, api_key="test", base_url=api.base_url, retry_scale=0.001)
    made.bind(Budget(Limits(), deadline=time.monotonic() + deadline_s))
    return made


def statuses(api: FakeAnthropic) -> list[str]:
    return [f"{r.method} {r.path.rsplit('/', 1)[-1]}" for r in api.requests if "batches" in r.path]


def test_a_batch_is_polled_until_it_ends_and_each_outcome_read_as_it_is() -> None:
    def script(body: dict[str, Any]) -> Reply:
        asked = str(body["messages"][0]["content"])
        if asked.endswith("1"):
            return error(529)  # this request errored inside the batch
        if asked.endswith("2"):
            return Reply(batch_result="expired")
        return Reply([text(VOTE)])

    with StrictAnthropic(script, usage="measured", batch_polls=3) as api:
        batched = client(api)
        outcomes = batched.batch("skeptic", [request(n) for n in range(3)])
        created = [r for r in api.requests if r.path == "/v1/messages/batches"]
    assert not isinstance(outcomes[0], Failed)
    assert outcomes[1] == Failed("batch request errored: overloaded_error")
    assert outcomes[2] == Failed("batch request expired")
    polls = [s for s in statuses(api) if s.startswith("GET msgbatch_")]
    # in_progress until the third poll; the fourth look is the SDK's own, for the results' URL.
    assert len(polls) == 4
    # Only what succeeded is booked, at half price.
    assert len(batched.ledger.entries) == 1 and batched.ledger.entries[0].batch
    # Every request carries the shape its model needs (thinking explicitly off, here).
    params = created[0].body["requests"][0]["params"]
    assert params["model"] == "claude-haiku-5-5" and params["thinking"] == {"type": "disabled"}


def test_a_batch_cancelled_at_the_deadline_books_what_it_completed() -> None:
    """The deadline comes while the batch runs: it is cancelled, polled through canceling until
    it ends, and the requests it finished before the cancel are read and booked."""
    with StrictAnthropic(
        lambda body: [text(VOTE)], usage="measured", batch_polls=1000, finished_before_cancel=2
    ) as api:
        batched = client(api, deadline_s=1.0)
        started = time.monotonic()
        outcomes = batched.batch("skeptic", [request(n) for n in range(4)])
    assert time.monotonic() - started < 10
    assert "POST cancel" in statuses(api)
    assert statuses(api)[-1] == "GET results", "read after it ended, not abandoned"
    assert [isinstance(o, Failed) for o in outcomes] == [False, False, True, True]
    assert outcomes[3] == Failed("batch request canceled")
    booked = batched.ledger.entries
    assert len(booked) == 2 and len(api.billed) == 4  # the fake bills each finished request
    assert batched.budget is not None
    assert batched.budget.spend.usd == pytest.approx(sum(e.usd for e in booked))


def test_a_transient_poll_error_is_retried_not_taken_for_a_lost_batch() -> None:
    with StrictAnthropic(
        lambda body: [text(VOTE)], usage="measured", batch_polls=2, batch_poll_errors=2
    ) as api:
        batched = client(api)
        outcomes = batched.batch("skeptic", [request(0)])
    assert not isinstance(outcomes[0], Failed)
    assert "POST cancel" not in statuses(api)
    assert batched.ledger.failed_attempts == 2


def test_a_batch_that_cannot_be_followed_is_cancelled() -> None:
    with StrictAnthropic(lambda body: [text(VOTE)], batch_polls=5, batch_poll_errors=1000) as api:
        outcomes = client(api).batch("skeptic", [request(0), request(1)])
    assert all(isinstance(o, Failed) and "was lost: HTTP 529" in o.reason for o in outcomes)
    assert "POST cancel" in statuses(api)


def test_the_strict_fake_counts_requests_as_the_api_does() -> None:
    """The double's own bookkeeping: errored and expired requests are not "succeeded"."""
    import urllib.request

    def script(body: dict[str, Any]) -> Reply:
        content = str(body["messages"][0]["content"])
        return error(500) if "0" in content else Reply(batch_result="expired")

    with StrictAnthropic(script, batch_polls=1) as api:
        items = [
            {"custom_id": f"r{n}", "params": {"model": "claude-haiku-5-5", **request(n)}}
            for n in range(2)
        ]
        sent = urllib.request.Request(
            api.base_url + "/v1/messages/batches",
            data=json.dumps({"requests": items}).encode(),
            method="POST",
            headers={"Content-Type": "application/json", "x-api-key": "test"},
        )
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(sent, timeout=10) as answer:
            created = json.loads(answer.read())
            assert answer.headers["request-id"].startswith("req_")
        assert created["processing_status"] == "in_progress" and created["results_url"] is None
        assert created["request_counts"]["processing"] == 2
        with opener.open(f"{api.base_url}/v1/messages/batches/{created['id']}", timeout=10) as got:
            ended = json.loads(got.read())
    assert ended["processing_status"] == "ended"
    assert ended["request_counts"] == {
        "processing": 0,
        "succeeded": 0,
        "errored": 1,
        "canceled": 0,
        "expired": 1,
    }
