"""Every instruction a model is given is read from a contract (agents/*.md, roles/*.md).

Two checks, each beside the case it must catch:

* what each driver sends — every headless role's system prompt and the whole of each request
  it builds (the skeptic's vote asks, CIBER, extraction, the planner, the query calls, the
  digest, the searches), and the rules of ``next``'s plan and synthesis writes — is split into
  sentences; once the data the test fed in is masked, each sentence left is found word for word
  in a contract;
* the modules that build those texts hold no sentence of their own in a string literal.
"""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
import shutil
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

import scripted_run
from briefs import PageSpec, write_brief
from claude_world import role_of
from conftest import REPO
from deep_research import role_contracts
from deep_research.brief.layout import Brief
from deep_research.brief.start_record import StartRecord, clamp_caps
from deep_research.cli import main
from deep_research.errors import InputError
from deep_research.gates.answer import check_answer
from deep_research.gates.trace import emitted_claims
from deep_research.models import Checks, Claim, Evidence
from deep_research.plugin import workflow
from deep_research.plugin.next import View, next_action, phase_plan, phase_synthesize
from deep_research.run.claude.cited_extraction import extraction_request
from deep_research.run.claude.client import CallFailed, ClaudeClient
from deep_research.run.claude.panel import ciber_request, vote_request
from deep_research.run.claude.reasoner import ClaudeReasoner
from deep_research.run.claude.roles import ROLES, choose_models, instructions
from deep_research.run.claude.search import WebSearchAdapter
from deep_research.run.interface import (
    CitedClaim,
    EvidenceText,
    PanelItem,
    Retained,
    SubQuestionPlan,
    SurveyDoc,
)
from deep_research.settings import Settings
from fakeapi import Block, FakeAnthropic, system_text, text, user_text

SRC = REPO / "src" / "deep_research"
CONTRACT_FILES = sorted([*REPO.glob("agents/*.md"), *REPO.glob("roles/*.md")])
#: The modules that build what a model is sent.
BUILDERS = sorted(
    [
        *(SRC / "run" / "claude").glob("*.py"),
        SRC / "plugin" / "next.py",
        SRC / "plugin" / "workflow.py",
        SRC / "role_contracts.py",
    ]
)

MASK = "\x00"
_WORD = re.compile(r"\b[A-Za-z][A-Za-z'’-]*\b")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_SENTENCE = re.compile(r"[A-Za-z][^.!?]*?[.!?](?=\s|$)")


def _flat(value: str) -> str:
    return " ".join(value.split())


def corpus(paths: Iterable[Path] = CONTRACT_FILES) -> str:
    """Every contract's body as the drivers read it, whitespace made single."""
    return "\n".join(_flat(role_contracts.parse(p.stem, p.read_text()).body) for p in paths)


CORPUS = corpus()


def unsourced(sent: str, data: Iterable[str] = (), source: str = CORPUS) -> list[str]:
    """The sentences of ``sent`` that are neither data nor text of a contract.

    Each value of ``data`` is masked first (longest first). What is left is cut into lines and
    sentences; a piece with at least two words that ends a sentence, or with at least four
    words, must appear in ``source`` word for word — each stretch of it between masked data.
    Shorter pieces are labels of the data around them (``Question:``, ``Located evidence:``)."""
    for value in sorted({v for v in data if v.strip()}, key=len, reverse=True):
        sent = sent.replace(value, MASK)
    found = []
    for line in sent.splitlines():
        for piece in _SENTENCE_END.split(line.strip()):
            words = _WORD.findall(piece.replace(MASK, " "))
            if len(words) < (2 if piece.endswith((".", "!", "?")) else 4):
                continue
            stretches = [_flat(part) for part in piece.split(MASK) if _WORD.search(part)]
            if any(stretch not in source for stretch in stretches):
                found.append(piece.replace(MASK, "…"))
    return found


def request_text(body: dict[str, Any]) -> str:
    return system_text(body) + "\n" + user_text(body)


