"""The extractive reasoner: verbatim sentences, honest skips, a digest that names itself."""

from __future__ import annotations

import pytest

from deep_research.errors import InputError
from deep_research.interface import CitedClaim, Retained, Skipped, SubQuestionPlan, SurveyDoc
from deep_research.models import Claim
from deep_research.reasoners import ExtractiveReasoner, key_phrases, make_reasoner, sentences

TEXT = (
    "Comparisons\n***********\n\nComparisons can be chained arbitrarily, e.g., \"x < y <= z\" is\n"
    "equivalent to \"x < y and y <= z\". Short one. Chained comparisons evaluate each\n"
    "operand at most once in the chain.\n\n   comparison ::= or_expr (comp_operator or_expr)*\n"
    "   chained comparisons chained comparisons chained comparisons everywhere\n"
)


def _doc(text: str = TEXT) -> Retained:
    return Retained("file://t/doc", "Doc", text, "sha256:" + "0" * 64, "t")


def test_sentences_keep_exact_offsets() -> None:
    for sentence in sentences(TEXT):
        assert TEXT[sentence.start : sentence.end] == sentence.text
    assert all("::=" not in s.text for s in sentences(TEXT))  # grammar is not prose


def test_findings_are_verbatim_long_enough_and_relevant() -> None:
    sq = SubQuestionPlan("sq1", "How are chained comparisons evaluated?", ("chained",), 2)
    findings = ExtractiveReasoner().extract(sq, _doc())
    assert findings
    for finding in findings:
        assert finding.quote in TEXT and len(finding.claim) >= 40
        assert "\n" not in finding.claim
    off_topic = SubQuestionPlan("sq2", "What do tomatoes need?", ("tomatoes",), 2)
    assert ExtractiveReasoner().extract(off_topic, _doc()) == []


def test_decompose_uses_key_phrases_and_scout_headings() -> None:
    survey = [SurveyDoc("file://t/d", "Comparisons", ("Comparisons", "Value comparisons"))]
    plan = ExtractiveReasoner().decompose("How does Python evaluate chained comparisons?", survey)
    questions = [sq.question for sq in plan.sub_questions]
    assert len(questions) >= 3 and any("Value comparisons" in q for q in questions)
    assert all(len(sq.queries) >= 2 for sq in plan.sub_questions)
    assert key_phrases("How does it work?") == ["work"]
    with pytest.raises(InputError, match="no content words"):
        ExtractiveReasoner().decompose("How is it?", [])


def test_panel_and_ciber_are_skipped_never_passed() -> None:
    reasoner = ExtractiveReasoner()
    claim = Claim(id="C1", claim="x")
    assert isinstance(reasoner.judge(claim, []), Skipped)
    assert isinstance(reasoner.reframe([claim]), Skipped)
    digest = reasoner.synthesize("q", [CitedClaim("C1", "A claim.", "sq1", ("S1", "S2"))])
    assert "extractive reasoner" in digest and "A claim. [S1][S2]" in digest
    assert "No verified sentence" in reasoner.synthesize("q?", [])


def test_reasoner_choice() -> None:
    assert make_reasoner("auto").name == "extractive"
    with pytest.raises(InputError, match="not available yet"):
        make_reasoner("claude")
    with pytest.raises(InputError, match="unknown reasoner"):
        make_reasoner("gpt")
