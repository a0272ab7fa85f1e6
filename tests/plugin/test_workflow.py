"""The workflow driver in this process: ``deep-research step`` and the hook's :func:`accept`.

The player here is workflows/research-run.js, played by the test: it asks for a step (what the
stepper's Bash call and the hook do), starts every task of the step, and asks again. Each agent
answers as its contract shows (tests/scripted_run.py, the same answers the loop's runs get),
through what the hook hands a StructuredOutput call to. The same scripted world driven by the
``next`` loop must reach the same verdict and the same claims. The real Claude Code CLI running
the script, on the contested world, is tests/plugin/test_plugin_live_run.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

import scripted_run
from conftest import REPO
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.decide import refetch_rate as refetch_module
from deep_research.plugin import progress, runstate, workflow
from deep_research.plugin.next import Action, next_action
from deep_research.plugin.tasks import FetchTask
from deep_research.schemas import validate_brief
from localhttp import LocalServer
from scripted_run import TOPIC, Web, assert_both_positions_reach_the_reader

Answer = Callable[[str], Any]


@pytest.fixture
def web() -> Iterator[Web]:
    with LocalServer() as server:
        built = Web(server)
        built.build()
        yield built


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, web: Web) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(refetch_module, "policy_from_env", web.policy)
    return tmp_path


def start(depth: str, state: str = "state") -> Path:
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["start", TOPIC, "--depth", depth, "--state", state]) == 0
    return Path(json.loads(printed.getvalue())["brief"])


class Agents:
    """Every agent of the scripted world, answering a task's prompt as its contract shows."""

    def __init__(self, web: Web, brief: Path) -> None:
        self.web, self.brief = web, brief

    def answer(self, agent: str, prompt: str) -> Any:
        if agent == "fetcher":
            return self.fetcher(prompt)
        return getattr(scripted_run, f"{agent}_reply")(prompt.split("\n", 1)[0])

    def fetcher(self, prompt: str) -> Any:
        task = scripted_run.task(prompt, FetchTask)
        fetched = self.web.fetched(self.brief, task.sub_question, task.round)
        return scripted_run.fetcher_reply(prompt.split("\n", 1)[0], fetched)

    def written(self) -> dict[str, Any]:
        """The writer's answer: what the loop's orchestrator writes for the same action."""
        action = next_action(self.brief)
        assert action.action == "write", action
        path = Path(action.path or "")
        current = path.read_text() if path.exists() else None
        content = scripted_run.written(action, self.brief, current)
        if path.suffix == ".json":
            return dict(json.loads(content))
        return {"text": content}


def resolve(agent_type: str) -> str:
    return agent_type.split(":", 1)[1]


