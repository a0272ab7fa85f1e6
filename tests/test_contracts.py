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
    PageSpec,
    build,
    read_claims,
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
from deep_research.plugin.ingest import pair_verdicts
from deep_research.plugin.next import next_action
from deep_research.schemas import validate_brief
from deep_research.urls import canonicalize, mcp_identity

AGENTS = REPO / "agents"
SKILL = REPO / "skills" / "deep-research" / "SKILL.md"
_CODE_SPAN = re.compile(r"`([^`]+)`")
#: The examples' world: a topic no test, benchmark or evaluation set uses, so a model copying an
#: example copies no case it is measured on. A growers' cooperative's own report (S1), a trade
#: paper that reprints it (S2, naming it in ``cites``) and a board that counts the crop apart (S3).
COOP_URL = "https://www.brenvale-hazelnuts.example/reports/harvest-2024"
COOP_TEXT = (
    "Brenvale Hazelnut Cooperative: harvest report 2024.\n\n"
    "Members of the Brenvale cooperative delivered 41,300 tonnes of in-shell hazelnuts in 2024, "
    "up from 36,800 tonnes the year before. Drying capacity was extended in June."
)
WEEKLY_URL = "https://orchard-weekly.example/news/brenvale-harvest"
WEEKLY_TEXT = (
    "Orchard Weekly. Reprinted from the cooperative's harvest report.\n\n"
    "This autumn members of the Brenvale cooperative delivered 41,300 tonnes of in-shell "
    "hazelnuts in 2024, up from 36,800 tonnes the year before, the report says."
)
BOARD_URL = "https://growers-board.example/brenvale/crop-estimate-2024"
BOARD_TEXT = (
    "Crop estimates, December 2024.\n\n"
    "The Brenvale growers' board put the 2024 hazelnut crop at 38,900 tonnes, counting "
    "orchards outside the cooperative."
)
#: What the MCP example's tool call returned, as mcp-fetch keeps it.
MCP_TEXT = "Search results for: hazelnut harvest 2024\n\n1. " + COOP_TEXT


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
        WEEKLY_TEXT,
        title="Brenvale growers bring in a record hazelnut harvest",
        published_at=date(2024, 11, 2),
    )
    err = normalize(root, tmp_path, output, capsys)
    assert "warning:" not in err and "rejected:" not in err
    new = rows(root)[-1]
    assert (new.id, new.url, new.sub_questions) == ("S31", source["url"], ["sq1"])
    assert (new.tier, new.status, new.content_hash) == ("raw", 200, digest)
    assert new.title == "Brenvale growers bring in a record hazelnut harvest"
    assert new.published_at == date(2024, 11, 2)
    # The syndicated copy names its original: independence reads it (decide/triangulate.py).
    assert new.source_type == "news" and new.cites == [COOP_URL] == source["cites"]
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
    identity = mcp_identity("docs", "search", {"q": "hazelnut harvest 2024"})
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
    # Whether the evidence answers the sub-question is read as the example gives it.
    assert record["answers"] == vote["answers"] == "yes"


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


def hazelnut_pages() -> list[PageSpec]:
    """The examples' world as a brief's sources, S1–S3, each finding the examples quote."""
    (output, _) = examples(AGENTS / "fetcher.md")
    weekly_quote = output["sources"][0]["findings"][0]["quote"]
    coop_quote = examples(AGENTS / "verifier.md")[0]["judgements"][0]["quoted_span"]
    board_quote = "The Brenvale growers' board put the 2024 hazelnut crop at 38,900 tonnes"
    return [
        PageSpec(COOP_URL, COOP_TEXT, [("Delivered", coop_quote)], source_type="primary"),
        PageSpec(WEEKLY_URL, WEEKLY_TEXT, [("Delivered", weekly_quote)], cites=[COOP_URL]),
        PageSpec(BOARD_URL, BOARD_TEXT, [("Estimate", board_quote)], source_type="government"),
    ]


