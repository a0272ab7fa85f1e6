"""The standalone batch gate (docs/contracts.md §13): its interface, its verdicts, its bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from briefs import page
from conftest import FIXTURES
from deep_research.cli import main
from deep_research.gates.batch import check_pair

BUDGET = page("city-budget.txt")
BUDGET_QUOTE = (
    "The City Council of Harbourton voted 9 to 4 on Tuesday, 10 December 2024, to approve a "
    "budget of $1.82 billion for the 2025 fiscal year, an increase of 3.5% over the previous year."
)


def _run(tmp_path: Path, lines: list[str]) -> list[dict[str, object]]:
    source = tmp_path / "pairs.jsonl"
    source.write_text("".join(line + "\n" for line in lines))
    out = tmp_path / "results.jsonl"
    assert main(["gate", "--input", str(source), "--output", str(out)]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def _pair(pair_id: str, claim: str, quote: str = BUDGET_QUOTE, **extra: object) -> str:
    value = {"id": pair_id, "claim": claim, "quote": quote, "source_text": BUDGET, **extra}
    return json.dumps(value)


def test_verdicts_in_input_order(tmp_path: Path) -> None:
    results = _run(
        tmp_path,
        [
            _pair("ok", "Harbourton's council approved a $1.82 billion budget for 2025."),
            _pair("digit", "Harbourton's council approved a $1.83 billion budget for 2025."),
            _pair(
                "absent",
                "Harbourton approved a tram.",
                quote="The council approved the tram extension unanimously on Monday.",
            ),
            _pair(
                "offtopic",
                "Volcanic ash grounded flights for 3.5% of airlines.",
                quote=BUDGET_QUOTE,
            ),
        ],
    )
    assert [r["id"] for r in results] == ["ok", "digit", "absent", "offtopic"]
    assert [r["verdict"] for r in results] == [
        "supported",
        "partially_supported",
        "unsupported",
        "unsupported",
    ]
    start, end = results[0]["span"]  # type: ignore[misc]
    assert BUDGET[start:end] == BUDGET_QUOTE
    assert results[1]["literals"]["missing"] == ["$1.83 billion"]  # type: ignore[index]
    assert results[2]["reasons"] == ["quote_not_in_source"] and results[2]["span"] is None
    assert "low_overlap" in results[3]["reasons"]  # type: ignore[operator]


def test_result_lines_match_the_schema(tmp_path: Path) -> None:
    from deep_research.schemas import validator

    for result in _run(tmp_path, [_pair("a", "The council approved a budget of $1.82 billion.")]):
        assert validator("gate-result").is_valid(result)


def test_source_path_relative_to_input(tmp_path: Path) -> None:
    (tmp_path / "page.txt").write_text(BUDGET)
    line = json.dumps(
        {
            "id": 1,
            "claim": "The council approved a $1.82 billion budget.",
            "quote": BUDGET_QUOTE,
            "source_path": "page.txt",
        }
    )
    missing = json.dumps({"id": 2, "claim": "c", "quote": "q", "source_path": "nope.txt"})
    results = _run(tmp_path, [line, missing])
    assert results[0]["verdict"] == "supported"
    assert (
        results[1]["verdict"] == "unresolvable" and "source_unreadable" in results[1]["reasons"][0]
    )  # type: ignore[index]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"id": "t", "claim": "x", "quote": "y"', "malformed_line"),
        ("[1, 2, 3]", "malformed_line"),
        ('"just a string"', "malformed_line"),
        ('{"id": "w", "claim": 5, "quote": "y", "source_text": "z"}', "invalid_field: claim"),
        ('{"id": "n", "claim": "x", "quote": "y"}', "no_source"),
        (
            '{"id": "e", "claim": "The council approved it.", "quote": "", "source_text": "abc"}',
            "empty_quote",
        ),
    ],
)
def test_bad_line_is_unresolvable_and_batch_goes_on(tmp_path: Path, line: str, reason: str) -> None:
    results = _run(tmp_path, [line, _pair("after", "The council approved a $1.82 billion budget.")])
    assert results[0]["verdict"] in ("unresolvable", "unsupported")
    assert results[0]["reasons"][0].startswith(reason)  # type: ignore[index]
    assert results[1]["verdict"] == "supported"


def test_binary_line_among_good_ones(tmp_path: Path) -> None:
    source = tmp_path / "pairs.jsonl"
    source.write_bytes(
        b"\xff\xfe\x00garbage\n"
        + _pair("ok", "The council approved a $1.82 billion budget.").encode()
        + b"\n"
    )
    out = tmp_path / "r.jsonl"
    assert main(["gate", "--input", str(source), "--output", str(out)]) == 0
    verdicts = [json.loads(line)["verdict"] for line in out.read_text().splitlines()]
    assert verdicts == ["unresolvable", "supported"]


@pytest.mark.parametrize(
    "content",
    [b"", b"\n\n  \n", b"\x89PNG\r\n\x1a\n\x00\x00garbage\xff", b"not json at all\n{truncated"],
    ids=["empty", "blank", "binary", "no-object-lines"],
)
def test_input_that_is_not_a_pairs_file_is_refused(
    tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "pairs.jsonl"
    source.write_bytes(content)
    out = tmp_path / "results.jsonl"
    assert main(["gate", "--input", str(source), "--output", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists()


def test_fifty_megabyte_line(tmp_path: Path) -> None:
    source = tmp_path / "pairs.jsonl"
    with source.open("wb") as handle:
        handle.write(b'{"id": "big", "claim": "' + b"a" * (50 * 1024 * 1024) + b"\n")
        handle.write(_pair("ok", "The council approved a $1.82 billion budget.").encode() + b"\n")
    out = tmp_path / "r.jsonl"
    assert main(["gate", "--input", str(source), "--output", str(out)]) == 0
    verdicts = [json.loads(line)["verdict"] for line in out.read_text().splitlines()]
    assert verdicts == ["unresolvable", "supported"]


def test_missing_input_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "--input", str(tmp_path / "absent.jsonl")]) == 2
    assert "not found" in capsys.readouterr().err


def test_stdin_and_the_shim(tmp_path: Path) -> None:
    line = _pair("s", "The council approved a $1.82 billion budget.") + "\n"
    shim = FIXTURES.parents[1] / "shared" / "scripts" / "citation-gate.py"
    done = subprocess.run(
        [sys.executable, str(shim), "--input", "-"],
        input=line.encode(),
        capture_output=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["verdict"] == "supported"
    assert b"gate: 1 checked" in done.stderr


@settings(max_examples=200, deadline=None)
@given(claim=st.text(max_size=120), quote=st.text(max_size=120), text=st.text(max_size=400))
def test_any_input_gives_a_verdict_never_a_crash(claim: str, quote: str, text: str) -> None:
    result = check_pair(claim, quote, text + quote)
    assert result.verdict in ("supported", "partially_supported", "unsupported")
    if result.span is not None:
        start, end = result.span
        assert 0 <= start <= end <= len(text + quote)
    if not quote.strip():
        assert result.verdict == "unsupported"  # an empty quote is in every page and proves nothing


# --- any JSON value: a reported row, never an aborted batch ------------------------------------

GOOD = _pair("good", "Harbourton approved a $1.82 billion budget")


def _bad_lines(tmp_path: Path) -> dict[str, str]:
    import os

    os.mkfifo(tmp_path / "fifo")
    return {
        "lone-surrogate-id": '{"id": "a\\ud800", "claim": "c", "quote": "q", "source_text": "t"}',
        "lone-surrogate-claim": '{"id": "s", "claim": "\\udc00", "quote": "q", "source_text": "t"}',
        "nul-in-source-path": json.dumps(
            {"id": "n", "claim": "c", "quote": "q", "source_path": "a\x00b"}
        ),
        "huge-integer-id": '{"id": '
        + "7" * 4301
        + ', "claim": "c", "quote": "q", "source_text": "t"}',
        "huge-integer-elsewhere": '{"id": "i", "n": '
        + "7" * 5000
        + ', "claim": "c", "quote": "q"}',
        "device-source": json.dumps(
            {"id": "z", "claim": "c", "quote": "q", "source_path": "/dev/zero"}
        ),
        "fifo-source": json.dumps({"id": "f", "claim": "c", "quote": "q", "source_path": "fifo"}),
        "directory-source": json.dumps({"id": "d", "claim": "c", "quote": "q", "source_path": "."}),
    }


def test_each_bad_line_is_an_unresolvable_row_and_the_batch_goes_on(tmp_path: Path) -> None:
    bad = _bad_lines(tmp_path)
    results = _run(tmp_path, [GOOD, *bad.values(), GOOD])
    assert len(results) == len(bad) + 2
    assert results[0]["verdict"] == results[-1]["verdict"] == "supported"
    for name, result in zip(bad, results[1:-1], strict=True):
        assert result["verdict"] == "unresolvable", name
        assert result["reasons"], name


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats()
        | st.text(st.characters(exclude_categories=()), max_size=20),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.sampled_from(["id", "claim", "quote", "source_text", "x"]), inner)
        ),
        max_leaves=10,
    )
)
def test_no_json_value_raises(value: object) -> None:
    from deep_research.gates.batch import check_line

    raw = json.dumps(value).encode("utf-8")  # escapes keep lone surrogates in the JSON
    assert check_line(raw, base_dir=Path.cwd()).verdict in {
        "supported",
        "partially_supported",
        "unsupported",
        "unresolvable",
    }


TRANSPORT_QUOTE = (
    "The largest share, $612 million, goes to public transport, including the first phase of "
    "the Eastline tram extension."
)
REYES_QUOTE = (
    "Councillor Ana Reyes, who chairs the finance committee, said the budget keeps property tax "
    "rates unchanged for the third consecutive year."
)


def test_document_context_establishes_a_year_or_a_name_and_says_where(tmp_path: Path) -> None:
    results = _run(
        tmp_path,
        [
            _pair("year", "In 2025, $612 million goes to public transport.", TRANSPORT_QUOTE),
            # the paragraph before states 2024, then 2025: the year in force is the last one
            _pair(
                "earlier-year", "In 2024, $612 million goes to public transport.", TRANSPORT_QUOTE
            ),
            _pair(
                "name",
                "Ana Reyes chairs the Harbourton finance committee.",
                REYES_QUOTE,
                title="Harbourton budget, 2025",
            ),
            _pair("untitled", "Ana Reyes chairs the Harbourton finance committee.", REYES_QUOTE),
            _pair(
                "wrong-title",
                "Ana Reyes chairs the Harbourton finance committee.",
                REYES_QUOTE,
                title="Eastport budget, 2025",
            ),
        ],
    )
    by_id = {result["id"]: result for result in results}
    assert by_id["year"]["verdict"] == "supported"
    assert by_id["year"]["literals"]["context"] == ["2025 (paragraph before)"]  # type: ignore[index]
    assert by_id["earlier-year"]["reasons"] == ["literal_missing"]
    assert by_id["name"]["verdict"] == "supported"
    assert by_id["name"]["literals"]["context"] == ["Harbourton (title)"]  # type: ignore[index]
    assert by_id["untitled"]["reasons"] == ["name_missing"]
    assert by_id["wrong-title"]["reasons"] == ["name_missing"]
    assert by_id["wrong-title"]["literals"]["context"] == []  # type: ignore[index]


def test_a_context_figure_is_never_evidence(tmp_path: Path) -> None:
    # the title states the figure, the located text does not: a figure needs the located text
    (result,) = _run(
        tmp_path,
        [
            _pair(
                "figure",
                "The budget keeps property tax rates unchanged and gives $612 million to trams.",
                REYES_QUOTE,
                title="$612 million for transport",
            )
        ],
    )
    assert result["reasons"] == ["literal_missing"]
    assert result["literals"]["missing"] == ["$612 million"]  # type: ignore[index]


@pytest.mark.parametrize("title", [5, ["a"], "x" * 1001])
def test_a_bad_title_is_an_invalid_field(tmp_path: Path, title: object) -> None:
    (result,) = _run(tmp_path, [_pair("t", "The council approved a budget.", title=title)])
    assert result["verdict"] == "unresolvable"
    assert result["reasons"][0].startswith("invalid_field: title")  # type: ignore[index]