class Script:
    """workflows/research-run.js, played step by step; ``spoil`` may change an answer first."""

    def __init__(self, agents: Agents, spoil: Callable[[str, dict[str, Any]], Any] | None = None):
        self.agents, self.spoil = agents, spoil
        self.steps: list[dict[str, Any]] = []
        self.refusals: list[str] = []
        self.agent_calls: dict[str, int] = {}
        #: Steps the stepper fetched: only when no answer carried the step.
        self.stepper_runs = 0

    def ask(self, step: dict[str, Any]) -> dict[str, Any]:
        """The stepper: the fallback command code wrote, run, then its answer replaced."""
        self.stepper_runs += 1
        command = step["fallback"].split("\n", 1)[1]
        words = shlex.split(command)
        assert words[:2] == ["deep-research", "step"] and "--failed" in words, command
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            assert main(words[1:]) == 0
        served = workflow.accept(self.agents.brief, "stepper", {})
        assert served.allow and served.replace is not None
        # The step as printed, each task sealed for its agent alone (its prompt's "task" value).
        printed_step = json.loads(printed.getvalue())
        assert unsealed(served.replace) == printed_step
        # A second answer without a new `step` call is refused: never a stale step.
        again = workflow.accept(self.agents.brief, "stepper", {})
        assert not again.allow and "deep-research step" in again.reason
        return served.replace

    def run(self, limit: int = 60) -> dict[str, Any]:
        step = launched(self.agents.brief)
        for _ in range(limit):
            self.steps.append(step)
            if step["action"] in ("done", "stop"):
                return step
            carried: list[dict[str, Any]] = []
            for task in step["tasks"]:
                agent = resolve(task["agent"])
                self.agent_calls[agent] = self.agent_calls.get(agent, 0) + 1
                kept = self.submit(task, agent)
                if kept is not None and kept.replace is not None:
                    carried.append(kept.replace[workflow.NEXT_FIELD])
            assert len(carried) <= 1, "one answer, the step's last, carries the next step"
            step = carried[0] if carried else self.ask(step)
        raise AssertionError(f"no verdict after {limit} steps: {self.steps[-2:]}")

    def submit(self, task: dict[str, Any], agent: str) -> workflow.HookAnswer | None:
        """One agent: its answer through the hook, corrected as a refusal says, at most twice;
        what the hook answered the one it kept (None: the agent ended without an answer)."""
        if agent == "writer":
            answer: Any = self.agents.written()
        else:
            answer = {**self.agents.answer(agent, task["prompt"]), "task": sealed(task)}
        if self.spoil is not None:
            answer = self.spoil(task["id"], answer)
        for _ in range(3):
            if answer is None:
                return None  # the agent ended without an answer
            verdict = workflow.accept(self.agents.brief, agent, answer)
            if verdict.allow:
                if verdict.replace is not None:  # the next step, beside the answer as given
                    assert {**verdict.replace, workflow.NEXT_FIELD: None} == {
                        **answer,
                        workflow.NEXT_FIELD: None,
                    }
                    Draft202012Validator(task["schema"]).validate(verdict.replace)
                return verdict
            self.refusals.append(f"{task['id']}: {verdict.reason}")
            answer = self.correct(task, agent, answer, verdict.reason)
        return None

    def correct(self, task: dict[str, Any], agent: str, answer: Any, reason: str) -> Any:
        """What an agent that reads the refusal does: answers again, as its contract shows."""
        if agent == "writer":
            return self.agents.written()
        return {**self.agents.answer(agent, task["prompt"]), "task": sealed(task)}


def launched(brief: Path) -> dict[str, Any]:
    """The first step, as the hook hands it to a launch of the workflow (its ``args.step``)."""
    return workflow.first_step(brief)


def sealed(task: dict[str, Any]) -> str:
    """The "task" value a served task's prompt gives its agent (its schema's constant)."""
    value = task["schema"]["properties"]["task"]["const"]
    assert f'"task": "{value}"' in task["prompt"] and value.startswith(task["id"] + "#")
    return str(value)


def unsealed(step: dict[str, Any]) -> dict[str, Any]:
    """A served step as `step --json` printed it: each sealed task's prompt and schema bare,
    without the field the next step comes back in, and without the stepper's prompt."""

    def bare(task: dict[str, Any]) -> dict[str, Any]:
        schema = json.loads(json.dumps(task["schema"]))
        assert schema["properties"].pop(workflow.NEXT_FIELD) == workflow.NEXT_PROPERTY
        if task["agent"].endswith(":writer"):
            return {**task, "schema": schema}  # the writer's one task is not sealed
        sealed(task)
        prompt = task["prompt"].rsplit("\n\n", 1)[0]
        return {
            **task,
            "prompt": prompt,
            "schema": workflow.reply_schema(resolve(task["agent"]), task["id"]),
        }

    kept = {key: value for key, value in step.items() if key != "fallback"}
    return {**kept, "tasks": [bare(task) for task in step["tasks"]]}


def loop(agents: Agents, spoil: Callable[[str, str], str] | None = None) -> Action:
    """The loop driver on the same world: what `next` prints, done as the skill says; ``spoil``
    may change a file the loop writes (by name) first."""
    for _ in range(200):
        action = next_action(agents.brief)
        if action.action == "done":
            return action
        if action.action == "run":
            assert main(shlex.split(action.command or "")[1:]) in (0, 1), action.command
        elif action.action == "write":
            path = Path(action.path or "")
            current = path.read_text() if path.exists() else None
            content = scripted_run.written(action, agents.brief, current)
            path.write_text(spoil(path.name, content) if spoil is not None else content)
        else:
            for task in action.tasks:
                agent = resolve(action.agent or "")
                if agent == "fetcher":
                    row = {"event": "dispatch", "fetcher": True, "id": task.save_to}
                    row["round"] = scripted_run.task(task.prompt, FetchTask).round
                    runstate.append_ledger(Brief(agents.brief), row)
                Path(task.save_to).write_text(json.dumps(agents.answer(agent, task.prompt)))
    raise AssertionError("the loop reached no verdict")


