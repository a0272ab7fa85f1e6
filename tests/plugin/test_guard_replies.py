"""A workflow agent's answer is kept only from the agent its task was issued to: once, while the
task is open, and within the size cap — through the guard, as Claude Code hands it over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from deep_research.brief.layout import Brief
from deep_research.brief.start_record import HARD_MAX_FETCHES
from deep_research.brief.writers import atomic_write_json
from deep_research.decide.counters import MAX_QUERIES, counted, load_plan
from deep_research.errors import SchemaViolation
from deep_research.plugin import guard, workflow
from deep_research.plugin.progress import WORKFLOW_STEP_FILE
from deep_research.plugin.tasks import COUNTER_EVIDENCE, MAX_PROMPT, FetchTask, parse
from guard_events import FETCHER, Run, event, start_run

TASKS = ("fetcher-sq1-r1", "fetcher-sq2-r1")


def open_step(run: Run, ids: tuple[str, ...] = TASKS) -> dict[str, str]:
    """A dispatch step of one fetcher per id, as `step` keeps it, served to the script: each
    task id → the sealed "task" value only its agent's prompt gives."""
    (run.brief / "returns").mkdir(exist_ok=True)
    tasks = [
        workflow.ScriptTask(
            id=task_id,
            agent=FETCHER,
            label=task_id,
            prompt=f"fetch for {task_id}",
            schema=workflow.reply_schema("fetcher", task_id),
        )
        for task_id in ids
    ]
    saves = {task_id: str(run.brief / "returns" / f"{task_id}.json") for task_id in ids}
    step = workflow.Step(action="dispatch", phase="cast", why="round 1", tasks=tasks, saves=saves)
    atomic_write_json(run.brief / WORKFLOW_STEP_FILE, step.model_dump(by_alias=True))
    served = answer(run, "stepper", "deep-research:stepper", {})
    assert served.allow and served.updated_input is not None
    sealed = {
        t["id"]: t["schema"]["properties"]["task"]["const"] for t in served.updated_input["tasks"]
    }
    for task in served.updated_input["tasks"]:
        assert f'"task": "{sealed[task["id"]]}"' in task["prompt"]
    # The sealed values are in no file the agents could read: only their digests are kept.
    kept = (run.brief / WORKFLOW_STEP_FILE).read_text()
    assert not any(value in kept for value in sealed.values())
    return sealed


def answer(run: Run, agent_id: str, agent_type: str, tool_input: dict[str, Any]) -> guard.Decision:
    payload = event(
        "StructuredOutput", tool_input, run.project, agent=agent_id, agent_type=agent_type
    )
    return run.decide(payload)


def reply(task: str, sq: str = "sq1", **extra: Any) -> dict[str, Any]:
    return {
        "sub_question": sq,
        "query": "q",
        "complete": True,
        "sources": [],
        "task": task,
        **extra,
    }


def saved(run: Run, task_id: str) -> Any:
    path = run.brief / "returns" / f"{task_id}.json"
    return json.loads(path.read_text()) if path.exists() else None


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return start_run(tmp_path)


def test_the_owners_answer_is_kept_and_bound_to_its_agent(run: Run) -> None:
    sealed = open_step(run)
    kept = answer(run, "a1", FETCHER, reply(sealed["fetcher-sq1-r1"]))
    assert kept.allow and "saved" in kept.reason
    assert saved(run, "fetcher-sq1-r1")["sub_question"] == "sq1"
    rows = [row for row in run.ledger() if row.get("event") == workflow.ANSWER_EVENT]
    assert [(row["id"], row["agent_id"]) for row in rows] == [("fetcher-sq1-r1", "a1")]


#: What a sibling may put in "task" for fetcher-sq1-r1 (``OWN`` stands for its own seal).
OWN = "<own seal>"


@pytest.mark.parametrize(
    "given",
    [
        "fetcher-sq1-r1",  # the bare id, as the naming pattern shows it
        "fetcher-sq1-r1#0000000000000000",  # a guessed seal
        f"fetcher-sq1-r1#{OWN}",  # its own task's seal on the other id
    ],
)
def test_a_sibling_cannot_answer_anothers_task_and_the_owner_still_can(
    run: Run, given: str
) -> None:
    sealed = open_step(run)
    given = given.replace(OWN, sealed["fetcher-sq2-r1"].split("#", 1)[1])
    sibling = answer(run, "a2", FETCHER, reply(given))
    assert not sibling.allow and "issued to another agent" in sibling.reason
    assert "fetcher-sq2-r1" not in sibling.reason  # no other task's id to copy
    assert saved(run, "fetcher-sq1-r1") is None
    # The real owner's answer is then kept, not "already answered".
    assert answer(run, "a1", FETCHER, reply(sealed["fetcher-sq1-r1"])).allow
    assert saved(run, "fetcher-sq1-r1") is not None


