"""The polarity check (docs/contracts.md §4.1 step 3): a claim that negates its quote, or states
what its quote negates, is partially supported — in the batch gate and the trace gate alike."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from briefs import PageSpec, write_brief
from conftest import FIXTURES
from deep_research.brief.layout import Brief
from deep_research.gates.batch import check_pair
from deep_research.gates.locate import Document
from deep_research.gates.negation import disagreement
from deep_research.gates.support import NEGATION_MISMATCH, check_support
from deep_research.gates.trace import TraceOptions, run_trace

CASES: list[dict[str, Any]] = json.loads(
    (FIXTURES / "negation_cases.json").read_text(encoding="utf-8")
)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_the_batch_gate_reads_polarity(case: dict[str, Any]) -> None:
    result = check_pair(case["claim"], case["quote"], case.get("document", case["quote"]))
    assert result.verdict == case["expected"], (result.reasons, case["rule"])
    assert (NEGATION_MISMATCH in result.reasons) == (case["expected"] != "supported")


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_polarity_is_decided_where_support_is(case: dict[str, Any]) -> None:
    # The one place both gates decide support: the check is there, not in either gate.
    support = check_support(
        case["claim"], [case["quote"]], Document(case.get("document", case["quote"]))
    )
    assert support.outcome == case["expected"]


QUOTE = "the harbor handled 1,234 ships in 2023, a record for the port"
TEXT = (
    "The port authority said the harbor handled 1,234 ships in 2023, a record for the port. "
    "Officials expect similar traffic next year as trade routes shift toward the north."
)


def test_the_trace_gate_reads_polarity(tmp_path: Path) -> None:
    write_brief(
        tmp_path,
        [PageSpec("https://port.example/report", TEXT, [("Ships in 2023.", QUOTE)])],
        [
            {"claim": "The harbor did not handle 1,234 ships in 2023.", "supporting": ["S1"]},
            {"claim": "The harbor handled 1,234 ships in 2023.", "supporting": ["S1"]},  # twin
        ],
    )
    run_trace(TraceOptions(brief=tmp_path))
    negated, stated = Brief(tmp_path).load_claims().claims
    assert negated.support_class == "Partially Supported"
    assert negated.evidence[0].checks.reasons == [NEGATION_MISMATCH]
    assert stated.support_class == "Supported"


def test_the_words_in_disagreement_are_named() -> None:
    spans = [(0, len(QUOTE))]
    assert disagreement("The harbor did not handle 1,234 ships.", QUOTE, spans) == (
        "1234",
        "handl",
        "ship",
    )
    # A quote cut to leave out the negation before it: the clause's start is read too; a
    # negation in the sentence before is not.
    cut = "The harbor never " + QUOTE
    assert disagreement("The harbor handled 1,234 ships.", cut, [(17, len(cut))])
    apart = "It never rained. " + QUOTE
    assert not disagreement("The harbor handled 1,234 ships.", apart, [(17, len(apart))])


def test_a_long_text_of_cues_is_read_in_linear_time() -> None:
    claim = "The harbor did not handle ships."
    timings = []
    for size in (20_000, 200_000):
        text = "did not fail to handle ships, no ships never " * (size // 45)
        started = time.process_time()  # CPU time: load stretches the clock, not the work
        disagreement(claim, text, [(0, len(text))])
        timings.append(time.process_time() - started)
    assert timings[1] < 30 * max(timings[0], 0.001)  # ten times the text, not a hundred