def claims_of(brief: Path) -> list[tuple[str, str, tuple[str, ...], str | None]]:
    document = Brief(brief).load_claims()
    return [(c.id, c.claim, tuple(c.supporting), c.confidence) for c in document.claims]


def test_a_full_run_through_the_workflow_reaches_the_loops_verdict_and_claims(
    project: Path, web: Web
) -> None:
    brief = start("full")
    script = Script(Agents(web, brief))
    done = script.run()
    assert done["action"] == "done" and done["verdict"] == "READY", done
    assert script.refusals == []
    # Every step came to the script from code inside an answer: no stepper ran.
    assert script.stepper_runs == 0
    assert validate_brief(brief).ok
    assert main(["verify", str(brief), "--offline"]) == 0
    # The script carries ids and small JSON: never a page, never a reply.
    assert max(len(json.dumps(step)) for step in script.steps) < 120_000
    assert max(len(line) for step in script.steps for line in step["log"]) < 1_000
    # Every phase name the steps carry is one of the script's meta.phases, in the pipeline order.
    phases = [step["phase"] for step in script.steps]
    assert set(phases) <= set(meta_phases())
    # The fetchers the workflow started are on the guard's ledger, each once.
    rows = [r for r in runstate.read_ledger(Brief(brief)) if r.get("event") == "dispatch"]
    assert len(rows) == script.agent_calls["fetcher"] and all(r["via"] == "workflow" for r in rows)
    # Every phase is ticked once, in order, with its figure — the ones code runs inside `step`
    # (normalize, trace, triangulate, refetch, verdict, render) too.
    ticks = [tick for step in script.steps for tick in step["finished"]]
    assert [tick["phase"] for tick in ticks] == meta_phases()
    lines = {tick["phase"]: tick["line"] for tick in ticks}
    for phase, shown in FULL_RUN_FIGURES:
        assert lines[phase].endswith(f" {phase}: {shown}"), lines[phase]

    looped = start_again(project, web)
    assert loop(Agents(web, looped)).verdict == "READY"
    assert claims_of(looped) == claims_of(brief)


#: What the scripted full run's progress lines say (5 sub-questions, 30 pages, 5 claims).
FULL_RUN_FIGURES = (
    ("plan", "5 sub-questions"),
    ("normalize", "20 sources read"),
    ("round2", "30 sources read in all, 30 pages fetched and kept"),
    ("trace", "15 citations traced, 15 supported"),
    ("entail", "15 claim-source pairs judged"),
    ("panel", "10 votes counted"),
    ("triangulate", "5 claims, agreement τ 1.00"),
    ("refetch", "3 of 3 sampled pages still hold their quotes"),
    ("verdict", "verdict READY"),
    ("render", "report.md written"),
)


def start_again(project: Path, web: Web) -> Path:
    """A second run of the same question in the same project, the first finished, in a state
    folder of its own: in the first's, ``start`` would reuse the decided brief as it stands and
    the loop would only print its verdict."""
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["finish", str(next((project / "state" / "briefs").iterdir()))]) == 0
    looped = start("full", state="state-loop")
    assert not (looped / "claims.json").exists(), looped  # a run of its own, not a reuse
    return looped


def test_a_quick_run_through_the_workflow_reaches_partial_quick(project: Path, web: Web) -> None:
    done = Script(Agents(web, start("quick"))).run()
    assert done["verdict"] == "PARTIAL_QUICK", done


