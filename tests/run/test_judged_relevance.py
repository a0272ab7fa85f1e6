"""With a model, whether located evidence answers its sub-question is the judges' word — the
same in both drivers, on the same world (tests/scripted_run.py's judged world).

The headless runner (``run --reasoner claude``, against the strict fake Messages API) and a
plugin run driven only by ``deep-research next`` read the same pages and hear the same judges.
Both must emit the three true claims whose words share almost nothing with their sub-question
(the word-level gate alone dropped them: it now only ranks), strip the on-topic claim the
judges say does not answer, let a malformed word and an errored vote abstain, and agree claim
for claim."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from claude_world import claude_world, role_of
from deep_research.cli import main
from deep_research.decide import refetch_rate as refetch_module
from deep_research.plugin.tasks import SkepticTask
from deep_research.plugin.workflow import NO_REPLY
from fakeapi import user_text
from localhttp import LocalServer
from scripted_run import (
    FACTS,
    TOPIC,
    Orchestrator,
    Web,
    assert_the_judges_decide_relevance,
    judged_answers,
    judged_outcome,
    skeptic_reply,
    task,
)

_CLAIM = re.compile(r"^## Claim C\d+\n\n(.+)$", re.MULTILINE)


def headless(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str]]:
    """The judged world's headless brief, and the text of every skeptic call."""
    state = tmp_path / "headless"
    with claude_world(monkeypatch, judged=True) as (_, api):
        args = ["run", TOPIC, "--reasoner", "claude", "--search", "web", "--depth", "quick"]
        assert main([*args, "--state", str(state), "--json"]) in (0, 1)
        asked = [user_text(m.body) for m in api.messages if role_of(m.body) == "skeptic"]
    return next((state / "briefs").iterdir()), asked


class Judging(Orchestrator):
    """The plain orchestrator, its skeptics the judged world's: each reads the claim from its
    input file and says, vote by vote, whether the evidence answers the sub-question."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cast: dict[str, int] = {}
        self.inputs: list[str] = []

    def agent_skeptic(self, prompt: str) -> Any:  # type: ignore[override]
        asked = task(prompt, SkepticTask)
        text = Path(asked.input).read_text(encoding="utf-8")
        self.inputs.append(text)
        found = _CLAIM.search(text)
        assert found is not None, text
        number = self.cast[asked.claim_id] = self.cast.get(asked.claim_id, 0) + 1
        answers = judged_answers(found.group(1), number)
        return NO_REPLY if answers is None else skeptic_reply(prompt, answers)


def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[str]]:
    """The judged world's plugin brief, and every skeptic's input file."""
    project = tmp_path / "plugin"
    project.mkdir()
    monkeypatch.chdir(project)
    with LocalServer() as server:
        web = Web(server, judged=True)
        web.build()
        monkeypatch.setattr(refetch_module, "policy_from_env", web.policy)
        printed = io_main(["start", TOPIC, "--depth", "quick", "--state", "state"])
        brief = Path(json.loads(printed)["brief"])
        orchestrator = Judging(web, brief, "quick")
        orchestrator.run()
    return brief, orchestrator.inputs


def io_main(args: list[str]) -> str:
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(args) == 0
    return printed.getvalue()


def test_both_drivers_let_the_judges_decide_what_answers_and_agree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_brief, calls = headless(tmp_path, monkeypatch)
    assert_the_judges_decide_relevance(run_brief, see=str(run_brief))
    # Each claim went to the judges with its sub-question's words.
    shown = "\n".join(calls)
    for sq, (question, _, _) in FACTS.items():
        assert f"Sub-question {sq}: {question}" in shown, shown[:2000]

    plugin_brief, inputs = plugin(tmp_path, monkeypatch)
    assert_the_judges_decide_relevance(plugin_brief, see=str(plugin_brief))
    for sq, (question, _, _) in FACTS.items():
        assert any(f"- sub-question: {sq}: {question}" in text for text in inputs), sq

    assert judged_outcome(plugin_brief) == judged_outcome(run_brief)
