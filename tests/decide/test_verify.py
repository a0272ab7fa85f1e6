"""Offline re-verification: same verdicts from the retained corpus, with the network off."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from briefs import PageSpec, write_brief
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.decide.verify import run_verify
from deep_research.fetch import netguard, netpolicy
from deep_research.fetch.fetcher import Fetcher
from deep_research.fetch.fetchlog import append
from deep_research.gates.trace import TraceOptions, run_trace
from deep_research.models import FetchLogEntry

TEXT = (
    "The port authority said the harbor handled 1,234 ships in 2023, a record for the port. "
    "Officials expect similar traffic next year as trade routes shift toward the north."
)


def traced_brief(root: Path) -> Path:
    supported = "the harbor handled 1,234 ships in 2023, a record for the port"
    pages = [
        PageSpec("https://port.example/report", TEXT, [("Ships in 2023.", supported)]),
        PageSpec("https://news.example/a", TEXT, [("Doubled.", "harbor handled 9,999 ships")]),
        PageSpec("https://down.example/", None, fetch="error"),
    ]
    claims = [
        {"claim": "The harbor handled 1,234 ships in 2023.", "supporting": ["S1"]},
        {"claim": "The harbor handled 9,999 ships in 2023.", "supporting": ["S2"]},
        {"claim": "Traffic will grow.", "supporting": ["S3"]},
    ]
    write_brief(root, pages, claims)
    run_trace(TraceOptions(brief=root))
    return root


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch, tripwire: list[Any]) -> list[Any]:
    calls: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        raise AssertionError("offline verification opened a connection")

    monkeypatch.setattr(netguard, "open_connection", refuse)
    return calls


def test_offline_verification_reproduces_the_stored_verdicts(
    tmp_path: Path, no_sockets: list[Any], tripwire: list[Any]
) -> None:
    root = traced_brief(tmp_path)
    stored = json.loads((root / "claims.json").read_text())
    classes = [claim["support_class"] for claim in stored["claims"]]
    assert classes == ["Supported", "Unsupported", "Uncertain"]
    before = sorted((path.name, path.stat().st_mtime_ns) for path in root.rglob("*"))
    report = run_verify(root, offline=True)
    assert report.identical, report.as_dict()
    assert report.claims == 3 and report.offline
    assert sorted((p.name, p.stat().st_mtime_ns) for p in root.rglob("*")) == before  # no writes
    assert no_sockets == [] and tripwire == []
    assert not netpolicy.network_disabled()  # restored after the library call


def test_the_fetcher_refuses_while_offline(tmp_path: Path, no_sockets: list[Any]) -> None:
    with netpolicy.offline(), Fetcher(Brief(tmp_path / "b")) as fetcher:
        result = fetcher.fetch("https://port.example/report")
    assert result.entry.outcome == "refused"
    assert (result.entry.reason or "").startswith("network_disabled")
    assert no_sockets == []


def test_an_edited_corpus_or_verdict_is_reported(tmp_path: Path) -> None:
    root = traced_brief(tmp_path)
    document = json.loads((root / "claims.json").read_text())
    document["claims"][1]["support_class"] = "Supported"  # a verdict nobody can reproduce
    (root / "claims.json").write_text(json.dumps(document))
    report = run_verify(root)
    assert not report.identical
    assert any(line.startswith("C2: support_class") for line in report.mismatches)


def test_verify_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = traced_brief(tmp_path)
    assert main(["verify", str(root), "--offline"]) == 0
    assert json.loads(capsys.readouterr().out)["identical"] is True


def test_verify_needs_stored_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_brief(
        tmp_path, [PageSpec("https://a.example/", TEXT)], [{"claim": "x", "supporting": ["S1"]}]
    )
    assert main(["verify", str(tmp_path), "--offline"]) == 2
    assert "run deep-research trace first" in capsys.readouterr().err


def test_offline_verification_covers_the_verdict(tmp_path: Path, no_sockets: list[Any]) -> None:
    from briefs import (
        ready_claims,
        ready_document,
        ready_pages,
        ready_trace,
        run_gates_before_verdict,
    )
    from deep_research.decide.verdict import run_verdict
    from deep_research.settings import Settings

    root = tmp_path / "brief"
    write_brief(root, ready_pages(), ready_claims(), document=ready_document(), trace=ready_trace())
    settings = Settings(tau_threshold=0.5)  # a non-default setting must be honoured offline too
    run_gates_before_verdict(root, settings)
    assert run_verdict(root, settings).verdict == "READY"
    assert run_verify(root).identical
    claims = json.loads((root / "claims.json").read_text())
    claims["verdict"] = "PARTIAL"
    (root / "claims.json").write_text(json.dumps(claims))
    mismatches = run_verify(root).mismatches
    assert mismatches == [
        "verdict: stored PARTIAL, recomputed READY",
        'audit.json.verdict: stored "READY", recomputed "PARTIAL"',  # the record disagrees too
    ]
    assert no_sockets == []


# --- everything a consumer reads is re-derived ------------------------------------------------


@pytest.fixture(scope="module")
def rendered_example(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The committed example through the whole chain, with its report rendered."""
    from briefs import build_example

    root = build_example(tmp_path_factory.mktemp("example"))
    assert main(["render", str(root)]) == 0
    return root


