"""A scripted Claude for the headless runner: every role answered at the protocol level by the
fake Messages API (tests/fakeapi.py), over pages served by a real local web server.

The world is tests/scripted_run.py's: five sub-questions of one fact each, stated in other words
by thirty publishers on thirty public-looking hosts (resolved to 127.0.0.1 by the fetcher's
test-only knobs). The script reads each request as the API would and answers as each role's
contract asks: the planner's JSON, web searches as server-tool results, findings as text blocks
citing the document they were given (offsets computed in that text, as the API does), votes,
CIBER's diagnosis, the digest. Knobs reproduce what a model or the API gets wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from fakeapi import (
    Block,
    FakeAnthropic,
    Reply,
    cited,
    document_text,
    error,
    system_text,
    text,
    tool_names,
    user_text,
    web_search,
)
from localhttp import LocalServer
from scripted_run import FACTS, OFF_QUESTION, TOPIC, Web, judged_answers

_SQ_LINE = re.compile(r"^(sq\d+): ", re.MULTILINE)
_CLAIM = re.compile(r"^Claim (C\d+): (.*)$", re.MULTILINE)


_EXTRACT_SQ = re.compile(r"^Sub-question (sq\d+):", re.MULTILINE)


def asked_claims(body: dict[str, Any]) -> dict[str, str]:
    """The claims a skeptic call carries: claim id → its text, as the message lists them."""
    return dict(_CLAIM.findall(user_text(body)))


def vote_number(body: dict[str, Any]) -> int:
    """Which vote of each claim a skeptic call asks for (from 1)."""
    return int(user_text(body).split("Vote ", 1)[1].split(" ", 1)[0])


def vote(
    refuted: bool,
    evidence: str = "the quoted figure",
    confidence: float = 0.8,
    answers: str = "yes",
) -> Any:
    return {"refuted": refuted, "evidence": evidence, "confidence": confidence, "answers": answers}


def votes_reply(votes: dict[str, Any]) -> list[Block]:
    """A skeptic call's answer: the vote object of each claim id, in the reply's list."""
    cast = [{"claim_id": claim_id, "vote": given} for claim_id, given in votes.items()]
    return [text(json.dumps({"votes": cast}))]


def role_of(body: dict[str, Any]) -> str:
    """Which role a request is for, read from what it sends (tools, document, system prompt)."""
    if "web_search" in tool_names(body):
        return "search"
    if document_text(body):
        return "extract"
    system = system_text(body)
    for marker, role in (
        ("Role: plan the research", "plan"),
        ("Role: turn findings into candidate claims", "triangulate"),
        ("Role: refute ONE claim", "skeptic"),
        ("Role: find claims whose wording", "ciber"),
        ("Role: write the short answer", "synthesize"),
    ):
        if marker in system:
            return role
    return "other"


@dataclass
class World:
    """The model's side. ``overrides``: role → a function of the request returning the reply
    (or None to answer as usual), for a test to break one role."""

    web: Web
    sub_questions: int = len(FACTS)
    depth: str = "full"
    refute: frozenset[str] = frozenset()
    empty_search: bool = False
    #: The judged world's skeptics (tests/scripted_run.py ``JUDGED``): whether each claim's
    #: evidence answers its sub-question, vote by vote.
    judged: bool = False
    overrides: dict[str, Callable[[dict[str, Any]], Reply | list[Block] | None]] = field(
        default_factory=dict
    )
    seen: list[str] = field(default_factory=list)

    def __call__(self, body: dict[str, Any]) -> Reply | list[Block] | None:
        role = role_of(body)
        self.seen.append(role)
        if role in self.overrides and (got := self.overrides[role](body)) is not None:
            return got
        return getattr(self, f"_{role}", self._other)(body)

    def _search(self, body: dict[str, Any]) -> Reply | list[Block]:
        if body["messages"][-1]["role"] == "assistant":  # a paused turn sent back
            return [text("done")]
        asked = user_text(body)
        if self.empty_search:
            return [*web_search(asked), text("done")]
        if asked.startswith("Topic: "):
            return [*web_search(TOPIC, *self.web.pages[("sq1", 1)][:2]), text("done")]
        query = asked.split("Query: ", 1)[-1].strip()
        return [*web_search(query, *self.web.found(query)), text("done")]

    def _plan(self, body: dict[str, Any]) -> list[Block]:
        plan = {
            "depth": self.depth,
            "depth_reason": "five facts, each needing independent sources",
            "rationale": "one sub-question per fact",
            "sub_questions": [
                {
                    "id": sq,
                    "question": question,
                    "scope": f"only {question.lower()}",
                    "queries": [f"harbourton {sq} query {n}" for n in range(1, 5)],
                    "max_searches": 4,
                }
                for sq, (question, _, _) in list(FACTS.items())[: self.sub_questions]
            ],
        }
        return [text(json.dumps(plan))]

    def _extract(self, body: dict[str, Any]) -> list[Block]:
        document = document_text(body)
        blocks: list[Block] = []
        # A model asked about one sub-question cites what answers it, not every fact the page
        # holds (the plugin's scripted fetchers report the same way).
        asked = _EXTRACT_SQ.search(user_text(body))
        for sq, (_, variants, claim) in FACTS.items():
            if asked is not None and sq != asked.group(1):
                continue
            for variant in variants:
                if variant in document:
                    if blocks:
                        blocks.append(text("\n\n"))
                    blocks.append(cited(f"[central] {claim}", document, variant))
        if OFF_QUESTION in document:
            blocks += [text("\n\n"), cited(f"[central] {OFF_QUESTION}", document, OFF_QUESTION)]
        return blocks or [text("Nothing on this page answers the sub-question.")]

    def _triangulate(self, body: dict[str, Any]) -> list[Block]:
        asked = user_text(body)
        wanted = _SQ_LINE.findall(asked)
        if "Asked: gap-fill" in asked:
            queries = [{"sq": sq, "queries": [f"harbourton {sq} query 9"]} for sq in wanted]
        else:
            queries = [
                {"sq": sq, "queries": [f"harbourton {sq} evidence against"]} for sq in wanted
            ]
        return [text(json.dumps({"queries": queries}))]

    def _skeptic(self, body: dict[str, Any]) -> list[Block]:
        number = vote_number(body)
        cast: dict[str, Any] = {}
        for claim_id, claim in asked_claims(body).items():
            answers = judged_answers(claim, number) if self.judged else "yes"
            refuted = claim in self.refute
            said = "each quote states the figure as claimed"
            if answers is not None:  # an errored vote: the reply casts none for the claim
                cast[claim_id] = vote(refuted, said, answers=answers)
        return votes_reply(cast)

    def _ciber(self, body: dict[str, Any]) -> list[Block]:
        return [text(json.dumps({"ciber_passed": True, "consistency_failures": []}))]

    def _synthesize(self, body: dict[str, Any]) -> list[Block]:
        lines = [line[2:] for line in user_text(body).splitlines() if line.startswith("- ")]
        return [text(" ".join(lines))]

    def _other(self, body: dict[str, Any]) -> list[Block]:
        return [text("ok")]


def always(reply: Reply) -> Callable[[dict[str, Any]], Reply]:
    return lambda body: reply


OVERLOADED = always(error(529))


#: The client's waits (retry-after, backoff, batch polls) in these tests, as a share of what the
#: API asks: the fake asks realistic times, the suite does not sleep through them.
RETRY_SCALE = "0.001"


@contextmanager
def claude_world(
    monkeypatch: pytest.MonkeyPatch,
    api_knobs: dict[str, Any] | None = None,
    *,
    closed: bool = False,
    judged: bool = False,
    **knobs: Any,
) -> Iterator[tuple[World, FakeAnthropic]]:
    """The pages on a local server, the fake API (strict, as the API is) on another, the
    environment pointing at both. ``api_knobs`` go to the fake API, ``knobs`` to the world;
    ``closed``: a web round 1 reads whole (``Web.closed``); ``judged``: the judged world, its
    pages and its skeptics (tests/scripted_run.py)."""
    with LocalServer() as server:
        web = Web(server, "127.0.0.1", closed=closed, judged=judged)
        web.build()
        world = World(web, judged=judged, **knobs)
        with FakeAnthropic(world, usage="measured", strict=True, **(api_knobs or {})) as api:
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-not-secret")
            monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
            monkeypatch.setenv("DEEP_RESEARCH_TEST_RETRY_SCALE", RETRY_SCALE)
            monkeypatch.setenv("DEEP_RESEARCH_TEST_RESOLVE", web.resolve_env())
            monkeypatch.setenv("DEEP_RESEARCH_TEST_PRIVATE_CIDRS", "127.0.0.1/32")
            monkeypatch.setenv("DEEP_RESEARCH_TEST_PORTS", str(server.port))
            yield world, api
