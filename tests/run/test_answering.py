"""How well a sentence answers: identifiers as exact keys, the question's kind, coverage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from deep_research.run.answering import Asked, identifiers, kind_of, parameters

_CASES = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "answering_cases.json").read_text(encoding="utf-8")
)


@pytest.mark.parametrize("case", _CASES["identifiers"], ids=lambda c: c["question"])
def test_identifiers_are_what_the_question_writes_as_code(case: dict[str, object]) -> None:
    assert list(identifiers(str(case["question"]))) == case["identifiers"]


@pytest.mark.parametrize("case", _CASES["kinds"], ids=lambda c: c["question"])
def test_the_question_s_kind(case: dict[str, str]) -> None:
    assert kind_of(case["question"]) == case["kind"]


@pytest.mark.parametrize("case", _CASES["better"], ids=lambda c: c["why"])
def test_the_sentence_that_answers_scores_higher(case: dict[str, str]) -> None:
    asked = Asked(case["question"])
    # A case with a "document" compares the same sentence in that document and in none.
    better = asked.score(
        case["better"], declaration=case.get("declaration", ""), document=case.get("document", "")
    )
    worse = asked.score(case["worse"], declaration=case.get("worse_declaration", ""))
    assert better > worse


def test_parameters_of_a_declaration() -> None:
    assert parameters("lru_cache(maxsize=128, typed=False)") == {"maxsize", "typed"}
    assert parameters("join(a, *p)") == {"a", "p"}
    assert parameters("no declaration") == frozenset()


@given(st.text(max_size=200), st.text(max_size=200))
def test_any_question_and_sentence_score_within_bounds(question: str, sentence: str) -> None:
    asked = Asked(question)
    assert 0.0 <= asked.score(sentence, carried=sentence[:20], declaration=sentence[:30]) <= 1.0


@pytest.mark.parametrize("case", _CASES["parameters"], ids=lambda c: c["sentence"][:40])
def test_a_parameter_the_question_names_is_a_key(case: dict[str, object]) -> None:
    asked = Asked(str(case["question"]))
    named = asked.names_a_parameter(
        str(case["sentence"]), str(case["declaration"]), bool(case["summary"])
    )
    assert named is case["names"]


@pytest.mark.parametrize("case", _CASES["lacks_kind"], ids=lambda c: c["why"])
def test_a_sentence_not_stating_what_is_asked_lacks_the_kind(case: dict[str, object]) -> None:
    assert Asked(str(case["question"])).lacks_kind(str(case["sentence"])) is case["lacks"]
