"""The WiCE measure of ``deep-research check``: its pages, reports and scoring, on made-up rows.

The rows here are WiCE-shaped but written for this test (no WiCE text is kept in the
repository); the command's output is the documented ``--json`` shape, written by hand, so the
scoring is tested whether or not this checkout has the command. One end-to-end case runs the
real command when it exists.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conftest import REPO


def _script() -> ModuleType:
    path = REPO / "benchmarks" / "wice_check_eval.py"
    spec = importlib.util.spec_from_file_location("wice_check_eval", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["wice_check_eval"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


EVAL = _script()
MARK = EVAL.PAGE_MARK


def row(label: str, claim: str, *pages: list[str], ident: str = "dev00001") -> dict[str, Any]:
    evidence = [line for page in pages for line in page]
    return {"label": label, "claim": claim, "evidence": evidence, "meta": {"id": ident}}


KILN = [
    f"{MARK} The Harrow kiln – Town archive",
    "# The Harrow kiln",
    "The Harrow kiln was fired for the first time in 1874.",
    "It burned <b>wood</b> until 1902 & then coal.",
]
FERRY = [f"{MARK} Ferry timetable", "The ferry crosses twice a day."]


@pytest.mark.parametrize(
    ("evidence", "pages"),
    [
        ([KILN], [KILN]),
        ([KILN, FERRY], [KILN, FERRY]),
        (
            [["A page WiCE kept without its title line."]],
            [["A page WiCE kept without its title line."]],
        ),
    ],
)
def test_a_claims_evidence_is_split_into_its_cited_pages(
    evidence: list[list[str]], pages: list[list[str]]
) -> None:
    claim = EVAL.claim_of(row("supported", "The kiln was first fired in 1874.", *evidence))
    assert [list(page) for page in claim.pages] == pages
    assert (claim.id, claim.label) == ("dev00001", "supported")


def test_a_page_is_html_with_its_title_headings_and_one_paragraph_per_sentence() -> None:
    page = EVAL.page_html(KILN)
    assert "<title>The Harrow kiln – Town archive</title>" in page
    assert "<h1>The Harrow kiln</h1>" in page
    assert "<p>The Harrow kiln was fired for the first time in 1874.</p>" in page
    # Page text is text: markup in it is escaped, never rendered.
    assert "<p>It burned &lt;b&gt;wood&lt;/b&gt; until 1902 &amp; then coal.</p>" in page
    assert "(meta data)" not in page


def test_wices_metadata_lines_are_the_pages_meta_tags_not_its_text() -> None:
    page = EVAL.page_html(
        [
            *KILN[:2],
            "(meta data) AUTHOR: Ann Reed",
            "(meta data) PUBLISHED DATETIME: 2018-12-20T18:04:43+00:00",
            *KILN[2:],
        ]
    )
    head, body = page.split("<body>")
    assert '<meta name="author" content="Ann Reed">' in head
    assert '<meta property="article:published_time" content="2018-12-20T18:04:43+00:00">' in head
    assert "Ann Reed" not in body and "(meta data)" not in page


@pytest.mark.parametrize(
    ("claim", "urls", "expected"),
    [
        (
            "The kiln was first fired in 1874.",
            ["http://127.0.0.1:9/a/1"],
            "The kiln was first fired in 1874 ([source 1](http://127.0.0.1:9/a/1)).\n",
        ),
        (
            "Was the kiln fired in 1874?",
            ["http://127.0.0.1:9/a/1", "http://127.0.0.1:9/a/2"],
            "Was the kiln fired in 1874 ([source 1](http://127.0.0.1:9/a/1), "
            "[source 2](http://127.0.0.1:9/a/2))?\n",
        ),
        (
            "The kiln burned coal ",
            ["http://127.0.0.1:9/a/1"],
            "The kiln burned coal ([source 1](http://127.0.0.1:9/a/1)).\n",
        ),
    ],
)
def test_the_report_is_the_claim_with_its_links_before_its_stop(
    claim: str, urls: list[str], expected: str
) -> None:
    assert EVAL.report(claim, urls) == expected


OURS, OTHER = "http://127.0.0.1:9/d/1", "http://127.0.0.1:9/elsewhere"


def output(*rows: tuple[str, list[str]]) -> dict[str, Any]:
    """The command's documented ``--json`` shape, one row per (verdict, cites)."""
    sentences = [
        {
            "text": "…",
            "cites": cites,
            "verdict": verdict,
            "reasons": [f"r-{verdict}"],
            "evidence": {},
        }
        for verdict, cites in rows
    ]
    return {"sentences": sentences, "summary": {}}


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([("supported", [OURS])], "supported"),
        ([("unsupported", [OURS])], "unsupported"),
        ([("partially_supported", [OURS])], "partially_supported"),
        ([("unreachable", [OURS])], "unreachable"),
        # A claim split in two takes its worse part; support needs every part.
        ([("supported", [OURS]), ("partially_supported", [OURS])], "partially_supported"),
        ([("partially_supported", [OURS]), ("unsupported", [OURS])], "unsupported"),
        ([("supported", [OURS]), ("unreachable", [OURS])], "unreachable"),
        # Rows that cite nothing of ours are not the claim's.
        ([("unsupported", [OTHER]), ("supported", [OURS])], "supported"),
        ([("supported", [OTHER])], "not_checked"),
        ([("not_checked", [])], "not_checked"),
        ([], "not_checked"),
    ],
)
def test_a_claims_outcome_is_its_rows_worst_verdict(
    rows: list[tuple[str, list[str]]], expected: str
) -> None:
    verdict, reasons = EVAL.outcome_of(output(*rows), [OURS])
    assert verdict == expected
    assert reasons == [f"r-{v}" for v, cites in rows if OURS in cites]


