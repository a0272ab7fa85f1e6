"""``deep-research run --reasoner claude --search web`` end to end, against the fake Messages API
on 127.0.0.1 and real local web servers: no key, no network (the tripwire fails any other
connection or DNS lookup).

What must hold: every emitted quote is the corpus span it names, character for character; the
verdict is the gates' (re-verified offline); the ledger is the fake's usage, call by call; a
budget below the plan gives a partial brief of verified claims; an overloaded API abstains and
never refutes; an empty search ends its worker.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from briefs import assert_verified, read_phase
from claude_world import OVERLOADED, claude_world, role_of
from deep_research.brief.layout import Brief
from deep_research.brief.trace_phases import LedgerRecord
from deep_research.cli import main
from deep_research.decide.verify import run_verify
from deep_research.gates.trace import emitted_claims
from deep_research.run.claude.panel import MAX_CLAIMS_PER_SKEPTIC_CALL
from deep_research.run.claude.prices import usd
from fakeapi import FakeAnthropic, document_text
from fakeapi import text as fakeapi_text
from scripted_run import FACTS, TOPIC

RUN = ["run", TOPIC, "--reasoner", "claude", "--search", "web", "--json"]


def run(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, Any]:
    code = main([*RUN, "--state", str(tmp_path / "state"), *extra])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    assert out.out, out.err
    return code, json.loads(out.out)


def ledger_of(brief: Path) -> LedgerRecord:
    return LedgerRecord.model_validate(read_phase(Brief(brief), "run")["ledger"])


def usage_key(model: str, i: int, o: int, w: int, r: int, s: int, batch: bool) -> tuple[Any, ...]:
    return (model, i, o, w, r, s, batch)


def assert_ledger_is_the_fakes(ledger: LedgerRecord, api: FakeAnthropic) -> None:
    """Call by call (as multisets: workers finish in any order) and in dollars."""
    billed = Counter(
        usage_key(
            u["model"],
            u["input_tokens"],
            u["output_tokens"],
            u.get("cache_creation_input_tokens") or 0,
            u.get("cache_read_input_tokens") or 0,
            (u.get("server_tool_use") or {}).get("web_search_requests", 0),
            u["batch"],
        )
        for u in api.billed
    )
    booked = Counter(
        usage_key(
            e.model,
            e.input_tokens,
            e.output_tokens,
            e.cache_write_tokens,
            e.cache_read_tokens,
            e.web_searches,
            e.batch,
        )
        for e in ledger.entries
    )
    assert booked == billed
    priced = sum(
        usd(
            model,
            input_tokens=i,
            output_tokens=o,
            cache_write_tokens=w,
            cache_read_tokens=r,
            web_searches=s,
            batch=batch,
        )
        for (model, i, o, w, r, s, batch), n in billed.items()
        for _ in range(n)
    )
    assert sum(e.usd for e in ledger.entries) == pytest.approx(priced, rel=1e-12)


def assert_quotes_are_corpus_spans(brief: Path) -> int:
    """Every emitted claim's evidence is its span of the retained text, exactly."""
    b = Brief(brief)
    checked = 0
    for claim in emitted_claims(b.load_claims()):
        assert claim.evidence
        for item in claim.evidence:
            assert item.span is not None
            text = b.read_corpus(item.span.hash)
            assert text[item.span.start : item.span.end] == item.quote
            checked += 1
    for row in b.load_sources():
        text = b.read_corpus(row.content_hash or "")
        for finding in row.findings:
            assert finding.quote in text  # cut from the text, never typed
    return checked


