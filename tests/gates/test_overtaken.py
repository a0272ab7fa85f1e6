"""A dated claim stated as future in its source is flagged once the report's date passed it."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from briefs import PageSpec, edit, write_brief
from deep_research.brief.layout import Brief
from deep_research.gates.answer import check_answer
from deep_research.gates.overtaken import NOTE, overtaken
from deep_research.gates.trace import TraceOptions, run_trace
from deep_research.models import Checks, Claim, Evidence
from deep_research.render import render_brief
from outage import outage


def _claim(text: str, quote: str | None) -> Claim:
    checks = Checks(outcome="supported")
    evidence = [Evidence(source="S1", quote=quote, checks=checks)] if quote else []
    return Claim(id="C1", claim=text, evidence=evidence)


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


#: Every 2026 date has passed on this report date.
_JANUARY_2027 = date(2027, 1, 15)


@pytest.mark.parametrize(
    ("quote", "flagged"),
    [
        # The present of a verb of a scheduled event states a timetable.
        ("The line returns to service in March 2026, the authority said.", True),
        ("Works resume in May 2026", True),
        ("The bridge reopens on 4 March 2026", True),
        ("Services restart in spring 2026.", True),
        ("Crossrail reopens in early May 2026 after repairs.", True),
        ("They return by the end of March 2026.", True),
        ("The new rules take effect from 1 April 2026.", True),
        ("The scheme comes into force on 1 April 2026; fees follow.", True),
        ("The service that returns on 4 March 2026 is hourly.", False),  # date inside a clause
        # The progressive, after the present of "be".
        ("The bridge is reopening in March 2026.", True),
        ("It's reopening in March 2026.", True),
        ("The bridge was reopening in March 2026 when it failed.", False),  # a past plan
        ("The bridge's reopening in March 2026, long awaited, drew crowds.", False),  # possessive
        ("Its reopening in March 2026 was delayed.", False),  # a gerund, not a progressive
        # The past, a past participle, a date that opens the sentence, a year as an adjective.
        ("The plant closed in March 2026.", False),
        ("Figures published in March 2026 show a fall.", False),
        ("In March 2026 the ministry said the line reopens.", False),
        ("The 2026 report states that services resumed.", False),
        ("The survey begins with data collected in March 2026.", False),
        # Present tense of a verb that narrates, not schedules (a headline's present).
        ("Inflation rises in March 2026.", False),
        # A schedule verb's form standing as a noun: after a determiner, an adjective, a
        # possessive, or as a plural with no determiner before it.
        ("The launch in March 2026 failed.", False),
        ("After a strong start in March 2026, sales fell.", False),
        ("The fund's returns in March 2026 were weak.", False),
        ("Strong returns in March 2026 lifted the fund.", False),
        ("Housing starts in March 2026 rose 5%.", False),
        ("Returns in March 2026 fell.", False),
        # An infinitive or a negation after an auxiliary.
        ("The line failed to reopen in March 2026.", False),
        ("The line did not reopen in March 2026.", False),
        # The verb in another sentence than the date.
        ("The line reopens. Figures for March 2026 follow.", False),
        ("The works resume in 2027.", False),  # still ahead
    ],
)
def test_a_present_tense_timetable_reads_as_future(quote: str, flagged: bool) -> None:
    found = overtaken([_claim(quote, quote)], _JANUARY_2027)
    assert found == ({"C1": NOTE} if flagged else {})


@pytest.mark.parametrize(
    ("published", "flagged"),
    [
        (None, True),  # not known: the shape alone decides
        (date(2025, 6, 1), True),  # written before the date: a timetable
        (date(2026, 6, 1), False),  # written after it: the present describes
    ],
)
def test_the_present_tense_of_a_date_the_source_had_passed_describes(
    published: date | None, flagged: bool
) -> None:
    claim = _claim("The series begins in January 2026.", "The series begins in January 2026.")
    written = {"S1": published} if published else {}
    assert overtaken([claim], _JANUARY_2027, written) == ({"C1": NOTE} if flagged else {})


def test_a_claim_s_own_present_tense_is_not_the_source_s() -> None:
    # Without a quote the claim's words stand in, and only a future word there is a plan.
    claim = _claim("The bridge reopens on 4 March 2026.", None)
    assert overtaken([claim], _JANUARY_2027) == {}
    claim = _claim("The bridge will reopen on 4 March 2026.", None)
    assert overtaken([claim], _JANUARY_2027) == {"C1": NOTE}


@pytest.mark.parametrize(("published", "flagged"), [("2025-11-20", True), ("2026-04-01", False)])
def test_the_report_reads_each_source_s_publication_date(
    tmp_path: Path, published: str, flagged: bool
) -> None:
    text = "Bridge update.\n\nThe bridge reopens on 4 March 2026, the council said."
    claim = "The bridge reopens on 4 March 2026."
    page = PageSpec(
        "https://council.example/bridge",
        text,
        [(claim, text.split("\n\n")[1])],
        published_at=published,
    )
    root = tmp_path / "brief"
    write_brief(root, [page], [{"claim": claim, "supporting": ["S1"]}])
    run_trace(TraceOptions(brief=root))
    edit(root, lambda c, t: c.update(verdict="PARTIAL", generated="2027-01-15"))
    report, _ = render_brief(Brief(root), check_answer=check_answer)
    assert [view.overtaken for view in report.verification] == [NOTE if flagged else None]


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
