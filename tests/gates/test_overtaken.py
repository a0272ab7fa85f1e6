"""A dated claim stated as future in its source is flagged once the report's date passed it."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from briefs import edit
from deep_research.brief import Brief
from deep_research.gates.answer import check_answer
from deep_research.gates.overtaken import NOTE, overtaken
from deep_research.models import Checks, Claim, Evidence
from deep_research.render import render_brief
from outage import outage


def _claim(text: str, quote: str) -> Claim:
    return Claim(
        id="C1",
        claim=text,
        evidence=[Evidence(source="S1", quote=quote, checks=Checks(outcome="supported"))],
    )


@pytest.mark.parametrize(
    ("claim", "quote", "flagged"),
    [
        ("The works restart in March 2026.", "The works will restart in March 2026.", True),
        ("The target is March 2026.", "The official target is March 2026, it said.", True),
        ("The works restart in 2027.", "The works will restart in 2027.", False),  # ahead still
        ("The works stopped in March 2025.", "The works stopped in March 2025.", False),  # past
        # The future word is in another sentence: the date was stated as past.
        ("Sales rose in 2023.", "Sales rose in 2023. The agency will publish more.", False),
        ("The plant opens in June 2026.", "The plant is expected to open in June 2026.", True),
    ],
)
def test_future_dates_the_report_date_passed(claim: str, quote: str, flagged: bool) -> None:
    found = overtaken([_claim(claim, quote)], date(2026, 12, 2))
    assert found == ({"C1": NOTE} if flagged else {})


def test_no_report_date_flags_nothing() -> None:
    claim = _claim("The works restart in March 2026.", "The works will restart in March 2026.")
    assert overtaken([claim], None) == {}


def test_the_report_flags_the_date_that_has_passed(tmp_path: Path) -> None:
    root = outage(tmp_path / "brief")
    edit(root, lambda c, t: c.update(verdict="PARTIAL", generated="2026-06-01"))
    report, markdown = render_brief(Brief(root), check_answer=check_answer)
    notes = {view.id: view.overtaken for view in report.verification}
    assert notes == {"C1": NOTE, "C2": None}  # March 2026 has passed, September not yet
    line = next(line for line in markdown.splitlines() if "March 2026" in line and "- " in line)
    assert line.endswith(f"; {NOTE} (report dated 2026-06-01)")


def test_a_contradiction_shows_which_position_s_date_has_passed(tmp_path: Path) -> None:
    root = outage(tmp_path / "brief")
    edit(root, lambda c, t: c.update(verdict="PARTIAL", generated="2026-06-01"))
    report, markdown = render_brief(Brief(root), check_answer=check_answer)
    (item,) = report.contradictions
    assert [side.overtaken for side in item.sides] == [NOTE, None]
    assert f"| as of 2026-06-01 | {NOTE} | date still ahead or not stated |" in markdown