def test_malformed_answers_are_refused_with_the_fix_and_then_kept(project: Path, web: Web) -> None:
    spoiled: set[str] = set()

    def spoil(task_id: str, answer: dict[str, Any]) -> Any:
        if task_id in spoiled:
            return answer
        spoiled.add(task_id)
        if task_id == "fetcher-sq1-r1":
            return {**answer, "sub_question": "sq9"}  # another sub-question's answer
        if task_id == "fetcher-sq2-r1":
            return {key: value for key, value in answer.items() if key != "task"}
        if task_id == "write-plan":
            return {"sub_questions": answer["sub_questions"][:1]}  # short of the floor
        if task_id == "fetcher-sq3-r1":
            return None  # the agent dies
        return answer

    brief = start("full")
    script = Script(Agents(web, brief), spoil)
    done = script.run()
    assert done["verdict"] == "READY", done
    reasons = "\n".join(script.refusals)
    assert '"sub_question" must be "sq1"' in reasons
    assert 'fetcher-sq2-r1: "task" must be the value your prompt gives' in reasons
    assert "write-plan: plan.json is not accepted: plan.json has 1 sub-question(s)" in reasons
    # The agent that died is recorded as unusable and retried once, as the loop does.
    assert (brief / "returns" / "fetcher-sq3-r1.json").read_text().startswith(workflow.NO_REPLY)
    assert (brief / "returns" / "fetcher-sq3-r1-retry.json").exists()
    logged = [line for step in script.steps for line in step["log"]]
    assert any("fetcher-sq3-r1: the agent ended without an answer" in line for line in logged)
    # Only the step whose agent died had no answer to carry what followed: one stepper ran, and
    # code marked failed only the task it kept no answer for.
    assert script.stepper_runs == 1
    assert not any("fetcher-sq1-r1: the agent ended" in line for line in logged)


def _judging_another_claim(answer: dict[str, Any]) -> dict[str, Any]:
    return {**answer, "claim_id": "C99"}


def _judging_a_source_not_asked(answer: dict[str, Any]) -> dict[str, Any]:
    foreign = {**answer["judgements"][0], "source_id": "S99"}
    return {**answer, "judgements": [*answer["judgements"], foreign]}


def _judging_a_source_twice(answer: dict[str, Any]) -> dict[str, Any]:
    return {**answer, "judgements": [*answer["judgements"], answer["judgements"][0]]}


def test_a_verifier_answering_another_task_is_refused_with_the_fix_and_then_kept(
    project: Path, web: Web
) -> None:
    """One verifier per claim: a reply judging another claim, a source it was not asked or
    one source twice is refused saying which sources are its own; the corrected one is kept."""
    spoils = [_judging_another_claim, _judging_a_source_not_asked, _judging_a_source_twice]
    spoiled: dict[str, str] = {}

    def spoil(task_id: str, answer: dict[str, Any]) -> Any:
        if not task_id.startswith("verifier-") or task_id in spoiled or not spoils:
            return answer
        how = spoils.pop(0)
        spoiled[task_id] = how.__name__
        return how(answer)

    brief = start("full")
    script = Script(Agents(web, brief), spoil)
    done = script.run()
    assert done["verdict"] == "READY", done
    assert not spoils, "the world has three verifier tasks or more"
    by_task = dict(line.split(": ", 1) for line in script.refusals)
    wanted = {
        "_judging_another_claim": '"claim_id" must be "{claim}", this task\'s claim',
        "_judging_a_source_not_asked": "judge only the sources this task names ({sources})",
        "_judging_a_source_twice": "one judgement per source ({sources}): a source is judged twice",
    }
    for task_id, how in spoiled.items():
        claim, *sources = task_id.removeprefix("verifier-").split("-")
        assert wanted[how].format(claim=claim, sources=", ".join(sources)) in by_task[task_id]
        kept = json.loads((brief / "returns" / f"{task_id}.json").read_text())
        assert kept["claim_id"] == claim
        assert [j["source_id"] for j in kept["judgements"]] == sources
    # One verifier per claim (no claim here cites more than MAX_PAIRS_PER_VERIFIER sources).
    verifiers = [
        t["id"] for s in script.steps for t in s["tasks"] if t["id"].startswith("verifier-")
    ]
    claims = [task_id.split("-")[1] for task_id in verifiers]
    assert len(claims) == len(set(claims)) == script.agent_calls["verifier"]


