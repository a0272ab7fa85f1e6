"""The WikiQA benchmark's scoring: a claim is correct only when its quote is an answer sentence."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest


def _script() -> ModuleType:
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "wikiqa_eval.py"
    spec = importlib.util.spec_from_file_location("wikiqa_eval", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("wikiqa_eval", module)
    spec.loader.exec_module(module)
    return module


W = _script()
ROW = {
    "title": "Quenby Ferry",
    "sentences": [
        "The Quenby Ferry crosses the estuary .",
        "It started running in 1962 , when the chain ferry was retired .",
        "The ferry carries cars and foot passengers .",
    ],
    "labels": [0, 1, 0],
}


@pytest.mark.parametrize(
    ("quote", "correct"),
    [
        ("It started running in 1962 , when the chain ferry was retired .", True),
        # Quoted with the sentence before it, the answer is still the quote's.
        ("The Quenby Ferry crosses the estuary .\n\nIt started running in 1962 , when", True),
        ("The Quenby Ferry crosses   the estuary .", False),
        ("in 1962 ,", False),  # a fragment is not the sentence
        ("It started running in 1963 , when the chain ferry was retired .", False),
        ("", False),
    ],
)
def test_a_claim_is_correct_only_when_its_quote_is_an_answer_sentence(
    quote: str, correct: bool
) -> None:
    text, spans = W.page(ROW)
    assert text.startswith("# Quenby Ferry\n\n")
    assert [text[s:e] for s, e in spans] == ROW["sentences"]
    assert W.is_answer(quote, text, spans, ROW["labels"]) is correct


def test_figures_count_questions_and_claims_on_the_natural_mix() -> None:
    outcomes = [
        W.Outcome("1", "q", True, ["a", "b"], [True, False], "", 0.0),
        W.Outcome("2", "q", True, [], [], "", 0.0),
        W.Outcome("3", "q", False, ["c"], [False], "", 0.0),
        W.Outcome("4", "q", False, [], [], "", 0.0),
    ]
    figures = W.figures(outcomes)
    assert (figures["triggered"], figures["correct"], figures["answerable"]) == (2, 1, 2)
    assert (figures["precision"], figures["recall"], figures["f1"]) == (0.5, 0.5, 0.5)
    assert (figures["claims"], figures["claim_precision"]) == (3, 0.333)
    assert figures["unanswerable_not_found"] == 1
