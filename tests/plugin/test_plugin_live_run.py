"""A whole research run inside the real Claude Code CLI, driven only by ``deep-research next``.

``claude -p "/deep-research:deep-research <topic> --depth full" --plugin-dir <repo>`` runs
against :class:`fakeapi.FakeAnthropic`, whose script plays every model of the run and has no
judgement of its own (tests/scripted_run.py decides what it writes and answers):

* the orchestrator (the main loop) starts the run, then repeatedly calls
  ``deep-research next B --json`` through Bash and does exactly what it prints: ``run`` — a Bash
  call of the printed command; ``write`` — a Write of the content built from the action (a plan
  it adds to is Read first); ``dispatch`` — one Agent call per task, all in ONE message, then one
  Write per reply (the Agent tool_result) to its ``save_to``; ``done`` — a Bash call per ``then``
  command, then its final answer;
* each fetcher subagent runs one WebSearch per query — the fake search engine lists the pages of
  its sub-question and round, and our PostToolUse hook puts their hosts on the run's
  allow-list — then ``deep-research fetch <url> --brief B --json`` through Bash per page found,
  and answers with agents/fetcher.md's JSON built from the fetched text;
* the triangulator, skeptic and CIBER subagents answer their contract's JSON at once.

The full-depth run (through the workflow, then through the loop) is on the contested world:
two publishers date the gauge's return March 2026, two September 2026 (one in a table only),
one March page is syndicated on another host, one page is short. Its briefs are PARTIAL for
the open contradiction and checked as their reader gets them, by the same function as the
in-process drivers' (tests/scripted_run.py). READY through the real CLI is no run's here: it is
shown in process (tests/plugin/test_next.py, tests/plugin/test_workflow.py).

The pages are served on port 80 of a loopback address drawn per test, under public-looking
names (www.publisher-7.example). The fetcher, run as our CLI by Claude Code's Bash, reaches them
only through the test-only knobs set in the environment of the ``claude`` process:
``DEEP_RESEARCH_TEST_RESOLVE`` (those names to that address) and
``DEEP_RESEARCH_TEST_PRIVATE_CIDRS`` (that one address); the hooks' own checks are the
production ones. Nothing is granted on the command line: the slash command's allowed-tools and
the guard's explicit allow for our CLI are what let the calls run. Every request the fake API
receives, every tool result and the guard's denials go to ``transcript.txt`` under the test's
tmp_path, named in every assertion message.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import urlsplit

import pytest

import scripted_run
from conftest import REPO, claude_binary, claude_env, install_launcher_env
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.fetch.hosts import load as load_allowlist
from deep_research.plugin import next as next_module
from deep_research.plugin import runstate
from deep_research.plugin.next import Action
from deep_research.plugin.tasks import FetchTask, JudgingTask
from fakeapi import (
    Block,
    Conversation,
    FakeAnthropic,
    Program,
    Results,
    block_text,
    last_results,
    system_text,
    text,
    tool_names,
    tool_use,
    user_text,
    web_search,
)
from localhttp import LocalServer, on_port_80
from scripted_run import TOPIC, Orchestrator, Web, assert_both_positions_reach_the_reader

TIMEOUT_S = 300
# Each test that starts the claude CLI is marked slow (seconds to minutes each); the fake
# API's own checks are not.
GUARD_UNAVAILABLE = "deep-research guard unavailable"  # hooks/guard's fallback, not the guard


# --- the pages, on port 80 of a loopback address of their own ---------------------------------


@pytest.fixture
def web() -> Iterator[Web]:
    """The scripted web on port 80 (URLs without a port pass the hook's port rule as production
    URLs do) of a 127/8 address drawn per test, so parallel runs do not collide."""
    try:
        drawn = on_port_80()
    except PermissionError:
        if os.environ.get("DEEP_RESEARCH_REQUIRE_CLAUDE") == "1":
            pytest.fail("the live run serves its pages on port 80: run it as root")
        pytest.skip("the live run serves its pages on port 80, which needs root")
    if drawn is None:
        pytest.fail("no free loopback address for port 80")
    server, address = drawn
    with server:
        built = Web(server, address)
        built.build()
        yield built


@pytest.fixture
def contested_web(web: Web) -> Web:
    """The scripted web, contested (tests/scripted_run.py: two restart dates, a syndicated
    copy, a short page, a date stated in a table only): built anew on the same server and
    address. The players search, fetch and answer from this one object."""
    contested = Web(web.server, web.address, contested=True)
    contested.build()
    return contested


@pytest.fixture
def closed_web(web: Web) -> Web:
    """The scripted web round 1 reads whole (tests/scripted_run.py: twenty pages, and round 2's
    counter-queries list them again), built anew on the same server and address."""
    closed = Web(web.server, web.address, closed=True)
    closed.build()
    return closed


# --- the players' building blocks -----------------------------------------------------------


def only(results: Results) -> str:
    (value,) = results.values()
    return value[0]


def bash(command: str) -> Block:
    return tool_use("Bash", {"command": command, "description": command[:60]})


def json_of(output: str) -> Any:
    """The JSON a command printed (Bash results may carry more around it)."""
    return json.loads(output[output.index("{") : output.rindex("}") + 1])


# --- the players ------------------------------------------------------------------------------


def _role(agent: str) -> str:
    """An agent's role line: the first line of its file's body, which is its system prompt."""
    body = (REPO / "agents" / f"{agent}.md").read_text(encoding="utf-8").split("---", 2)[2]
    return body.strip().splitlines()[0]


ROLES = {
    agent: _role(agent)
    for agent in ("fetcher", "triangulator", "verifier", "skeptic", "ciber", "stepper", "writer")
}


@dataclass
class Log:
    """What the fake API received and answered, in arrival order."""

    lines: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: Every tool result a model was sent: (model, tool_use id, text, is_error).
    results: list[tuple[str, str, str, bool]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    #: Requests and their input tokens (the fake's measure: JSON characters / 4), by who asked.
    requests: Counter[str] = field(default_factory=Counter)
    tokens: Counter[str] = field(default_factory=Counter)
    #: Agents started, by who: an agent's first request has no message of its own yet.
    started: Counter[str] = field(default_factory=Counter)

    def add(self, who: str, body: dict[str, Any], reply: list[Block]) -> None:
        results = last_results(body)
        size = len(json.dumps(body.get("messages"))) + len(json.dumps(body.get("system")))
        size += len(json.dumps(body.get("tools")))
        entry = [f"--- {who} ({body.get('model')}, {len(body.get('messages') or [])} messages)"]
        entry += [
            f"  result {use_id}{' ERROR' if error else ''}: {value[:1500]}"
            for use_id, (value, error) in results.items()
        ]
        for block in reply:
            shown = json.dumps(block.get("input", block.get("text", block.get("type"))))
            entry.append(f"  reply {block['type']} {block.get('name', '')}: {shown[:1500]}")
        with self.lock:
            self.requests[who.split(" (")[0]] += 1
            messages = body.get("messages") or []
            if not any(isinstance(m, dict) and m.get("role") == "assistant" for m in messages):
                self.started[who.split(" (")[0]] += 1
            self.tokens[who.split(" (")[0]] += size // 4
            self.results += [(who, use_id, *result) for use_id, result in results.items()]
            self.lines += entry


class Player:
    """Every model of the run: the orchestrator, its subagents and the search engine."""

    def __init__(self, web: Web, orchestrator: Callable[[Player], Program]) -> None:
        self.web = web
        self.log = Log()
        self.main = Conversation(orchestrator(self))
        self.fetchers: dict[str, Conversation] = {}
        self.actions: list[Action] = []
        self.searches: list[str] = []
        self.then_results: list[str] = []
        self.attempt: Block = {}
        self.refusals: list[str] = []
        self.driver = ""
        self.launched = ""
        self.notice = ""
        self.spoil: Callable[[str, dict[str, Any]], dict[str, Any]] | None = None
        #: Whether each judging agent first Reads its input file and the brief's claims.json (or
        #: sources.jsonl) in one message, before it answers (the guard admits the first only).
        self.judges_read = False
        #: The judging agents that did (agent, task id).
        self.judged: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> list[Block] | None:
        try:
            who, reply = self._answer(body)
        except Exception as exc:  # the script failed: say so and end that conversation
            who, reply = "script error", [text(f"script error: {type(exc).__name__}: {exc}")]
            with self.log.lock:
                self.log.errors.append(f"{type(exc).__name__}: {exc}")
        if reply is not None:
            self.log.add(who, body, reply)
        return reply

    def _answer(self, body: dict[str, Any]) -> tuple[str, list[Block] | None]:
        offered = tool_names(body)
        if "web_search" in offered:
            return "search", self.search(body)
        system = system_text(body)
        prompt = user_text(body)
        for agent, role in ROLES.items():
            if role in system:
                if "StructuredOutput" in offered:
                    return f"workflow {agent}", self.workflow_agent(agent, body)
                return agent, self.agent(agent, prompt, last_results(body))
        if "Agent" in offered:
            results = last_results(body)
            said = user_text_after_results(body)
            if not results and "<task-notification>" in said:
                results = {"task-notification": (said, False)}
            return "orchestrator", self.main.answer(results)
        return "side request", None  # a title, a summary: the fake's short default

    def search(self, body: dict[str, Any]) -> list[Block]:
        """The CLI's own request for a WebSearch: the model's query is in its prompt."""
        query = scripted_run.query_in(block_text(body["messages"][-1]["content"]))
        with self.lock:
            self.searches.append(query)
        return web_search(query, *self.web.found(query))

    def agent(self, agent: str, prompt: str, results: Results) -> list[Block]:
        tasks = [t for a in self.actions for t in a.tasks if t.prompt in prompt]
        task = max(tasks, key=lambda t: len(t.prompt), default=None)
        if task is None:
            raise AssertionError(f"a {agent} subagent with no dispatched task: {prompt[:300]}")
        if agent == "fetcher":
            with self.lock:
                conversation = self.fetchers.setdefault(
                    task.prompt, Conversation(fetcher(task.prompt))
                )
            return conversation.answer(results)
        reply = getattr(scripted_run, f"{agent}_reply")(task.prompt)
        return [text(json.dumps(reply))]

    def workflow_agent(self, agent: str, body: dict[str, Any]) -> list[Block]:
        """A workflow agent, from its request alone: what it called last decides what it does
        next (its prompt names its task; the fetched pages come back as Bash results)."""
        prompt = user_text(body)
        if "brief=" in prompt:  # the task's record, after what Claude Code puts before it
            prompt = prompt[prompt.index("brief=") :]
        results = last_results(body)
        called = last_calls(body)
        if any(name == "StructuredOutput" for name in called.values()):
            value, refused = next(iter(results.values()))
            if not refused:
                return [text("done")]
            with self.lock:
                self.refusals.append(f"{agent}: {value[:300]}")
            return [self.structured(agent, prompt, body, corrected=True)]
        if agent == "stepper":
            if not results:
                command = _STEP_COMMAND.search(prompt)
                assert command, prompt
                return [bash(command.group(1).strip())]
            return [tool_use("StructuredOutput", {})]
        if self.judges_read and agent in JUDGES and not results:
            task_id = _TASK_ID.search(prompt)
            assert task_id, prompt
            with self.lock:
                self.judged.append((agent, task_id.group(1)))
            return judge_reads(prompt, task_id.group(1))
        if agent == "fetcher":
            if not results:
                task = scripted_run.task(prompt, FetchTask)
                return [tool_use("WebSearch", {"query": query}) for query in task.queries]
            if all(name == "WebSearch" for name in called.values()):
                task = scripted_run.task(prompt, FetchTask)
                listed = [url for value, _ in results.values() for url in _LINK.findall(value)]
                urls = unread(task, listed)
                if urls:
                    brief = task.brief
                    return [
                        bash(f"deep-research fetch {url} --brief {brief} --json") for url in urls
                    ]
        return [self.structured(agent, prompt, body)]

    def structured(self, agent: str, prompt: str, body: dict[str, Any], **how: bool) -> Block:
        if agent == "writer":
            return tool_use("StructuredOutput", self.written(prompt))
        task_id = _TASK_ID.search(prompt)
        assert task_id, prompt
        if agent == "fetcher":
            fetched = []
            for url, value in fetched_pages(body):
                view = json_of(value)
                if view.get("outcome") == "ok":
                    fetched.append((url, view["text"]))
            reply = scripted_run.fetcher_reply(prompt.split("\n", 1)[0], fetched)
        else:
            reply = getattr(scripted_run, f"{agent}_reply")(prompt.split("\n", 1)[0])
        answer = {**reply, "task": task_id.group(1)}
        if self.spoil is not None and not how.get("corrected"):
            answer = self.spoil(task_id.group(1), answer)
        return tool_use("StructuredOutput", answer)

    def written(self, prompt: str) -> dict[str, Any]:
        found = _BRIEF_IN_WRITE.search(prompt)
        assert found, prompt
        brief = Path(found.group(1))
        action = next_module.next_action(brief)
        with self.lock:
            self.actions.append(action)
        path = Path(action.path or "")
        current = path.read_text(encoding="utf-8") if path.exists() else None
        content = scripted_run.written(action, brief, current)
        return dict(json.loads(content)) if path.suffix == ".json" else {"text": content}


JUDGES = ("triangulator", "verifier", "skeptic", "ciber")


def judge_reads(prompt: str, task_id: str) -> list[Block]:
    """A judging agent's two Reads: its task's input, and the brief's record it is built from —
    claims.json, or sources.jsonl for the triangulator (no claims.json is written before it
    answers). Their ids name the task, so a test finds each result in the log."""
    task = scripted_run.task(prompt, JudgingTask)
    record = "sources.jsonl" if task.agent == "triangulator" else "claims.json"
    return [
        tool_use("Read", {"file_path": task.input}, f"toolu_input_{task_id}"),
        tool_use("Read", {"file_path": str(Path(task.brief) / record)}, f"toolu_whole_{task_id}"),
    ]


_STEP_COMMAND = re.compile(r"^\s*(deep-research step .*)$", re.MULTILINE)
_TASK_ID = re.compile(r'"task": "([A-Za-z0-9_.#-]+)"')  # the task's id, a seal after "#"
_BRIEF_IN_WRITE = re.compile(r"for the brief (\S+): follow every rule")


def last_calls(body: dict[str, Any]) -> dict[str, str]:
    """The tool calls of the model's last message: tool_use id → tool name."""
    for message in reversed(body.get("messages") or []):
        if isinstance(message, dict) and message.get("role") == "assistant":
            content = message.get("content")
            return {
                str(b.get("id")): str(b.get("name"))
                for b in (content if isinstance(content, list) else [])
                if isinstance(b, dict) and b.get("type") == "tool_use"
            }
    return {}


