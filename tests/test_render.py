"""report.md: sections, contradictions side by side, URL discipline, FAIL refusal, the example."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from briefs import AGENCY_URL, build, build_example, edit
from conftest import REPO
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.decide.verdict import run_verdict
from deep_research.gates.answer import check_answer
from deep_research.render import Side, better_supported, render_brief, run_render
from deep_research.settings import Settings
from deep_research.shown_urls import WITHHELD

EXAMPLE = REPO / "examples" / "heat-pumps"
SETTINGS = Settings()
SECTIONS = [
    "Verdict",
    "Answer",
    "Key findings",
    "Contradictions",
    "What could not be determined",
    "Verification",
    "Stripped claims",
    "Sources",
]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_example(tmp_path_factory.mktemp("example"))


def test_committed_example_report_is_current(example: Path) -> None:
    _, markdown = render_brief(Brief(example), check_answer=check_answer)
    committed = EXAMPLE / "report.md"
    if os.environ.get("DEEP_RESEARCH_UPDATE_EXAMPLES") == "1":
        committed.write_text(markdown, encoding="utf-8")
    assert committed.read_text(encoding="utf-8") == markdown, (
        "examples/heat-pumps/report.md is stale; regenerate with "
        "DEEP_RESEARCH_UPDATE_EXAMPLES=1 python -m pytest tests/test_render.py"
    )


def test_example_is_realistic(example: Path) -> None:
    document = json.loads((example / "claims.json").read_text())
    assert len(document["claims"]) + len(document["stripped"]) >= 15
    assert len(document["stripped"]) >= 3 and document["unresolved_contradictions"]
    assert document["verdict"] == "PARTIAL"


def test_report_has_every_section_in_order(example: Path) -> None:
    _, markdown = render_brief(Brief(example), check_answer=check_answer)
    headings = [line[3:].split(":")[0] for line in markdown.splitlines() if line.startswith("## ")]
    assert headings == SECTIONS


def test_every_url_in_the_report_is_in_the_fetch_log(example: Path) -> None:
    _, markdown = render_brief(Brief(example), check_answer=check_answer)
    logged = {
        json.loads(line)["url"] for line in (example / "fetch-log.jsonl").read_text().splitlines()
    }
    shown = set(re.findall(r"https?://[^\s|)]+", markdown))
    assert shown and shown <= logged
    assert (
        "northern-energy.example/reports/heat-pumps-2026-outlook" not in markdown
    )  # never fetched


def test_contradiction_is_side_by_side_with_the_better_side_named(example: Path) -> None:
    report, markdown = render_brief(Brief(example), check_answer=check_answer)
    (item,) = report.contradictions
    assert [side.label for side in item.sides] == ["C8", "C9"]
    assert item.better_supported == "C8" and item.why.startswith("primary source")
    assert "| position | Average installed prices" in markdown
    assert "not averaged" in markdown


@pytest.mark.parametrize(
    ("left", "right", "winner", "ground"),
    [
        (dict(independent_count=2), dict(independent_count=1), "A", "independent sources"),
        (dict(support_class="Partially Supported"), dict(), "B", "support class"),
        (
            dict(newest_published="2024-01-01"),
            dict(newest_published="2023-01-01"),
            "A",
            "more recent",
        ),
        (dict(), dict(), None, "equally supported"),
    ],
)
def test_better_supported(
    left: dict[str, object], right: dict[str, object], winner: str | None, ground: str
) -> None:
    base: dict[str, object] = dict(
        text="x",
        sources=[],
        independent_count=1,
        support_class="Supported",
        newest_published=None,
        primary_source=False,
    )
    a = Side.model_validate({**base, **left, "label": "A"})
    b = Side.model_validate({**base, **right, "label": "B"})
    decided, why = better_supported(a, b)
    assert decided == winner and why.startswith(ground)


def test_render_json_format(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(example), "--format", "json"]) == 0
    model = json.loads(capsys.readouterr().out)
    assert model["verdict"] == "PARTIAL" and len(model["verification"]) == 15


def test_render_writes_report_md(tmp_path: Path) -> None:
    root = build_example(tmp_path)
    assert main(["render", str(root)]) == 0
    assert (root / "report.md").read_text() == (EXAMPLE / "report.md").read_text()


def test_fail_is_refused_unless_forced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = build(tmp_path / "brief")
    edit(root, lambda c, t: c.update(refetch_pass_rate=0.5))
    assert main(["verdict", str(root)]) == 1
    capsys.readouterr()
    assert main(["render", str(root)]) == 2
    assert "FAIL" in capsys.readouterr().err and not (root / "report.md").exists()
    _, markdown = run_render(root, force=True, write=True, check_answer=check_answer)
    sections = markdown.split("\n## ")
    assert all("FORCED RENDER OF A FAILED BRIEF" in part for part in sections)


@pytest.mark.parametrize(
    ("link", "shown"),
    [
        ("https://never-fetched.example/x", WITHHELD),  # withheld where it stood
        (AGENCY_URL, AGENCY_URL),  # fetched: stays linked
    ],
)
def test_render_withholds_a_url_in_prose_the_brief_never_fetched(
    tmp_path: Path, link: str, shown: str
) -> None:
    root = build(tmp_path / "brief")
    run_verdict(root, SETTINGS)
    edit(root, lambda c, t: c.update(synthesis=f"See {link} [S1]."))
    assert main(["render", str(root)]) == 0
    markdown = (root / "report.md").read_text()
    assert f"See {shown}" in markdown
    assert ("never-fetched" in markdown) is False
    assert (f"are shown as {WITHHELD}." in markdown) is (shown == WITHHELD)


def test_a_claim_true_for_another_period_says_so_in_the_ciber_column(tmp_path: Path) -> None:
    root = build(tmp_path / "brief", ciber=False)
    failure = {
        "claim_id": "C2",
        "failed_reframing": "In 2022 heat pump sales came to about 2.9 million units.",
        "failed_reframing_type": "scope-shift",
        "contradicting_source_ids": ["S4"],
        "severity": "temporal_scope_shift",
    }
    diagnosis = tmp_path / "ciber.json"
    diagnosis.write_text(json.dumps({"ciber_passed": True, "consistency_failures": [failure]}))
    assert main(["ciber", "apply", str(root), "--input", str(diagnosis)]) == 0
    run_verdict(root, SETTINGS)
    report, markdown = render_brief(Brief(root), check_answer=check_answer)
    assert [v.ciber for v in report.verification] == ["—", "another period in S4"]
    assert report.contradictions == [] and "None unresolved." in markdown


def test_checks_name_the_literals_only_a_documents_context_established(example: Path) -> None:
    report, markdown = render_brief(Brief(example), check_answer=check_answer)
    checks = {view.id: view.checks for view in report.verification}
    # C5's quote gives the share but not the year; the paragraph it sits in states 2023
    assert checks["C5"].endswith("; established by context: 2023 (S1 paragraph)")
    assert "context" not in checks["C4"]  # its quote states every literal itself
    row = next(line for line in markdown.splitlines() if line.startswith("| C5 |"))
    assert "established by context: 2023 (S1 paragraph)" in row


def test_context_of_a_citation_that_no_longer_supports_is_not_shown(tmp_path: Path) -> None:
    root = build(tmp_path / "brief")
    run_verdict(root, SETTINGS)
    titled = {"literal": "2023", "established_by": "context", "passage": "title"}

    def establish(claims: dict[str, Any], trace: dict[str, Any]) -> None:
        first = claims["claims"][0]
        for item in first["evidence"]:
            item["checks"]["literals"]["context"] = [titled]
        first["supporting"] = ["S2"]  # S1's citation was dropped: its checks are not shown

    edit(root, establish)
    report, _ = render_brief(Brief(root), check_answer=check_answer)
    checks = {view.id: view.checks for view in report.verification}
    assert checks["C1"].endswith("; established by context: 2023 (S2 title)")
    assert "context" not in checks["C2"]


def test_render_needs_a_verdict(tmp_path: Path) -> None:
    root = build(tmp_path / "brief")
    assert main(["render", str(root)]) == 2


def test_the_finished_example_reproduces_offline(example: Path) -> None:
    # Triangulation reorders and drops citations after the trace; verification must still
    # reproduce every stored verdict, and the verdict itself, from the files alone.
    from deep_research.decide.verify import run_verify

    report = run_verify(example)
    assert report.identical, report.mismatches


def test_only_answer_sentences_whose_citations_pass_are_rendered(tmp_path: Path) -> None:
    root = build(tmp_path / "brief")
    run_verdict(root, SETTINGS)
    written = (
        "Heat pump sales were about 2.9 million units in 2023 [S1][S2]. "
        "Heat pump sales were about 3.9 million units in 2023 [S1]. "
        "Heat pump sales were about 2.9 million units in 2023 [S1][S3]. "
        "Heat pumps sold well."
    )
    edit(root, lambda c, t: c.update(synthesis=written))
    report, markdown = render_brief(Brief(root), check_answer=check_answer)
    # A sentence with one failing citation is shown without it, not struck with it.
    assert report.answer == (
        "Heat pump sales were about 2.9 million units in 2023 [S1][S2]. "
        "Heat pump sales were about 2.9 million units in 2023 [S1]."
    )
    assert [(s.text, s.reason) for s in report.answer_stripped] == [
        (
            "Heat pump sales were about 3.9 million units in 2023 [S1].",
            "S1 partially_supported (literal_missing: 3.9 million)",
        ),
        (
            "Heat pump sales were about 2.9 million units in 2023 [S1][S3].",
            "struck from it: [S3] dropped: S3 unsupported (no_findings)",
        ),
        ("Heat pumps sold well.", "cites no source"),
    ]
    answer = markdown.split("## Answer", 1)[1].split("## Key findings", 1)[0]
    shown, stripped = answer.split("Stripped from the answer", 1)
    assert "3.9 million" not in shown and "3.9 million" in stripped


def test_an_answer_with_no_passing_sentence_says_so(tmp_path: Path) -> None:
    root = build(tmp_path / "brief")
    run_verdict(root, SETTINGS)
    edit(root, lambda c, t: c.update(synthesis="Heat pump sales were 3.9 million in 2023 [S1]."))
    report, markdown = render_brief(Brief(root), check_answer=check_answer)
    assert report.answer == "" and len(report.answer_stripped) == 1
    assert "No sentence of the synthesis passed the trace gate" in markdown
