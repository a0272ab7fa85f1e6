"""Every JSON example in an agent contract is what its consumer accepts, taken literally.

A model follows a contract's example to the letter, so each example in ``agents/*.md`` must be
valid JSON, valid against the schema its contract names, and accepted as intended by the command
that consumes it, on a real brief: a fetcher output becomes rows the trace gate resolves, a vote
counts as a vote, a CIBER diagnosis demotes, an entailment verdict is admitted on its span, the
triangulator's graph goes into claims.json as it is. The orchestrator writes only what
``deep-research next`` shows, so the skill holds no example of its own, and the plan ``next``
shows is read by ``counters``.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator, FormatChecker

from briefs import (
    build,
    page,
    read_claims,
    ready_claims,
    ready_document,
    ready_pages,
    ready_trace,
    retain_page,
    write_brief,
)
from conftest import REPO
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.fetch.corpus import retain_document
from deep_research.gates.trace import SourceIndex, TraceOptions, run_trace, trace_pair
from deep_research.models import SourceRow
from deep_research.plugin import replies
from deep_research.plugin.next import next_action
from deep_research.schemas import validate_brief
from deep_research.urls import canonicalize, mcp_identity

AGENTS = REPO / "agents"
SKILL = REPO / "skills" / "deep-research" / "SKILL.md"
_CODE_SPAN = re.compile(r"`([^`]+)`")
#: What the MCP example's tool call returned, as mcp-fetch keeps it.
MCP_TEXT = (
    "Search results for: heat pump sales 2023\n\n"
    "1. Northern Energy Agency, market review: Heat pump sales in the twelve member states "
    "reached 2.9 million units in 2023, up from 2.4 million a year earlier."
)


def body(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text.split("---", 2)[2] if text.startswith("---") else text


@cache
def examples(path: Path) -> tuple[Any, ...]:
    """Every code span of a contract that opens a JSON value, parsed as a model reads it (a
    span broken across lines reads as one line)."""
    found = []
    for span in _CODE_SPAN.findall(body(path)):
        text = " ".join(span.split())
        if not text.startswith(("{", "[")):
            continue
        try:
            found.append(json.loads(text))
        except json.JSONDecodeError as exc:
            pytest.fail(f"{path.name}: an example is not JSON ({exc.msg}): {text[:100]}")
    return tuple(found)


def schema_of(path: Path) -> dict[str, Any]:
    """The schema code checks the agent's reply against (an agent cannot read schemas/: its
    contract shows the shape instead)."""
    from deep_research.plugin.workflow import REPLY_SCHEMA

    name = REPLY_SCHEMA[path.stem]
    schema: dict[str, Any] = json.loads((REPO / "schemas" / f"{name}.schema.json").read_text())
    return schema


CONSUMED = {"fetcher", "mcp-fetcher", "skeptic", "ciber", "verifier", "triangulator"}


#: The workflow's own agents: their answers go to the hook's accept, fed their contracts'
#: examples by tests/plugin/test_workflow.py.
WORKFLOW_CONSUMED = {"stepper", "writer"}


def test_every_contract_has_a_consumer_test() -> None:
    assert {path.stem for path in AGENTS.glob("*.md")} == CONSUMED | WORKFLOW_CONSUMED


@pytest.mark.parametrize("name", sorted(CONSUMED))
def test_every_example_is_valid_against_the_schema_its_reply_is_checked_by(name: str) -> None:
    path = AGENTS / f"{name}.md"
    found = examples(path)
    assert found, f"{path.name} shows no JSON example"
    validator = Draft202012Validator(schema_of(path), format_checker=FormatChecker())
    for example in found:
        problems = [error.message for error in validator.iter_errors(example)]
        assert not problems, f"{path.name}: {problems}"


def test_the_skill_shows_no_shape_of_its_own() -> None:
    # Every file the orchestrator writes is shown by `next` (tested below for the plan).
    assert examples(SKILL) == ()


def normalize(root: Path, tmp_path: Path, output: Any, capsys: pytest.CaptureFixture[str]) -> str:
    given = tmp_path / "reply.json"
    given.write_text(json.dumps(output), encoding="utf-8")
    args = ["normalize", str(given), "--brief", str(root), "--sub-question", "sq1", "--round", "1"]
    assert main(args) == 0
    return capsys.readouterr().err


def rows(root: Path) -> list[SourceRow]:
    return Brief(root).load_sources()


def supported(root: Path, row: SourceRow) -> bool:
    """The row's first finding, as a claim, passes the trace gate against its own quote."""
    brief = Brief(root)
    index = SourceIndex(brief, brief.load_sources(), brief.load_fetch_log())
    finding = row.findings[0]
    result = trace_pair(index, "C1", finding.claim, row.id, [finding.id])
    return result.outcome == "supported"