def fetched_pages(body: dict[str, Any]) -> list[tuple[str, str]]:
    """Every `deep-research fetch` in an agent's history, in order: its URL and result."""
    calls: dict[str, str] = {}
    found = []
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use" and block.get("name") == "Bash":
                calls[str(block.get("id"))] = str(block.get("input", {}).get("command"))
            if block.get("type") == "tool_result":
                command = calls.get(str(block.get("tool_use_id")), "")
                if command.startswith("deep-research fetch "):
                    found.append((command.split()[2], block_text(block.get("content"))))
    return found


def user_text_after_results(body: dict[str, Any]) -> str:
    """The text of the messages after the model's last one (a notification the CLI sends)."""
    texts = []
    for message in reversed(body.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") == "assistant":
            break
        texts.append(block_text(message.get("content")))
    return "\n".join(reversed(texts))


_LINK = re.compile(r"https?://[^\s\"'\\\]]+")


def unread(task: FetchTask, urls: Sequence[str]) -> list[str]:
    """agents/fetcher.md: the pages found, less those on a host the run already read."""
    return [url for url in dict.fromkeys(urls) if urlsplit(url).hostname not in task.read_hosts]


def fetcher(prompt: str) -> Program:
    """agents/fetcher.md: a WebSearch per query, a fetch per page found on a host not yet read,
    then the JSON."""
    task = scripted_run.task(prompt, FetchTask)
    queries = task.queries
    found = yield [tool_use("WebSearch", {"query": query}) for query in queries]
    urls = unread(task, [url for value, _ in found.values() for url in _LINK.findall(value)])
    if not urls:  # every page listed was read already: the round's work is done
        return json.dumps(scripted_run.fetcher_reply(prompt, []))
    brief = task.brief
    fetches = [bash(f"deep-research fetch {url} --brief {brief} --json") for url in urls]
    ran = yield fetches
    fetched = []
    for block, url in zip(fetches, urls, strict=True):
        view = json_of(ran[block["id"]][0])
        if view["outcome"] == "ok":
            fetched.append((url, view["text"]))
    return json.dumps(scripted_run.fetcher_reply(prompt, fetched))


def _next_without_panel(brief: Path) -> Action:
    """What `next` would print were there no skeptic panel: the step a model that skips it
    takes on its own (the phases after the panel, run as next would run them)."""
    with mock.patch.dict(next_module.HANDLERS, {"panel": lambda view: None}):
        return next_module.next_action(brief)


def follow_next(
    player: Player, depth: str, *, skip_panel: bool = False, pages_change: bool = False
) -> Program:
    """The orchestrator of skills/deep-research/SKILL.md: only what `next` prints. With
    ``skip_panel`` it dispatches no skeptic and runs the later steps itself. With
    ``pages_change`` every page loses its text before the re-fetch (the brief then FAILs), and
    the run ends once `next` asks for the new brief's plan."""
    started = yield [bash(f"deep-research start {shlex.quote(TOPIC)} --depth {depth}")]
    brief = Path(json_of(only(started))["brief"])
    return (yield from _loop(player, brief, skip_panel=skip_panel, pages_change=pages_change))


def _loop(
    player: Player, brief: Path, *, skip_panel: bool = False, pages_change: bool = False
) -> Program:
    """Step 3 of the skill: next, done as printed, until it is done (then its commands)."""
    skipping = False
    while True:
        if skipping:
            action = _next_without_panel(brief)
        else:
            printed = yield [bash(f"deep-research next {brief} --json")]
            action = Action.model_validate(json_of(only(printed)))
            if skip_panel and action.phase == "panel" and action.action == "dispatch":
                skipping = True
                continue
        player.actions.append(action)
        if pages_change and action.phase == "refetch":
            player.web.blank()
        if pages_change and action.phase == "plan" and player.web.blanked:
            return "regenerated: a new plan is asked for"
        if action.action == "run":
            yield [bash(action.command or "")]
        elif action.action == "write":
            path = action.path or ""
            current = None
            if Path(path).exists():  # the Write tool replaces only a file it has read
                current = _read_text(only((yield [tool_use("Read", {"file_path": path})])))
            content = scripted_run.written(action, brief, current)
            player.attempt = tool_use("Write", {"file_path": path, "content": content})
            ((said, refused),) = (yield [player.attempt]).values()
            if refused:  # the hook's word is final: a model that does only what next says stops
                return "refused: " + said[:300]
        elif action.action == "dispatch":
            calls = [
                tool_use(
                    "Agent",
                    {
                        "description": f"{action.phase} task {n}",
                        "subagent_type": action.agent,
                        "prompt": task.prompt,
                        "run_in_background": False,
                    },
                )
                for n, task in enumerate(action.tasks, 1)
            ]
            replies = yield calls
            yield [
                tool_use("Write", {"file_path": task.save_to, "content": replies[call["id"]][0]})
                for call, task in zip(calls, action.tasks, strict=True)
            ]
        else:
            for command in action.then:
                player.then_results.append(only((yield [bash(command)])))
            return f"verdict {action.verdict}: " + "; ".join(action.reasons)


def skill(player: Player, depth: str) -> Program:
    """skills/deep-research/SKILL.md as written: start; the workflow when code chose it (wait for
    its notice, then next), else the loop."""
    started = yield [bash(f"deep-research start {shlex.quote(TOPIC)} --depth {depth}")]
    record = json_of(only(started))
    brief = Path(record["brief"])
    player.driver = record["driver"]
    if record["driver"] != "workflow":
        return (yield from _loop(player, brief))
    player.launched = only((yield [tool_use("Workflow", record["workflow"])]))
    said = "The research runs in the background; /workflows shows its phases."
    player.notice = only((yield [text(said)]))
    return (yield from _loop(player, brief))


def tries_a_setting(player: Player) -> Program:
    """A model that, once the run is started, tries to lower a floor of the verdict."""
    started = yield [bash(f"deep-research start {shlex.quote(TOPIC)} --depth full")]
    brief = json_of(only(started))["brief"]
    player.attempt = bash(f"deep-research verdict {brief} --set full_round2_fetches=0")
    refused = yield [player.attempt]
    yield [bash(f"deep-research finish {brief}")]
    return "refused: " + only(refused)[:200]


def _read_text(shown: str) -> str:
    """A file's text from the Read tool's numbered lines (``     1\\t…``)."""
    return "\n".join(line.split("\t", 1)[1] for line in shown.splitlines() if "\t" in line)


# --- one claude process -----------------------------------------------------------------------


@dataclass
class Run:
    player: Player
    api: FakeAnthropic
    events: list[dict[str, Any]]
    returncode: int
    stderr: str
    seconds: float
    state: Path
    transcript: Path

    @property
    def see(self) -> str:
        """What every assertion message carries: where the whole story is."""
        return f"transcript: {self.transcript}"

    @property
    def result(self) -> dict[str, Any]:
        found = [event for event in self.events if event.get("type") == "result"]
        return found[-1] if found else {}

    def denials(self) -> list[str]:
        """The tool calls the CLI reports as denied: by a hook, or left without a grant."""
        return [d["tool_use_id"] for d in self.result.get("permission_denials") or []]

    def errors(self) -> list[tuple[str, str, str, bool]]:
        """Every tool result any model of the run was sent marked as an error."""
        return [result for result in self.player.log.results if result[3]]

    def result_of(self, use_id: str) -> tuple[str, bool]:
        """The text and error flag of the result one tool call got."""
        for _, found, value, error in self.player.log.results:
            if found == use_id:
                return value, error
        raise AssertionError(f"no result for {use_id}; {self.see}")

    def brief(self) -> Path:
        (found,) = self.state.glob("briefs/*/run.json")
        return found.parent

    def main_calls(self) -> Counter[str]:
        """The orchestrator's tool calls, by tool."""
        replies = self.player.main.replies.values()
        return Counter(b["name"] for reply in replies for b in reply if b["type"] == "tool_use")


def begun_in_process(tmp_path: Path, web: Web, *, until: str) -> Path:
    """A full-depth run brought in this process to where ``next`` first asks for phase ``until``
    (every step done as printed, by tests/scripted_run.py's orchestrator): a test about what a
    model does from there starts claude on this unfinished brief, which its ``start`` reopens.
    The earlier phases inside claude are the full runs' to show."""
    state = tmp_path / "project" / "state"
    state.mkdir(parents=True)
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        assert main(["start", TOPIC, "--depth", "full", "--state", str(state)]) == 0
    brief = Path(json.loads(printed.getvalue())["brief"])
    Orchestrator(web, brief, "full").run(until=until)
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["finish", str(brief), "--state", str(state)]) == 0
    return brief