# --- the checker, beside what it must catch ---------------------------------------------------


def test_the_checker_passes_contract_text_and_data_and_names_anything_else() -> None:
    source = _flat("Role: judge ONE claim. Hunt first for overreach: does the claim say more?")
    data = ["Heat pump sales rose 12% in 2023.", "C7"]
    sent = (
        "Role: judge ONE claim.\nClaim C7: Heat pump sales rose 12% in 2023.\n"
        "Located evidence:\nHunt first for overreach: does the claim say more?\nVote on: C7"
    )
    assert unsourced(sent, data, source) == []
    # A sentence of code's own, a changed word, an unpunctuated instruction, data around one.
    planted = [
        "Judge each claim on its own evidence.",
        "Hunt first for overreach: does the claim say less?",
        "hunt first for a stale figure or marketing copy",
        "Vote 1 of 3 on C7, and ignore the other claims.",
        "Do not answer.",
    ]
    for line in planted:
        assert unsourced(f"{sent}\n{line}", data, source) == [line.replace("C7", "…")], line


def test_a_contract_is_parsed_into_its_shared_text_sections_and_numbered_items() -> None:
    read = role_contracts.parse(
        "demo",
        "---\nname: demo\n---\n\nRole: demo.\n\n## Steps\n1. One,\n   continued.\n2. Two.\n"
        "\nPass: after the list.\n\n## Headless run\nIn a headless run.\n",
    )
    assert read.shared == "Role: demo."
    assert read.items("Steps") == ["One, continued.", "Two."]
    assert read.section("Headless run") == "## Headless run\nIn a headless run."
    with pytest.raises(InputError, match=r"demo\.md has no section '## Vote angles'"):
        read.section("Vote angles")
    with pytest.raises(InputError, match="lists nothing under '## Headless run'"):
        read.items("Headless run")
    with pytest.raises(InputError, match=r"nowhere\.md is missing from the installed package"):
        role_contracts.contract("nowhere")


def test_contract_names_are_unique_across_their_folders() -> None:
    stems = [path.stem for path in CONTRACT_FILES]
    assert len(stems) == len(set(stems)), stems


# --- what each driver sends ---------------------------------------------------------------------

QUESTION = "How many heat pumps were sold in Europe in 2023?"
SQ = SubQuestionPlan(
    "sq1", "What were 2023 heat pump sales?", ("heat pump sales 2023",), 2, "not installers"
)
CONTEXT = "The agency revised its 2022 series in March. " * 6
QUOTES = (
    "Heat pump sales in the twelve member states reached 2.9 million units in 2023",
    "sales fell by five percent compared with the record year before",
)
KNOWN = ("Sales of heat pumps reached 2.9 million units in 2023.",)
PAGE = "Market review. " + " ".join(QUOTES) + ". The end."


def claim(n: int) -> Claim:
    evidence = [
        Evidence(source=f"S{i + 1}", quote=quote, checks=Checks(outcome="supported"))
        for i, quote in enumerate(QUOTES)
    ]
    return Claim(
        id=f"C{n}", claim=f"Heat pump sales were about {n}.9 million.", sq="sq1", evidence=evidence
    )


def claim_data(claims: list[Claim]) -> list[str]:
    return [
        CONTEXT,
        *QUOTES,
        *(c.id for c in claims),
        *(c.claim for c in claims),
        *(e.source for c in claims for e in c.evidence),
    ]


@pytest.mark.parametrize("role", ROLES)
def test_a_roles_system_prompt_is_contract_text_only(role: Any) -> None:
    assert unsourced(instructions(role)) == []


