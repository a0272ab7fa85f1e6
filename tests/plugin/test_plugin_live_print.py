"""``claude -p`` and a workflow that outlasts the print-mode ceiling, in the real Claude Code CLI.

In print mode Claude Code stops background work ``CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS`` after
the main loop's last turn (10 minutes by default) and exits 0 as a success; a full research run
takes longer. The skill therefore keeps its turn: after launching the workflow it calls
``deep-research wait B`` (at most 90 s a call) again and again, showing a line per finished
phase, until the run ends. Here the ceiling is 60 s and every agent of the workflow answers
12 s late (a step's agents run side by side: about 12 s a step), so the workflow runs well past
it:

* the skill as written waits, and ``claude -p`` prints the verdict;
* a model that ends its turn after one short ``wait`` leaves the workflow to the ceiling: the
  result says the research did not finish and names the resume command, and that command, in a
  new ``claude -p``, brings the same brief to its verdict.

The players are tests/plugin/test_plugin_live_run.py's (the scripted world, the fake Messages
API, the publishers on port 80 of a loopback address); each run's transcript is under tmp_path.
"""

from __future__ import annotations

import re
import shlex
import time
from pathlib import Path
from typing import Any

import pytest
from test_plugin_live_run import Player, Run, _loop, bash, json_of, only, run_claude, web

from conftest import newest_claude_binary
from deep_research.plugin.progress import RESUME
from deep_research.run.pipeline import phase_names
from fakeapi import Block, Program, text, tool_use
from scripted_run import TOPIC, Web

__all__ = ["web"]  # the fixture, used by name

#: The print-mode ceiling of these runs, and how late each workflow agent answers (the workflow
#: of a quick run takes 7 steps or more: 84 s of delay alone, past the ceiling).
CEILING = {"CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS": "60000"}
ANSWER_DELAY_S = 12.0


class SlowPlayer(Player):
    """The run's models, each workflow agent answering ``ANSWER_DELAY_S`` late."""

    def __init__(self, web: Web, orchestrator: Any, *, slow: bool = True) -> None:
        super().__init__(web, orchestrator)
        self.slow = slow
        #: Every output of `deep-research wait` the orchestrator was shown.
        self.waits: list[str] = []

    def workflow_agent(self, agent: str, body: dict[str, Any]) -> list[Block]:
        reply = super().workflow_agent(agent, body)
        if self.slow and any(b.get("name") == "StructuredOutput" for b in reply):
            time.sleep(ANSWER_DELAY_S)
        return reply


def holding(player: SlowPlayer, brief: str, *, give_up: bool = False) -> Program:
    """Step 2 of the skill after the launch: wait, again while it says `running:`; then 4."""
    said = "The research runs in the background; /workflows shows its phases."
    seconds = " --seconds 5" if give_up else ""
    calls: list[Block] = [text(said), bash(f"deep-research wait {brief}{seconds}")]
    while True:
        printed = only((yield calls))
        player.waits.append(printed)
        last = printed.strip().splitlines()[-1]
        if last.startswith("ended:"):
            return (yield from _loop(player, Path(brief)))
        assert last.startswith("running:"), printed
        if give_up:  # a model that ends its turn before the run ended: with the line, as told
            return last
        calls = [bash(f"deep-research wait {brief}")]


def waiting_skill(player: SlowPlayer, *, give_up: bool = False) -> Program:
    started = yield [bash(f"deep-research start {shlex.quote(TOPIC)} --depth quick")]
    record = json_of(only(started))
    player.driver = record["driver"]
    player.launched = only((yield [tool_use("Workflow", record["workflow"])]))
    return (yield from holding(player, record["brief"], give_up=give_up))


def resuming_skill(player: SlowPlayer, brief: str) -> Program:
    """`--resume B`: no start; the run made this session's, the workflow on B, then as above."""
    taken = json_of(only((yield [bash(f"deep-research resume {brief}")])))
    assert taken["session_changed"] is True, taken  # the stopped claude -p's session had it
    launch = {"name": "deep-research:research-run", "args": {"brief": brief}}
    player.launched = only((yield [tool_use("Workflow", launch)]))
    return (yield from holding(player, brief))


def final_text(run: Run) -> str:
    return str(run.result.get("result") or "")


def assert_finished(run: Run, brief: Path) -> None:
    assert run.returncode == 0 and not run.player.log.errors, run.see
    assert final_text(run).startswith("verdict PARTIAL_QUICK"), (final_text(run), run.see)
    assert (brief / "report.md").is_file(), run.see


@pytest.mark.slow
def test_print_mode_waits_past_the_ceiling_and_prints_the_verdict(
    tmp_path: Path, web: Web, claude_release: str
) -> None:
    """On the oldest supported Claude Code and the newest checked: the skill's turn lasts as
    long as the run, so the result is the verdict."""
    player = SlowPlayer(web, waiting_skill)
    prompt = f"/deep-research:deep-research {TOPIC} --depth quick"
    run = run_claude(tmp_path, web, player, prompt, CEILING)
    assert player.driver == "workflow", run.see
    assert_finished(run, run.brief())
    # Longer than the ceiling, held by more than one wait; each phase shown once, with figures.
    assert run.seconds > 60 and len(player.waits) >= 2, (run.seconds, player.waits, run.see)
    shown = [
        line.split(":")[0].split()[-1]
        for out in player.waits
        for line in out.splitlines()
        if line.startswith("phase ")
    ]
    assert shown == list(phase_names("quick")), (player.waits, run.see)
    assert re.search(r"^phase 1/11 plan: \d+ sub-questions$", player.waits[0], re.M), run.see
    print(f"\npast the ceiling ({claude_release}): {run.seconds:.1f} s, {len(player.waits)} waits")


@pytest.mark.slow
def test_a_workflow_the_ceiling_stops_says_so_and_resumes_to_its_verdict(
    tmp_path: Path, web: Web
) -> None:
    first = tmp_path / "first"
    first.mkdir()
    player = SlowPlayer(web, lambda p: waiting_skill(p, give_up=True))
    prompt = f"/deep-research:deep-research {TOPIC} --depth quick"
    run = run_claude(first, web, player, prompt, CEILING, binary=newest_claude_binary())
    brief = run.brief()
    said = final_text(run)
    assert run.returncode == 0 and not player.log.errors, run.see
    assert "the research has not finished" in said, (said, run.see)
    assert RESUME.format(brief=brief) in said, (said, run.see)
    assert not (brief / "report.md").exists(), run.see  # the workflow was stopped mid-run
    assert (brief / "plan.json").exists(), run.see  # it had begun

    # The resume command, in a new claude -p on the same state: the same brief to its verdict.
    again = tmp_path / "again"
    again.mkdir()
    resumed = SlowPlayer(web, lambda p: resuming_skill(p, str(brief)), slow=False)
    run2 = run_claude(
        again,
        web,
        resumed,
        RESUME.format(brief=brief),
        {**CEILING, "DEEP_RESEARCH_STATE": str(run.state)},
        binary=newest_claude_binary(),
    )
    assert_finished(run2, brief)
    print(f"\nstopped at the ceiling after {run.seconds:.1f} s, saying: {said}")
    print(f"resumed to {final_text(run2)[:40]} in {run2.seconds:.1f} s")