@pytest.fixture
def example(rendered_example: Path, tmp_path: Path) -> Path:
    root = tmp_path / "brief"
    shutil.copytree(rendered_example, root)
    return root


def test_the_committed_example_verifies_identical(example: Path) -> None:
    report = run_verify(example)
    assert report.identical, report.as_dict()
    assert main(["verify", str(example), "--offline"]) == 0


def _claims_edit(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        document = json.loads((root / "claims.json").read_text())
        change(document)
        (root / "claims.json").write_text(json.dumps(document))

    return apply


def _json_edit(name: str, change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        value = json.loads((root / name).read_text())
        change(value)
        (root / name).write_text(json.dumps(value))

    return apply


def _first_emitted(document: dict[str, Any]) -> dict[str, Any]:
    claim: dict[str, Any] = next(
        c for c in document["claims"] if c["support_class"] == "Supported" and c["evidence"]
    )
    return claim


def _raise_confidence(document: dict[str, Any]) -> None:
    claim = next(c for c in document["claims"] if c["confidence"] != "high")
    claim["confidence"] = "high"


def _raise_count(document: dict[str, Any]) -> None:
    _first_emitted(document)["independent_count"] += 3


def _change_quote(document: dict[str, Any]) -> None:
    item = _first_emitted(document)["evidence"][0]
    item["quote"] = item["quote"].replace("2023", "2024", 1) + " (and more)"


def _jsonl_edit(
    name: str, change: Callable[[list[dict[str, Any]]], None]
) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        rows = [json.loads(line) for line in (root / name).read_text().splitlines()]
        change(rows)
        (root / name).write_text("".join(json.dumps(row) + "\n" for row in rows))

    return apply


def _first_meta_edit(change: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path = sorted((root / "corpus").glob("*.meta.json"))[0]
        value = json.loads(path.read_text())
        change(value)
        path.write_text(json.dumps(value))

    return apply


def _edit_report(root: Path) -> None:
    path = root / "report.md"
    path.write_text(path.read_text().replace("PARTIAL", "READY", 1))


TAMPERING: dict[str, tuple[Callable[[Path], None], str]] = {
    "audit-verdict": (_json_edit("audit.json", lambda a: a.update(verdict="READY")), "audit.json"),
    "report-edited": (_edit_report, "report.md"),
    "confidence-raised": (_claims_edit(_raise_confidence), ": confidence"),
    "count-raised": (_claims_edit(_raise_count), ": independent_count"),
    "quote-changed": (_claims_edit(_change_quote), ": evidence"),
    "counters-inflated": (
        _json_edit("trace.json", lambda t: t["counters"].update(distinct_sources=31)),
        "counters.distinct_sources",
    ),
    "tau-raised": (
        _claims_edit(lambda d: d.update(triangulation_score=1.0)),
        "triangulation_score",
    ),
    "owner-changed": (
        _jsonl_edit("sources.jsonl", lambda rows: rows[1].update(owner="northern-energy.example")),
        'S2: owner: stored "northern-energy.example", computed "trade-heating.example"',
    ),
    "meta-url-changed": (
        _first_meta_edit(lambda meta: meta.update(url="https://elsewhere.example/")),
        '.meta.json: url: stored "https://elsewhere.example/", logged',
    ),
    "meta-status-changed": (_first_meta_edit(lambda meta: meta.update(status=203)), ": status"),
    "log-private-networks-widened": (
        _jsonl_edit(
            "fetch-log.jsonl", lambda rows: rows[0].update(private_allowlist=["0.0.0.0/0"])
        ),
        "fetch-log.jsonl: the 29 lines the verdict was decided on were edited since",
    ),
    "log-purpose-changed": (
        _jsonl_edit("fetch-log.jsonl", lambda rows: rows[7].update(purpose="robots")),
        "fetch-log.jsonl: the 29 lines",
    ),
    "log-line-removed": (
        _jsonl_edit("fetch-log.jsonl", lambda rows: rows.pop(7)),
        "fetch-log.jsonl: held 29 lines when the verdict was decided, now 28",
    ),
    "trace-verdict-changed": (
        _json_edit("trace.json", lambda t: t["phases"]["verdict"].update(verdict="READY")),
        'trace.json phases.verdict.verdict: stored "READY", recomputed "PARTIAL"',
    ),
    "trace-reasons-changed": (
        _json_edit("trace.json", lambda t: t["phases"]["verdict"].update(verdict_reasons=[])),
        "trace.json phases.verdict.verdict_reasons",
    ),
}


@pytest.mark.parametrize(("tamper", "named"), TAMPERING.values(), ids=TAMPERING.keys())
def test_each_edit_a_consumer_would_read_is_named(
    example: Path, tamper: Callable[[Path], None], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    tamper(example)
    assert main(["verify", str(example), "--offline"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert not result["identical"]
    assert any(named in line for line in result["mismatches"]), result["mismatches"]


def test_a_plugin_runs_counters_are_recomputed_as_the_counters_command_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from briefs import (
        SUB_QUESTIONS,
        ready_claims,
        ready_document,
        ready_pages,
        ready_trace,
        refetched,
        run_gates_before_verdict,
        write_run_json,
    )
    from deep_research.decide.verdict import run_verdict
    from deep_research.settings import Settings

    root = tmp_path / "brief"
    write_brief(root, ready_pages(), ready_claims(), document=ready_document(), trace=ready_trace())
    run_gates_before_verdict(root, Settings())
    trace = json.loads((root / "trace.json").read_text())
    trace["phases"]["refetch"] = refetched(3)
    (root / "trace.json").write_text(json.dumps(trace))
    write_run_json(root, datetime.now(UTC) - timedelta(minutes=20))
    plan = {
        "sub_questions": [
            {"id": sq, "queries": [f"{sq} q{n}" for n in range(5)], "counter_queries": ["x"]}
            for sq in SUB_QUESTIONS
        ]
    }
    (root / "plan.json").write_text(json.dumps(plan))
    assert main(["counters", str(root)]) == 0
    run_verdict(root, Settings())
    assert run_verify(root).identical, run_verify(root).as_dict()
    capsys.readouterr()
    inflate = _json_edit(
        "trace.json", lambda t: t["counters"]["queries_per_sub_question"].update(sq1=9)
    )
    inflate(root)
    assert main(["verify", str(root), "--offline"]) == 1
    mismatches = json.loads(capsys.readouterr().out)["mismatches"]
    assert "counters.queries_per_sub_question.sq1: stored 9, recomputed 5" in mismatches


def test_a_torn_line_a_later_fetch_left_is_no_edit(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The twin of the sealed log's edits: a fetch killed after the verdict tears its line.
    with (example / "fetch-log.jsonl").open("a") as log:
        log.write('{"url": "https://torn.example/", "outc')
    assert main(["verify", str(example), "--offline"]) == 0, capsys.readouterr().out
    capsys.readouterr()
    later = {"url": "https://later.example/", "outcome": "error", "reason": "timeout"}
    append(Brief(example), FetchLogEntry.model_validate(later))  # cuts the torn line off
    assert main(["verify", str(example), "--offline"]) == 1
    mismatches = json.loads(capsys.readouterr().out)["mismatches"]
    assert [line.split(":")[0] for line in mismatches] == ["audit.json.fetches"]  # not the seal


def test_an_owner_is_derived_again_before_any_verdict(tmp_path: Path) -> None:
    root = traced_brief(tmp_path)
    rows = [json.loads(line) for line in (root / "sources.jsonl").read_text().splitlines()]
    rows[0]["owner"] = "port.example"  # what normalize computes: the twin
    rows[1]["owner"] = "port.example"  # one owner for two domains: independence lost
    (root / "sources.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert run_verify(root).mismatches == [
        'S2: owner: stored "port.example", computed "news.example" from its URL'
    ]


def test_a_verdict_phase_without_a_verdict_is_named(tmp_path: Path) -> None:
    root = traced_brief(tmp_path)
    trace = json.loads((root / "trace.json").read_text())
    trace["phases"]["verdict"] = {"verdict": "READY"}
    (root / "trace.json").write_text(json.dumps(trace))
    assert run_verify(root).mismatches == [
        "trace.json phases.verdict: recorded, but claims.json holds no verdict"
    ]