def test_full_depth_web_run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tripwire: list[Any],
) -> None:
    with claude_world(monkeypatch) as (world, api):
        code, summary = run(tmp_path, capsys, "--depth", "full")
        billed = len(api.billed)
        # Asked again, the fresh brief is reused: its summary prints the spend per phase and
        # per model, and no model is called.
        again = [*RUN[:-1], "--depth", "full", "--state", str(tmp_path / "state")]
        assert main(again) == 0
        printed = capsys.readouterr().out
        assert len(api.billed) == billed
    assert "verdict: READY (reused)" in printed
    assert "spend: $" in printed and "by phase: plan $" in printed
    assert "claude-haiku-5-5 $" in printed
    brief = Path(summary["brief"])
    assert tripwire == []
    assert summary["reasoner"] == "claude" and summary["adapter"] == "web"
    # The judges say each claim answers its sub-question, so all five stand — three of them in
    # other words than their sub-question's ("sampled" / "records", "accurate" / "to within 5
    # millimetres", "trend" / "rose by"), which the word-level gate alone dropped.
    assert summary["partial"] is False and summary["claims"] == 5
    kept = {c.claim for c in Brief(brief).load_claims().claims}
    assert kept == {claim for _, _, claim in FACTS.values()}
    # The verdict is the gates': the brief re-verifies offline to the same decisions.
    assert summary["verdict"] == "READY" and code == 0
    assert run_verify(brief, offline=True).identical
    assert_verified(brief)
    assert assert_quotes_are_corpus_spans(brief) >= 10
    # Each page went to the model as the retained corpus text itself, citations on.
    b = Brief(brief)
    texts = {b.read_corpus(row.content_hash or "") for row in b.load_sources()}
    sent = [m.body for m in api.messages if role_of(m.body) == "extract"]
    assert sent and all(document_text(body) in texts for body in sent)
    assert all(
        block["citations"] == {"enabled": True}
        for body in sent
        for block in body["messages"][0]["content"]
        if block["type"] == "document"
    )
    # No page was read twice, whichever worker found it again.
    assert len(sent) == len({document_text(body) for body in sent}) == 30
    # The ledger is what the API billed, call by call; the run's spend is its total.
    ledger = ledger_of(brief)
    assert len(ledger.entries) == len(api.billed) == summary["spend"]["model_calls"]
    assert_ledger_is_the_fakes(ledger, api)
    assert summary["spend"]["usd"] == pytest.approx(sum(e.usd for e in ledger.entries), abs=1e-4)
    assert ledger.counters["citations_kept"] == 30 and ledger.counters["citations_dropped"] == 0
    by_phase = summary["spend_by"]["phase"]
    assert set(by_phase) >= {"plan", "cast", "round2", "panel", "ciber", "synthesize"}
    assert sum(by_phase.values()) == pytest.approx(sum(e.usd for e in ledger.entries), abs=1e-5)
    # Early-stopped panels: two agreeing votes settle a claim; the third is never asked. Each
    # round judges its claims several per call.
    cast = read_phase(b, "votes")["raw"]
    assert len(cast) >= summary["claims"] and all(len(v) == 2 for v in cast.values())
    calls = math.ceil(len(cast) / MAX_CLAIMS_PER_SKEPTIC_CALL)
    assert world.seen.count("skeptic") == 2 * calls
    # Round 2 reads the shared prefix (the claims and their evidence) from the cache round 1
    # wrote.
    votes = [e for e in ledger.entries if e.role == "skeptic"]
    assert sum(1 for e in votes if e.cache_write_tokens > 0) == calls
    assert sum(1 for e in votes if e.cache_read_tokens > 0) == calls
    # The extraction's instructions are one cached prefix: written once, read by every other
    # page's call.
    reads = [e for e in ledger.entries if e.role == "extract"]
    assert sum(1 for e in reads if e.cache_write_tokens > 0) == 1
    assert sum(1 for e in reads if e.cache_read_tokens > 0) == len(reads) - 1


