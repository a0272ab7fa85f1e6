"""``deep-research ingest``'s part in the answer a person reads: the written answer is checked
before it is kept, claims.json carries the run's own question and date, and a verifier's reply
is read as one verdict per pair it was asked."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from briefs import edit
from deep_research.brief.layout import Brief
from deep_research.brief.start_record import StartRecord, clamp_caps
from deep_research.gates.answer import check_answer
from deep_research.gates.trace import TraceOptions, run_trace
from deep_research.plugin.ingest import pair_verdicts, run_ingest
from deep_research.plugin.next import View, next_action, phase_synthesize, phase_trace
from deep_research.plugin.replies import synthesis_path, triangulator_path
from deep_research.render import render_brief
from deep_research.settings import Settings
from outage import MARCH, OPEN, SEPTEMBER, outage

ONE_SIDED = f"{MARCH[:-1]} [S1]."
BOTH = f"{MARCH[:-1]} [S1]. {SEPTEMBER[:-1]} [S2]."
STARTED = datetime(2026, 11, 30, 9, 15, tzinfo=UTC)


def _run(root: Path, question: str = "When will the Northwater works restart?") -> View:
    """The run's record as `start` writes it, for a brief assembled by tests/outage.py."""
    caps, _ = clamp_caps("full", {})
    record = StartRecord(question, root.name, "full", STARTED, caps)
    (root / "run.json").write_text(json.dumps(record.as_json()), encoding="utf-8")
    return View(Brief(root), Brief(root).load_run(), Settings())


def _answer(root: Path, text: str) -> None:
    path = synthesis_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_one_sided_answer_is_set_aside_and_asked_for_once_more_with_the_reason(
    tmp_path: Path,
) -> None:
    root = outage(tmp_path / "brief")
    view = _run(root)
    _answer(root, ONE_SIDED)
    report = run_ingest(root)
    assert not report.synthesis and report.answer_refused is not None
    assert "C2" in report.answer_refused and "September 2026" in report.answer_refused
    assert Brief(root).load_claims().synthesis is None  # nothing of it reaches the report
    assert not synthesis_path(root).exists() and synthesis_path(root, refused=True).exists()

    again = phase_synthesize(view)
    assert again is not None and again.action == "write"
    assert again.path == str(synthesis_path(root))
    assert again.why.startswith("the answer was refused") and "September 2026" in again.why

    _answer(root, BOTH)
    report = run_ingest(root)
    assert report.synthesis and report.answer_refused is None
    assert Brief(root).load_claims().synthesis == BOTH


def test_claims_json_keeps_the_answer_as_shown_and_what_was_struck_beside_it(
    tmp_path: Path,
) -> None:
    # A changed figure in one sentence: struck in report.md, and never in claims.json's answer.
    root = outage(tmp_path / "brief")
    _run(root)
    changed = "The official target for restarting the treatment works is May 2026 [S1]."
    _answer(root, f"{BOTH} {changed}")
    report = run_ingest(root)
    assert report.synthesis and report.answer_refused is None
    document = Brief(root).load_claims()
    assert document.synthesis == BOTH and "May 2026" not in document.synthesis
    (struck,) = document.synthesis_struck
    assert "May 2026" in struck.text
    assert "literal_missing" in struck.reason and "May 2026" in struck.reason
    edit(root, lambda c, t: c.update(verdict="PARTIAL"))
    _, markdown = render_brief(Brief(root), check_answer=check_answer)
    answer, stripped = markdown.split("Stripped from the answer", 1)
    assert "May 2026" not in answer.split("## Answer", 1)[1] and "May 2026" in stripped


def test_a_second_refused_answer_is_kept_and_the_report_says_what_it_left_out(
    tmp_path: Path,
) -> None:
    root = outage(tmp_path / "brief")
    _run(root)
    _answer(root, ONE_SIDED)
    run_ingest(root)
    _answer(root, ONE_SIDED)
    report = run_ingest(root)  # asked once more only: the run goes on to its verdict
    assert report.synthesis and report.answer_refused is not None and "C2" in report.answer_refused
    assert Brief(root).load_claims().synthesis == ONE_SIDED
    assert phase_synthesize(_run(root)) is None