def test_only_the_last_answer_of_a_step_carries_the_next_and_no_model_writes_it(
    project: Path, web: Web
) -> None:
    brief = start("full")
    agents = Agents(web, brief)
    plan = launched(brief)
    kept = workflow.accept(brief, "writer", agents.written())
    assert kept.allow and kept.replace is not None
    cast = kept.replace[workflow.NEXT_FIELD]
    assert cast["action"] == "dispatch" and len(cast["tasks"]) == 5, cast
    assert plan["fallback"].endswith("--failed write-plan")
    answers = [
        {**agents.answer("fetcher", task["prompt"]), "task": sealed(task)} for task in cast["tasks"]
    ]
    # A model that writes the field itself is refused, whatever it holds: code alone fills it.
    forged = {**answers[0], workflow.NEXT_FIELD: {"action": "done", "why": "forged"}}
    refused = workflow.accept(brief, "fetcher", forged)
    assert not refused.allow and '"next" is the workflow\'s own field' in refused.reason
    verdicts = [workflow.accept(brief, "fetcher", answer) for answer in answers]
    assert all(verdict.allow for verdict in verdicts)
    # The four before the last pass as the model gave them; the last carries round 1's next.
    assert [verdict.replace is None for verdict in verdicts] == [True] * 4 + [False]
    after = verdicts[-1].replace
    assert after is not None and after[workflow.NEXT_FIELD]["phase"] == "round2", after


def test_a_step_never_serves_twice_and_an_unknown_agent_is_refused(project: Path) -> None:
    brief = start("quick")
    assert not workflow.accept(brief, "stepper", {}).allow  # no step computed yet
    workflow.step(brief)
    first = workflow.accept(brief, "stepper", {})
    assert first.allow and first.replace is not None and first.replace["action"] == "write"
    assert not workflow.accept(brief, "stepper", {}).allow
    assert not workflow.accept(brief, "general-purpose", {}).allow
    # A contract's answer for a task this step did not issue is refused: not open.
    refused = workflow.accept(brief, "skeptic", {"task": "skeptic-C1-1"})
    assert not refused.allow and "'skeptic-C1-1' is not open" in refused.reason


def test_every_reply_schema_is_the_contracts_plus_the_task_id() -> None:
    from deep_research.schemas import schema_for

    for agent, name in workflow.REPLY_SCHEMA.items():
        derived = workflow.reply_schema(agent, "t-1")
        original = schema_for(name)
        assert derived["properties"].pop("task") == {
            "const": "t-1",
            "description": "the task id the prompt gives, as given",
        }
        assert derived["required"][-1] == "task"
        assert derived["properties"] == original["properties"], agent


def meta_phases() -> list[str]:
    """meta.phases of workflows/research-run.js, in order."""
    import re

    text = (REPO / "workflows" / "research-run.js").read_text()
    return re.findall(r"\{ title: '([a-z0-9]+)'", text)


def test_the_scripts_phases_are_the_pipelines() -> None:
    from deep_research.run.pipeline import PIPELINE

    assert meta_phases() == [phase.name for phase in PIPELINE]


def test_the_contract_examples_of_the_workflow_agents_are_what_accept_takes(project: Path) -> None:
    """agents/stepper.md's and agents/writer.md's answers, as their contracts show them."""
    from test_contracts import examples

    brief = start("quick")
    workflow.step(brief)
    stepper_answers = examples(REPO / "agents" / "stepper.md")
    assert stepper_answers and all(answer == {} for answer in stepper_answers)
    assert workflow.accept(brief, "stepper", stepper_answers[0]).allow
    writer_answers = examples(REPO / "agents" / "writer.md")
    assert writer_answers == ({"text": "…"},)
    # The synthesis shape is refused while the step asks for the plan, with the plan's problem.
    refused = workflow.accept(brief, "writer", writer_answers[0])
    assert not refused.allow and "plan.json" in refused.reason