def run_claude(
    tmp_path: Path,
    web: Web,
    player: Player,
    prompt: str,
    env: dict[str, str] | None = None,
    binary: str | None = None,
) -> Run:
    """One headless claude process for the whole run; HOME and the project are tmp_path's."""
    root, home = tmp_path / "project", tmp_path / "home"
    state = root / "state"
    root.mkdir(exist_ok=True)
    home.mkdir()
    install_launcher_env(home)
    events: list[dict[str, Any]] = []
    began = time.monotonic()
    with FakeAnthropic(player) as api:
        env = {
            **claude_env(home, api.base_url),
            "DEEP_RESEARCH_STATE": str(state),
            # The test-only knobs: these names, to this one loopback address.
            "DEEP_RESEARCH_TEST_RESOLVE": web.resolve_env(),
            "DEEP_RESEARCH_TEST_PRIVATE_CIDRS": f"{web.address}/32",
            **(env or {}),
        }
        command = [
            binary or claude_binary(),
            "-p",
            prompt,
            "--plugin-dir",
            str(REPO),
            "--output-format",
            "stream-json",
            "--verbose",
        ]
        with (
            (tmp_path / "claude-stderr.txt").open("w+", encoding="utf-8") as stderr,
            subprocess.Popen(
                command,
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
            ) as process,
        ):
            watchdog = threading.Timer(TIMEOUT_S, process.kill)
            watchdog.start()
            try:
                for line in process.stdout or ():
                    with contextlib.suppress(ValueError):
                        event = json.loads(line)
                        if isinstance(event, dict):
                            events.append(event)
            finally:
                process.wait()
                watchdog.cancel()
            stderr.seek(0)
            run = Run(
                player,
                api,
                events,
                process.returncode,
                stderr.read(),
                time.monotonic() - began,
                state,
                tmp_path / "transcript.txt",
            )
    _write_transcript(run)
    return run