def test_a_replay_is_refused_whoever_sends_it(run: Run) -> None:
    sealed = open_step(run)
    first = reply(sealed["fetcher-sq1-r1"], complete=True)
    assert answer(run, "a1", FETCHER, first).allow
    for agent_id in ("a1", "a2"):  # the owner again, or anyone the value leaked to
        again = answer(run, agent_id, FETCHER, reply(sealed["fetcher-sq1-r1"], complete=False))
        assert not again.allow and "already answered" in again.reason
    assert saved(run, "fetcher-sq1-r1")["complete"] is True  # the first answer stands


def test_an_agent_answers_one_task_only(run: Run) -> None:
    sealed = open_step(run)
    assert answer(run, "a1", FETCHER, reply(sealed["fetcher-sq1-r1"])).allow
    second = answer(run, "a1", FETCHER, reply(sealed["fetcher-sq2-r1"], sq="sq2"))
    assert not second.allow and "answered your task already" in second.reason
    # Its owner's answer is kept.
    assert answer(run, "a2", FETCHER, reply(sealed["fetcher-sq2-r1"], sq="sq2")).allow


def test_a_late_answer_for_a_closed_task_is_refused(run: Run) -> None:
    first = open_step(run)
    open_step(run, ("fetcher-sq1-r2",))  # the workflow has moved on
    late = answer(run, "a1", FETCHER, reply(first["fetcher-sq1-r1"]))
    assert not late.allow and "is not open" in late.reason
    assert saved(run, "fetcher-sq1-r1") is None


def test_an_oversized_answer_is_refused_and_one_under_the_cap_kept(run: Run) -> None:
    sealed = open_step(run)
    quote = "x" * workflow.MAX_REPLY_CHARS
    finding = {"claim": "c", "quote": quote, "importance": "central"}
    huge = reply(
        sealed["fetcher-sq1-r1"], sources=[{"url": "https://ec.europa.eu/a", "findings": [finding]}]
    )
    refused = answer(run, "a1", FETCHER, huge)
    assert not refused.allow and f"at most {workflow.MAX_REPLY_CHARS:,}" in refused.reason
    assert saved(run, "fetcher-sq1-r1") is None
    finding["quote"] = "x" * 10_000
    assert answer(run, "a1", FETCHER, huge).allow


def test_failed_marks_only_a_task_that_was_not_answered(run: Run) -> None:
    sealed = open_step(run)
    assert answer(run, "a1", FETCHER, reply(sealed["fetcher-sq1-r1"])).allow
    after = workflow.step(run.brief, ["fetcher-sq1-r1", "fetcher-sq2-r1", "fetcher-sq9-r1"])
    assert saved(run, "fetcher-sq1-r1")["complete"] is True  # answered: not marked failed
    unusable = (run.brief / "returns" / "fetcher-sq2-r1.json").read_text()
    assert unusable.startswith(workflow.NO_REPLY)  # the control: its agent never answered
    said = "\n".join(after.log)
    assert "fetcher-sq1-r1: not marked failed" in said
    assert "fetcher-sq9-r1: not marked failed" in said  # no task of the step


def test_a_plan_past_its_text_bound_is_refused_plainly(tmp_path: Path) -> None:
    sq = {"id": "sq1", "question": "q", "queries": ["a"]}
    for field in ("question", "scope"):
        path = tmp_path / f"{field}.json"
        path.write_text(json.dumps({"sub_questions": [{**sq, field: "x" * 70_000}]}))
        with pytest.raises(SchemaViolation) as refused:
            load_plan(path)
        assert "2000 characters" in str(refused.value)
    within = tmp_path / "within.json"
    within.write_text(json.dumps({"sub_questions": [{**sq, "scope": "x" * 2_000}]}))
    assert load_plan(within).sub_questions[0].scope == "x" * 2_000


def test_the_largest_plan_a_fetcher_gets_stays_a_task_the_guard_reads() -> None:
    queries = [f"query {n} " + "x" * 490 for n in range(40)]  # clamped to the counted ones
    hosts = tuple(f"{n:03d}" + "h" * 59 + ".example" for n in range(HARD_MAX_FETCHES))
    task = FetchTask(
        brief="/" + "b" * 250,
        sub_question="s" * 40,
        round=2,
        queries=tuple(counted(queries)),
        scope="s" * 2_000,
        question="q" * 2_000,
        purpose=COUNTER_EVIDENCE,
        exclude_hosts=hosts,
        read_hosts=hosts,
    )
    assert len(task.queries) == MAX_QUERIES
    assert len(task.prompt()) <= MAX_PROMPT and parse(task.prompt()) == task


def test_a_workflow_fetcher_counts_on_the_ledger_whatever_its_prompt(run: Run) -> None:
    save_to = str(run.brief / "returns" / "fetcher-sq1-r1.json")
    workflow._count_fetcher(Brief(run.brief), "fetcher", save_to, "x" * (MAX_PROMPT + 1))
    rows = [row for row in run.ledger() if row.get("event") == "dispatch"]
    assert [(row["id"], row["round"], row["via"]) for row in rows] == [
        ("fetcher-sq1-r1", 1, "workflow")
    ]
    # A judge's task is no fetcher dispatch.
    workflow._count_fetcher(Brief(run.brief), "skeptic", str(run.brief / "s.json"), "p")
    assert len([row for row in run.ledger() if row.get("event") == "dispatch"]) == 1