def test_claims_get_the_runs_question_and_date_before_the_trace(tmp_path: Path) -> None:
    root = outage(tmp_path / "brief")
    (root / "trace.json").unlink()  # claims.json as the orchestrator wrote it, untraced
    claims = json.loads((root / "claims.json").read_text(encoding="utf-8"))
    claims.update(question="a question of the model's own", generated="2024-01-01")
    (root / "claims.json").write_text(json.dumps(claims), encoding="utf-8")
    view = _run(root, "When will the works restart?")

    first = phase_trace(view)
    assert first is not None and first.command is not None
    assert first.command.split()[1] == "ingest"
    report = run_ingest(root)
    assert report.claims_dated
    document = Brief(root).load_claims()
    assert document.question == "When will the works restart?"
    assert document.generated == STARTED.date()
    then = phase_trace(view)
    assert then is not None and then.command is not None and then.command.split()[1] == "trace"
    assert not run_ingest(root).claims_dated  # once: the next ingest leaves them as they are


def test_the_triangulators_contradictions_reach_claims_json_and_the_report(
    tmp_path: Path,
) -> None:
    # claims.json as a writer copies it from the graph: claims, and none of its contradictions.
    root = outage(tmp_path / "brief", contradictions=[])
    view = _run(root)
    graph = {
        "claims": [],
        "contradictions": [
            {**OPEN, "description": "the authority says March, the contractor September"},
            {"ids": ["C1", "C9"], "topic": "a claim the writer did not keep"},
            {"ids": ["C2"], "topic": "one position is no contradiction"},
            {"topic": "no ids"},
        ],
    }
    path = triangulator_path(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(graph), encoding="utf-8")
    run = view.record
    dated = {"question": run.topic, "generated": run.started_at.date().isoformat()}
    edit(root, lambda c, t: c.update(verdict="PARTIAL", synthesis=BOTH, **dated))
    _, before = render_brief(Brief(root), check_answer=check_answer)
    assert "None unresolved." in before.split("## Contradictions", 1)[1]  # the played run's
    (root / "trace.json").unlink()  # claims.json as the writer left it, untraced

    first = phase_trace(view)
    assert first is not None and first.command is not None
    assert first.command.split()[1] == "ingest" and "contradictions" in first.why
    assert run_ingest(root).contradictions_adopted == 1
    (entry,) = Brief(root).load_claims().unresolved_contradictions
    assert entry.ids == ["C1", "C2"] and entry.topic == OPEN["topic"]
    assert run_ingest(root).contradictions_adopted == 0  # once
    then = phase_trace(view)
    assert then is not None and then.command is not None and then.command.split()[1] == "trace"
    run_trace(TraceOptions(brief=root))
    # The writer's verdict and answer were dropped at ingest: these stand for code's.
    edit(root, lambda c, t: c.update(verdict="PARTIAL", synthesis=BOTH))

    _, markdown = render_brief(Brief(root), check_answer=check_answer)
    section = markdown.split("## Contradictions", 1)[1].split("\n## ", 1)[0]
    assert OPEN["topic"] in section and "None unresolved." not in section
    # Each side with its own sources.
    assert "| sources | [S1] | [S2] |" in section


def test_an_untraced_drafts_computed_fields_are_dropped_once_and_a_traced_files_stay(
    tmp_path: Path,
) -> None:
    root = outage(tmp_path / "brief")
    _run(root)
    decided = Brief(root).load_claims()
    assert decided.claims[0].evidence and decided.claims[0].support_class == "Supported"
    # Traced: every computed field in claims.json is code's, and stays.
    assert run_ingest(root).dropped == []
    kept = Brief(root).load_claims()
    assert (kept.verdict, kept.claims) == (decided.verdict, decided.claims)

    edit(root, lambda c, t: c.update(verdict="FAIL", verdict_reasons=["FAIL [x]"]))
    (root / "trace.json").unlink()  # claims.json as a writer sent it, untraced
    assert next_action(root).command is not None
    assert "ingest" in (next_action(root).command or "")  # before its verdict is read
    report = run_ingest(root)
    assert report.dropped == [
        "claims.json: dropped field(s) code computes: verdict, verify_passed, verdict_reasons, "
        "claims[].support_class, claims[].evidence, claims[].verify_passed"
    ]
    draft = Brief(root).load_claims()
    assert draft.verdict is None and draft.verdict_reasons == []
    assert {(c.support_class, c.verify_passed) for c in draft.claims} == {("Uncertain", None)}
    assert [(c.id, c.claim, c.supporting) for c in draft.claims] == [
        (c.id, c.claim, c.supporting) for c in decided.claims
    ]
    assert run_ingest(root).dropped == []  # once
    recorded = json.loads((root / "trace.json").read_text(encoding="utf-8"))
    assert recorded["phases"]["ingest"]["dropped"] == report.dropped
    assert "ingest" not in (next_action(root).command or "")  # the draft is its own now