def hazelnut_brief(root: Path, claims: list[dict[str, Any]], **document: Any) -> Path:
    return write_brief(
        root,
        hazelnut_pages(),
        claims,
        {"topic": "brenvale-hazelnuts-2024", "depth": "full", **document},
        {"topic": "brenvale-hazelnuts-2024", "depth": "full"},
    )


def verifier_world(tmp_path: Path) -> Path:
    """The examples' world with the verifier's claim C1 traced."""
    (graph,) = examples(AGENTS / "triangulator.md")
    claim = {key: graph["claims"][0][key] for key in ("claim", "supporting", "importance")}
    root = hazelnut_brief(tmp_path / "brief", [claim])
    run_trace(TraceOptions(brief=root))
    return root


def test_the_verifier_example_is_admitted_on_its_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (reply,) = examples(AGENTS / "verifier.md")
    root = verifier_world(tmp_path)
    sources = [item["source_id"] for item in reply["judgements"]]
    verdicts, abstained = pair_verdicts(reply, reply["claim_id"], sources)
    assert abstained == []
    given = tmp_path / "verdicts.json"
    given.write_text(json.dumps(verdicts), encoding="utf-8")
    assert main(["entail", str(root), "--input", str(given)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ignored"] == [] and report["stripped"] == []
    assert [(c["claim"], c["source"], c["verdict"]) for c in report["checked"]] == [
        (reply["claim_id"], item["source_id"], item["verdict"]) for item in reply["judgements"]
    ]


def test_the_verifier_example_saved_where_next_asks_is_checked_by_ingest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (reply,) = examples(AGENTS / "verifier.md")
    root = verifier_world(tmp_path)
    sources = [item["source_id"] for item in reply["judgements"]]
    saved = replies.verifier_path(root, reply["claim_id"], sources)
    saved.parent.mkdir(exist_ok=True)
    saved.write_text(json.dumps(reply), encoding="utf-8")
    assert main(["ingest", str(root)]) == 0
    checked = json.loads(capsys.readouterr().out)["entailment"]
    assert checked == {"checked": len(sources), "ignored": [], "stripped": [], "abstained": []}


def test_the_triangulator_graph_goes_into_claims_json_as_it_is(tmp_path: Path) -> None:
    (graph,) = examples(AGENTS / "triangulator.md")
    root = hazelnut_brief(
        tmp_path / "brief",
        graph["claims"],
        unresolved_contradictions=graph["contradictions"],
        coverage_gaps=graph["coverage_gaps"],
    )
    document = read_claims(root)
    assert [c["claim"] for c in document["claims"]] == [c["claim"] for c in graph["claims"]]
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
    assert (
        main(["start", "How large was the 2024 Brenvale hazelnut harvest?", "--state", "state"])
        == 0
    )
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


# --- each contract names only the tools its reader has --------------------------------------

#: Claude Code's tool names, matched as written, and the words a contract may use for one.
TOOL_NAMES = (
    "Agent Bash Edit Glob Grep LS MultiEdit NotebookEdit Read SendMessage Skill StructuredOutput "
    "Task TodoWrite ToolSearch WebFetch WebSearch Workflow Write"
).split()
_TOOL = re.compile(r"\b(" + "|".join(TOOL_NAMES) + r")\b")
_TOOL_WORDS = {
    "WebSearch": re.compile(r"\bweb[ _-]?search", re.IGNORECASE),
    "WebFetch": re.compile(r"\bweb[ _-]?fetch", re.IGNORECASE),
}
#: What the workflow gives every agent it starts, whatever its frontmatter lists: its answer.
WORKFLOW_GIVES = {"StructuredOutput"}
ROLES = REPO / "roles"


def tools_named(text: str) -> set[str]:
    """The tools ``text`` names; a ``##`` heading is a section's name for code, not an
    instruction, so it names none."""
    prose = "\n".join(line for line in text.splitlines() if not line.startswith("## "))
    named = set(_TOOL.findall(prose))
    return named | {tool for tool, words in _TOOL_WORDS.items() if words.search(prose)}


def frontmatter_list(path: Path, key: str) -> set[str]:
    head = path.read_text(encoding="utf-8").split("\n---", 1)[0]
    (line,) = [line for line in head.splitlines() if line.startswith(f"{key}:")]
    # "Bash(deep-research *)" grants Bash, narrowed.
    return {item.strip().split("(")[0] for item in line.split(":", 1)[1].split(",")}


@pytest.mark.parametrize(
    ("has", "text", "outside"),
    [
        ({"Read"}, "Read `input`. Then answer through StructuredOutput.", set()),
        ({"Read"}, "## Workflow task\nAnswer as your contract says.", set()),
        ({"Read"}, "Fetch it with WebFetch if the quote is cut.", {"WebFetch"}),
        ({"Read", "Grep"}, "Scout first: at most 2 broad web searches.", {"WebSearch"}),
        ({"Bash"}, "Write 3 re-framings, then Read the page.", {"Read", "Write"}),
    ],
)
def test_the_tool_check_names_a_tool_the_reader_lacks(
    has: set[str], text: str, outside: set[str]
) -> None:
    assert tools_named(text) - has - WORKFLOW_GIVES == outside


@pytest.mark.parametrize("path", sorted(AGENTS.glob("*.md")), ids=lambda p: p.stem)
def test_an_agent_contract_names_only_the_tools_its_frontmatter_gives(path: Path) -> None:
    has = frontmatter_list(path, "tools")
    assert tools_named(body(path)) - has - WORKFLOW_GIVES == set()


@pytest.mark.parametrize("path", sorted(ROLES.glob("*.md")), ids=lambda p: p.stem)
def test_a_role_contract_names_only_the_writers_tools(path: Path) -> None:
    # next hands a role's rules to the workflow's writer (and to the loop's own session, which
    # has more): the writer's tools are the ones they may name.
    has = frontmatter_list(AGENTS / "writer.md", "tools")
    assert tools_named(body(path)) - has - WORKFLOW_GIVES == set()


@pytest.mark.parametrize(
    "path", sorted((REPO / "skills").glob("*/SKILL.md")), ids=lambda p: p.parent.name
)
def test_a_skill_names_only_the_tools_it_allows(path: Path) -> None:
    has = frontmatter_list(path, "allowed-tools")
    assert tools_named(body(path)) - has == set()


def keys_in(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {key for item in value.values() for key in keys_in(item)}
    if isinstance(value, list):
        return {key for item in value for key in keys_in(item)}
    return set()


def fields_of(schema: dict[str, Any]) -> set[str]:
    """Every property name the schema admits, at any depth."""
    return {
        name
        for node in _nodes(schema)
        if isinstance(node, dict) and isinstance(node.get("properties"), dict)
        for name in node["properties"]
    }


def _nodes(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [value, *(node for item in value.values() for node in _nodes(item))]
    if isinstance(value, list):
        return [node for item in value for node in _nodes(item)]
    return []


def fields_shown(path: Path) -> set[str]:
    """The fields a contract shows: keys of its examples and names it sets in backticks."""
    named = {span for span in _CODE_SPAN.findall(body(path)) if span.isidentifier()}
    return named | {key for example in examples(path) for key in keys_in(example)}


def test_the_field_check_names_a_field_the_contract_never_shows() -> None:
    schema = {"properties": {"url": {}, "cites": {}}, "$defs": {"F": {"properties": {"quote": {}}}}}
    assert fields_of(schema) == {"url", "cites", "quote"}
    assert fields_of(schema) - {"url", "quote"} == {"cites"}


@pytest.mark.parametrize("name", sorted(CONSUMED))
def test_a_contract_shows_every_field_its_reply_schema_keeps(name: str) -> None:
    path = AGENTS / f"{name}.md"
    assert fields_of(schema_of(path)) - fields_shown(path) == set()