def _write_transcript(run: Run) -> None:
    lines = [
        f"claude exit {run.returncode} after {run.seconds:.1f} s",
        f"script errors: {run.player.log.errors}",
        f"permission denials (hook decisions that blocked a call): {run.denials()}",
        f"orchestrator tool calls: {dict(run.main_calls())}",
        "claude stderr: " + run.stderr[-5000:],
        "the CLI's closing result: " + json.dumps(run.result)[:3000],
        "",
        "requests other than the Messages API:",
        *(f"  {r.method} {r.path}" for r in run.api.requests if not r.is_messages),
        "",
        "Messages requests in arrival order (the tool results each carried, the reply):",
        *run.player.log.lines,
        "",
        "guard ledgers (every fetch, search and dispatch the hooks admitted):",
    ]
    for ledger in sorted(run.state.glob("briefs/*/guard-log.jsonl")):
        lines += [f"  {ledger}", *ledger.read_text(encoding="utf-8").splitlines()]
    run.transcript.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _cli(capsys: pytest.CaptureFixture[str], *words: str) -> tuple[int, Any]:
    """Our CLI, in this process, after the run: its exit code and the JSON it printed. What the
    test printed before (a run's report) is printed again, not lost."""
    earlier = capsys.readouterr().out
    code = main(list(words))
    out = capsys.readouterr().out
    print(earlier, end="")
    return code, json.loads(out) if out.strip() else None


