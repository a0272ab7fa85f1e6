"""Every exit 1 of trace, verdict and handoff ends with one line saying what to do next."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from briefs import build, edit
from deep_research.cli import main
from deep_research.decide.next_step import after_verdict


def _last_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err, "nothing on stderr"
    return err[-1]


def test_a_hold_verdict_and_its_handoff_say_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = build(tmp_path / "brief")
    edit(root, lambda c, t: t["counters"].update(round1_fetches=19))
    assert main(["verdict", str(root)]) == 1
    line = _last_line(capsys)
    assert line.startswith("next: HOLD: do not use the brief yet; fetch more sources in round 1")
    assert "deep-research counters BRIEF and verdict again" in line
    assert main(["handoff", str(root)]) == 1
    assert _last_line(capsys) == line


def test_a_trace_with_violations_says_to_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = build(tmp_path / "brief")

    def wrong_figure(claims: dict[str, Any], trace: dict[str, Any]) -> None:
        claims["claims"][0]["claim"] = claims["claims"][0]["claim"].replace("2.9", "3.9")

    edit(root, wrong_figure)
    assert main(["trace", str(root)]) == 1
    line = _last_line(capsys)
    assert line.startswith("next: go on: the failing citations above are dropped by")


def test_a_usable_verdict_says_nothing_more(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = build(tmp_path / "brief")
    assert main(["verdict", str(root)]) == 0
    assert "next:" not in capsys.readouterr().err


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        ("refetch-failed", "regenerate the brief"),
        ("verifier-violation", "re-run deep-research trace BRIEF"),
        ("trace-not-reproduced", "re-run deep-research trace BRIEF"),
        ("ciber-missing", "run CIBER"),
        ("no-verified-claim", "search again"),
        ("floor-unmet:refetch_sample", "run deep-research refetch BRIEF"),
        ("floor-unmet:rounds", "search round 2's counter-queries and fetch every page they list"),
        ("sources-unread", "fetch the pages of the publishers the verdict names"),
    ],
)
def test_each_hold_or_fail_rule_has_its_step(rule: str, says: str) -> None:
    verdict = "FAIL" if rule == "refetch-failed" else "HOLD"
    reasons = ["PARTIAL: τ low [tau-below-threshold]", f"{verdict}: what happened [{rule}]"]
    line = after_verdict(verdict, reasons)
    assert line.startswith(f"next: {verdict}: ") and says in line and "\n" not in line