def _judged(source: str, verdict: str = "entails") -> dict[str, str]:
    return {"source_id": source, "quoted_span": f"the span of {source}", "verdict": verdict}


Verdicts = list[tuple[str, str | None]]


@pytest.mark.parametrize(
    ("reply", "read", "abstains"),
    [
        # The control: each pair asked, judged once, read as its own verdict.
        (
            {"claim_id": "C1", "judgements": [_judged("S1"), _judged("S2", "contradicts")]},
            [("S1", "entails"), ("S2", "contradicts")],
            [],
        ),
        # No claim_id: the file name says which claim, as ever.
        (
            {"judgements": [_judged("S2"), _judged("S1")]},
            [("S1", "entails"), ("S2", "entails")],
            [],
        ),
        # A pair left out abstains alone.
        (
            {"claim_id": "C1", "judgements": [_judged("S2")]},
            [("S1", None), ("S2", "entails")],
            ["S1"],
        ),
        # A pair judged twice abstains alone: code picks neither judgement.
        (
            {
                "claim_id": "C1",
                "judgements": [_judged("S1"), _judged("S1", "contradicts"), _judged("S2")],
            },
            [("S1", None), ("S2", "entails")],
            ["S1"],
        ),
        # A source not asked is dropped; the pairs asked stand.
        (
            {
                "claim_id": "C1",
                "judgements": [_judged("S1"), _judged("S2"), _judged("S9", "contradicts")],
            },
            [("S1", "entails"), ("S2", "entails")],
            [],
        ),
        # A judgement naming another claim is no pair of this task.
        (
            {"claim_id": "C1", "judgements": [{**_judged("S1"), "claim_id": "C2"}, _judged("S2")]},
            [("S1", None), ("S2", "entails")],
            ["S1"],
        ),
        # A reply naming another claim, or holding no judgements, abstains for every pair.
        (
            {"claim_id": "C2", "judgements": [_judged("S1"), _judged("S2")]},
            [("S1", None), ("S2", None)],
            ["S1", "S2"],
        ),
        (
            {"claim_id": "C1", "judgements": "all entail"},
            [("S1", None), ("S2", None)],
            ["S1", "S2"],
        ),
        (None, [("S1", None), ("S2", None)], ["S1", "S2"]),
        (
            {"claim_id": "C1", "judgements": ["S1 entails", 7]},
            [("S1", None), ("S2", None)],
            ["S1", "S2"],
        ),
    ],
    ids=[
        "control",
        "no-claim-id",
        "pair-missing",
        "pair-twice",
        "source-not-asked",
        "judgement-of-another-claim",
        "reply-of-another-claim",
        "no-judgements",
        "unreadable",
        "malformed-judgements",
    ],
)
def test_a_verifier_reply_is_one_verdict_per_pair_asked_and_a_bad_pair_abstains_alone(
    reply: object, read: Verdicts, abstains: list[str]
) -> None:
    verdicts, notes = pair_verdicts(reply, "C1", ("S1", "S2"))
    # Every pair asked has exactly one verdict, always of its own claim and source.
    assert [(v["claim_id"], v["source_id"]) for v in verdicts] == [("C1", "S1"), ("C1", "S2")]
    assert [(v["source_id"], v.get("verdict")) for v in verdicts] == read
    assert [n.split(":")[0] for n in notes if "abstains" in n] == [f"C1/{s}" for s in abstains]