def test_a_stopped_workflow_relaunched_on_the_brief_redoes_no_finished_agent(
    project: Path, web: Web
) -> None:
    """Stopped after round 1 (the script and its agents gone), the workflow launched again on
    the same brief goes on from the brief's state: no fetcher of round 1 runs again."""
    brief = start("full")
    first = Script(Agents(web, brief))
    with pytest.raises(AssertionError, match="no verdict"):
        first.run(limit=2)  # the plan, then round 1: then the workflow stops
    assert first.agent_calls["fetcher"] == 5
    again = Script(Agents(web, brief))
    done = again.run()
    assert done["verdict"] == "READY", done
    asked = [task["id"] for step in again.steps for task in step.get("tasks", [])]
    assert not any(task.endswith("-r1") for task in asked), asked
    rows = [r for r in runstate.read_ledger(Brief(brief)) if r.get("event") == "dispatch"]
    assert len(rows) == len({r["id"] for r in rows})  # every fetcher counted once


@pytest.fixture
def contested_web(web: Web) -> Web:
    """The scripted web, contested (tests/scripted_run.py): built anew on the same server."""
    contested = Web(web.server, contested=True)
    contested.build()
    return contested


def test_a_contested_world_reaches_the_reader_with_both_positions(
    project: Path, contested_web: Web
) -> None:
    brief = start("full")
    done = Script(Agents(contested_web, brief)).run()
    assert done["action"] == "done" and done["verdict"] == "PARTIAL", done
    assert any("[contradictions-unresolved]" in reason for reason in done["reasons"])
    assert_both_positions_reach_the_reader(brief)

    looped = start_again(project, contested_web)
    assert loop(Agents(contested_web, looped)).verdict == "PARTIAL"
    assert_both_positions_reach_the_reader(looped)
    assert claims_of(looped) == claims_of(brief)


# --- deep-research wait: the main loop's hold on its turn while the workflow runs -------------


def waited(brief: Path, seconds: float | None = 0) -> tuple[bool, list[str]]:
    lines: list[str] = []
    return progress.wait(brief, seconds, lines.append), lines


def test_wait_says_each_finished_phase_once_and_whether_the_run_ended(
    project: Path, web: Web
) -> None:
    """Mid-run, `wait` prints the finished phases and says the run goes on, with the call to
    make again and the resume command; once the verdict is in, the rest and `ended`; a phase
    already printed is not printed again."""
    brief = start("full")
    with pytest.raises(AssertionError, match="no verdict"):
        Script(Agents(web, brief)).run(limit=1)  # the plan: its answer hands over round 1
    ended, lines = waited(brief)
    assert not ended
    assert lines[:-1] == ["phase 1/14 plan: 5 sub-questions"], lines
    assert lines[-1].startswith("running: the research has not finished (now: cast)"), lines
    assert f"deep-research wait {brief}` again" in lines[-1]
    assert f"resume it with /deep-research:deep-research --resume {brief}" in lines[-1]
    Script(Agents(web, brief)).run()
    ended, lines = waited(brief)
    assert ended and [line.split(":")[0] for line in lines[:-1]] == [
        f"phase {n}/14 {name}" for n, name in enumerate(meta_phases()[1:], start=2)
    ], lines
    assert lines[-1] == (
        f"ended: the research reached its verdict; run `deep-research next {brief} --json`"
    )
    assert waited(brief) == (True, [lines[-1]])  # nothing shown twice


def test_wait_says_a_stopped_workflow_ended_and_hands_over_to_next(project: Path) -> None:
    brief = start("quick")
    stopped = workflow.Step(action="stop", phase="claims", why="the writer failed twice")
    (brief / workflow.WORKFLOW_STEP_FILE).write_text(stopped.model_dump_json(by_alias=True))
    ended, lines = waited(brief)
    assert ended and lines[-1].startswith("ended: the workflow stopped (the writer failed twice)")
    assert [line.split(":")[0] for line in lines[:-1]] == [
        "phase 1/11 plan",
        "phase 2/11 cast",
        "phase 3/11 normalize",
    ]


