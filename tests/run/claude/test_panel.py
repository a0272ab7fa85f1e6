"""The panel on Claude: votes one at a time until settled, a failed vote abstains, the shared
prefix is cached across a claim's votes, and ``--batch`` sends rounds of votes as batches."""

from __future__ import annotations

import json
from typing import Any

import pytest

from deep_research.decide.votes import panel
from deep_research.models import Claim, SkepticVote
from deep_research.run.claude.client import ClaudeClient
from deep_research.run.claude.panel import judge, judge_batch, reframe, vote_request
from deep_research.run.claude.prices import usd
from deep_research.run.claude.roles import choose_models
from deep_research.run.interface import Abstained, EvidenceText
from deep_research.settings import Settings
from fakeapi import FakeAnthropic, Reply, error, text, user_text

MODELS = choose_models({}, environ={})
CLAIM = Claim(id="C1", claim="Each gauge records the water level every 6 minutes.")
CONTEXT = "The gauges are calibrated every spring by the harbour authority. " * 12
EVIDENCE = [
    EvidenceText("S1", "each gauge records the water level every 6 minutes", CONTEXT, CONTEXT),
    EvidenceText("S2", "water levels are logged at 6-minute intervals", CONTEXT, CONTEXT),
]


def vote(refuted: bool) -> Reply:
    return Reply([text(json.dumps({"refuted": refuted, "evidence": "x", "confidence": 0.9}))])


def by_number(*answers: Reply) -> Any:
    """Vote N of a claim answered with ``answers[N-1]`` (read from the request, not the order)."""

    def script(body: dict[str, Any]) -> Reply:
        number = int(user_text(body).split("Vote ", 1)[1].split(" ", 1)[0])
        return answers[number - 1]

    return script


def client(api: FakeAnthropic) -> ClaudeClient:
    return ClaudeClient(MODELS, api_key="test", base_url=api.base_url, backoff_s=0.001)


@pytest.mark.parametrize(
    ("answers", "calls", "outcome"),
    [
        ((vote(False), vote(False), vote(True)), 2, "survives"),
        ((vote(True), vote(True), vote(False)), 2, "killed"),
        ((vote(False), vote(True), vote(True)), 3, "killed"),
        ((vote(True), vote(False), vote(False)), 3, "survives"),
    ],
    ids=["two-upheld", "two-refuted", "split-then-refuted", "split-then-upheld"],
)
def test_votes_stop_once_the_outcome_is_settled(
    answers: tuple[Reply, ...], calls: int, outcome: str
) -> None:
    settings = Settings()
    with FakeAnthropic(by_number(*answers), usage="measured") as api:
        votes = judge(client(api), CLAIM, EVIDENCE, settings)
    assert len(api.messages) == len(votes) == calls
    cast = [v.model_dump(by_alias=True) for v in votes if isinstance(v, SkepticVote)]
    assert panel(cast, settings).outcome == outcome
    # The same outcome as the full panel: stopping early changed nothing.
    full = [json.loads(a.blocks[0]["text"]) for a in answers]
    assert panel(full, settings).outcome == outcome


def test_a_vote_that_fails_abstains_and_never_refutes() -> None:
    settings = Settings()
    malformed = Reply([text('{"refuted": tru')])
    with FakeAnthropic(by_number(error(529), malformed, vote(True))) as api:
        votes = judge(client(api), CLAIM, EVIDENCE, settings)
    # Two abstentions leave one vote, which can no longer decide: it is not asked.
    assert len(votes) == 2 and all(isinstance(v, Abstained) for v in votes)
    raw = [{"error": v.reason} for v in votes if isinstance(v, Abstained)]
    assert panel(raw, settings).outcome == "unverified"
    assert "529" in raw[0]["error"] and "malformed" in raw[1]["error"]
    with FakeAnthropic(by_number(Reply([], "refusal"), vote(True), error(529))) as api:
        votes = judge(client(api), CLAIM, EVIDENCE, settings)
    assert [type(v).__name__ for v in votes] == ["Abstained", "SkepticVote", "Abstained"]
    assert isinstance(votes[0], Abstained) and "refused" in votes[0].reason
    cast = [
        {"error": v.reason} if isinstance(v, Abstained) else v.model_dump(by_alias=True)
        for v in votes
    ]
    assert panel(cast, settings).outcome == "unverified"  # one refutation kills nothing