def assert_clean(run: Run, exits: Sequence[str] = ()) -> None:
    """The run as a whole: claude finished, the script never failed, no tool call was refused,
    none failed but the step commands whose exit 1 ``exits`` names (each a text its output
    holds, in order; each says how to go on), and nothing but the fake Messages API was asked
    for anything."""
    assert run.returncode == 0 and not run.player.log.errors, run.see
    assert run.denials() == [], run.see
    failed = [said for _, _, said, _ in run.errors()]
    assert len(failed) == len(exits), (failed, run.see)
    for said, expected in zip(failed, exits, strict=True):
        assert said.startswith("Exit code 1") and expected in said, (said, run.see)
        assert "\nnext: " in said, (said, run.see)  # the step's own word on what comes next
    assert all(r.path.startswith("/v1/messages") for r in run.api.requests), run.see
    assert runstate.load_active(run.state) is None, run.see  # `finish` closed the run


# --- the runs ---------------------------------------------------------------------------------


def assert_a_full_run_of_the_loop(run: Run, web: Web, capsys: pytest.CaptureFixture[str]) -> None:
    """A full-depth run of the loop on the scripted world: every kind of action came from next
    and was done inside claude, every page was fetched by our CLI from a host a search listed,
    the brief is valid, and the handoff the model was given holds in its context only claims
    the panel upheld."""
    player = run.player
    brief = run.brief()
    document = Brief(brief).load_claims()

    kinds = Counter(f"{a.action}:{a.phase}" for a in player.actions)
    assert kinds["dispatch:cast"] == 1 and kinds["dispatch:round2"] == 1, (kinds, run.see)
    assert {"dispatch:claims", "dispatch:panel", "dispatch:ciber"} <= set(kinds), run.see
    assert {"write:plan", "write:round2", "write:claims", "write:synthesize"} <= set(kinds), run.see
    ledger = runstate.read_ledger(Brief(brief))
    fetched = [row["host"] for row in ledger if row["event"] == "fetch"]
    assert sorted(fetched) == sorted(web.hosts), run.see  # each publisher once, by a fetcher
    searches = [row for row in ledger if row["event"] == "search"]
    assert len(searches) == len(player.searches) == 25, run.see  # 5 × 4 queries, 5 counter
    allowlist = load_allowlist(Brief(brief))
    assert allowlist is not None and allowlist.as_dict()["search"] == sorted(web.hosts), run.see
    pages = {urlsplit(url).path for urls in web.pages.values() for url in urls}
    assert pages <= set(web.server.hits), run.see
    logged = [e for e in Brief(brief).load_fetch_log() if e.purpose == "page"]
    assert {e.outcome for e in logged} == {"ok"}, run.see
    # The test-only allow-list is on record in every page fetch: one address, nothing wider.
    assert {tuple(e.private_allowlist) for e in logged} == {(f"{web.address}/32",)}, run.see

    code, checked = _cli(capsys, "validate", str(brief))
    assert code == 0 and checked["ok"], (checked, run.see)

    # The handoff the model reported holds in its context only claims the panel upheld.
    assert len(player.then_results) == 2, run.see  # the handoff, then finish
    handoff = json_of(player.then_results[0])
    assert handoff["context"], (handoff, run.see)
    outcomes = {c.id: c.votes.outcome if c.votes else None for c in document.claims}
    assert {outcomes[c["id"]] for c in handoff["context"]} == {"survives"}, (outcomes, run.see)