@pytest.mark.parametrize(
    ("phase", "entry", "said"),
    [
        ("trace", {"total_cites_checked": 1, "supported": 0}, "1 citation traced, 0 supported"),
        ("trace", {"total_cites_checked": 9, "supported": "9"}, "done"),  # not a number
        ("triangulate", {"triangulation_score": 1, "claims": 3}, "3 claims, agreement τ 1.00"),
        ("triangulate", {"triangulation_score": 0.5, "claims": 2.0}, "done"),
        ("refetch", {"sampled": 4, "passed": 3}, "3 of 4 sampled pages still hold their quotes"),
        ("refetch", {"sampled": 4}, "done"),  # a figure missing
        ("refetch", {"skipped": "depth-quick", "sampled": 4, "passed": 3}, "skipped (depth-quick)"),
        ("counters", {"sampled": 4, "passed": 3}, "done"),  # another phase's figures
    ],
)
def test_a_phase_says_the_figures_its_trace_entry_records(
    tmp_path: Path, phase: str, entry: dict[str, Any], said: str
) -> None:
    (tmp_path / "trace.json").write_text(json.dumps({"phases": {phase: entry}}))
    assert progress.figure(tmp_path, phase) == said


@pytest.mark.parametrize(
    ("asked", "slept"),
    [
        (None, progress.WAIT_BOUND_S),  # the default is the bound
        (5.0, 5.0),
        (10_000.0, progress.WAIT_BOUND_S),  # never past the bound, whatever is asked
        (-3.0, 0.0),
    ],
)
def test_wait_never_blocks_past_its_bound(project: Path, asked: float | None, slept: float) -> None:
    """The bound keeps one call below Claude Code's 120 s Bash timeout (clock and sleep faked:
    the run never ends here)."""
    brief = start("quick")
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    lines: list[str] = []
    assert not progress.wait(brief, asked, lines.append, sleep=sleep, clock=lambda: now[0])
    assert now[0] == pytest.approx(slept)
    assert progress.WAIT_BOUND_S < 120
    assert lines[-1].startswith("running: the research has not finished (now: plan)")


def test_wait_help_says_the_bound(capsys: pytest.CaptureFixture[str]) -> None:
    """The parser is built on the hook path, so it imports no module of the run: its help
    spells the bound out, and must say the one the code keeps."""
    with pytest.raises(SystemExit):
        main(["wait", "--help"])
    assert f"at most: {progress.WAIT_BOUND_S})" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize("where", ["missing", "no-run-record"])
def test_wait_on_what_is_no_brief_is_one_line_and_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    target = project / where
    if where == "no-run-record":
        target.mkdir()
    assert main(["wait", str(target), "--seconds", "0"]) == 2
    err = capsys.readouterr().err
    assert err == f"deep-research wait: {target} is no brief of a plugin run (no run.json)\n"


def test_a_writer_failure_counts_only_for_a_step_handed_out(project: Path) -> None:
    brief = start("quick")
    workflow.step(brief)
    assert workflow.accept(brief, "stepper", {}).allow  # the script is handed write-plan
    once = workflow.step(brief, ["write-plan"])
    assert once.action == "write" and "(1 time(s))" in once.log[0]
    # `--failed write-plan` again, for a step nobody was handed: recorded nothing, no stop.
    again = workflow.step(brief, ["write-plan"])
    assert again.action == "write" and "ignored" in again.log[0]
    # Handed out and failed once more: the run stops, as two real failures stop it.
    assert workflow.accept(brief, "stepper", {}).allow
    stopped = workflow.step(brief, ["write-plan"])
    assert stopped.action == "stop" and "2 times" in stopped.why


def _prefilled(draft: dict[str, Any], top: dict[str, Any], each: dict[str, Any]) -> dict[str, Any]:
    return {**draft, **top, "claims": [{**claim, **each} for claim in draft["claims"]]}


def _driven(driver: str, agents: Agents, top: dict[str, Any], each: dict[str, Any]) -> Any:
    """The verdict a run reaches with the writer's claims.json pre-filled, by either driver."""
    if driver == "workflow":

        def spoil(task_id: str, answer: dict[str, Any]) -> Any:
            return _prefilled(answer, top, each) if task_id == "write-claims" else answer

        script = Script(agents, spoil)
        verdict = script.run()["verdict"]
        assert script.refusals == []
        return verdict

    def spoil_file(name: str, content: str) -> str:
        if name != "claims.json":
            return content
        return json.dumps(_prefilled(json.loads(content), top, each))

    return loop(agents, spoil_file).verdict