def test_a_claims_votes_share_a_cached_prefix_of_located_text() -> None:
    first, second = (vote_request(CLAIM, EVIDENCE, n, 3) for n in range(2))
    # Everything up to the vote's own angle is the same, and marked for caching.
    assert first["system"] == second["system"]
    assert first["messages"][0]["content"][0] == second["messages"][0]["content"][0]
    assert first["messages"][0]["content"][1] != second["messages"][0]["content"][1]
    shared = first["messages"][0]["content"][0]
    assert shared["cache_control"] == {"type": "ephemeral"}
    assert "«each gauge records the water level every 6 minutes»" in shared["text"]
    assert CONTEXT.strip() in shared["text"]  # the page around the quote, not a summary
    with FakeAnthropic(by_number(vote(False), vote(False)), usage="measured") as api:
        judged = client(api)
        judge(judged, CLAIM, EVIDENCE, Settings())
    wrote, read = judged.ledger.entries
    assert wrote.cache_write_tokens > 0 and wrote.cache_read_tokens == 0
    assert read.cache_read_tokens == wrote.cache_write_tokens and read.cache_write_tokens == 0


def test_batched_votes_go_as_rounds_at_half_price() -> None:
    second = Claim(id="C2", claim="Radar sensors measure to within 5 millimetres.")
    answers = {"C1": [vote(False), vote(False)], "C2": [vote(False), vote(True), vote(True)]}

    def script(body: dict[str, Any]) -> Reply:
        asked = user_text(body)
        number = int(asked.split("Vote ", 1)[1].split(" ", 1)[0])
        return answers["C1" if "Claim C1:" in asked else "C2"][number - 1]

    with FakeAnthropic(script, usage="measured") as api:
        batched = client(api)
        votes = judge_batch(batched, [(CLAIM, EVIDENCE), (second, EVIDENCE)], Settings())
    assert [len(votes["C1"]), len(votes["C2"])] == [2, 3]
    batches = [r for r in api.requests if r.path == "/v1/messages/batches"]
    assert [len(r.body["requests"]) for r in batches] == [2, 2, 1]  # C1 settled after two
    entries = batched.ledger.entries
    assert len(entries) == 5 and all(e.batch for e in entries)
    for entry in entries:
        full = usd(
            entry.model,
            input_tokens=entry.input_tokens,
            output_tokens=entry.output_tokens,
            cache_write_tokens=entry.cache_write_tokens,
            cache_read_tokens=entry.cache_read_tokens,
        )
        assert entry.usd == pytest.approx(full / 2)


def test_ciber_that_names_a_claim_it_was_not_shown_is_a_failed_call() -> None:
    stray = {
        "ciber_passed": False,
        "consistency_failures": [
            {
                "claim_id": "C9",
                "failed_reframing": "Gauges never record the level.",
                "failed_reframing_type": "negation",
                "contradicting_source_ids": ["S1"],
                "severity": "negation_supported",
            }
        ],
    }
    with FakeAnthropic(lambda body: [text(json.dumps(stray))]) as api:
        outcome = reframe(client(api), [CLAIM])
    assert not hasattr(outcome, "ciber_passed")
    with FakeAnthropic(
        lambda body: [text(json.dumps({"ciber_passed": True, "consistency_failures": []}))]
    ) as api:
        passed = reframe(client(api), [CLAIM])
    assert getattr(passed, "ciber_passed", None) is True
