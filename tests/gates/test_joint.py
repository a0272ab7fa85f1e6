"""A merged claim keeps the cites that hold together; a source stating another figure does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from briefs import PageSpec, read_claims, write_brief
from deep_research.brief.layout import Brief
from deep_research.gates.answer import check_answer
from deep_research.gates.trace import TraceOptions, emitted_claims, run_trace

MERGED = "Water losses on the network were about 18 per cent, close to one fifth of supply."
PERCENT = (
    "Water losses across the network were 18 per cent of all supply last year, the regulator "
    "said in its annual report."
)
FRACTION = (
    "Roughly one fifth of the water put into supply was lost through leaks in the network, "
    "the utility admitted."
)
OTHER = "Water losses across the network were 23 per cent of supply, an audit of the utility found."
SILENT = "Water losses across the network remain a concern for the regulator and the utility."


def traced(root: Path, quotes: list[str], claim: str = MERGED) -> dict[str, object]:
    pages = [
        PageSpec(f"https://publisher{n}.example/losses", q, [(claim, q)])
        for n, q in enumerate(quotes, start=1)
    ]
    sources = [f"S{n}" for n in range(1, len(quotes) + 1)]
    write_brief(root, pages, [{"claim": claim, "supporting": sources}])
    run_trace(TraceOptions(brief=root))
    (result,) = read_claims(root)["claims"]
    return result  # type: ignore[no-any-return]


def _outcomes(claim: dict[str, object]) -> dict[str, str]:
    return {e["source"]: e["checks"]["outcome"] for e in claim["evidence"]}  # type: ignore[attr-defined, index]


def test_a_merged_claim_keeps_the_cites_that_together_state_it(tmp_path: Path) -> None:
    claim = traced(tmp_path / "b", [PERCENT, FRACTION, OTHER, SILENT])
    assert claim["support_class"] == "Supported"
    assert _outcomes(claim) == {
        "S1": "supported",  # states 18 per cent, silent on the fraction
        "S2": "supported",  # states one fifth, silent on the percentage
        "S3": "partially_supported",  # states another percentage: it disagrees
        "S4": "partially_supported",  # states none of the claim's figures
    }
    reasons = {e["source"]: e["checks"]["reasons"] for e in claim["evidence"]}  # type: ignore[attr-defined, index]
    assert reasons["S1"] == reasons["S2"] == ["literals_joined"]
    (emitted,) = emitted_claims(Brief(tmp_path / "b").load_claims())
    assert emitted.supporting == ["S1", "S2"]


@pytest.mark.parametrize(
    "quotes",
    [
        [PERCENT, OTHER],  # the second source gives another figure: one half is never stated
        [PERCENT, SILENT],  # the fraction stated nowhere
        [PERCENT],  # one source alone never joins
    ],
)
def test_cites_that_do_not_cover_the_claim_do_not_join(tmp_path: Path, quotes: list[str]) -> None:
    claim = traced(tmp_path / "b", quotes)
    assert claim["support_class"] == "Partially Supported"
    assert set(_outcomes(claim).values()) == {"partially_supported"}


def test_a_perturbed_figure_is_not_rescued_by_joining(tmp_path: Path) -> None:
    claim = traced(tmp_path / "b", [PERCENT, FRACTION], MERGED.replace("18", "19"))
    assert claim["support_class"] == "Partially Supported"


def test_an_answer_clause_keeps_the_cites_that_state_it_together(tmp_path: Path) -> None:
    traced(tmp_path / "b", [PERCENT, FRACTION, OTHER])
    brief = Brief(tmp_path / "b")
    (sentence,) = check_answer(brief, f"{MERGED[:-1]} [S1][S2].").sentences
    assert sentence.passed, sentence.reason
    (sentence,) = check_answer(brief, f"{MERGED[:-1]} [S1][S3].").sentences
    assert not sentence.passed and sentence.reason.startswith("S1 partially_supported")
