"""The planner plans at least the floors: sub-questions, queries and counter-queries topped up
in code when a reasoner plans fewer — never past the governor's caps, never by repeating one."""

from __future__ import annotations

from deep_research.decide.phase_rules import PlanFloors
from deep_research.run.floorplan import counter_queries, meet_floors
from deep_research.run.governor import Limits
from deep_research.run.interface import SubQuestionPlan, SurveyDoc
from deep_research.settings import Settings

QUESTION = "Who designed the harbour bridge?"
SURVEY = [
    SurveyDoc("file://c/a.md", "Harbour bridge history", ("Construction", "Design")),
    SurveyDoc("file://c/b.md", "City archive", ("Records",)),
]
ONE = SubQuestionPlan("sq1", QUESTION, ("harbour bridge",), 1, QUESTION)


def _norm(query: str) -> str:
    return " ".join(query.split()).casefold()


def test_a_one_query_plan_is_topped_up_to_the_full_floors() -> None:
    floors = PlanFloors.of(Settings(), "full")
    plans = meet_floors([ONE], QUESTION, SURVEY, floors, Limits())
    assert len(plans) == 5
    assert plans[0].id == "sq1" and plans[0].queries[0] == "harbour bridge"
    for plan in plans:
        assert len(plan.queries) >= 4 and plan.max_searches >= len(plan.queries)
        assert len({_norm(q) for q in plan.queries}) == len(plan.queries)  # no repeats
        assert plan.scope == QUESTION
    assert len({p.id for p in plans}) == 5
    # The question's own words first, never a surveyed title while they last.
    assert [p.question for p in plans[1:3]] == [
        "What does the corpus say about designed harbour?",
        "What does the corpus say about designed?",
    ]


def test_quick_floors_and_a_plan_that_already_meets_them_is_kept() -> None:
    floors = PlanFloors.of(Settings(), "quick")
    assert (floors.sub_questions, floors.queries, floors.counter_queries) == (3, 2, 0)
    rich = [
        SubQuestionPlan(f"sq{n}", f"q{n} harbour", (f"a{n} bridge", f"b{n} bridge"), 2)
        for n in range(1, 4)
    ]
    assert meet_floors(rich, QUESTION, SURVEY, floors, Limits()) == rich


def test_topping_up_never_passes_the_governor_caps_or_reuses_an_id() -> None:
    floors = PlanFloors(sub_questions=50, queries=100, counter_queries=1)
    odd = SubQuestionPlan("sq2", QUESTION, ("Harbour  Bridge", "harbour bridge"), 1, QUESTION)
    plans = meet_floors([odd], QUESTION, SURVEY, floors, Limits(workers=4, searches_per_worker=6))
    assert len(plans) == 4 and len({p.id for p in plans}) == 4
    assert all(len(p.queries) <= 6 and p.max_searches <= 6 for p in plans)
    # The same query spelled twice is one search: it counts once.
    assert [_norm(q) for q in plans[0].queries].count("harbour bridge") == 1


def test_counter_queries_are_topped_up_to_their_floor_only() -> None:
    floors = PlanFloors.of(Settings(), "full")
    assert counter_queries(ONE, [], floors, 4)  # the reasoner gave none: code gives one
    assert counter_queries(ONE, ["bridge not"], floors, 4) == ["bridge not"]
    assert counter_queries(ONE, ["a", "b", "c"], floors, 2) == ["a", "b"]
    assert counter_queries(ONE, [], PlanFloors(5, 4, 0), 4) == []