def outcome(label: str, verdict: str) -> Any:
    return EVAL.Outcome("dev", label, "claim", verdict, [])


def test_the_two_error_rates_count_only_claims_the_command_checked() -> None:
    outcomes = [
        outcome("not_supported", "supported"),  # passed: the error that matters
        outcome("not_supported", "unsupported"),
        outcome("not_supported", "partially_supported"),
        outcome("not_supported", "unreachable"),  # the harness's failure, not a verdict
        outcome("supported", "supported"),
        outcome("supported", "supported"),
        outcome("supported", "supported"),
        outcome("supported", "partially_supported"),  # flagged
        outcome("supported", "error"),
        outcome("partially_supported", "supported"),
        outcome("partially_supported", "unsupported"),
    ]
    found = EVAL.figures(outcomes)
    assert (found["claims"], found["checked"]) == (11, 9)
    assert found["not_supported_passed"] == round(1 / 3, 3)
    assert found["not_supported_passed_count"] == "1 of 3"
    assert found["supported_flagged"] == 0.25
    assert found["supported_flagged_count"] == "1 of 4"
    assert found["verdicts"] == {
        "supported": {"supported": 3, "partially_supported": 1, "error": 1},
        "partially_supported": {"supported": 1, "unsupported": 1},
        "not_supported": {
            "supported": 1,
            "partially_supported": 1,
            "unsupported": 1,
            "unreachable": 1,
        },
    }


def test_a_label_with_no_checked_claim_has_no_rate() -> None:
    found = EVAL.figures([outcome("supported", "unreachable")])
    assert (found["not_supported_passed"], found["supported_flagged"]) == (None, None)


@pytest.mark.parametrize(("command", "exists"), [("verify", True), ("no-such-command", False)])
def test_the_command_is_looked_for_in_the_real_cli(command: str, exists: bool) -> None:
    assert EVAL.command_exists(command) is exists


def _write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


ROWS = [
    row("supported", "The kiln was first fired in 1874.", KILN, ident="dev00001"),
    row("not_supported", "The ferry crosses four times a day.", FERRY, ident="dev00002"),
]


