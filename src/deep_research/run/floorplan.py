"""The planner always plans at least the floors: a plan that cannot meet them is a HOLD planned.

The verdict holds a brief whose work fell short of its depth's floors (docs/contracts.md §10.2):
sub-questions, queries per sub-question, counter-queries per sub-question. Those numbers are the
harness's, so the harness sees to them — a reasoner that plans two queries where the floor asks
four, or three sub-questions where it asks five, does not get to hold the brief for it. After
the reasoner's plan is clamped, the runner tops it up, deterministically and in code:

* **sub-questions**, up to the floor (never past the worker cap): first the survey's headings,
  then its titles, then the question's key phrases, each not yet planned — "What does the
  corpus say about <heading>?", its scope the research question, as the extractive reasoner
  writes its own;
* **queries** of each sub-question, up to the floor: the key phrases of its queries, then the
  question's, then a question term beside each surveyed heading and title — never a repeat
  (case and spacing aside), since the same search twice is one search;
* **counter-queries** of each sub-question in round 2, up to the floor: the extractive
  reasoner's, which need no model.

A topped-up sub-question runs as many searches as it has queries (the turn cap raised to the
floor, within the governor's constant). Every query is run and counted like the reasoner's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from deep_research.decide.phase_rules import PlanFloors
from deep_research.gates.relevance import key_terms
from deep_research.run.governor import Limits
from deep_research.run.interface import SubQuestionPlan, SurveyDoc
from deep_research.run.reasoners import ExtractiveReasoner, key_phrases


def _norm(query: str) -> str:
    return " ".join(query.split()).casefold()


def _surveyed(survey: Sequence[SurveyDoc]) -> list[str]:
    return [*(h for doc in survey for h in doc.headings), *(d.title for d in survey if d.title)]


def topped_queries(
    plan: SubQuestionPlan, need: int, question: str, survey: Sequence[SurveyDoc]
) -> SubQuestionPlan:
    """``plan`` with at least ``need`` distinct queries (as many as can be made) and the turns
    to run them."""
    queries: list[str] = []
    seen: set[str] = set()
    anchor = key_terms(question)[:1]
    pool = [
        *key_phrases(" ".join(plan.queries)),
        *key_phrases(question),
        *(f"{term} {place}" for place in _surveyed(survey) for term in anchor),
    ]
    for number, candidate in enumerate([*plan.queries, *pool]):
        # The reasoner's own queries are all kept; the same one spelled twice is one search.
        if number >= len(plan.queries) and len(queries) >= need:
            break
        if candidate.strip() and _norm(candidate) not in seen:
            seen.add(_norm(candidate))
            queries.append(candidate)
    return replace(plan, queries=tuple(queries), max_searches=max(plan.max_searches, need))


def meet_floors(
    plans: Sequence[SubQuestionPlan],
    question: str,
    survey: Sequence[SurveyDoc],
    floors: PlanFloors,
    limits: Limits,
) -> list[SubQuestionPlan]:
    """The clamped plan topped up to the floors (the rules of the module docstring)."""
    topped = list(plans)
    taken = {_norm(p.question) for p in topped} | {_norm(q) for p in topped for q in p.queries}
    ids = {p.id for p in topped}
    wanted = min(floors.sub_questions, limits.workers)
    focus = " ".join(key_terms(question))
    # The question's own words first: a document's title or heading is what the corpus holds,
    # not what was asked, and serves only when the question's words run out.
    for topic in [*key_phrases(question), *_surveyed(survey)]:
        if len(topped) >= wanted:
            break
        if _norm(topic) in taken or not key_terms(topic):
            continue
        taken.add(_norm(topic))
        number = len(topped) + 1
        while f"sq{number}" in ids:
            number += 1
        ids.add(f"sq{number}")
        queries = tuple(dict.fromkeys([topic, f"{topic} {focus}"]))
        topped.append(
            SubQuestionPlan(
                f"sq{number}",
                f"What does the corpus say about {topic}?",
                queries,
                len(queries),
                question,
            )
        )
    need = min(floors.queries, limits.searches_per_worker)
    return [topped_queries(p, need, question, survey) for p in topped]


def counter_queries(
    plan: SubQuestionPlan, asked: Sequence[str], floors: PlanFloors, cap: int
) -> list[str]:
    """Round 2's counter-queries for ``plan``: the reasoner's (``asked``), topped up to the
    floor with the extractive reasoner's, at most ``cap``."""
    queries = list(dict.fromkeys(q for q in asked if q.strip()))
    if len(queries) < floors.counter_queries:
        seen = {_norm(q) for q in queries}
        extra = [q for q in ExtractiveReasoner().counter_queries(plan) if _norm(q) not in seen]
        queries += extra[: floors.counter_queries - len(queries)]
    return queries[:cap]