def assert_the_reader_gets_both_positions(run: Run) -> None:
    """The contested run's brief as its reader gets it (tests/scripted_run.py, the same check
    as the in-process drivers'), with the verdict the model ended on and the handoff it was
    given."""
    said = str(run.result.get("result"))
    assert said.startswith("verdict PARTIAL:"), run.see
    assert "[contradictions-unresolved]" in said, run.see
    assert len(run.player.then_results) == 2, run.see  # the handoff, then finish
    handoff = json_of(run.player.then_results[0])
    assert_both_positions_reach_the_reader(run.brief(), handoff, run.see)


@pytest.mark.slow
@pytest.mark.usefixtures("claude_release")
def test_a_setting_changed_during_the_run_is_denied_by_the_hook(tmp_path: Path, web: Web) -> None:
    player = Player(web, tries_a_setting)
    run = run_claude(tmp_path, web, player, f"/deep-research:deep-research {TOPIC}")
    assert run.returncode == 0 and not player.log.errors, run.see
    attempt = player.attempt["id"]
    assert run.denials() == [attempt], run.see  # the hook blocked it, not the CLI's own check
    refusal, is_error = run.result_of(attempt)
    assert is_error and "settings are fixed when it starts" in refusal, (refusal, run.see)
    assert GUARD_UNAVAILABLE not in refusal, run.see
    assert "--set full_round2_fetches" not in refusal, run.see  # not the CLI's own refusal
    brief = run.brief()
    recorded = json.loads((brief / "run.json").read_text(encoding="utf-8"))["settings"]
    assert recorded["full_round2_fetches"] == 5, run.see
    assert not (brief / "claims.json").exists(), run.see  # no verdict was decided
    assert runstate.load_active(run.state) is None, run.see


@pytest.mark.slow
@pytest.mark.usefixtures("claude_release")
def test_a_model_that_skips_the_panel_is_stopped_by_the_hook(tmp_path: Path, web: Web) -> None:
    begun_in_process(tmp_path, web, until="panel")
    player = Player(web, lambda p: follow_next(p, "full", skip_panel=True))
    run = run_claude(tmp_path, web, player, f"/deep-research:deep-research {TOPIC} --depth full")
    assert run.returncode == 0 and not player.log.errors, run.see
    assert not any(a.agent == "deep-research:skeptic" for a in player.actions), run.see
    # It runs the later steps' commands itself (our CLI, on the run's brief, passes), but the
    # first file it writes that next did not name — the synthesis — is refused by the hook.
    assert {"run:triangulate", "run:refetch"} <= {
        f"{a.action}:{a.phase}" for a in player.actions
    }, run.see
    attempt = player.attempt
    assert attempt["input"]["file_path"].endswith("returns/synthesis.md"), run.see
    assert run.denials() == [attempt["id"]], run.see
    refusal, is_error = run.result_of(attempt["id"])
    assert is_error and "only the files the current step" in refusal, (refusal, run.see)
    assert str(run.result.get("result")).startswith("refused"), run.see
    brief = run.brief()
    assert not (brief / "returns" / "synthesis.md").exists(), run.see
    assert Brief(brief).load_claims().verdict is None, run.see  # no verdict was decided
    # next still asks for the panel it skipped.
    after = next_module.next_action(brief)
    assert (after.phase, after.action) == ("panel", "dispatch"), run.see