@pytest.mark.parametrize("shape", ["file", "checkout", "git directory"])
def test_the_data_is_read_from_a_file_a_checkout_or_a_git_directory(
    tmp_path: Path, shape: str
) -> None:
    checkout = tmp_path / "wice"
    _write_rows(checkout / EVAL.CLAIMS, ROWS)
    if shape == "file":
        given = checkout / EVAL.CLAIMS
    elif shape == "checkout":
        given = checkout
    else:
        git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@t"]
        subprocess.run([*git, "init", "-q"], check=True)
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "rows"], check=True)
        given = checkout / ".git"
    claims = EVAL.read_claims(given)
    assert [(c.id, c.label) for c in claims] == [
        ("dev00001", "supported"),
        ("dev00002", "not_supported"),
    ]


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        ("absent", "no WiCE data"),
        ("empty folder", "neither"),
        ("other labels", "not WiCE's claim-level rows"),
    ],
)
def test_data_that_is_not_wices_claims_is_refused(tmp_path: Path, make: str, expected: str) -> None:
    given = tmp_path / "data"
    if make == "empty folder":
        given.mkdir()
    elif make == "other labels":
        given = tmp_path / "rows.jsonl"
        _write_rows(given, [{**ROWS[0], "label": "SUPPORTS"}])
    with pytest.raises(ValueError, match=expected):
        EVAL.read_claims(given)


def test_the_page_server_serves_each_page_and_nothing_else() -> None:
    with EVAL.PageServer() as server:
        server.pages["/dev00001/1"] = EVAL.page_html(KILN)
        with urllib.request.urlopen(server.url("/dev00001/1"), timeout=5) as answer:
            assert answer.headers["Content-Type"].startswith("text/html")
            assert b"first time in 1874" in answer.read()
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(server.url("/dev00001/2"), timeout=5)
        assert missing.value.code == 404


@pytest.mark.parametrize(
    ("argv", "command", "expected"),
    [
        (["--data", "{rows}"], "no-such-command", "has no `no-such-command` command"),
        ([], "verify", "no WiCE data; pass --data"),
        (["--data", "{absent}"], "verify", "no WiCE data at"),
    ],
)
def test_the_script_stops_with_one_line_and_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    command: str,
    expected: str,
) -> None:
    rows = tmp_path / "rows.jsonl"
    _write_rows(rows, ROWS)
    monkeypatch.setattr(EVAL, "COMMAND", command)
    monkeypatch.delenv(EVAL.DATA_ENV, raising=False)
    given = [a.format(rows=rows, absent=tmp_path / "absent") for a in argv]
    assert EVAL.main(given) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and expected in captured.err


def test_the_allow_list_is_set_for_the_run_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EVAL.TEST_CIDRS_ENV, raising=False)
    monkeypatch.setenv(EVAL.TEST_PORTS_ENV, "8080")
    with EVAL.loopback_allowed(4567):
        assert os.environ[EVAL.TEST_CIDRS_ENV] == "127.0.0.1/32"
        assert os.environ[EVAL.TEST_PORTS_ENV] == "4567"
    assert EVAL.TEST_CIDRS_ENV not in os.environ
    assert os.environ[EVAL.TEST_PORTS_ENV] == "8080"


@pytest.mark.skipif(not EVAL.command_exists("check"), reason="this checkout has no check command")
def test_the_real_command_checks_each_served_claim(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "rows.jsonl"
    _write_rows(rows, ROWS)
    assert EVAL.main(["--data", str(rows), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    # Every claim reached its page and got a verdict: the harness served what the command read.
    assert found["checked"] == 2, found["outcomes"]


@pytest.mark.parametrize("command", ["verify", "no-such-command"])
def test_a_command_that_fails_is_the_claims_error_not_the_runs_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    # ``verify`` takes none of check's options and ends in argparse's SystemExit; an unknown
    # command likewise: each is recorded as the claim's outcome and the measure goes on.
    monkeypatch.setattr(EVAL, "COMMAND", command)
    claim = EVAL.claim_of(ROWS[0])
    with EVAL.PageServer() as server:
        found = EVAL.check_claim(claim, server, tmp_path, "extractive")
    assert (found.id, found.label, found.verdict) == ("dev00001", "supported", "error")
    assert found.reasons and found.reasons[0].startswith("crashed: SystemExit")
    assert (
        (tmp_path / "dev00001" / "report.md")
        .read_text(encoding="utf-8")
        .startswith("The kiln was first fired in 1874 ([source 1](http://127.0.0.1:")
    )
    assert set(server.pages) == {"/dev00001/1"}
