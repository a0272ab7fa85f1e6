"""The standalone batch gate (docs/contracts.md §13): its interface, its verdicts, its bad input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from briefs import page
from conftest import FIXTURES
from deep_research.cli import main
from deep_research.errors import UnreadableInput
from deep_research.gates import batch
from deep_research.gates.batch import check_pair, run_gate_file

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
            # untitled: the page's lead names the city its council is
            _pair("untitled", "Ana Reyes chairs the Harbourton finance committee.", REYES_QUOTE),
            _pair(
                "other-city",
                "Ana Reyes chairs the Eastport finance committee.",
                REYES_QUOTE,
                title="Harbourton budget, 2025",
            ),
        ],
    )
    by_id = {result["id"]: result for result in results}
    assert by_id["year"]["verdict"] == "supported"
    assert by_id["year"]["literals"]["context"] == [  # type: ignore[index]
        {"literal": "2025", "established_by": "context", "passage": "paragraph before"}
    ]
    assert by_id["earlier-year"]["reasons"] == ["literal_missing"]
    assert by_id["name"]["verdict"] == "supported"
    assert by_id["name"]["literals"]["context"] == [  # type: ignore[index]
        {"literal": "Harbourton", "established_by": "context", "passage": "title"}
    ]
    assert by_id["untitled"]["literals"]["context"] == [  # type: ignore[index]
        {"literal": "Harbourton", "established_by": "context", "passage": "lead"}
    ]
    assert by_id["other-city"]["reasons"] == ["name_missing"]
    assert by_id["other-city"]["literals"]["context"] == []  # type: ignore[index]


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


# --- streaming --------------------------------------------------------------------------------


class _Watched(io.BytesIO):
    """Input that records, at each line read, the bytes already in the output's temporary file
    and what the output holds."""

    def __init__(self, data: bytes, out: Path) -> None:
        super().__init__(data)
        self.out = out
        self.seen: list[tuple[int, str]] = []

    def readline(self, size: int | None = -1) -> bytes:
        pending = sorted(self.out.parent.glob(f".{self.out.name}.*.tmp"))
        self.seen.append((sum(p.stat().st_size for p in pending), self.out.read_text()))
        return super().readline(size)


def test_results_stream_into_a_temporary_file_renamed_at_the_end(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    out.write_text("old results\n")
    rows = 400  # ~200 KB of results: more than a write buffer holds
    lines = [_pair(f"p{n}", "The council approved a $1.82 billion budget.") for n in range(rows)]
    source = _Watched("".join(line + "\n" for line in lines).encode(), out)
    assert run_gate_file(None, out, stdin=source).total == rows
    written = [size for size, _ in source.seen]
    # Results reach the disk while the input is still being read, never shrink, and the old
    # output stands until the new one replaces it whole.
    assert written[0] == 0 and written[rows // 2] > 0 and written == sorted(written)
    assert {old for _, old in source.seen} == {"old results\n"}
    assert len(out.read_text().splitlines()) == rows and not list(tmp_path.glob(".*.tmp"))


def test_a_refused_batch_leaves_the_old_output_and_no_temporary_file(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    out.write_text("old results\n")
    with pytest.raises(UnreadableInput):
        run_gate_file(None, out, stdin=io.BytesIO(b"not json\n[1, 2]\n"))
    assert out.read_text() == "old results\n" and not list(tmp_path.glob(".*.tmp"))


def test_leading_bad_lines_wait_until_the_input_proves_to_be_pairs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(batch, "SPOOL_BYTES", 100)  # the held results spill to disk
    bad = b"not json\n" * 50
    good = _pair("ok", "The council approved a $1.82 billion budget.").encode() + b"\n"
    printed = io.StringIO()
    run_gate_file(None, None, stdin=io.BytesIO(bad + good + bad), stdout=printed)
    rows = [json.loads(line) for line in printed.getvalue().splitlines()]
    assert [r["verdict"] for r in rows] == ["unresolvable"] * 50 + ["supported"] + [
        "unresolvable"
    ] * 50
    refused = io.StringIO()
    with pytest.raises(UnreadableInput):
        run_gate_file(None, None, stdin=io.BytesIO(bad * 3), stdout=refused)
    assert refused.getvalue() == ""  # nothing printed for an input that is not a pairs file


class _Sink(io.StringIO):
    def write(self, text: str) -> int:  # keeps nothing: what is measured is the gate's memory
        return len(text)


def _peak_bytes(rows: int) -> int:
    line = _pair("p", "The council approved a $1.82 billion budget.").encode() + b"\n"
    source = io.BytesIO(line * rows)
    tracemalloc.start()
    try:
        run_gate_file(None, None, stdin=source, stdout=_Sink())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_number_of_rows() -> None:
    small, large = _peak_bytes(100), _peak_bytes(2000)
    # Holding 2,000 results (~1 KB each) would add ~2 MB; streaming adds nothing per row.
    assert large < small + 256 * 1024, (small, large)


# --- one answer row per input row, always ----------------------------------------------------

SURROGATE_ROWS = {
    "in-the-claim": {"id": "c", "claim": "x\ud800", "quote": "q", "source_text": "t"},
    "in-the-quote": {"id": "q", "claim": "c", "quote": "\udc00", "source_text": "t"},
    "in-the-source-text": {"id": "s", "claim": "c", "quote": "q", "source_text": "t\udbff"},
    "in-the-source-path": {"id": "p", "claim": "c", "quote": "q", "source_path": "\udc80.txt"},
    "in-the-title": {"id": "t", "claim": "c", "quote": "q", "source_text": "t", "title": "\ud800"},
    "in-a-key": {"id": "k", "claim": "c", "quote": "q", "source_text": "t", "\ud800": 1},
    "in-an-ignored-label": {
        "id": "l",
        "claim": "c",
        "quote": "q",
        "source_text": "t",
        "x": "\ud800",
    },
    "in-the-id": {"id": "\ud800", "claim": "c", "quote": "q", "source_text": "t"},
}


@pytest.mark.parametrize("row", SURROGATE_ROWS.values(), ids=SURROGATE_ROWS.keys())
def test_a_lone_surrogate_row_alone_is_answered(tmp_path: Path, row: dict[str, object]) -> None:
    # json.dumps escapes a lone surrogate as \udXXX: valid JSON, a JSON object, no text.
    [result] = _run(tmp_path, [json.dumps(row)])
    assert result["verdict"] == "unresolvable"
    assert str(result["reasons"][0]).startswith("invalid_text: ")  # type: ignore[index]
    assert "lone surrogate" in str(result["reasons"][0])  # type: ignore[index]
    assert result["id"] == (None if row["id"] == "\ud800" else row["id"])  # a sound id is kept


def test_a_boolean_id_is_no_id(tmp_path: Path) -> None:
    claim = "Harbourton approved a $1.82 billion budget."
    flagged, numbered = _run(tmp_path, [_pair(True, claim), _pair(1, claim)])  # type: ignore[arg-type]
    assert flagged == {
        "id": None,
        "verdict": "unresolvable",
        "reasons": ["invalid_field: id: a boolean, not a string or an integer"],
        "span": None,
        "literals": {"claim": [], "missing": [], "context": []},
    }
    assert numbered["id"] == 1 and numbered["verdict"] == "supported"  # the twin: an integer id


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(st.characters(exclude_categories=())),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=6,
)
_ROWS = st.fixed_dictionaries(
    {},
    optional={
        "id": st.text(st.characters(exclude_categories=()), max_size=4) | st.integers(),
        "claim": st.text(st.characters(exclude_categories=()), max_size=30),
        "quote": st.text(st.characters(exclude_categories=()), max_size=30),
        "source_text": st.text(st.characters(exclude_categories=()), max_size=60),
        "title": _VALUES,
        "label": _VALUES,
    },
)


@settings(max_examples=80, deadline=None)
@given(st.lists(_ROWS, min_size=1, max_size=6))
def test_every_object_row_gets_exactly_one_answer_in_order(rows: list[dict[str, object]]) -> None:
    out = io.StringIO()
    source = "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")
    batch.run_gate(io.BytesIO(source), out, base_dir=Path.cwd())
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(answers) == len(rows)
    for row, answer in zip(rows, answers, strict=True):
        if answer["id"] is not None:
            assert answer["id"] == row["id"]
