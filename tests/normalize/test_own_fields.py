"""The writer's claims.json allow-list: its own fields kept, every field code computes dropped."""

from __future__ import annotations

from typing import Any

import pytest

from deep_research.models import Claim, ClaimsFile
from deep_research.normalize.own_fields import claims_draft

CLAIM = {
    "id": "C1",
    "claim": "The works restart in March.",
    "sq": "sq1",
    "supporting": ["S1", "S2"],
    "findings": ["S1.F1", "S2.F1"],
    "importance": "central",
}
DRAFT = {
    "topic": "works",
    "depth": "full",
    "sub_questions": [{"id": "sq1", "question": "When do the works restart?"}],
    "claims": [CLAIM],
    "coverage_gaps": ["sq2: no source"],
}


@pytest.mark.parametrize(
    ("top", "each", "dropped"),
    [
        ({"verdict": "FAIL"}, {}, ["verdict"]),
        ({"verdict": "READY", "verdict_reasons": ["x"]}, {}, ["verdict", "verdict_reasons"]),
        ({"synthesis": "Done [S1]."}, {}, ["synthesis"]),
        (
            {"triangulation_score": 1.0, "source_count": 9},
            {},
            ["triangulation_score", "source_count"],
        ),
        ({"floors": {"rounds": {"required": 1, "actual": 2, "met": True}}}, {}, ["floors"]),
        ({"made_up": 1}, {}, ["made_up"]),  # not a field at all: never merged either
        ({}, {"confidence": "high"}, ["claims[].confidence"]),
        ({}, {"independent_count": 3}, ["claims[].independent_count"]),
        ({}, {"support_class": "Supported"}, ["claims[].support_class"]),
        ({}, {"votes": {"tally": "2-0", "outcome": "survives"}}, ["claims[].votes"]),
        (
            {},
            {"verify_passed": True, "contests": ["C2"]},
            ["claims[].verify_passed", "claims[].contests"],
        ),
    ],
)
def test_a_field_code_computes_is_dropped_and_named(
    top: dict[str, Any], each: dict[str, Any], dropped: list[str]
) -> None:
    sent = {**DRAFT, **top, "claims": [{**CLAIM, **each}, {**CLAIM, "id": "C2", **each}]}
    owned = claims_draft(sent)
    assert owned.kept == {**DRAFT, "claims": [CLAIM, {**CLAIM, "id": "C2"}]}
    assert owned.dropped == dropped  # each named once, however many claims carried it
    assert owned.note("claims.json") == (
        f"claims.json: dropped field(s) code computes: {', '.join(dropped)}"
    )


@pytest.mark.parametrize(
    "sent",
    [
        DRAFT,  # the contract's fields only
        # Those the contract also lets it state: a derived figure, a contradiction, the date
        # and question ingest stamps over.
        {
            **DRAFT,
            "question": "When?",
            "generated": "2026-12-01",
            "unresolved_contradictions": [{"ids": ["C1", "C2"], "topic": "t"}],
            "claims": [{**CLAIM, "contradicts": "C2", "derived": None}],
        },
        # A full dump of a file nothing was computed in yet: each computed field at its default.
        ClaimsFile(topic="works", claims=[Claim(id="C1", claim="x")]).model_dump(mode="json"),
    ],
)
def test_a_draft_of_its_own_fields_is_kept_whole(sent: dict[str, Any]) -> None:
    owned = claims_draft(sent)
    assert owned.kept == sent and owned.dropped == [] and owned.note("claims.json") is None


def test_a_claim_that_is_no_object_is_left_for_the_schema_check() -> None:
    owned = claims_draft({**DRAFT, "claims": ["C1", {**CLAIM, "confidence": "high"}]})
    assert owned.kept["claims"] == ["C1", CLAIM] and owned.dropped == ["claims[].confidence"]