@pytest.mark.parametrize("number", [0, 1, 2])
def test_the_skeptics_vote_asks_are_contract_text_and_data(number: int) -> None:
    claims = [claim(1), claim(2)]
    asked = "How many heat pumps were sold?"
    items = [
        PanelItem(c, [EvidenceText(e.source, e.quote, CONTEXT, CONTEXT) for e in c.evidence], asked)
        for c in claims
    ]
    body = vote_request(items, number, 3)
    assert f"Sub-question sq1: {asked}" in user_text(body)
    assert unsourced(request_text(body), [*claim_data(claims), asked]) == []
    angles = role_contracts.items("skeptic", "Vote angles")
    assert angles[number] in user_text(body)  # each vote's angle, as the contract lists it


def test_the_ciber_request_is_contract_text_and_data() -> None:
    claims = [claim(1), claim(2)]
    assert unsourced(request_text(ciber_request(claims)), claim_data(claims)) == []


def test_the_extraction_request_is_contract_text_and_data() -> None:
    page = Retained("https://agency.example/review", "Market review", PAGE, "0" * 64, None)
    body = extraction_request(QUESTION, SQ, page, KNOWN)
    data = [QUESTION, SQ.question, SQ.scope, SQ.id, *KNOWN]
    assert unsourced(request_text(body), data) == []


def _answer(body: dict[str, Any]) -> list[Block]:
    """Each role's answer, only so that the driver goes on to its next request."""
    role = role_of(body)
    if role == "plan":
        plan = {"depth": "full", "depth_reason": "r", "sub_questions": [{"question": "q"}]}
        return [text(json.dumps(plan))]
    if role == "triangulate":
        return [text(json.dumps({"queries": []}))]
    return [text("done")]


@contextlib.contextmanager
def headless() -> Iterator[tuple[ClaudeClient, FakeAnthropic]]:
    with FakeAnthropic(_answer) as api:
        models = choose_models({}, environ={})
        yield ClaudeClient(models, api_key="test", base_url=api.base_url, backoff_s=0.001), api


def test_the_reasoners_requests_are_contract_text_and_data() -> None:
    survey = [SurveyDoc("https://agency.example/review", "Heat pump market review 2023", ())]
    found = ["Heat pump sales reached 2.9 million units in 2023."]
    with headless() as (client, api):
        reasoner = ClaudeReasoner(client, question=QUESTION)
        reasoner.decompose(QUESTION, survey)
        reasoner.plans = {SQ.id: SQ}
        with contextlib.suppress(CallFailed):
            reasoner.follow_up(SQ, [])
        with contextlib.suppress(CallFailed):
            reasoner.counter_queries(SQ)
        reasoner.synthesize(QUESTION, [CitedClaim("C1", found[0], "sq1", ("S1", "S2"))])
        bodies = [m.body for m in api.messages]
    assert {role_of(body) for body in bodies} == {"plan", "triangulate", "synthesize"}
    data = [QUESTION, SQ.question, SQ.scope, SQ.id, *found, survey[0].url, survey[0].title or ""]
    data += ["C1", "S1", "S2"]
    for body in bodies:
        assert unsourced(request_text(body), data) == [], role_of(body)


def test_the_search_requests_are_contract_text_and_data() -> None:
    with headless() as (client, api):
        adapter = WebSearchAdapter(client)
        adapter.survey(QUESTION, 5)
        adapter.search(SQ.queries[0], 5)
        bodies = [m.body for m in api.messages]
    assert len(bodies) == 2 and {role_of(body) for body in bodies} == {"search"}
    for body in bodies:
        assert unsourced(request_text(body), [QUESTION, *SQ.queries]) == []


def _view(root: Path) -> View:
    caps, _ = clamp_caps("full", {})
    started = StartRecord("q", root.name, "full", datetime.now(UTC), caps)
    return View(Brief(root), started, Settings())


def test_nexts_plan_rules_are_the_planners_steps(tmp_path: Path) -> None:
    action = phase_plan(_view(tmp_path))
    assert action is not None and action.action == "write"
    assert action.rules == role_contracts.items("planner", "Steps")
    assert unsourced("\n".join(action.rules)) == []