def test_a_web_round_one_reads_whole_ends_usable_with_its_claims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Twenty pages, all read in round 1; round 2's counter-queries list them again. The floors
    ask no more than the world offered: PARTIAL with one plain reason, never HOLD."""
    with claude_world(monkeypatch, closed=True):
        code, summary = run(tmp_path, capsys, "--depth", "full")
    brief = Path(summary["brief"])
    document = Brief(brief).load_claims()
    reasons = document.verdict_reasons
    assert summary["verdict"] == "PARTIAL" and code == 0, reasons
    assert not any("[floor-unmet" in r for r in reasons), reasons
    said = [r for r in reasons if r.endswith("[searches-exhausted]")]
    assert len(said) == 1 and "20 distinct sources (the floor is 30)" in said[0], reasons
    assert not any(w in r for r in reasons for w in ("run round 2", "adversarial round"))
    counted = json.loads((brief / "trace.json").read_text())["counters"]
    assert counted["rounds"] == 2 and counted["unread_hosts"] == []
    workers = read_phase(Brief(brief), "round2")["workers"]
    assert workers and all(w["queries"] and w["fetches"] == 0 for w in workers)
    assert run_verify(brief, offline=True).identical
    assert main(["handoff", str(brief)]) == 0
    handed = json.loads(capsys.readouterr().out)
    assert handed["usable"] is True and handed["context"], handed


def test_a_budget_below_the_plan_gives_a_partial_brief_of_verified_claims(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with claude_world(monkeypatch) as (_, api):
        code, summary = run(tmp_path, capsys, "--depth", "full", "--max-usd", "3.5")
    brief = Path(summary["brief"])
    plan = read_phase(Brief(brief), "plan")
    assert plan["preflight"]["dropped_for_budget"], "the worst case of five workers is over $3.50"
    assert summary["partial"] is True and summary["verdict"] in ("HOLD", "PARTIAL")
    assert code == (0 if summary["verdict"] == "PARTIAL" else 1)
    assert 0 < summary["claims"] < 5
    assert summary["spend"]["usd"] <= 3.5
    # Every claim the partial brief emits passed the gates, the panel included.
    assert_verified(brief)
    assert_quotes_are_corpus_spans(brief)
    for claim in emitted_claims(Brief(brief).load_claims()):
        assert claim.votes is not None and claim.votes.outcome == "survives"
    assert_ledger_is_the_fakes(ledger_of(brief), api)


def test_persistent_529s_abstain_and_never_refute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    refuted_if_asked = frozenset(
        {"The Harbourton network operates 42 tide gauges along 310 kilometres of coast."}
    )
    with claude_world(monkeypatch, refute=refuted_if_asked, overrides={"skeptic": OVERLOADED}) as (
        world,
        api,
    ):
        code, summary = run(tmp_path, capsys, "--depth", "full")
    brief = Path(summary["brief"])
    document = Brief(brief).load_claims()
    judged = [c for c in document.claims if c.votes is not None]
    assert judged, "the traced claims went to the panel"
    for claim in judged:
        assert claim.votes is not None
        assert claim.votes.outcome == "unverified"  # never "killed"
        assert all(r.status == "abstained" for r in claim.votes.records)
    assert not any("refuted" in s.reason for s in document.stripped)
    assert summary["verdict"] != "READY" and code in (0, 1)
    ledger = ledger_of(brief)
    assert ledger.failed_attempts >= world.seen.count("skeptic") > 0
    assert not [e for e in ledger.entries if e.role == "skeptic"]  # a 529 is billed nothing
    assert_ledger_is_the_fakes(ledger, api)


def test_an_empty_search_ends_its_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with claude_world(monkeypatch, empty_search=True) as (world, _):
        code, summary = run(tmp_path, capsys, "--depth", "full")
    # Each worker ran its planned queries once and stopped: no follow-up after nothing found.
    assert world.seen.count("search") == 1 + 5 * 4 + 5  # scout, round 1, round 2
    assert "extract" not in world.seen and "skeptic" not in world.seen
    assert world.seen.count("triangulate") == 1  # round 2's counter-queries, once for all
    assert len(summary["not_found"]) == 5 and summary["claims"] == 0
    assert summary["verdict"] in ("HOLD", "FAIL") and code == 1


def test_the_planner_decides_proportionality_and_batches_take_the_panel(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with claude_world(monkeypatch, depth="quick", sub_questions=3) as (world, api):
        code, summary = run(tmp_path, capsys, "--depth", "auto", "--batch")
    brief = Path(summary["brief"])
    plan = read_phase(Brief(brief), "plan")
    assert plan["proportionality"] == {
        "depth": "quick",
        "reason": "five facts, each needing independent sources",
    }
    state = read_phase(Brief(brief), "run")
    assert state["depth"] == "quick" and state["auto_depth"] is True
    assert "round2" not in state["completed"] and "refetch" not in state["completed"]
    assert summary["verdict"] == "PARTIAL_QUICK" and code == 0
    assert "triangulate" not in world.seen  # no round 2, no counter-queries
    # --batch: every vote went through Message Batches, at half price, as billed.
    batches = [r for r in api.requests if r.path == "/v1/messages/batches"]
    assert batches
    ledger = ledger_of(brief)
    votes = [e for e in ledger.entries if e.role == "skeptic"]
    assert votes and all(e.batch for e in votes)
    assert_ledger_is_the_fakes(ledger, api)
    assert_verified(brief)


def test_a_planner_that_answers_nonsense_gets_a_mechanical_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nonsense = {"plan": lambda body: [fakeapi_text('{"sub_questions": "many"}')]}
    with claude_world(monkeypatch, overrides=nonsense) as (world, _):
        code, summary = run(tmp_path, capsys, "--depth", "auto")
    plan = read_phase(Brief(Path(summary["brief"])), "plan")
    assert plan["proportionality"]["depth"] == "quick"
    assert plan["proportionality"]["reason"].startswith("planner call failed: malformed answer")
    # The question itself is the first query; the floors' top-up plans the rest mechanically.
    assert plan["sub_questions"][0]["queries"][0] == TOPIC
    assert world.seen.count("plan") == 1 and code in (0, 1)


def test_a_ciber_call_that_fails_holds_the_brief_for_the_ciber_phase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with claude_world(monkeypatch, overrides={"ciber": OVERLOADED}) as (world, _):
        code, summary = run(tmp_path, capsys, "--depth", "full")
    assert world.seen.count("ciber") >= 1
    # An outage is not a declared inability (rule R) and not a pass: the ciber phase did not run.
    assert summary["verdict"] == "HOLD" and code == 1
    assert any(reason.startswith("ciber: a model call failed") for reason in summary["incomplete"])
    document = Brief(Path(summary["brief"])).load_claims()
    assert document.ciber_passed is None and document.ciber_skipped is None