def test_fetcher_examples_become_rows_the_trace_gate_resolves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output, gave_up = examples(AGENTS / "fetcher.md")
    root = build(tmp_path / "brief")
    (source,) = output["sources"]
    digest = retain_page(
        root,
        source["url"],
        page("heat-pumps-trade.txt"),
        title="Installers struggle to keep up as heat pump demand climbs",
        published_at=date(2024, 4, 2),
    )
    err = normalize(root, tmp_path, output, capsys)
    assert "warning:" not in err and "rejected:" not in err
    new = rows(root)[-1]
    assert (new.id, new.url, new.sub_questions) == ("S31", source["url"], ["sq1"])
    assert (new.tier, new.status, new.content_hash) == ("raw", 200, digest)
    assert new.title == "Installers struggle to keep up as heat pump demand climbs"
    assert new.published_at == date(2024, 4, 2)
    assert [f.quote for f in new.findings] == [source["findings"][0]["quote"]]
    assert new.findings[0].importance == "central"
    assert supported(root, new)
    before = (root / "sources.jsonl").read_bytes()
    assert "kept 0 new row(s)" in normalize(root, tmp_path, gave_up, capsys)
    assert (root / "sources.jsonl").read_bytes() == before


def test_mcp_fetcher_examples_become_rows_the_trace_gate_resolves(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    output, failed = examples(AGENTS / "mcp-fetcher.md")
    root = build(tmp_path / "brief")
    (source,) = output["sources"]
    identity = mcp_identity("docs", "search", {"q": "heat pump sales 2023"})
    assert canonicalize(source["url"]) == identity  # the url mcp-fetch --json prints
    stored, _ = retain_document(
        Brief(root),
        identity,
        MCP_TEXT,
        extractor="mcp:docs",
        adapter="mcp:docs",
        retrieved_at=datetime(2024, 5, 1, tzinfo=UTC),
        duration_ms=12,
    )
    normalize(root, tmp_path, output, capsys)
    new = rows(root)[-1]
    assert (new.url, new.tier, new.status, new.content_hash) == (
        identity,
        "raw",
        200,
        stored.content_hash,
    )
    assert supported(root, new)
    before = (root / "sources.jsonl").read_bytes()
    assert failed["complete"] is False and failed["error"].startswith("manifest-audit-failed")
    assert "kept 0 new row(s)" in normalize(root, tmp_path, failed, capsys)
    assert (root / "sources.jsonl").read_bytes() == before


def test_the_skeptic_example_counts_as_a_vote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (vote,) = examples(AGENTS / "skeptic.md")
    root = build(tmp_path / "brief")
    ballots = tmp_path / "votes.json"
    ballots.write_text(json.dumps({"C1": [vote]}), encoding="utf-8")
    assert main(["votes", str(root), "--input", str(ballots)]) == 0
    assert json.loads(capsys.readouterr().out)["discarded"] == []
    (record,) = next(c for c in read_claims(root)["claims"] if c["id"] == "C1")["votes"]["records"]
    assert record["status"] == "valid" and record["refuted"] is vote["refuted"]
    assert record["confidence"] == vote["confidence"]


def test_the_ciber_example_is_applied(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (diagnosis,) = examples(AGENTS / "ciber.md")
    root = build(tmp_path / "brief", ciber=False)
    (failure,) = diagnosis["consistency_failures"]
    target = next(c for c in read_claims(root)["claims"] if c["id"] == failure["claim_id"])
    assert target["confidence"] == "high"
    given = tmp_path / "ciber.json"
    given.write_text(json.dumps(diagnosis), encoding="utf-8")
    assert main(["ciber", "apply", str(root), "--input", str(given)]) == 0
    assert json.loads(capsys.readouterr().out)["ciber_passed"] is False
    document = read_claims(root)
    demoted = next(c for c in document["claims"] if c["id"] == failure["claim_id"])
    assert demoted["confidence"] == "medium-contested"
    assert set(failure["contradicting_source_ids"]) <= set(demoted["contests"])
    assert [failure["claim_id"]] in [
        entry["ids"] for entry in document["unresolved_contradictions"]
    ]


def test_the_verifier_example_is_admitted_on_its_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (verdict,) = examples(AGENTS / "verifier.md")
    root = write_brief(
        tmp_path / "brief", ready_pages(), ready_claims(), ready_document(), ready_trace()
    )
    run_trace(TraceOptions(brief=root))
    given = tmp_path / "verdicts.json"
    given.write_text(json.dumps(verdict), encoding="utf-8")
    assert main(["entail", str(root), "--input", str(given)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ignored"] == [] and report["stripped"] == []
    (checked,) = report["checked"]
    assert (checked["claim"], checked["source"], checked["verdict"]) == (
        verdict["claim_id"],
        verdict["source_id"],
        verdict["verdict"],
    )


def test_the_verifier_example_saved_where_next_asks_is_checked_by_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (verdict,) = examples(AGENTS / "verifier.md")
    root = write_brief(
        tmp_path / "brief", ready_pages(), ready_claims(), ready_document(), ready_trace()
    )
    run_trace(TraceOptions(brief=root))
    saved = replies.verifier_path(root, verdict["claim_id"], verdict["source_id"])
    saved.parent.mkdir(exist_ok=True)
    saved.write_text(json.dumps(verdict), encoding="utf-8")
    assert main(["ingest", str(root)]) == 0
    checked = json.loads(capsys.readouterr().out)["entailment"]
    assert checked == {"checked": 1, "ignored": [], "stripped": []}


def test_the_triangulator_graph_goes_into_claims_json_as_it_is(tmp_path: Path) -> None:
    (graph,) = examples(AGENTS / "triangulator.md")
    root = write_brief(tmp_path / "brief", ready_pages(), [], ready_document(), ready_trace())
    document = {
        "topic": "heat-pumps-2023",
        "depth": "full",
        "claims": graph["claims"],
        "unresolved_contradictions": graph["contradictions"],
        "coverage_gaps": graph["coverage_gaps"],
    }
    (root / "claims.json").write_text(json.dumps(document), encoding="utf-8")
    assert validate_brief(root).ok, validate_brief(root).problems
    run_trace(TraceOptions(brief=root))
    traced = read_claims(root)["claims"]
    assert [(c["id"], c["support_class"]) for c in traced] == [
        (claim["id"], "Supported") for claim in graph["claims"]
    ]
    queries = {q["sq"] for q in graph["negation_queries"]}
    assert queries <= {claim["sq"] for claim in graph["claims"]}


def test_the_plan_next_shows_is_read_by_counters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["start", "How many heat pumps were sold in 2023?", "--state", "state"]) == 0
    root = Path(json.loads(capsys.readouterr().out)["brief"])
    action = next_action(root)
    assert (action.action, action.phase) == ("write", "plan")
    (root / "plan.json").write_text(json.dumps(action.example), encoding="utf-8")
    assert main(["counters", str(root)]) == 0
    counters = json.loads((root / "trace.json").read_text())["counters"]
    assert counters["sub_questions"] == len(action.example["sub_questions"])
    assert set(counters["queries_per_sub_question"]) == {
        sq["id"] for sq in action.example["sub_questions"]
    }