def test_nexts_synthesis_rules_are_the_synthesizers_and_the_claims(tmp_path: Path) -> None:
    root = tmp_path / "brief"
    shutil.copytree(REPO / "examples" / "heat-pumps" / "brief", root)
    claims = json.loads((root / "claims.json").read_text(encoding="utf-8"))
    claims["synthesis"] = None
    (root / "claims.json").write_text(json.dumps(claims), encoding="utf-8")
    assert main(["trace", str(root)]) in (0, 1)  # support classes: what may be emitted
    action = phase_synthesize(_view(root))
    assert action is not None and action.action == "write"
    emitted = emitted_claims(Brief(root).load_claims())
    data = [f"{c.id} [{', '.join(c.supporting)}]: {c.claim}" for c in emitted]
    assert emitted and action.rules[-len(data) :] == data
    assert action.rules[: -len(data)] == role_contracts.items("synthesizer", "Rules")
    assert unsourced("\n".join(action.rules), data) == []


def test_the_synthesizers_example_of_two_positions_is_accepted_by_the_answer_gate(
    tmp_path: Path,
) -> None:
    # The example a writer copies: two positions in one sentence, each clause on its own cites.
    (example,) = re.findall(r'"([^"]+)"', role_contracts.items("synthesizer", "Rules")[2])
    positions = {
        "S4": "The beekeepers' association counts 214 colonies on the island this year.",
        "S6": "The council's survey gives 168 colonies on the island.",
    }
    pages = [
        PageSpec(f"https://apiary{n}.example/notes", text, [("Colonies", text)] if text else [])
        for n, text in enumerate(positions.get(f"S{n}", f"Filler page {n}.") for n in range(1, 7))
    ]
    root = write_brief(tmp_path / "brief", pages, [])
    checked = check_answer(Brief(root), example[0].upper() + example[1:] + ".")
    (sentence,) = checked.sentences
    assert sentence.passed, sentence.reason
    assert [clause.sources for clause in sentence.clauses] == [("S4",), ("S6",)]
    # The same sentence with the counts swapped is not what either source says.
    swapped = (
        example.replace("214", "0").replace("168", "214").replace("0 colonies", "168 colonies")
    )
    assert not check_answer(Brief(root), swapped + ".").sentences[0].passed


def test_the_workflows_prompts_are_contract_text_and_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first two steps of a workflow run: the writer's plan, then the fetchers' round 1.
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["start", "How do heat pumps work?", "--state", "state"]) == 0
    root = Path(json.loads(printed.getvalue())["brief"])
    write = workflow.step(root)
    assert write.action == "write"
    action = next_action(root)
    data = [str(root), "plan.json", action.why, *action.rules]
    data.append(json.dumps(action.example, ensure_ascii=False))
    data += [f"{name}: {value}" for name, value in action.bounds.items()]
    assert unsourced(write.tasks[0].prompt, data) == []
    (root / "plan.json").write_text(scripted_run.written(action, root), encoding="utf-8")
    dispatch = workflow.step(root)
    assert dispatch.action == "dispatch" and dispatch.tasks
    for task, asked in zip(dispatch.tasks, next_action(root).tasks, strict=True):
        assert unsourced(task.prompt, [asked.prompt, task.id]) == []


# --- no sentence of code's own ---------------------------------------------------------------


def literals(source: str) -> Iterator[tuple[int, str]]:
    """Every string literal of a module but its docstrings; an f-string with its replacement
    fields masked."""
    tree = ast.parse(source)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
    parts = {
        id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            joined = [v.value if isinstance(v, ast.Constant) else MASK for v in node.values]
            yield node.lineno, "".join(str(part) for part in joined)
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings | parts
        ):
            yield node.lineno, node.value


def sentences_in_literals(source: str) -> list[tuple[int, str]]:
    """Each literal's sentences of five words or more: an instruction, not a label or an
    error's clause (this project's messages are lower-case clauses joined by ';')."""
    return [
        (line, found)
        for line, value in literals(source)
        for found in _SENTENCE.findall(value)
        if len(_WORD.findall(found)) >= 5
    ]


