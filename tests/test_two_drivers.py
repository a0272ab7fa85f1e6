"""The two drivers, one set of phase rules: the same scripted world run headless and as a plugin
run, under each row of settings, dispatches the same agents per phase and reaches one verdict.

The world is tests/scripted_run.py's pages on a local server, cut to two sub-questions (sq1 and
sq4) with the floors lowered to match; each driver's model reports only those two's facts.
The headless run is ``deep-research run --reasoner claude --search web`` against the fake
Messages API (tests/claude_world.py); the plugin run is the orchestrator that does only
what ``deep-research next`` prints (tests/scripted_run.py). Settings reach both the same way:
``DEEP_RESEARCH_<FIELD>`` in the environment, read by ``run`` and fixed by ``start``.

What each driver dispatched is read from what it sent, not from what it recorded: the plugin's
dispatched tasks, and the headless run's model requests — a headless skeptic call votes on
several claims, so votes are counted per claim. Two phases differ by design and are left out:
the plugin's entailment judges and claims triangulator have no headless counterpart (the
headless reasoner has no entailment judge; code groups its claims).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from claude_world import asked_claims, claude_world, role_of
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.decide import refetch_rate as refetch_module
from deep_research.fetch.fetcher import FetchPolicy
from deep_research.plugin.next import Action, next_action
from deep_research.plugin.tasks import CiberTask, FetchTask, SkepticTask
from fakeapi import Block, FakeAnthropic, cited, document_text, text, user_text
from scripted_run import FACTS, TOPIC, Orchestrator, Web, task

#: The two sub-questions of the world both drivers research.
KEPT = ("sq1", "sq4")
#: The floors of a two-sub-question world (4 pages per sub-question in round 1, 2 in round 2).
FLOORS = {
    "full_sub_questions": 2,
    "quick_sub_questions": 2,
    "full_round1_fetches": 8,
    "full_round2_fetches": 4,
    "full_distinct_sources": 12,
}
_CIBER_CLAIM = re.compile(r"^(C\d+): ", re.MULTILINE)
_INPUT_CLAIM = re.compile(r"^## Claim (C\d+)$", re.MULTILINE)


@dataclass(frozen=True)
class Row:
    name: str
    depth: str
    settings: dict[str, int]
    refetch_fails: bool
    #: What both drivers must do: skeptic votes per claim, the claims CIBER is shown (0: not
    #: run), CIBER's recorded skip, the verdict.
    votes: int
    ciber_shown: int
    ciber_skipped: str | None
    verdict: str


ROWS = [
    Row("quick", "quick", {}, False, 2, 0, "depth-quick", "PARTIAL_QUICK"),
    Row("full, the defaults", "full", {}, False, 2, 2, None, "READY"),
    Row(
        "full, a panel of one, CIBER top 1",
        "full",
        {"panel_size": 1, "kill_votes": 1, "survive_valid_votes": 1, "ciber_top_n": 1},
        False,
        1,
        1,
        None,
        "READY",
    ),
    Row("full, a panel of five", "full", {"panel_size": 5}, False, 4, 2, None, "READY"),
    Row("full, the re-fetch fails", "full", {}, True, 2, 0, "refetch-hard-fail", "FAIL"),
]


@dataclass(frozen=True)
class Dispatched:
    """What one driver asked for, phase by phase, and what it decided."""

    workers: dict[str, int]  # phase → fetchers (plugin) or workers (headless) started
    votes: dict[str, int]  # claim text → skeptic votes asked
    ciber: tuple[str, ...]  # claim texts CIBER was shown
    ciber_skipped: str | None
    verdict: str | None


def _texts(brief: Path) -> dict[str, str]:
    return {c.id: c.claim for c in Brief(brief).load_claims().claims}


def _sub_questions() -> list[dict[str, Any]]:
    """The plan both drivers run: the kept sub-questions, four queries each."""
    return [
        {
            "id": sq,
            "question": FACTS[sq][0],
            "scope": f"only {FACTS[sq][0].lower()}",
            "queries": [f"harbourton {sq} query {n}" for n in range(1, 5)],
        }
        for sq in KEPT
    ]


def _plan(body: dict[str, Any]) -> list[Block]:
    """The headless planner's answer: :func:`_sub_questions`, as the plugin's orchestrator
    writes them."""
    plan = {
        "depth": "full",
        "depth_reason": "two facts, each needing independent sources",
        "rationale": "one sub-question per fact",
        "sub_questions": [{**sq, "max_searches": 4} for sq in _sub_questions()],
    }
    return [text(json.dumps(plan))]


def _extract(body: dict[str, Any]) -> list[Block]:
    """The headless extractor in the cut world: a page's facts of the kept sub-questions only,
    as the plugin's scripted fetchers report them. A fact of a sub-question neither plan asks
    (a page may hold one) would reach only the headless panel, whose judges decide relevance."""
    document = document_text(body)
    blocks: list[Block] = []
    for sq in KEPT:
        _, variants, claim = FACTS[sq]
        for variant in (v for v in variants if v in document):
            blocks += [text("\n\n")] if blocks else []
            blocks.append(cited(f"[central] {claim}", document, variant))
    return blocks or [text("Nothing on this page answers the sub-question.")]


def headless(row: Row, api: FakeAnthropic) -> Dispatched:
    words = ["run", TOPIC, "--reasoner", "claude", "--search", "web", "--json"]
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        code = main([*words, "--depth", row.depth, "--state", "headless-state"])
    assert code in (0, 1), code  # a usable brief, or one held or failed: never an error
    brief = Path(json.loads(printed.getvalue())["brief"])
    texts = _texts(brief)
    trace = json.loads((brief / "trace.json").read_text(encoding="utf-8"))["phases"]
    workers = {
        phase: len(trace[phase]["workers"])
        for phase in ("cast", "round2")
        if trace.get(phase, {}).get("workers")
    }
    votes: Counter[str] = Counter()
    shown: list[str] = []
    for message in api.messages:
        role = role_of(message.body)
        if role == "skeptic":
            votes.update(texts[claim] for claim in asked_claims(message.body))
        elif role == "ciber":
            shown += _CIBER_CLAIM.findall(user_text(message.body))
    document = Brief(brief).load_claims()
    return Dispatched(
        workers,
        dict(votes),
        tuple(texts[c] for c in shown),
        document.ciber_skipped,
        document.verdict,
    )


class PluginRun(Orchestrator):
    """The plan holds only the kept sub-questions; the run ends at its verdict (a FAIL brief is
    not regenerated here: the verdict is what is compared)."""

    def __init__(self, web: Web, brief: Path, depth: str) -> None:
        super().__init__(web, brief, depth)
        self.ciber_inputs: list[str] = []

    def do_write(self, action: Action) -> None:
        if action.phase == "plan":
            Path(action.path or "").write_text(json.dumps({"sub_questions": _sub_questions()}))
        else:
            super().do_write(action)

    def to_the_verdict(self, limit: int = 200) -> None:
        brief = Brief(self.brief)
        for _ in range(limit):
            action = next_action(self.brief)
            self.actions.append(action)
            failed = brief.claims_path.exists() and brief.load_claims().verdict == "FAIL"
            if action.action == "done" or failed:
                return
            getattr(self, f"do_{action.action}")(action)
        raise AssertionError(f"no verdict after {limit} actions: {self.actions[-3:]}")

    def agent_ciber(self, prompt: str) -> Any:
        self.ciber_inputs.append(Path(task(prompt, CiberTask).input).read_text(encoding="utf-8"))
        return super().agent_ciber(prompt)


def plugin(web: Web, row: Row) -> Dispatched:
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["start", TOPIC, "--depth", row.depth, "--state", "plugin-state"]) == 0
    brief = Path(json.loads(printed.getvalue())["brief"])
    orchestrator = PluginRun(web, brief, row.depth)
    orchestrator.to_the_verdict()
    texts = _texts(brief)
    workers: Counter[str] = Counter()
    votes: Counter[str] = Counter()
    for action in orchestrator.actions:
        for job in action.tasks:
            if action.agent == FetchTask.agent_type():
                workers[action.phase] += 1
            elif action.agent == SkepticTask.agent_type():
                votes[texts[task(job.prompt, SkepticTask).claim_id]] += 1
    shown = [c for text_ in orchestrator.ciber_inputs for c in _INPUT_CLAIM.findall(text_)]
    document = Brief(brief).load_claims()
    return Dispatched(
        dict(workers),
        dict(votes),
        tuple(texts[c] for c in shown),
        document.ciber_skipped,
        document.verdict,
    )


def _blanking(web: Web) -> Callable[[], FetchPolicy]:
    """The re-fetch's policy, after every page lost the text it was fetched with."""

    def policy() -> FetchPolicy:
        web.blank()
        return web.policy()

    return policy


@pytest.mark.parametrize("row", ROWS, ids=[row.name for row in ROWS])
def test_both_drivers_dispatch_the_same_agents_and_reach_one_verdict(
    row: Row, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in {**FLOORS, **row.settings}.items():
        monkeypatch.setenv(f"DEEP_RESEARCH_{name.upper()}", str(value))
    with claude_world(monkeypatch, overrides={"plan": _plan, "extract": _extract}) as (world, api):
        web = world.web
        pages = dict(web.server.routes)
        if row.refetch_fails:
            monkeypatch.setattr(refetch_module, "policy_from_env", _blanking(web))
        made = headless(row, api)
        web.server.routes.update(pages)  # the world as it was, for the other driver
        played = plugin(web, row)
    assert made == played
    # And what the rules say for this row, so two drivers wrong alike cannot pass.
    assert made.verdict == row.verdict
    assert made.workers == ({"cast": 2} if row.depth == "quick" else {"cast": 2, "round2": 2})
    assert sorted(made.votes) == sorted(FACTS[sq][2] for sq in KEPT)
    assert set(made.votes.values()) == {row.votes}
    assert len(made.ciber) == row.ciber_shown
    assert made.ciber_skipped == row.ciber_skipped
