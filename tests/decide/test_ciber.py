"""Applying CIBER: every severity, the cap, the skip reasons, malformed output, the shim."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from briefs import PageSpec, page, read_claims, write_brief
from conftest import REPO
from deep_research.cli import main
from deep_research.settings import Settings

SETTINGS = Settings()
QUOTE = "approve a budget of $1.82 billion for the 2025 fiscal year, an increase of 3.5%"


def _brief(tmp_path: Path, claims: list[dict[str, Any]] | None = None, **document: Any) -> Path:
    pages = [
        PageSpec(f"https://outlet{n}.example/budget", page("city-budget.txt"), [("Budget", QUOTE)])
        for n in (1, 2, 3)
    ]
    rows = claims or [
        {"claim": "A", "confidence": "high", "dissemination_score": 0.0},
        {"claim": "B", "confidence": "high", "dissemination_score": 0.9},
        {"claim": "C", "confidence": "medium"},
    ]
    return write_brief(
        tmp_path / "brief",
        pages,
        [{"supporting": ["S1", "S2"], **row} for row in rows],
        document=document or None,
    )


def _failure(claim: str, severity: str, sources: list[str] | None = None) -> dict[str, Any]:
    return {
        "claim_id": claim,
        "failed_reframing": f"{claim} does not hold",
        "failed_reframing_type": "negation",
        "contradicting_source_ids": sources if sources is not None else ["S3"],
        "severity": severity,
    }


def _apply(root: Path, payload: Any, *extra: str) -> int:
    path = root.parent / "ciber.json"
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return main(["ciber", "apply", str(root), "--input", str(path), *extra])


@pytest.mark.parametrize(
    ("severity", "passed"),
    [("negation_supported", False), ("paraphrase_split", False), ("temporal_scope_shift", True)],
)
def test_each_severity_demotes_and_only_two_fail_the_gate(
    tmp_path: Path, severity: str, passed: bool
) -> None:
    root = _brief(tmp_path)
    # The agent claims the opposite of the contract: code decides from the severities.
    assert (
        _apply(
            root, {"ciber_passed": not passed, "consistency_failures": [_failure("C1", severity)]}
        )
        == 0
    )
    document = read_claims(root)
    assert document["ciber_passed"] is passed
    c1 = document["claims"][0]
    assert c1["confidence"] == "medium-contested"
    assert c1["dissemination_score"] == 0.25
    assert c1["contests"] == ["S3"]
    contradiction = {
        "ids": ["C1"],
        "topic": "CIBER consistency failure",
        "description": "C1 does not hold",
    }
    other_period = {"claim": "C1", "reading": "C1 does not hold", "sources": ["S3"]}
    # A temporal scope shift is no contradiction: it is recorded as a timeline entry instead.
    assert document["unresolved_contradictions"] == ([] if passed else [contradiction])
    assert document.get("ciber_timeline", []) == ([other_period] if passed else [])
    trace = json.loads((root / "trace.json").read_text())["phases"]["ciber"]
    assert trace["raw"]["ciber_passed"] is (not passed)  # recorded verbatim
    assert trace["ciber_passed"] is passed and trace["failures_per_claim"] == {"C1": 1}


def test_dissemination_is_capped_at_one_and_failures_per_claim_are_bounded(
    tmp_path: Path,
) -> None:
    root = _brief(tmp_path)
    failures = [_failure("C2", "temporal_scope_shift") for _ in range(5)]
    assert _apply(root, {"ciber_passed": True, "consistency_failures": failures}) == 0
    document = read_claims(root)
    c2 = document["claims"][1]
    assert c2["dissemination_score"] == 1.0
    assert len(document["ciber_timeline"]) == SETTINGS.ciber_max_failures_per_claim


def test_non_high_claim_keeps_its_tier(tmp_path: Path) -> None:
    root = _brief(tmp_path)
    assert (
        _apply(
            root,
            {
                "ciber_passed": True,
                "consistency_failures": [_failure("C3", "temporal_scope_shift", [])],
            },
        )
        == 0
    )
    assert read_claims(root)["claims"][2]["confidence"] == "medium"


def test_clean_pass(tmp_path: Path) -> None:
    root = _brief(tmp_path)
    assert _apply(root, {"ciber_passed": True, "consistency_failures": []}) == 0
    document = read_claims(root)
    assert document["ciber_passed"] is True and document["unresolved_contradictions"] == []


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ("{not json", "not valid JSON"),
        ({"consistency_failures": []}, "ciber_passed"),
        ({"ciber_passed": False, "consistency_failures": [_failure("C1", "mild")]}, "severity"),
        (
            {"ciber_passed": False, "consistency_failures": [_failure("C9", "paraphrase_split")]},
            "not in claims.json",
        ),
        (
            {
                "ciber_passed": False,
                "consistency_failures": [_failure("C1", "paraphrase_split", ["S99"])],
            },
            "not in sources.jsonl",
        ),
        ({"ciber_passed": True, "consistency_failures": [], "notes": "x"}, "notes"),
    ],
)
def test_malformed_output_is_rejected_and_nothing_changes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], payload: Any, message: str
) -> None:
    root = _brief(tmp_path)
    before = {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()}
    assert _apply(root, payload) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in root.iterdir() if p.is_file()} == before


def test_a_second_diagnosis_is_refused(tmp_path: Path) -> None:
    root = _brief(tmp_path)
    payload = {"ciber_passed": False, "consistency_failures": [_failure("C1", "paraphrase_split")]}
    assert _apply(root, payload) == 0
    before = (root / "claims.json").read_bytes()
    assert _apply(root, payload) == 2  # applying twice would double the demotion
    assert (root / "claims.json").read_bytes() == before


@pytest.mark.parametrize(
    ("reason", "claims", "document", "ok"),
    [
        ("depth-quick", None, {"depth": "quick"}, True),
        ("depth-quick", None, {}, False),
        ("insufficient-high-confidence-claims", [{"claim": "A", "confidence": "high"}], {}, True),
        ("insufficient-high-confidence-claims", None, {}, False),  # two high claims
        ("refetch-hard-fail", None, {"refetch_pass_rate": 0.5}, True),
        ("refetch-hard-fail", None, {"refetch_pass_rate": 0.8}, False),
        ("context-budget", None, {}, False),
    ],
)
def test_skip_reasons(
    tmp_path: Path,
    reason: str,
    claims: list[dict[str, Any]] | None,
    document: dict[str, Any],
    ok: bool,
) -> None:
    root = _brief(tmp_path, claims, **document)
    code = main(["ciber", "apply", str(root), "--skip", reason])
    assert code == (0 if ok else 2)
    recorded = read_claims(root).get("ciber_skipped")
    assert recorded == (reason if ok else None)


def test_quick_depth_brief_cannot_take_a_diagnosis(tmp_path: Path) -> None:
    root = _brief(tmp_path, depth="quick")
    assert _apply(root, {"ciber_passed": True, "consistency_failures": []}) == 2


def test_shim_runs_ciber_apply(tmp_path: Path) -> None:
    root = _brief(tmp_path)
    path = tmp_path / "ciber.json"
    path.write_text(json.dumps({"ciber_passed": True, "consistency_failures": []}))
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "shared/scripts/ciber-apply.py"),
            str(root),
            "--input",
            str(path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ciber_passed"] is True