@pytest.mark.slow
@pytest.mark.usefixtures("claude_release")
def test_a_failed_brief_regenerates_into_a_new_one_inside_claude(tmp_path: Path, web: Web) -> None:
    begun_in_process(tmp_path, web, until="refetch")
    player = Player(web, lambda p: follow_next(p, "full", pages_change=True))
    run = run_claude(tmp_path, web, player, f"/deep-research:deep-research {TOPIC} --depth full")
    assert run.returncode == 0 and not player.log.errors and run.denials() == [], run.see
    # The one failed call is the verdict's own exit 1 on FAIL; nothing was refused.
    assert [e[2].startswith("Exit code 1") and '"FAIL"' in e[2] for e in run.errors()] == [True]
    steps = [(a.action, a.phase, (a.command or "").split(" ")[1:2]) for a in player.actions]
    verdict = steps.index(("run", "verdict", ["verdict"]))
    # After the FAIL verdict: close the run, start it again, and plan afresh — each from next.
    assert steps[verdict + 1 :] == [
        ("run", "verdict", ["finish"]),
        ("run", "verdict", ["start"]),
        ("write", "plan", []),
    ], (steps, run.see)
    brief = run.brief()
    record = json.loads((brief / "run.json").read_text(encoding="utf-8"))
    assert record["replaces"]["verdict"] == "FAIL", run.see
    kept = Brief(Path(record["replaces"]["path"])).load_claims()
    assert kept.verdict == "FAIL" and kept.refetch_pass_rate == 0.0, run.see
    assert not (brief / "claims.json").exists(), run.see  # the new brief starts from its plan
    active = runstate.load_active(run.state)
    assert active is not None and active.brief == brief, run.see  # the new run is the live one


# --- the same runs as a Claude Code workflow ----------------------------------------------------


def workflow_agents(run: Run) -> Counter[str]:
    """Agents the workflow started, by type: each agent's first request carries no result."""
    log = run.player.log
    return Counter(
        {who.split()[1]: n for who, n in log.started.items() if who.startswith("workflow ")}
    )


def report(run: Run, label: str) -> str:
    log = run.player.log
    calls = sum(run.main_calls().values())
    return (
        f"\n{label}: {run.seconds:.1f} s wall; main-loop tool calls {calls} "
        f"({dict(run.main_calls())}); workflow agents {dict(workflow_agents(run))}; "
        f"model requests {sum(log.requests.values())} ({dict(log.requests)}); input tokens "
        f"{sum(log.tokens.values())} (JSON characters / 4); {run.see}"
    )


@pytest.mark.slow
@pytest.mark.usefixtures("claude_release")
def test_a_contested_full_run_through_the_workflow_reaches_the_reader_with_both_positions(
    tmp_path: Path, contested_web: Web, capsys: pytest.CaptureFixture[str]
) -> None:
    """The contested world (two restart dates, a syndicated copy, a short page, a date in a
    table only) at full depth, through the workflow and then through the loop: each brief is
    PARTIAL for the open contradiction and gives its reader both positions, attributed."""
    web = contested_web
    player = Player(web, lambda p: skill(p, "full"))
    run = run_claude(tmp_path, web, player, f"/deep-research:deep-research {TOPIC} --depth full")
    assert_clean(run)
    assert player.driver == "workflow" and player.refusals == [], run.see
    assert "<task-notification>" in player.notice and "completed" in player.notice, run.see
    assert sum(run.main_calls().values()) <= 6, run.see
    assert run.main_calls()["Agent"] == 0 and run.main_calls()["Write"] == 0, run.see
    assert_the_reader_gets_both_positions(run)
    started = workflow_agents(run)
    assert started["fetcher"] >= 10 and started["skeptic"] >= 2, (started, run.see)
    print(report(run, "full run through the workflow"))

    # The same script, workflows off: the skill falls back to the loop, to the same verdict
    # and the same claims — the loop's own full run, checked whole.
    again = tmp_path / "loop"
    again.mkdir()
    looped = Player(web, lambda p: skill(p, "full"))
    off = {"CLAUDE_CODE_DISABLE_WORKFLOWS": "1"}
    loop_run = run_claude(
        again, web, looped, f"/deep-research:deep-research {TOPIC} --depth full", off
    )
    # The loop runs `trace` as a command of its own: its exit 1 on the merged claim's one cite
    # that does not hold (another sub-question's source) is shown to the model, with the word
    # to go on. The workflow runs it inside its step.
    assert_clean(loop_run, exits=["violation: C1 cites S"])
    assert looped.driver == "loop" and not looped.launched, loop_run.see
    assert_a_full_run_of_the_loop(loop_run, web, capsys)
    assert_the_reader_gets_both_positions(loop_run)
    ours, theirs = Brief(run.brief()).load_claims(), Brief(loop_run.brief()).load_claims()
    assert [(c.id, c.claim, c.supporting, c.confidence) for c in ours.claims] == [
        (c.id, c.claim, c.supporting, c.confidence) for c in theirs.claims
    ], loop_run.see
    print(report(loop_run, "the same run through the next loop (workflows off)"))


