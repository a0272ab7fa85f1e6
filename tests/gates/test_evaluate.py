"""The gate's figures on labelled data: benchmarks/RESULTS.md's, and the targets they must meet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import load_eval
from deep_research.cli import main
from deep_research.gates.evaluate import measure_literals, measure_location

PAGE = (
    "The bridge opened to traffic on 4 May 2021 after six years of construction. "
    "It carries about 41,000 vehicles a day, according to the transport ministry."
)


def _quote_row(
    row_id: str, quote: str, expected: str, span: list[int] | None, kind: str
) -> dict[str, Any]:
    return {
        "id": row_id,
        "claim": "The bridge opened in 2021.",
        "quote": quote,
        "source_text": PAGE,
        "expected": expected,
        "span": span,
        "kind": kind,
    }


def test_location_figures_on_a_tiny_table() -> None:
    quote = "The bridge opened to traffic on 4 May 2021 after six years of construction."
    rows = [
        _quote_row("hit", quote, "located", [0, len(quote)], "verbatim"),
        _quote_row("off", quote, "located", [1, len(quote)], "verbatim"),
        _quote_row(
            "foreign",
            "The tunnel closed for repairs in the winter of 2019 after floods.",
            "not_located",
            None,
            "foreign",
        ),
    ]
    figures = measure_location(rows).as_dict()
    assert figures["exact_span_share"] == 0.5 and figures["foreign_accepted"] == 0


def test_literal_figures_on_a_tiny_table() -> None:
    sentence = "It carries about 41,000 vehicles a day, according to the transport ministry."
    rows = [
        {
            "id": "s",
            "claim": "The bridge carries more than 40,000 vehicles a day.",
            "quote": sentence,
            "source_text": sentence,
            "expected": "supported",
            "kind": "numeric",
        },
        {
            "id": "r",
            "claim": "The bridge carries more than 45,000 vehicles a day.",
            "quote": sentence,
            "source_text": sentence,
            "expected": "not_supported",
            "kind": "numeric",
        },
    ]
    figures = measure_literals(rows).as_dict()
    assert figures["numeric_not_supported_rejected_on_number_or_date"] == 1.0
    assert figures["numeric_supported_rejected_on_number_or_date"] == 0.0


def test_literal_figures_read_the_row_title_and_report_the_name_check_both_ways() -> None:
    sentence = "It carries about 41,000 vehicles a day, according to the transport ministry."
    row = {
        "id": "s",
        "claim": "The Kestrel Bridge carries more than 40,000 vehicles a day.",
        "quote": sentence,
        "source_text": sentence,
        "expected": "supported",
        "kind": "numeric",
        "title": "Kestrel Bridge -LRB-Tyneford-RRB-",
    }
    refuted = {
        **row,
        "id": "r",
        "expected": "not_supported",
        "claim": "In 2020 the Kestrel Bridge carried more than 40,000 vehicles a day.",
    }
    figures = measure_literals([row, refuted]).as_dict()
    assert figures["numeric_supported_missing_a_name"] == 0.0
    assert figures["numeric_supported_missing_a_name_without_title"] == 1.0
    assert figures["numeric_not_supported_gate_rejected"] == 1.0  # the year: the title has none
    assert figures["numeric_supported_gate_rejected"] == 0.0


def test_wice_quote_location_targets() -> None:
    figures = measure_location(load_eval("wice_quotes_dev.jsonl")).as_dict()
    assert figures["exact_span_share"] >= 0.99
    assert all(share >= 0.99 for share in figures["by_kind"].values()), figures["by_kind"]
    assert figures["foreign_accepted"] == 0


def test_vitaminc_literal_targets() -> None:
    figures = measure_literals(load_eval("vitaminc_dev.jsonl")).as_dict()
    assert figures["numeric_not_supported_rejected_on_number_or_date"] >= 0.95
    assert figures["numeric_supported_rejected_on_number_or_date"] <= 0.10
    # the page title is context the name check reads: it must matter, and in that direction
    without = figures["numeric_supported_missing_a_name_without_title"]
    assert figures["numeric_supported_missing_a_name"] < without


def test_eval_command_json_and_missing_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = tmp_path / "quotes.jsonl"
    quote = "The bridge opened to traffic on 4 May 2021 after six years of construction."
    rows.write_text(
        json.dumps(_quote_row("hit", quote, "located", [0, len(quote)], "verbatim")) + "\n"
    )
    assert (
        main(
            [
                "eval",
                "--eval-dir",
                str(tmp_path),
                "--quotes",
                "quotes.jsonl",
                "--literals",
                "",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["quote_location"]["exact_span_share"] == 1.0 and out["literal_fidelity"] is None
    assert main(["eval", "--eval-dir", str(tmp_path / "absent")]) == 2
    assert "not found" in capsys.readouterr().err


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b'{"id": "x", "claim": "c"',
        b"\x00\x01\x02binary",
        b'{"id": "x", "claim": 5}\n',
        b"[1]\n",
    ],
    ids=["empty", "truncated", "binary", "wrong-types", "not-an-object"],
)
def test_eval_on_bad_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes
) -> None:
    (tmp_path / "quotes.jsonl").write_bytes(content)
    code = main(["eval", "--eval-dir", str(tmp_path), "--quotes", "quotes.jsonl", "--literals", ""])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