def test_the_checker_finds_an_instruction_literal_and_passes_data_labels() -> None:
    module = '''"""A module docstring may say what it likes. It is not sent."""

LABEL = "Located evidence:"
ERROR = f"--model {LABEL!r}: write ROLE=MODEL, e.g. --model skeptic=x"
ANGLES = (
    "Hunt first for overreach: does the claim say more than the quotes say?",
)
PLAN = """\\
Role: plan the research of ONE question. You never answer it.
"""


def ask(n: int) -> str:
    """A docstring. Never sent."""
    return f"Vote {n}. Judge each claim on its own evidence alone."
'''
    found = sentences_in_literals(module)
    assert sorted(line for line, _ in found) == [6, 8, 15], found


@pytest.mark.parametrize("path", BUILDERS, ids=lambda p: str(p.relative_to(SRC)))
def test_a_module_that_builds_requests_holds_no_sentence_of_its_own(path: Path) -> None:
    found = sentences_in_literals(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name}: put instructions in a contract (agents/, roles/): {found}"


# --- next's rules: contract items, never literals ---------------------------------------------


def literal_rules(source: str) -> list[int]:
    """Lines where a ``rules`` value (an ``Action(rules=…)`` argument or a ``rules = …``
    binding) holds a string of its own: the rules next prints must be a contract's items."""
    tree = ast.parse(source)
    values: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "rules":
            values.append(node.value)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "rules" for t in targets) and node.value:
                values.append(node.value)
        elif (  # rules.append(…), rules.extend(…), rules.insert(…)
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "rules"
        ):
            values.extend(node.args)
    found: set[int] = set()
    while values:
        node = values.pop()
        if isinstance(node, ast.JoinedStr) or (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value
        ):
            found.add(node.lineno)
        elif not _reads_a_contract(node):  # a contract name and a heading are not rules
            values.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.expr))
    return sorted(found)


def _reads_a_contract(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "role_contracts"
    )


def test_the_rules_checker_finds_a_literal_rule_and_passes_contract_items() -> None:
    module = """
a = Action(rules=role_contracts.items(ORCHESTRATOR, "Dispatch"))
b = Action(rules=[*role_contracts.items(SYNTHESIZER, "Rules"), *emitted])
rules = role_contracts.filled(ORCHESTRATOR, "Claims", depth=depth)
rules: list[str] = []
c = Action(rules=["save the reply, then call next again"])
rules += [f"then call {cli} again"]
rules.append("then call deep-research next again")
"""
    assert literal_rules(module) == [6, 7, 8]


def test_every_rule_next_prints_is_read_from_a_contract() -> None:
    path = SRC / "plugin" / "next.py"
    found = literal_rules(path.read_text(encoding="utf-8"))
    assert not found, f"next.py lines {found}: put the rule in roles/orchestrator.md"


@pytest.mark.parametrize(
    ("heading", "values"),
    [
        ("Dispatch", {}),
        ("Then next", {}),
        ("Save one reply", {}),
        ("Top-up queries", {"field": "more_queries", "sources": "/b/sources.jsonl"}),
        ("Counter-queries", {"need": 2, "sources": "/b/sources.jsonl"}),
        ("Claims", {"graph": "/b/g.json", "sources": "/b/s.jsonl", "depth": "full"}),
        ("Workflow task", {"task": "fetcher-sq1-r1"}),
        ("Workflow write", {"file": "plan.json", "brief": "/b"}),
    ],
)
def test_the_orchestrators_sections_fill_every_placeholder(
    heading: str, values: dict[str, object]
) -> None:
    filled = role_contracts.filled("orchestrator", heading, **values)
    assert filled and not any("{" in rule for rule in filled), filled
    data = [str(v) for v in values.values()]
    assert unsourced("\n".join(filled), data) == []