@pytest.mark.slow
def test_a_quick_run_through_the_workflow_with_malformed_answers(
    tmp_path: Path, web: Web, claude_release: str
) -> None:
    """A quick run whose first fetcher answers for another sub-question and whose second leaves
    out its task id: each is refused with the fix, corrected, and the run reaches its verdict —
    on the pinned Claude Code (the oldest supported) and on the newest checked. Each judging
    agent reads its input file and tries the brief's claims.json (the triangulator its
    sources.jsonl) too: the guard, told by Claude Code which agent calls, admits the first
    and denies the second."""
    player = Player(web, lambda p: skill(p, "quick"))
    player.judges_read = True

    def spoil(sealed: str, answer: dict[str, Any]) -> dict[str, Any]:
        task_id = sealed.partition("#")[0]  # the task's id, before its agent's seal
        if task_id == "fetcher-sq1-r1":
            return {**answer, "sub_question": "sq9"}
        if task_id == "fetcher-sq2-r1":
            return {key: value for key, value in answer.items() if key != "task"}
        return answer

    player.spoil = spoil
    prompt = f"/deep-research:deep-research {TOPIC} --depth quick"
    run = run_claude(tmp_path, web, player, prompt)
    assert run.returncode == 0 and not player.log.errors, run.see
    assert str(run.result.get("result")).startswith("verdict PARTIAL_QUICK"), run.see
    refused = "\n".join(player.refusals)
    assert '"sub_question" must be "sq1"' in refused, run.see
    assert "task" in refused, run.see
    brief = run.brief()
    assert (
        json.loads((brief / "returns" / "fetcher-sq1-r1.json").read_text())["sub_question"] == "sq1"
    )
    reads = {use_id: (value, error) for _, use_id, value, error in player.log.results}
    assert {"triangulator", "skeptic"} <= {a for a, _ in player.judged}, (player.judged, run.see)
    inputs = brief.resolve() / "inputs"
    for agent, task_id in player.judged:
        value, error = reads[f"toolu_input_{task_id}"]
        assert not error and "<untrusted_source" in value, (task_id, value[:300], run.see)
        value, error = reads[f"toolu_whole_{task_id}"]
        denied = f"Read: a {agent} reads only its task's input, the file `input=` names in its "
        denied += f"prompt under {inputs}/; not "
        assert error and denied in value, (task_id, value[:300], run.see)
    print(report(run, f"quick run through the workflow ({claude_release}), two malformed answers"))


@pytest.mark.slow
def test_a_full_run_on_a_world_round_one_reads_whole_ends_usable_with_its_claims(
    tmp_path: Path, closed_web: Web, claude_release: str
) -> None:
    """Round 2's fetchers search and list only pages round 1 read: the round counts, no top-up
    is sent, and the run ends PARTIAL with one plain reason and hands its claims off — on the
    pinned Claude Code (the oldest supported) and on the newest checked."""
    web = closed_web
    player = Player(web, lambda p: skill(p, "full"))
    prompt = f"/deep-research:deep-research {TOPIC} --depth full"
    run = run_claude(tmp_path, web, player, prompt)
    assert_clean(run)
    said = str(run.result.get("result"))
    assert said.startswith("verdict PARTIAL:") and "[searches-exhausted]" in said, run.see
    document = Brief(run.brief()).load_claims()
    reasons = document.verdict_reasons
    assert not any("[floor-unmet" in r for r in reasons), (reasons, run.see)
    assert not any("run round 2" in r or "adversarial round" in r for r in reasons), run.see
    counted = json.loads((run.brief() / "trace.json").read_text())["counters"]
    assert counted["rounds"] == 2 and counted["unread_hosts"] == [], (counted, run.see)
    ledger = runstate.read_ledger(Brief(run.brief()))
    dispatched = [row for row in ledger if row.get("event") == "dispatch" and row.get("fetcher")]
    assert sum(row["round"] == 2 for row in dispatched) == 5, run.see
    assert not any(row.get("top_up") for row in dispatched), run.see
    assert scripted_run.futile_dispatches(run.brief()) == [], run.see
    assert len(run.player.then_results) == 2, run.see  # the handoff, then finish
    handoff = json_of(run.player.then_results[0])
    assert handoff["usable"] is True and handoff["context"], (handoff, run.see)
    print(report(run, f"full run on a world round 1 reads whole ({claude_release})"))


# --- the building blocks themselves (run without the CLI) -------------------------------------


def _answered(calls: list[Block], *texts: str, reminder: bool = False) -> dict[str, Any]:
    """A request carrying one result per call (each with the CLI's own note after it)."""
    results = [
        {
            "type": "tool_result",
            "tool_use_id": call["id"],
            "content": [text(value), text("agentId: a1 (use SendMessage to continue)")],
        }
        for call, value in zip(calls, texts, strict=True)
    ]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": calls},
        {"role": "user", "content": results},
    ]
    if reminder:
        messages.append({"role": "system", "content": "The task tools haven't been used."})
    return {"messages": messages}


def test_a_conversation_answers_each_step_once_and_a_retry_alike() -> None:
    steps: list[Results] = []

    def program() -> Program:
        first = yield [bash("echo one"), bash("echo two")]
        steps.append(first)
        return "done: " + " ".join(value for value, _ in first.values())

    conversation = Conversation(program())
    opening = conversation.answer(last_results({"messages": [{"role": "user", "content": "go"}]}))
    assert [block["input"]["command"] for block in opening] == ["echo one", "echo two"]
    # The results after the CLI's reminder are found; each result's own text is its first block.
    body = _answered(opening, "one", "two", reminder=True)
    assert last_results(body) == {
        opening[0]["id"]: ("one", False),
        opening[1]["id"]: ("two", False),
    }
    final = conversation.answer(last_results(body))
    assert final == [text("done: one two")]
    assert conversation.answer(last_results(body)) == final and len(steps) == 1  # a retry
    assert conversation.answer({"toolu_later": ("x", False)}) == final


def test_the_scripted_web_lists_the_pages_of_the_query_it_is_asked() -> None:
    server = LocalServer()  # never started: only its port is read
    try:
        web = Web(server, "127.0.0.9")
        web.build()
    finally:
        server.httpd.server_close()
    asked = "Perform a web search for the query: harbourton sq2 evidence against"
    query = scripted_run.query_in(asked)
    assert query == "harbourton sq2 evidence against"
    assert web.found(query) == web.pages[("sq2", 2)] and len(web.found(query)) == 2
    assert web.found("harbourton sq2 query 1") == web.pages[("sq2", 1)]
    assert web.found("something else") == []
    assert web.resolve_env().count("=127.0.0.9") == 30
