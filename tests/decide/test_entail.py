"""deep-research entail: a verifier verdict counts only on a span code finds in the evidence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from briefs import (
    AGENCY_SALES_QUOTE,
    OUTLET_SENTENCE,
    held_elsewhere,
    read_claims,
    ready_claims,
    ready_document,
    ready_pages,
    ready_trace,
    write_brief,
)
from deep_research.cli import main
from deep_research.decide.triangulate import run_triangulate
from deep_research.gates.trace import TraceOptions, run_trace
from deep_research.settings import Settings

#: Inside C1's located evidence for S1 (the agency's sales sentence).
INSIDE = "Sales of heat pumps across the twelve member states rose to 2.9 million units in 2023"
#: On the agency's page, but not in the text located for C1.
OUTSIDE = "The agency estimates that the installed base reached 24 million units at the end of 2023"


def traced(root: Path) -> Path:
    """The full-depth test brief, traced and not yet triangulated."""
    write_brief(root, ready_pages(), ready_claims(), ready_document(), ready_trace())
    run_trace(TraceOptions(brief=root))
    return root


def verdict(
    span: str, kind: str = "entails", claim: str = "C1", source: str = "S1"
) -> dict[str, str]:
    return {
        "claim_id": claim,
        "source_id": source,
        "quoted_span": span,
        "verdict": kind,
        "rationale": "one sentence",
    }


def entail(
    root: Path, given: Any, capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, Any], str]:
    path = root.parent / "verdicts.json"
    path.write_text(given if isinstance(given, str) else json.dumps(given), encoding="utf-8")
    code = main(["entail", str(root), "--input", str(path)])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if code == 0 else {}, captured.err


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return traced(tmp_path / "brief")


def claim(root: Path, claim_id: str) -> dict[str, Any]:
    return next(c for c in read_claims(root)["claims"] if c["id"] == claim_id)


def test_a_checked_entails_is_recorded_with_its_place_and_changes_nothing_else(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = claim(root, "C1")
    code, out, _ = entail(root, verdict(INSIDE), capsys)
    assert code == 0 and out["ignored"] == [] and out["stripped"] == []
    after = claim(root, "C1")
    (recorded,) = after["entailment"]
    assert (recorded["source"], recorded["verdict"]) == ("S1", "entails")
    evidence = next(e for e in before["evidence"] if e["source"] == "S1")["span"]
    assert evidence["start"] <= recorded["span"]["start"] < recorded["span"]["end"]
    assert recorded["span"]["end"] <= evidence["end"]
    assert recorded["span"]["hash"] == evidence["hash"]
    text = (root / "corpus" / f"{evidence['hash'][7:]}.txt").read_text(encoding="utf-8")
    assert text[recorded["span"]["start"] : recorded["span"]["end"]] == INSIDE
    assert {k: v for k, v in after.items() if k != "entailment"} == {
        k: v for k, v in before.items() if k != "entailment"
    }
    phase = json.loads((root / "trace.json").read_text())["phases"]["entail"]
    assert phase["checked"] == out["checked"] and phase["raw"] == [verdict(INSIDE)]


def test_a_checked_contradiction_strips_the_claim(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = entail(root, [verdict(OUTLET_SENTENCE, "contradicts", source="S2")], capsys)
    assert code == 0 and out["stripped"] == ["C1"]
    document = read_claims(root)
    assert [c["id"] for c in document["claims"]] == ["C2"]
    (gone,) = document["stripped"]
    assert gone["id"] == "C1" and gone["reason"].startswith(
        "contradicted by its own evidence in S2"
    )
    # The rest of the chain takes it from here: triangulation counts what is left.
    report = run_triangulate(root, Settings())
    assert report.claims == 1 and "C1" in report.stripped


@pytest.mark.parametrize(
    ("span", "reason"),
    [
        (OUTSIDE, "span_outside_evidence"),
        (
            "Sales of heat pumps across the twelve member states fell to 1.1 million units",
            "span_not_on_page",
        ),
        ("rose to 2.9 million units in 2023", "span_too_short"),
        ("   ", "span_too_short"),
    ],
)
def test_an_unchecked_span_is_ignored_and_reported_for_either_verdict(
    root: Path, span: str, reason: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for kind in ("entails", "contradicts"):
        code, out, err = entail(root, verdict(span, kind), capsys)
        assert code == 0 and out["checked"] == [] and out["stripped"] == []
        (ignored,) = out["ignored"]
        assert (ignored["claim"], ignored["source"], ignored["reason"]) == ("C1", "S1", reason)
        assert f"ignored: C1/S1: {reason}" in err
    assert claim(root, "C1")["entailment"] == []
    assert [c["id"] for c in read_claims(root)["claims"]] == ["C1", "C2"]


def test_a_span_is_located_as_quotes_are(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shouted = "SALES OF HEAT PUMPS ACROSS THE TWELVE MEMBER STATES ROSE TO 2.9 MILLION UNITS"
    code, out, _ = entail(root, verdict(shouted), capsys)
    assert code == 0 and len(out["checked"]) == 1


def test_not_addressed_needs_no_span_and_a_malformed_verdict_is_ignored(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given = [
        verdict("", "not_addressed", source="S2"),
        verdict(INSIDE, "supports"),
        {"claim_id": "C2", "verdict": "entails"},
    ]
    code, out, _ = entail(root, given, capsys)
    assert code == 0
    assert out["checked"] == [
        {"claim": "C1", "source": "S2", "verdict": "not_addressed", "span": None}
    ]
    assert [(i["item"], i["reason"]) for i in out["ignored"]] == [
        (2, "not_a_verdict"),
        (3, "not_a_verdict"),
    ]
    assert claim(root, "C1")["entailment"] == [
        {"source": "S2", "verdict": "not_addressed", "span": None}
    ]


def test_a_later_verdict_for_the_pair_replaces_the_earlier(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entail(root, verdict("", "not_addressed"), capsys)
    entail(root, verdict(INSIDE), capsys)
    assert [e["verdict"] for e in claim(root, "C1")["entailment"]] == ["entails"]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ([verdict(INSIDE, claim="C9")], "C9, which is not in claims.json"),
        ([verdict(INSIDE, source="S3")], "C1 does not cite S3"),
        ([verdict(INSIDE), verdict(INSIDE)], "C1/S1 is judged twice"),
        ("{not json", "is not valid JSON"),
        ([], "expected one verifier verdict"),
        (["a string"], "expected one verifier verdict"),
    ],
)
def test_input_errors_write_nothing(
    root: Path, given: Any, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {name: (root / name).read_bytes() for name in ("claims.json", "trace.json")}
    code, _, err = entail(root, given, capsys)
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert {name: (root / name).read_bytes() for name in before} == before


def test_an_untraced_or_triangulated_brief_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = write_brief(tmp_path / "raw", ready_pages(), ready_claims(), ready_document())
    code, _, err = entail(raw, [verdict(INSIDE)], capsys)
    assert code == 2 and "C1 was never traced" in err
    done = traced(tmp_path / "done")
    run_triangulate(done, Settings())
    code, _, err = entail(done, [verdict(INSIDE)], capsys)
    assert code == 2 and "before triangulate" in err


def test_a_busy_brief_is_refused_with_exit_3(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (root / "claims.json").read_bytes()
    with held_elsewhere(root):
        code, _, err = entail(root, verdict(INSIDE), capsys)
    assert code == 3 and "being written by another run" in err
    assert (root / "claims.json").read_bytes() == before


def test_the_span_may_come_from_any_cited_source(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert AGENCY_SALES_QUOTE.startswith(INSIDE)
    code, out, _ = entail(root, [verdict(INSIDE), verdict(OUTLET_SENTENCE, source="S2")], capsys)
    assert code == 0 and [c["source"] for c in out["checked"]] == ["S1", "S2"]