def _fields(claim: Any, names: dict[str, Any]) -> dict[str, Any]:
    return {name: claim.model_dump(mode="json")[name] for name in names}


#: A writer's claims.json pre-filling fields code computes, and the one-line note each leaves.
PREFILLED = [
    pytest.param({"verdict": "FAIL"}, {}, ["verdict"], id="verdict-FAIL"),
    pytest.param({"verdict": "READY"}, {}, ["verdict"], id="verdict-READY"),
    pytest.param({"verdict_reasons": ["READY [all]"]}, {}, ["verdict_reasons"], id="reasons"),
    pytest.param({}, {"confidence": "high"}, ["claims[].confidence"], id="confidence-high"),
    pytest.param({}, {"independent_count": 9}, ["claims[].independent_count"], id="independent"),
    pytest.param({}, {"support_class": "Supported"}, ["claims[].support_class"], id="supported"),
    # This world's claims are all high and Supported: values code would not give show it too.
    pytest.param(
        {},
        {"confidence": "medium-contested", "support_class": "Unsupported"},
        ["claims[].confidence", "claims[].support_class"],
        id="contested-unsupported",
    ),
    pytest.param({"synthesis": "Done [S1]."}, {}, ["synthesis"], id="synthesis"),
    pytest.param({"triangulation_score": 0.5}, {}, ["triangulation_score"], id="tau"),
    pytest.param(
        {"verdict": "READY", "floors": {"sources": {"required": 1, "actual": 9, "met": True}}},
        {"votes": {"tally": "2-0", "outcome": "survives"}, "contests": ["C2"]},
        ["verdict", "floors", "claims[].votes", "claims[].contests"],
        id="several",
    ),
    pytest.param({}, {}, [], id="control-own-fields-only"),
]


@pytest.mark.parametrize("driver", ["workflow", "loop"])
@pytest.mark.parametrize(("top", "each", "dropped"), PREFILLED)
def test_fields_code_computes_never_come_from_the_writers_claims(
    project: Path,
    web: Web,
    driver: str,
    top: dict[str, Any],
    each: dict[str, Any],
    dropped: list[str],
) -> None:
    """The workflow's writer answer and the loop's Write alike: each pre-filled field is dropped
    on intake and noted, the run goes on to the verdict code decides, and every computed value
    is code's own (verify --offline recomputes them); the control draft is kept whole."""
    control = None
    if each:  # what code computes for each claim of the same world, from the writer's own draft
        control = start("quick", state="state-control")
        assert _driven(driver, Agents(web, control), {}, {}) == "PARTIAL_QUICK"
        with contextlib.redirect_stdout(io.StringIO()):
            assert main(["finish", str(control)]) == 0
    brief = start("quick")
    assert _driven(driver, Agents(web, brief), top, each) == "PARTIAL_QUICK"
    ingest = json.loads((brief / "trace.json").read_text())["phases"]["ingest"]
    note = f"claims.json: dropped field(s) code computes: {', '.join(dropped)}"
    assert ingest["dropped"] == ([note] if dropped else [])
    document = Brief(brief).load_claims()
    for name, value in top.items():
        assert getattr(document, name) != value, name
    if control is not None:
        computed = Brief(control).load_claims().claims
        assert [_fields(c, each) for c in document.claims] == [_fields(c, each) for c in computed]
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["verify", str(brief), "--offline"]) == 0


def test_the_step_table_runs_every_command_a_step_runs_and_no_other() -> None:
    """`step` runs next's commands through the typed table, never the CLI's main: every
    in-process command has its runner; start and finish, the loop's, have none (a step that
    meets one stops and names it)."""
    from typing import get_args

    from deep_research.plugin import runs

    assert set(runs.RUNNERS) == set(get_args(runs.InProcess))
    assert not set(runs.RUNNERS) & set(get_args(runs.ByTheLoop))
    line = runs.mcp_gate_run("docs", Path("b r"), Path("s")).line()
    assert line == "deep-research mcp-gate docs --brief 'b r' --state s"
