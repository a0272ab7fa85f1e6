"""``deep-research counters``: every floor counter computed from a real brief, the plan counted
by its lists, bad input refused with nothing written, and the verdict's floors judged on them."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from briefs import (
    SUB_QUESTIONS,
    full_counters,
    read_claims,
    ready_claims,
    ready_document,
    ready_pages,
    ready_trace,
    refetched,
    run_gates_before_verdict,
    write_brief,
    write_run_json,
)
from deep_research.cli import main
from deep_research.decide.counters import MAX_QUERIES, MAX_SUB_QUESTIONS, run_counters
from deep_research.settings import Settings

SETTINGS = Settings()
ROUND2 = range(21, 31)  # S21..S30 were found in round 2: 20 round-1 sources stay


def plan(queries: int = 4, counter: int = 1, **extra: Any) -> dict[str, Any]:
    return {
        "sub_questions": [
            {
                "id": sq,
                "question": f"question {sq}",
                "scope": "not the other sub-questions",
                "queries": [f"{sq} query {n}" for n in range(queries)],
                "counter_queries": [f"{sq} evidence against {n}" for n in range(counter)],
            }
            for sq in SUB_QUESTIONS
        ],
        **extra,
    }


def build(root: Path, *, round2: bool = True, minutes: float = 20.0) -> Path:
    """The full-depth brief that passes every gate, as a plugin run leaves it before verdict:
    round-2 sources, a re-fetch record, run.json from `start` — and lying counters."""
    write_brief(
        root,
        ready_pages(),
        ready_claims(),
        document=ready_document(),
        trace=ready_trace(**full_counters(round1_fetches=999, distinct_sources=0)),
    )
    rows = [json.loads(line) for line in (root / "sources.jsonl").read_text().splitlines()]
    for row in rows:
        row["round"] = 2 if round2 and int(row["id"][1:]) in ROUND2 else 1
    (root / "sources.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    run_gates_before_verdict(root, SETTINGS)
    trace = json.loads((root / "trace.json").read_text())
    # `deep-research refetch` records one entry per sampled source; ``sampled`` here lies.
    trace["phases"]["refetch"] = refetched(3, sampled=50)
    (root / "trace.json").write_text(json.dumps(trace))
    write_run_json(root, datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=minutes))
    (root / "plan.json").write_text(json.dumps(plan()))
    return root


def counters(root: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((root / "trace.json").read_text())["counters"]
    return value


def test_counters_are_computed_from_the_brief(tmp_path: Path) -> None:
    root = build(tmp_path / "brief")
    assert main(["counters", str(root)]) == 0
    got = counters(root)
    wall = got.pop("wall_clock_seconds")
    expected = full_counters()
    del expected["wall_clock_seconds"]
    # A plugin run declares no corpus: its floors are the web's, never scaled.
    assert got == {
        **expected,
        "corpus_documents": None,
        "question_parts": None,
        "searches_exhausted": None,
        "unread_hosts": [],
    }
    assert 1195 <= wall <= 1300
    trace = json.loads((root / "trace.json").read_text())
    assert {"triangulate", "ciber", "refetch", "counters"} <= set(trace["phases"])


def test_round1_fetches_count_fetched_sources_not_log_lines(tmp_path: Path) -> None:
    root = build(tmp_path / "brief")
    log = (root / "fetch-log.jsonl").read_text().splitlines()
    first = json.loads(log[0])
    refused = {**json.loads(log[1]), "outcome": "refused", "status": None, "content_hash": None}
    # A re-fetch of S1 is not more research; S2's only attempt now is a refusal.
    (root / "fetch-log.jsonl").write_text(
        "\n".join([log[0], json.dumps(first), json.dumps(refused), *log[2:]]) + "\n"
    )
    assert main(["counters", str(root)]) == 0
    assert counters(root)["round1_fetches"] == 19


def test_a_plan_whose_numbers_lie_is_counted_by_its_lists(tmp_path: Path) -> None:
    root = build(tmp_path / "brief")
    lying = plan(queries=2, counters={"queries_per_sub_question": {"sq1": 10}})
    for sq in lying["sub_questions"]:
        sq["query_count"] = 10
        sq["queries"].append(sq["queries"][0].upper() + "  ")  # a repeat is not another query
    (root / "plan.json").write_text(json.dumps(lying))
    assert main(["counters", str(root)]) == 0
    assert counters(root)["queries_per_sub_question"] == {sq: 2 for sq in SUB_QUESTIONS}


def test_long_lists_are_clamped(tmp_path: Path) -> None:
    root = build(tmp_path / "brief")
    long = {
        "sub_questions": [
            {"id": f"sq{n}", "queries": [f"q{k}" for k in range(40)]} for n in range(1, 31)
        ]
    }
    (root / "plan.json").write_text(json.dumps(long))
    report = run_counters(root)
    assert report.counters.sub_questions == MAX_SUB_QUESTIONS
    assert set(report.counters.queries_per_sub_question.values()) == {MAX_QUERIES}
    assert report.counters.counter_queries_per_sub_question == {}
    assert report.clamped[0] == f"sub_questions 30 clamped to {MAX_SUB_QUESTIONS}"


def test_a_start_time_in_the_future_counts_no_time(tmp_path: Path) -> None:
    root = build(tmp_path / "brief", minutes=-60)
    assert main(["counters", str(root)]) == 0
    assert counters(root)["wall_clock_seconds"] == 0.0


def _remove(name: str) -> Any:
    return lambda root: (root / name).unlink()


def _write(name: str, text: str) -> Any:
    return lambda root: (root / name).write_text(text)


def _edit_run(**fields: Any) -> Any:
    def edit(root: Path) -> None:
        record = json.loads((root / "run.json").read_text())
        (root / "run.json").write_text(json.dumps({**record, **fields}))

    return edit


@pytest.mark.parametrize(
    "spoil",
    [
        _remove("plan.json"),
        _write("plan.json", "{not json"),
        _write("plan.json", json.dumps({"sub_questions": []})),
        _write("plan.json", json.dumps({"sub_questions": [{"id": "sq1", "queries": "q1"}]})),
        _write("plan.json", json.dumps({"sub_questions": [{"id": "sq1"}, {"id": "sq1"}]})),
        _write("plan.json", json.dumps({"sub_questions": [{"id": "../x", "queries": []}]})),
        _remove("run.json"),
        _edit_run(started_at="yesterday"),
        _edit_run(started_at="2024-05-01T10:00:00"),
        _edit_run(depth="deep"),
        _edit_run(caps={"max_fetches": "many"}),
        _write("sources.jsonl", "{}\n"),
    ],
    ids=[
        "no-plan",
        "plan-not-json",
        "no-sub-questions",
        "queries-not-a-list",
        "repeated-id",
        "bad-id",
        "no-run-json",
        "bad-start",
        "naive-start",
        "bad-depth",
        "bad-caps",
        "bad-sources",
    ],
)
def test_bad_input_exits_2_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spoil: Any
) -> None:
    root = build(tmp_path / "brief")
    spoil(root)
    before = (root / "trace.json").read_bytes()
    capsys.readouterr()
    assert main(["counters", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("deep-research counters: ") and err.count("\n") == 1
    assert (root / "trace.json").read_bytes() == before
    assert not (root / ".lock").exists()


def test_floors_pass_when_the_work_meets_them(tmp_path: Path) -> None:
    root = build(tmp_path / "brief")
    assert main(["counters", str(root)]) == 0
    assert main(["verdict", str(root)]) == 0
    document = read_claims(root)
    assert document["verdict"] == "READY"
    assert all(floor["met"] for floor in document["floors"].values())


def test_floors_hold_when_the_work_falls_short(tmp_path: Path) -> None:
    # One round only (so nothing fetched in a second), 3 queries a sub-question, no
    # counter-queries. The ten minutes it took are no shortfall: no floor measures time.
    root = build(tmp_path / "brief", round2=False, minutes=10)
    (root / "plan.json").write_text(json.dumps(plan(queries=3, counter=0)))
    assert main(["counters", str(root)]) == 0
    assert main(["verdict", str(root)]) == 1
    document = read_claims(root)
    assert document["verdict"] == "HOLD"
    unmet = {name for name, floor in document["floors"].items() if not floor["met"]}
    assert unmet == {
        "queries_per_sub_question",
        "rounds",
        "counter_queries_per_sub_question",
        "round2_fetches",
    }


def _ledger(root: Path, *rounds: int) -> None:
    rows = [
        {
            "event": "dispatch",
            "id": f"t{n}",
            "agent": "deep-research:fetcher",
            "fetcher": True,
            "round": r,
        }
        for n, r in enumerate(rounds)
    ]
    rows.append(
        {"event": "dispatch", "id": "tx", "agent": "deep-research:skeptic", "fetcher": False}
    )
    (root / "guard-log.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


@pytest.mark.parametrize(("dispatched", "expected"), [((1, 1), 1), ((1, 2), 2), ((), 0)])
def test_rounds_are_capped_by_the_fetcher_dispatches_the_guard_saw(
    tmp_path: Path, dispatched: tuple[int, ...], expected: int
) -> None:
    # sources.jsonl labels ten rows round 2; only a round-2 fetcher dispatch makes it a round.
    root = build(tmp_path / "brief")
    _ledger(root, *dispatched)
    assert main(["counters", str(root)]) == 0  # the command hands the ledger's rounds over
    assert counters(root)["rounds"] == expected


def test_rounds_without_a_ledger_come_from_the_sources(tmp_path: Path) -> None:
    root = build(tmp_path / "brief")
    assert run_counters(root).counters.rounds == 2


def _searched(root: Path, *rounds: tuple[int, list[str] | None]) -> None:
    """A ledger of one fetcher dispatch per round, each followed by its search and the hosts it
    listed (None: the fetcher ran no search; ``UNRECORDED``: the hook left no listing)."""
    rows: list[dict[str, Any]] = []
    for n, (round_, listed) in enumerate(rounds):
        rows.append({"event": "dispatch", "id": f"t{n}", "fetcher": True, "round": round_})
        if listed is not None:
            rows.append({"event": "search", "id": f"s{n}"})
        if listed is not None and listed is not UNRECORDED:
            rows.append({"event": "listed", "id": f"s{n}", "hosts": listed})
    (root / "guard-log.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))


def _read_hosts(root: Path) -> list[str]:
    rows = [json.loads(line) for line in (root / "sources.jsonl").read_text().splitlines()]
    return sorted({row["url"].split("/")[2] for row in rows})


UNREAD = "www.unread-publisher.example"
UNRECORDED: list[str] = []


@pytest.mark.parametrize(
    ("round2", "rounds", "exhausted", "unread", "verdict"),
    [
        # Round 2 searched and listed only publishers round 1 read: a round, and the world's end.
        ("read", 2, 2, [], "PARTIAL"),
        # Round 2 listed a publisher nobody read: not a round done, and a source left unread.
        ("unread", 1, None, [UNREAD], "HOLD"),
        # Round 2's fetcher ran no search: no round 2, whatever round 1's searches offered.
        ("none", 1, 1, [], "HOLD"),
        # Round 2's search left no record of what it listed: it could have offered anything.
        ("unrecorded", 1, None, [], "HOLD"),
    ],
)
def test_a_round_counts_the_work_its_searches_offered_not_the_new_rows_it_made(
    tmp_path: Path,
    round2: str,
    rounds: int,
    exhausted: int | None,
    unread: list[str],
    verdict: str,
) -> None:
    root = build(tmp_path / "brief", round2=False)
    read = _read_hosts(root)
    listed = {
        "read": read[:5],
        "unread": [*read[:5], UNREAD],
        "none": None,
        "unrecorded": UNRECORDED,
    }[round2]
    _searched(root, (1, read), (2, listed))
    assert main(["counters", str(root)]) == 0
    got = counters(root)
    assert got["rounds"] == rounds
    assert got["unread_hosts"] == unread
    record = got["searches_exhausted"]
    assert (record and record["round"]) == exhausted, record
    main(["verdict", str(root)])
    document = read_claims(root)
    assert document["verdict"] == verdict, document["verdict_reasons"]
    reasons = document["verdict_reasons"]
    if unread:
        assert reasons[0].startswith("HOLD: the searches listed publishers the run never read: ")
        assert UNREAD in reasons[0] and reasons[0].endswith("[sources-unread]"), reasons
    elif verdict == "HOLD":
        assert reasons[0].endswith("[floor-unmet:rounds]"), reasons
        assert "search round 2's counter-queries and fetch every page they list" in reasons[0]
    else:
        # The world was smaller than the quota: one plain reason says so, none holds it.
        assert not any("[floor-unmet" in r for r in reasons), reasons
        said = [r for r in reasons if r.endswith("[searches-exhausted]")]
        assert len(said) == 1 and "0 sources new in round 2 (the floor is 5)" in said[0], said
    assert main(["verify", str(root), "--offline"]) == 0
