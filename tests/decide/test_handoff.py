"""The handoff block: metadata with the consumer's field names, and the consumption split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from briefs import build, build_example, edit
from deep_research.cli import main
from outage import SEPTEMBER, outage


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_example(tmp_path_factory.mktemp("handoff"))


def _handoff(root: Path, capsys: pytest.CaptureFixture[str], code: int = 0) -> dict[str, object]:
    capsys.readouterr()
    assert main(["handoff", str(root)]) == code
    value: dict[str, object] = json.loads(capsys.readouterr().out)
    return value


def test_metadata_block_and_split(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    handoff = _handoff(example, capsys)
    assert handoff["research_claims"] == str(example / "claims.json")
    assert handoff["verdict"] == "PARTIAL" and handoff["ciber_passed"] is True
    assert handoff["research_freshness"] == "2024-05-01"
    assert handoff["refetch_pass_rate"] == 0.92 and handoff["triangulation_score"] == 0.6
    context = {c["id"]: c for c in handoff["context"]}  # type: ignore[attr-defined]
    constraints = {c["id"]: c for c in handoff["constraints"]}  # type: ignore[attr-defined]
    assert "C1" in context and "C11" in context
    assert "C2" not in context and "C2" not in constraints  # low confidence: neither
    assert set(constraints) == {"C8", "C9", "C18"}
    assert constraints["C8"]["other_positions"][0].startswith("C9: The average installed price")
    assert constraints["C9"]["other_positions"][0].startswith("C8: ")
    assert handoff["uncovered_sub_questions"] == ["sq5"]


def test_ready_brief_has_no_uncovered_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = build(tmp_path / "brief")
    assert main(["verdict", str(root)]) == 0
    handoff = _handoff(root, capsys)
    assert handoff["verdict"] == "READY" and handoff["uncovered_sub_questions"] == []
    assert [c["id"] for c in handoff["context"]] == ["C1", "C2"]  # type: ignore[index]


def test_a_claim_true_for_another_period_is_a_constraint_with_that_period(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = build(tmp_path / "brief", ciber=False)
    diagnosis = tmp_path / "ciber.json"
    reading = "Heat pump sales were about 2.9 million units in 2022."
    failure = {
        "claim_id": "C1",
        "failed_reframing": reading,
        "failed_reframing_type": "scope-shift",
        "contradicting_source_ids": ["S3"],
        "severity": "temporal_scope_shift",
    }
    diagnosis.write_text(json.dumps({"ciber_passed": True, "consistency_failures": [failure]}))
    assert main(["ciber", "apply", str(root), "--input", str(diagnosis)]) == 0
    assert main(["verdict", str(root)]) == 0
    handoff = _handoff(root, capsys)
    (constraint,) = handoff["constraints"]  # type: ignore[misc]
    assert constraint["id"] == "C1" and constraint["confidence"] == "medium-contested"
    assert constraint["other_positions"] == [f"for another period: {reading} [S3]"]
    assert [c["id"] for c in handoff["context"]] == ["C2"]  # type: ignore[index]


def test_claims_the_panel_has_not_upheld_are_never_handed_off_as_high(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = build(tmp_path / "brief")
    # Votes dropped after triangulate: claims.json still says high, the panel upheld nothing.
    edit(root, lambda c, t: [claim.pop("votes") for claim in c["claims"]])
    assert main(["verdict", str(root)]) == 0
    handoff = _handoff(root, capsys)
    assert handoff["verdict"] == "PARTIAL"
    assert {c["id"]: c["confidence"] for c in handoff["context"]} == {  # type: ignore[attr-defined]
        "C1": "medium",
        "C2": "medium",
    }


def test_hold_brief_hands_off_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = build(tmp_path / "brief")
    edit(root, lambda c, t: t["counters"].update(round1_fetches=19))
    assert main(["verdict", str(root)]) == 1
    handoff = _handoff(root, capsys, code=1)
    assert handoff["usable"] is False and handoff["context"] == [] == handoff["constraints"]


@pytest.fixture
def project_brief(tmp_path: Path) -> Path:
    root = build(tmp_path / "project" / "state" / "briefs" / "heat-pumps-2023")
    assert main(["verdict", str(root)]) == 0
    return root


def test_paths_are_relative_to_the_project(
    project_brief: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project = project_brief.parents[2]
    capsys.readouterr()
    assert main(["handoff", str(project_brief), "--project", str(project)]) == 0
    claims = json.loads(capsys.readouterr().out)["research_claims"]
    assert claims == "state/briefs/heat-pumps-2023/claims.json"
    assert (project / claims).is_file()


def test_the_project_defaults_to_claude_code_s_project_folder(
    project_brief: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project_brief.parents[2]))
    handoff = _handoff(project_brief, capsys)
    assert handoff["research_claims"] == "state/briefs/heat-pumps-2023/claims.json"


def test_a_brief_outside_the_project_keeps_its_absolute_path(
    project_brief: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "another-project"
    elsewhere.mkdir()
    capsys.readouterr()
    assert main(["handoff", str(project_brief), "--project", str(elsewhere)]) == 0
    claims = json.loads(capsys.readouterr().out)["research_claims"]
    assert claims == str(project_brief.resolve() / "claims.json")


def test_no_verdict_is_an_input_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = build(tmp_path / "brief")
    capsys.readouterr()
    assert main(["handoff", str(root)]) == 2
    assert "run deep-research verdict" in capsys.readouterr().err


def test_every_position_of_a_contested_fact_is_handed_off_with_confidence_and_votes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The authority's March date (primary, medium) and the contractor's September date (one
    # news source, low, upheld 2-0 by the panel), the contradiction recorded after triangulate.
    root = outage(tmp_path / "brief")
    upheld = {"tally": "2-0", "outcome": "survives", "records": []}

    def decided(claims: dict[str, Any], trace: dict[str, Any]) -> None:
        claims.update(verdict="PARTIAL", depth="quick")
        claims["claims"][0].update(confidence="medium")
        claims["claims"][1].update(confidence="low", votes=upheld)

    edit(root, decided)
    handoff = _handoff(root, capsys)
    assert handoff["context"] == []
    march, september = handoff["constraints"]  # type: ignore[misc]
    assert [march["id"], september["id"]] == ["C1", "C2"]
    assert march["confidence"] == september["confidence"] == "medium-contested"
    assert september["votes"] == {"tally": "2-0", "outcome": "survives"}
    (rival,) = march["positions"]
    assert rival["id"] == "C2" and rival["votes"] == {"tally": "2-0", "outcome": "survives"}
    assert rival["confidence"] == "medium-contested" and rival["supporting"] == ["S2"]
    assert march["other_positions"] == [f"C2: {SEPTEMBER} [S2]"]
    assert [p["id"] for p in september["positions"]] == ["C1"]
