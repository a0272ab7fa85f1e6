"""The verdict: one test per rule and per floor, precedence, the reasons' format, the audit
record, bad input."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from briefs import (
    AGENCY_SALES_QUOTE,
    Edit,
    build,
    edit,
    full_counters,
    read_claims,
    ready_claims,
    ready_document,
    ready_pages,
    ready_trace,
    write_brief,
)
from conftest import REPO
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.decide.audit import URL_WITHHELD
from deep_research.decide.triangulate import run_triangulate
from deep_research.decide.verdict import (
    NOTES,
    RULES,
    Reason,
    read_reason,
    reason_line,
    refetch_required,
)
from deep_research.gates.trace import TraceOptions, run_trace
from deep_research.settings import Settings

SETTINGS = Settings()
CONTRACTS = REPO / "docs" / "contracts.md"


def verdict(root: Path) -> tuple[str, list[str]]:
    code = main(["verdict", str(root)])
    document = read_claims(root)
    assert code == (0 if document["verdict"] in {"READY", "PARTIAL", "PARTIAL_QUICK"} else 1)
    # Every line the verdict writes reads back, the first with the verdict it decided.
    parsed = [read_reason(line) for line in document["verdict_reasons"]]
    assert None not in parsed, document["verdict_reasons"]
    assert parsed[0] is not None and parsed[0].verdict == document["verdict"]
    unknown = [
        r.rule for r in parsed if r is not None and r.rule.split(":")[0] not in RULES + NOTES
    ]
    assert not unknown, f"rule ids missing from verdict.RULES: {unknown}"
    return document["verdict"], document["verdict_reasons"]


def rules(reasons: list[str]) -> list[str]:
    """The rule id of each reason, in order."""
    return [reason.rule for reason in map(read_reason, reasons) if reason is not None]


@pytest.fixture
def ready(tmp_path: Path) -> Path:
    return build(tmp_path / "brief")


def _set(key: str, value: Any) -> Edit:
    def change(claims: dict[str, Any], trace: dict[str, Any]) -> None:
        claims[key] = value

    return change


def _counter(**values: Any) -> Edit:
    def change(claims: dict[str, Any], trace: dict[str, Any]) -> None:
        trace["counters"].update(values)

    return change


def _reword(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    claims["claims"][0]["claim"] = "Heat pump sales were about 4.1 million units in 2023."


def _forge(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    # A third citation, copied from a real one and pinned on a source the claim never cited.
    forged = json.loads(json.dumps(claims["claims"][0]["evidence"][0]))
    forged.update(source="S7", finding="S7.F1")
    claims["claims"][0]["evidence"].append(forged)


def _flip(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    claims["claims"][1]["evidence"][0]["checks"]["outcome"] = "partially_supported"


@pytest.mark.parametrize("change", [_reword, _forge, _flip], ids=["reword", "forge", "flip"])
def test_rule2_an_edit_after_the_trace_gate_holds_the_brief(ready: Path, change: Edit) -> None:
    # The stored trace verdicts say Supported; the retained text no longer agrees.
    edit(ready, change)
    decided, reasons = verdict(ready)
    assert decided == "HOLD"
    assert rules(reasons)[0] == "trace-not-reproduced", reasons
    assert reasons[0].startswith("HOLD: claims.json changed after its citations were checked")


def test_all_gates_passed_is_ready(ready: Path) -> None:
    assert verdict(ready) == (
        "READY",
        ["READY: every check passed at full depth [all-gates-passed]"],
    )
    document = read_claims(ready)
    assert all(floor["met"] for floor in document["floors"].values())
    assert (
        document["settings_hash"] == json.loads((ready / "trace.json").read_text())["settings_hash"]
    )


# --- panel-not-upheld: the skeptic panel -------------------------------------------------------


def test_a_brief_whose_panel_never_sat_is_not_ready(tmp_path: Path) -> None:
    # No votes at all: CIBER then has no high claim to re-frame, and the panel rule names both.
    root = build(tmp_path / "brief", ciber=False, panel=False)
    claims = read_claims(root)["claims"]
    assert [c["confidence"] for c in claims] == ["medium", "medium"]
    assert main(["ciber", "apply", str(root), "--skip", "insufficient-high-confidence-claims"]) == 0
    decided, reasons = verdict(root)
    assert decided == "PARTIAL"
    assert (
        "PARTIAL: the skeptic panel has not upheld findings the answer rests on: C1 (no votes), "
        "C2 (no votes); rely on them only with their quoted sources in view [panel-not-upheld]"
        in reasons
    )


def _drop_votes(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    for claim in claims["claims"]:
        claim.pop("votes", None)


def test_removing_the_votes_from_a_ready_brief_makes_it_partial(ready: Path) -> None:
    edit(ready, _drop_votes)
    decided, reasons = verdict(ready)
    assert decided == "PARTIAL"
    assert reasons == [
        "PARTIAL: the skeptic panel has not upheld findings the answer rests on: C1 (no votes), "
        "C2 (no votes); rely on them only with their quoted sources in view [panel-not-upheld]"
    ]


def test_an_unverified_panel_is_named_with_its_tally(ready: Path) -> None:
    unverified = {"tally": "1-0", "outcome": "unverified", "records": []}
    edit(ready, lambda c, t: c["claims"][1].update(votes=unverified))
    decided, reasons = verdict(ready)
    assert decided == "PARTIAL"
    assert reasons == [
        "PARTIAL: the skeptic panel has not upheld findings the answer rests on: "
        "C2 (unverified 1-0); rely on them only with their quoted sources in view "
        "[panel-not-upheld]"
    ]


def _unable(**steps: str) -> Edit:
    def change(claims: dict[str, Any], trace: dict[str, Any]) -> None:
        # What the headless runner records when its reasoner returns Skipped for a step.
        trace.setdefault("phases", {})["run"] = {"question": "q", "depth": "full", "unable": steps}

    return change


def _no_panel_no_ciber(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    _drop_votes(claims, trace)
    claims.update(ciber_passed=None)


def test_a_reasoner_without_panel_or_ciber_says_once_what_ready_needs(ready: Path) -> None:
    edit(ready, _no_panel_no_ciber)
    edit(ready, _unable(panel="no model to act as a skeptic", ciber="no model to re-frame"))
    decided, reasons = verdict(ready)
    assert decided == "PARTIAL"
    assert reasons == [
        "PARTIAL: this run's reasoner cannot sit the skeptic panel and re-frame claims for CIBER "
        "(no model to act as a skeptic; no model to re-frame), which READY needs; run again "
        "with a model reasoner (--reasoner) to reach READY [reasoner-unable]"
    ]


def test_reasoner_unable_needs_the_declaration_without_it_ciber_not_run_holds(
    ready: Path,
) -> None:
    # A plugin run records no reasoner declaration: CIBER not run stays ciber-missing's HOLD.
    edit(ready, _no_panel_no_ciber)
    decided, reasons = verdict(ready)
    assert decided == "HOLD" and reasons[0] == (
        "HOLD: the consistency check a full-depth brief needs did not run (CIBER neither ran "
        "nor was skipped); run CIBER or record a valid skip (deep-research ciber apply) "
        "[ciber-missing]"
    )
    # A declaration for a step the verdict does not know changes nothing either.
    edit(ready, _unable(render="cannot"))
    assert verdict(ready)[0] == "HOLD"


def test_reasoner_unable_keeps_a_panel_that_sat_and_failed_named(ready: Path) -> None:
    unverified = {"tally": "1-0", "outcome": "unverified", "records": []}
    edit(ready, lambda c, t: (c.update(ciber_passed=None), c["claims"][1].update(votes=unverified)))
    edit(ready, _unable(ciber="no model to re-frame"))
    decided, reasons = verdict(ready)
    assert decided == "PARTIAL"
    assert rules(reasons) == ["reasoner-unable", "panel-not-upheld"]
    assert "re-frame claims for CIBER" in reasons[0] and "skeptic panel" not in reasons[0]


def test_panel_not_upheld_is_a_full_depth_rule(ready: Path) -> None:
    _make_quick(ready)
    edit(ready, _drop_votes)
    assert verdict(ready) == (
        "PARTIAL_QUICK",
        [
            "PARTIAL_QUICK: a quick first look whose every check passed; only a full-depth run "
            "(--depth full) can be READY [quick-depth]"
        ],
    )


def test_votes_recorded_after_triangulate_are_refused(
    ready: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    killed = {"tally": "0-2", "outcome": "killed", "records": []}
    edit(ready, lambda c, t: c["claims"][0].update(votes=killed))
    capsys.readouterr()
    assert main(["verdict", str(ready)]) == 2
    assert "C1 refuted by the skeptic panel but still in claims" in capsys.readouterr().err


# --- one test per rule ----------------------------------------------------------------------


def _cite_failed_source(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    claim = claims["claims"][0]
    claim["supporting"].append("S9")
    claim["violations"].append({"claim": "C1", "source": "S9", "reason": "quote_not_in_source"})


def _untraced_claim(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    claims["claims"].append({"id": "C9", "claim": "An added claim nobody traced."})


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (
            _set("refetch_pass_rate", 0.6),
            "FAIL: the cited pages, fetched again, no longer say what was quoted from them "
            "(re-fetch pass rate 0.6, needs 0.7); regenerate the brief from the pages as they now "
            "stand (a new run) [refetch-failed]",
        ),
        (
            _cite_failed_source,
            "HOLD: a kept claim cites a source the check rejected, or was never checked: "
            "C1 cites S9 (quote_not_in_source); re-run deep-research trace, then triangulate and "
            "verdict [verifier-violation]",
        ),
        (
            _untraced_claim,
            "HOLD: a kept claim cites a source the check rejected, or was never checked: "
            "C9 was never traced; re-run deep-research trace, then triangulate and verdict "
            "[verifier-violation]",
        ),
        (
            _set("ciber_passed", None),
            "HOLD: the consistency check a full-depth brief needs did not run (CIBER neither "
            "ran nor was skipped); run CIBER or record a valid skip (deep-research ciber apply) "
            "[ciber-missing]",
        ),
        (
            _set("ciber_passed", False),
            "PARTIAL: some findings did not hold when negated or reworded (the CIBER "
            "consistency check failed); use the findings it flagged only with that caveat "
            "[ciber-inconsistent]",
        ),
        (
            _set("refetch_pass_rate", 0.8),
            "PARTIAL: some cited pages, fetched again, no longer say what was quoted from them "
            "(re-fetch pass rate 0.8, needs 0.9); a new run reads the pages as they now stand "
            "[refetch-below-ready]",
        ),
        (
            _set("triangulation_score", 0.5),
            "PARTIAL: too few findings are confirmed by two independent sources "
            "(τ 0.5, needs 0.85); a second publisher for each finding, from another corpus or "
            "host, would raise it [tau-below-threshold]",
        ),
        (
            _set("unresolved_contradictions", [{"ids": ["C1", "C2"], "topic": "sales"}]),
            "PARTIAL: the sources contradict each other and nothing settles it "
            "(1 unresolved contradiction); the report gives each position with its sources: weigh "
            "them, or find a source that settles it [contradictions-unresolved]",
        ),
    ],
    ids=[
        "refetch-failed",
        "verifier-violation",
        "verifier-untraced",
        "ciber-missing",
        "ciber-inconsistent",
        "refetch-below-ready",
        "tau-below-threshold",
        "contradictions-unresolved",
    ],
)
def test_each_rule(ready: Path, change: Edit, line: str) -> None:
    edit(ready, change)
    decided, reasons = verdict(ready)
    assert decided == line.split(":", 1)[0]
    assert reasons[0] == line


def _diagnose(root: Path, severity: str) -> None:
    """Apply a CIBER diagnosis with one failure of ``severity`` on C1."""
    failure = {
        "claim_id": "C1",
        "failed_reframing": "Heat pump sales were about 2.9 million units in 2022.",
        "failed_reframing_type": "scope-shift",
        "contradicting_source_ids": ["S3"],
        "severity": severity,
    }
    path = root.parent / "ciber-failure.json"
    path.write_text(json.dumps({"ciber_passed": True, "consistency_failures": [failure]}))
    assert main(["ciber", "apply", str(root), "--input", str(path)]) == 0


def test_a_temporal_scope_shift_demotes_without_changing_the_verdict(tmp_path: Path) -> None:
    root = build(tmp_path / "brief", ciber=False)
    _diagnose(root, "temporal_scope_shift")
    assert verdict(root) == (
        "READY",
        ["READY: every check passed at full depth [all-gates-passed]"],
    )
    document = read_claims(root)
    assert document["claims"][0]["confidence"] == "medium-contested"
    assert document["ciber_timeline"][0]["claim"] == "C1"


@pytest.mark.parametrize("severity", ["negation_supported", "paraphrase_split"])
def test_a_contradicting_reframing_makes_the_brief_partial(tmp_path: Path, severity: str) -> None:
    root = build(tmp_path / "brief", ciber=False)
    _diagnose(root, severity)
    decided, reasons = verdict(root)
    assert decided == "PARTIAL"
    assert rules(reasons) == ["ciber-inconsistent", "contradictions-unresolved"]


def test_an_invalid_ciber_skip_holds(ready: Path) -> None:
    # Two high claims: "too few high claims" is not a valid reason to skip CIBER.
    edit(
        ready,
        lambda c, t: c.update(
            ciber_passed=None, ciber_skipped="insufficient-high-confidence-claims"
        ),
    )
    decided, reasons = verdict(ready)
    assert decided == "HOLD" and rules(reasons)[0] == "ciber-missing"
    assert "CIBER must run" in reasons[0]


def test_valid_skip_for_too_few_high_claims_is_partial_not_ready(tmp_path: Path) -> None:
    root = build(tmp_path / "brief", ciber=False)
    edit(root, lambda c, t: c["claims"][1].update(confidence="medium"))
    assert main(["ciber", "apply", str(root), "--skip", "insufficient-high-confidence-claims"]) == 0
    decided, reasons = verdict(root)
    assert decided == "PARTIAL" and rules(reasons) == ["ciber-skipped"]


def _one_round(root: Path) -> None:
    """Relabel every source as found in round 1 (a one-round run has no later sources)."""
    rows = [json.loads(line) for line in (root / "sources.jsonl").read_text().splitlines()]
    (root / "sources.jsonl").write_text("".join(json.dumps(r | {"round": 1}) + "\n" for r in rows))


def _make_quick(root: Path) -> None:
    _one_round(root)
    edit(root, _quick)


def _quick(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    claims.update(
        depth="quick",
        ciber_passed=None,
        ciber_skipped="depth-quick",
        refetch_pass_rate=None,
        sub_questions=["sq1", "sq2", "sq3"],
    )
    trace["depth"] = "quick"
    trace["counters"] = {
        "sub_questions": 3,
        "queries_per_sub_question": {"sq1": 2, "sq2": 2, "sq3": 2},
        "rounds": 1,
    }


def test_quick_depth_is_partial_quick_never_ready(ready: Path) -> None:
    _make_quick(ready)
    decided, reasons = verdict(ready)
    assert decided == "PARTIAL_QUICK" and rules(reasons) == ["quick-depth"]
    assert set(read_claims(ready)["floors"]) == {
        "sub_questions",
        "queries_per_sub_question",
        "rounds",
    }


# --- one test per floor ---------------------------------------------------------------------


def _drop_sources(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    root = Path(trace.pop("_root"))
    lines = (root / "sources.jsonl").read_text().splitlines()
    lines = lines[:20] + lines[25:]  # five round-1 pages that support nothing
    (root / "sources.jsonl").write_text("\n".join(lines) + "\n")
    trace["counters"]["distinct_sources"] = 25


def _single_round(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    _one_round(Path(trace.pop("_root")))
    trace["counters"]["rounds"] = 1


def _round2_unfetched(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    # One round-2 source's fetch failed: four fetched round-2 sources, one short of the floor.
    root = Path(trace.pop("_root"))
    lines = (root / "fetch-log.jsonl").read_text().splitlines()
    lines[-1] = json.dumps(json.loads(lines[-1]) | {"outcome": "error", "status": None})
    (root / "fetch-log.jsonl").write_text("\n".join(lines) + "\n")


FLOOR_CASES: dict[str, Edit] = {
    "sub_questions": lambda c, t: (
        c.update(sub_questions=["sq1", "sq2", "sq3", "sq4"]),
        t["counters"].update(
            sub_questions=4,
            queries_per_sub_question={f"sq{n}": 4 for n in range(1, 5)},
            counter_queries_per_sub_question={f"sq{n}": 1 for n in range(1, 5)},
        ),
    ),
    "queries_per_sub_question": _counter(
        queries_per_sub_question={"sq1": 4, "sq2": 4, "sq3": 3, "sq4": 4, "sq5": 4}
    ),
    "round1_fetches": _counter(round1_fetches=19),
    "distinct_sources": _drop_sources,
    "rounds": _single_round,
    "counter_queries_per_sub_question": _counter(counter_queries_per_sub_question={"sq1": 1}),
    "refetch_sample": _counter(refetch_sample=1),  # 2 web sources are cited: sample both
    "round2_fetches": _round2_unfetched,
}


@pytest.mark.parametrize("floor", list(FLOOR_CASES))
def test_each_floor_holds(ready: Path, floor: str) -> None:
    def change(claims: dict[str, Any], trace: dict[str, Any]) -> None:
        trace["_root"] = str(ready)
        FLOOR_CASES[floor](claims, trace)
        trace.pop("_root", None)

    edit(ready, change)
    decided, reasons = verdict(ready)
    assert decided == "HOLD"
    assert rules(reasons)[0] == f"floor-unmet:{floor}"
    assert reasons[0].startswith("HOLD: the run did less work than a full-depth brief needs: ")
    floors = read_claims(ready)["floors"]
    # A run of one round has fetched nothing in a second one.
    expected = [floor, "round2_fetches"] if floor == "rounds" else [floor]
    assert [name for name, row in floors.items() if not row["met"]] == expected


def test_floors_counting_documents_never_ask_more_than_the_corpus_holds(ready: Path) -> None:
    # 25 sources are every document this corpus holds: 30 distinct sources cannot be owed.
    def small_corpus(claims: dict[str, Any], trace: dict[str, Any]) -> None:
        trace["_root"] = str(ready)
        _drop_sources(claims, trace)
        trace["counters"]["corpus_documents"] = 25

    edit(ready, small_corpus)
    decided, reasons = verdict(ready)
    assert decided == "READY", reasons
    floors = read_claims(ready)["floors"]
    assert floors["distinct_sources"] == {"required": 25, "actual": 25, "met": True}
    # Round 1 took 20 of the 25 documents, so round 2 can owe at most the other 5.
    assert floors["round2_fetches"]["required"] == 5
    assert reasons[-1] == (
        "the corpus holds only 25 document(s), so the work asked of the run was lowered to fit "
        "it: 25 distinct sources (not 30) [floors-scaled-to-corpus]"
    )


def test_a_corpus_of_many_documents_still_owes_every_floor(ready: Path) -> None:
    # Scaling caps a floor at the corpus's size; it never lowers one the corpus can meet.
    def large_corpus(claims: dict[str, Any], trace: dict[str, Any]) -> None:
        trace["_root"] = str(ready)
        _drop_sources(claims, trace)
        trace["counters"]["corpus_documents"] = 500

    edit(ready, large_corpus)
    decided, reasons = verdict(ready)
    assert decided == "HOLD" and reasons[0] == (
        "HOLD: the run did less work than a full-depth brief needs: 25 distinct sources, "
        "needs 30; fetch sources from publishers not yet read, or search another corpus "
        "[floor-unmet:distinct_sources]"
    )
    assert "floors-scaled-to-corpus" not in rules(reasons)


def test_the_sub_question_floor_asks_no_more_than_the_question_s_parts(ready: Path) -> None:
    # The extractive planner records the parts the question asks; one part is one
    # sub-question, and the floor of five is not owed by the question.
    edit(ready, _counter(question_parts=2))
    verdict(ready)
    assert read_claims(ready)["floors"]["sub_questions"]["required"] == 2
    edit(ready, _counter(question_parts=None))
    verdict(ready)
    assert read_claims(ready)["floors"]["sub_questions"]["required"] == 5


def test_refetch_floor_scales_with_cited_sources() -> None:
    assert SETTINGS.refetch_floor(2) == 3 and SETTINGS.refetch_floor(45) == 5


def test_refetch_floor_counts_only_cited_web_sources(ready: Path) -> None:
    brief = Brief(ready)
    document, rows = brief.load_claims(), brief.load_sources()
    assert refetch_required(document, rows, SETTINGS) == 2  # two cited, both on the web
    local = [row.model_copy(update={"url": f"file://corpus/{row.id}.md"}) for row in rows]
    assert refetch_required(document, local, SETTINGS) == 0  # nothing to re-fetch


def test_floor_settings_are_overridable_and_recorded(ready: Path) -> None:
    # Triangulate ran under other settings: the verdict refuses to mix them.
    assert main(["verdict", str(ready), "--set", "full_round2_fetches=6"]) == 2
    run_triangulate(ready, Settings(full_round2_fetches=6))
    assert main(["verdict", str(ready), "--set", "full_round2_fetches=6"]) == 1
    trace = json.loads((ready / "trace.json").read_text())
    assert trace["settings"]["full_round2_fetches"] == 6
    assert read_claims(ready)["floors"]["round2_fetches"] == {
        "required": 6,
        "actual": 5,
        "met": False,
    }


def test_no_floor_is_met_by_waiting(ready: Path) -> None:
    # Time spent is recorded, never a floor: a run that waited longer did no more work.
    edit(ready, _counter(wall_clock_seconds=0.0))
    assert verdict(ready)[0] == "READY"
    assert "wall_clock_seconds" not in read_claims(ready)["floors"]
    assert not [name for name in Settings.model_fields if "clock" in name or "second" in name]


# --- precedence -----------------------------------------------------------------------------


def test_fail_outranks_hold_and_partial_and_every_fired_rule_is_listed(ready: Path) -> None:
    edit(
        ready,
        lambda c, t: (
            c.update(refetch_pass_rate=0.5, ciber_passed=False, triangulation_score=0.2),
            t["counters"].update(round1_fetches=19),
        ),
    )
    decided, reasons = verdict(ready)
    assert decided == "FAIL"
    assert rules(reasons) == [
        "refetch-failed",
        "floor-unmet:round1_fetches",
        "ciber-inconsistent",
        "tau-below-threshold",
    ]


def test_hold_outranks_partial(ready: Path) -> None:
    edit(
        ready,
        lambda c, t: (c.update(refetch_pass_rate=0.8), t["counters"].update(round1_fetches=19)),
    )
    decided, reasons = verdict(ready)
    assert decided == "HOLD"
    assert rules(reasons) == ["floor-unmet:round1_fetches", "refetch-below-ready"]


def test_quick_depth_with_a_contradiction_is_partial_quick_with_the_reason(ready: Path) -> None:
    _make_quick(ready)
    edit(ready, _set("unresolved_contradictions", [{"ids": ["C1"], "topic": "t"}]))
    decided, reasons = verdict(ready)
    assert decided == "PARTIAL_QUICK" and rules(reasons) == [
        "quick-depth",
        "contradictions-unresolved",
    ]
    assert reasons[0] == (
        "PARTIAL_QUICK: a quick first look, usable within the limits listed below; only a "
        "full-depth run (--depth full) can be READY [quick-depth]"
    )


def test_quick_depth_still_holds(ready: Path) -> None:
    _make_quick(ready)
    edit(ready, _untraced_claim)
    assert verdict(ready)[0] == "HOLD"


# --- the reasons' format --------------------------------------------------------------------


def test_a_reason_reads_back_and_a_line_of_another_form_does_not() -> None:
    line = reason_line("PARTIAL", "too few findings [S1] agree (τ 0.0, needs 0.85)", "tau-x")
    assert line.startswith("PARTIAL: too few")  # the words come first, the id last
    assert read_reason(line) == Reason(
        "PARTIAL", "too few findings [S1] agree (τ 0.0, needs 0.85)", "tau-x"
    )
    note = reason_line(None, "settings changed: x=1 (default 2)", "non-default-settings")
    assert read_reason(note) == Reason(
        None, "settings changed: x=1 (default 2)", "non-default-settings"
    )
    assert read_reason("HOLD: 25 < 30 [floor-unmet:distinct_sources]") == Reason(
        "HOLD", "25 < 30", "floor-unmet:distinct_sources"
    )
    # A brief decided before rules had ids, and lines that only look like one.
    for other in (
        "rule 6 → PARTIAL: τ 0.0 < 0.85",
        "PARTIAL: no id at all",
        "PARTIAL: an id with spaces [tau below]",
        "PARTIAL: [tau-below-threshold]",
        "MAYBE: a verdict that does not exist [x]",
    ):
        parsed = read_reason(other)
        assert parsed is None or parsed.verdict is None, other


def test_every_rule_id_is_documented_in_the_contract() -> None:
    text = CONTRACTS.read_text(encoding="utf-8")
    section = text[text.index("## 10. Verdict") : text.index("## 11.")]
    missing = [rule for rule in RULES + NOTES if f"`{rule}" not in section]
    assert not missing, f"docs/contracts.md §10 does not name {missing}"


# --- audit.json -----------------------------------------------------------------------------


def test_audit_is_metadata_only_and_covers_every_url(ready: Path) -> None:
    assert verdict(ready)[0] == "READY"
    audit = json.loads((ready / "audit.json").read_text())
    assert audit["verdict"] == "READY" and len(audit["sources"]) == 30
    s1 = audit["sources"][0]
    assert set(s1) == {
        "id",
        "url",
        "final_url",
        "status",
        "tier",
        "content_hash",
        "retrieved_at",
        "verdicts",
    }
    assert s1["verdicts"]["supported"] == 2
    text = (ready / "audit.json").read_text()
    assert AGENCY_SALES_QUOTE[:40] not in text and "twelve member states" not in text


def test_a_url_holding_page_text_is_withheld_from_the_audit_record(ready: Path) -> None:
    rows = [json.loads(line) for line in (ready / "sources.jsonl").read_text().splitlines()]
    rows[0]["title"] = AGENCY_SALES_QUOTE  # a title that is really page text
    rows[0]["url"] = "https://www.northern-energy.example/reports/heat-pumps-2024"
    # Titles are not in the record; a URL carrying page text would be, so it is withheld there.
    rows[0]["final_url"] = "https://x.example/?q=" + AGENCY_SALES_QUOTE.replace(" ", "+")
    (ready / "sources.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["verdict", str(ready)]) in (0, 1)
    text = (ready / "audit.json").read_text()
    assert URL_WITHHELD in text and "twelve+member" not in text and "twelve member" not in text
    assert json.loads(text)["sources"][0]["url"] == rows[0]["url"]  # the page's own URL stays
    reasons = json.loads((ready / "claims.json").read_text())["verdict_reasons"]
    (note,) = [r for r in reasons if r.endswith("[links-withheld]")]
    assert note.startswith("1 fetched URL(s) holding page text"), note


# --- bad input ------------------------------------------------------------------------------


CONTRADICTIONS: dict[str, Edit] = {
    "depth": lambda c, t: t.update(depth="quick"),
    "distinct_sources": _counter(distinct_sources=31),
    "queries_keys": _counter(queries_per_sub_question={f"sq{n}": 4 for n in range(1, 7)}),
    "sub_questions": _counter(sub_questions=4),
    "round1_fetches": _counter(round1_fetches=31),
    "rounds": lambda c, t: t["counters"].update(rounds=0),
    "refetch_without_sample": _counter(refetch_sample=0),
    "sample_without_rate": _set("refetch_pass_rate", None),
    "ciber_both": _set("ciber_skipped", "depth-quick"),
    # A corpus cannot hold fewer documents than the run took sources from it.
    "corpus_documents": _counter(corpus_documents=29),
}


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}


@pytest.mark.parametrize("case", list(CONTRADICTIONS))
def test_contradictory_counters_are_one_line_input_errors(
    ready: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    if case == "rounds":
        rows = [json.loads(line) for line in (ready / "sources.jsonl").read_text().splitlines()]
        rows[0]["round"] = 2
        (ready / "sources.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    edit(ready, CONTRADICTIONS[case])
    before = _snapshot(ready)
    capsys.readouterr()
    assert main(["verdict", str(ready)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "re-run the phase" in err
    assert _snapshot(ready) == before


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda root: (root / "claims.json").unlink(), "claims.json not found"),
        (
            lambda root: (root / "trace.json").write_text('{"counters": {"rounds": "two"}}'),
            "counters.rounds",
        ),
        (
            lambda root: (root / "claims.json").write_text('{"topic": "x", "verdict": "MAYBE"}'),
            "verdict",
        ),
        (lambda root: (root / "sources.jsonl").write_text("{oops\n"), "not valid JSON"),
    ],
    ids=["missing-claims", "wrong-schema-trace", "wrong-schema-claims", "broken-sources"],
)
def test_bad_files_are_one_line_input_errors(
    ready: Path,
    damage: Callable[[Path], object],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    damage(ready)
    before = _snapshot(ready)
    capsys.readouterr()
    assert main(["verdict", str(ready)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert _snapshot(ready) == before


def test_missing_brief_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verdict", str(tmp_path / "nope")]) == 2
    assert "brief directory not found" in capsys.readouterr().err


def test_untriangulated_brief_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "brief"
    write_brief(root, ready_pages(), ready_claims(), document=ready_document(), trace=ready_trace())
    run_trace(TraceOptions(brief=root))
    assert main(["verdict", str(root)]) == 2


def test_full_counters_helper_is_consistent() -> None:
    assert full_counters()["distinct_sources"] == 30


# --- run-incomplete: a run stopped by a cap -----------------------------------------------------


def _capped(*reasons: str) -> Edit:
    def change(claims: dict[str, Any], trace: dict[str, Any]) -> None:
        # What the runner writes when a cap stops it (runner.RunState.as_record).
        trace.setdefault("phases", {})["run"] = {
            "question": "q",
            "depth": claims["depth"],
            "completed": [],
            "incomplete": list(reasons),
        }

    return change


def test_incomplete_run_is_partial_never_ready(ready: Path) -> None:
    edit(
        ready,
        _capped(
            "usd: worst case over budget, sub-questions ['sq3'] dropped",
            "sq2 complete: false (cap deadline: shared deadline passed)",
        ),
    )
    decided, reasons = verdict(ready)
    assert decided == "PARTIAL"
    assert reasons[:2] == [
        "PARTIAL: a cap stopped the run early, so it researched only part of the question: "
        "usd: worst case over budget, sub-questions ['sq3'] dropped; raise that cap and run again "
        "for the rest [run-incomplete]",
        "PARTIAL: a cap stopped the run early, so it researched only part of the question: "
        "sq2 complete: false (cap deadline: shared deadline passed); raise that cap and run again "
        "for the rest [run-incomplete]",
    ]


def test_incomplete_quick_run_stays_partial_quick_with_the_reason(ready: Path) -> None:
    _make_quick(ready)
    edit(ready, _capped("rounds: the round cap stopped the run before round 2"))
    decided, reasons = verdict(ready)
    assert decided == "PARTIAL_QUICK" and rules(reasons) == ["quick-depth", "run-incomplete"]
    assert reasons[1].endswith(
        "researched only part of the question: rounds: the round cap stopped the run before "
        "round 2; raise that cap and run again for the rest [run-incomplete]"
    )


def test_complete_run_record_fires_nothing(ready: Path) -> None:
    edit(ready, _capped())
    assert verdict(ready)[0] == "READY"


def test_a_refetch_sample_of_unreachable_pages_has_no_rate_and_that_is_consistent() -> None:
    from deep_research.brief.trace_phases import RefetchedSource, RefetchPhase
    from deep_research.decide.verdict import check_consistency
    from deep_research.errors import DeepResearchError
    from deep_research.models import ClaimsFile, Counters, TraceFile

    def refetched(excluded: int) -> TraceFile:
        records = [
            RefetchedSource(source=f"S{n}", url=f"https://s{n}.example/", outcome=outcome)
            for n, outcome in enumerate(["unreachable"] * excluded + ["fail"] * (3 - excluded), 1)
        ]
        phase = RefetchPhase(
            cited_sources=3,
            sampled=3,
            passed=0,
            failed=3 - excluded,
            excluded=excluded,
            refetch_pass_rate=None if excluded == 3 else 0.0,
            archive_base="",
            records=records,
        )
        return TraceFile(counters=Counters(refetch_sample=3)).with_phase("refetch", phase)

    document = ClaimsFile(topic="t", depth="full")
    every = refetched(3)
    check_consistency(document, every, [], [])  # every page too short: null is the rate
    some = refetched(2)
    with pytest.raises(DeepResearchError, match="refetch_pass_rate is missing"):
        check_consistency(document, some, [], [])
