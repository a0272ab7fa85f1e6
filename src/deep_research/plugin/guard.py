"""The Claude Code hook guard: caps and fetch safety enforced by the harness, not the prompt.

``hooks/hooks.json`` sends every PreToolUse event for WebFetch, WebSearch, Bash, Agent (``Task``
in older clients) and the file-writing tools, and every PostToolUse event for WebSearch and
Agent, to ``deep-research guard``. The answer, as Claude Code reads a command hook's:

* **deny** — the reason on stderr, exit code 2: Claude Code blocks the call and shows the
  reason to the model.
* **explicit allow** — only for a Bash command made of our own CLI calls (``deep-research …``,
  called by that name, the commands a run uses, but not ``mcp-gate``/``mcp-fetch``, which
  launch a configured server) that passed every check below: exit 0 with
  ``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", …}}``
  on stdout. Claude Code then skips its permission prompt, which it would otherwise show when
  the model invokes the skill itself (the skill's ``allowed-tools`` apply only to a user's
  ``/deep-research:deep-research``). The user's deny and ask rules still apply.
* **pass** — everything else that is not denied: exit 0, nothing printed; the user's own
  permission rules decide.

How a command is read. A Bash command line is split by a small shell lexer that knows quoting,
``\\`` escapes, comments, newlines and every control and redirection operator, and marks each
word that the shell would still rewrite: ``$NAME``/``${…}`` (a value the guard cannot know),
unquoted ``* ? [ {`` and a leading ``~``. Command substitution (``$(…)``, backticks, ``<(…)``)
and here-documents stop it. Our CLI's arguments are then parsed by the CLI's own parser
(:func:`deep_research.cli.build_parser`, no abbreviated options), so option order and spelling
cannot change what the guard sees; arguments it cannot parse are denied.

What each check does, and how it fails:

* **fetch safety** (WebFetch, ``deep-research fetch`` in Bash) — *fails closed*. Always: the URL
  must pass the SSRF checks that need no DNS (:func:`netpolicy.check_url`: scheme, credentials,
  ports, private/metadata addresses and names). During an active run also: the host must be on
  the run's allow-list (exact host or subdomain), ``--brief`` must be the run's brief, and the
  run's fetch budget must not be spent. An argument that is not a literal (``$URL``, a glob) is
  denied, as is our CLI called through command substitution or ``eval`` (``sh -c`` scripts are
  looked into); so is any error while deciding.
* **MCP calls** (``deep-research mcp-fetch`` in Bash) during an active run — *fails closed*:
  each counts against the run's fetch budget; the three MCP gates run inside the command, on the
  run's own state folder only (its ``mcp-config.json`` and reviewed fingerprints, which cannot
  be written during the run); ``mcp-gate --record`` (a human's review) is denied.
* **search budget** (WebSearch) during an active run — *fails closed*: every search counts
  against the run's ``max_searches``, subagents' included.
* **Bash during a run** — *fails closed*: only our CLI (the commands a run uses) and the
  read-only ``cat head tail wc grep jq ls echo printf true pwd`` and ``cd`` run; any other
  program (a shell, an interpreter, a network tool, ``env``/``nice``/``xargs``/``find -exec``
  wrappers, ``tee``, ``dd``, ``rm``, ``mv``, ``ln``, …) is denied, and so is any word the guard
  cannot know (``$VAR``, substitutions) and any ``NAME=value`` assignment. Redirections need a
  literal target and may not write the run's records (paths resolved after the ``cd``s of the
  same line and symlinks), nor reach ``/dev/tcp`` and the like. Options that make our CLI
  write a file (``--output``, ``--report``) may not name a record either.
* **settings** during an active run — denied: ``--set`` on any of our commands and any
  ``DEEP_RESEARCH_*`` assignment (prefix, ``env``, ``export``, …): a run's settings are fixed
  at ``start``.
* **allow-list widening** (``deep-research hosts add`` in Bash) during an active run — denied:
  the list grows only from the hosts of WebSearch results (PostToolUse). ``start`` with
  ``--allow-host`` is denied too (static hosts are for the CLI outside Claude Code), and so is
  a second ``start`` on top of an active run (it would reset the budget).
* **ending a run** (``deep-research finish``) during an active run — only from the orchestrator
  (an event from a subagent carries ``agent_id``) and only naming the active run's brief; a
  subagent cannot ``start`` a run either. ``deep-research guard`` is never run from Bash: a
  hand-made event would forge a search hit or an agent's completion.
* **fetches outside a run** (``deep-research fetch``/``mcp-fetch`` with no active run) — denied:
  otherwise ``finish`` followed by a fetch would leave the allow-list behind.
* **the run's own records** (Write, Edit, MultiEdit, NotebookEdit; Bash commands that name
  them) — *fails closed*: ``state/active-run.json`` and the per-session run records always
  (:func:`runstate.session_state`: how a hook finds a run started after a ``cd``), and during a
  run the brief's ``run.json`` (caps), ``guard-log.jsonl`` (budget ledger),
  ``allowed-hosts.json``, ``trace.json``, ``sources.jsonl``, ``fetch-log.jsonl``,
  ``audit.json`` and ``corpus/`` — files only the CLI writes; editing one would forge a gate's
  input or reset a cap — and the state folder's ``mcp-config.json`` and ``mcp-manifests/``, and
  the plugin's own code (``$CLAUDE_PLUGIN_ROOT``, the installed package, its environment).
  Names are compared case-insensitively. Reading them (cat, jq, …) passes. ``claims.json``
  stays writable: the synthesis writes it, and the trace gate re-reads every quote from
  ``corpus/``.
* **agent dispatches** (Agent) during an active run — *fails closed*, an allow-list: only the
  tasks ``deep-research next`` prints start, each under its own agent type with its prompt
  exactly as printed (:func:`deep_research.plugin.tasks.parse`); any other agent or prompt is
  denied. Then at most ``max_fanout`` dispatches in flight; fetcher dispatches sized from
  plan.json (per sub-question and round: one, a retry and a top-up, under a hard ceiling; one
  fan-out per round before a plan exists); a task's ``round`` above ``max_rounds`` is denied.
* **no active run** — fetch safety, the run pointers, our CLI's own rules (no fetch outside a
  run, no static hosts, no ``guard`` from Bash) apply; everything else passes.
* **PostToolUse / PostToolUseFailure** (recording WebSearch hosts — from the structured hits
  only, never from the echoed query or prose — and agent completions, failed ones included, so
  a dispatch that fails after admission frees its slot) cannot block and *fails open*:
  a missed record only makes later checks stricter (fewer hosts, more agents counted in flight;
  a dispatch stops counting after an hour).

What stays best-effort: the guard reads command lines, it does not run them. A program on the
read-only list is trusted to be what its name says, and a path is resolved as the file system
stands when the hook runs. Claude Code's own sandbox (``sandbox`` settings: file-system and
network limits enforced by the OS for Bash) is the boundary beneath this one.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import re
import sys
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deep_research.brief import RUN_FILE, Brief
from deep_research.cli import build_parser
from deep_research.errors import TargetRefused
from deep_research.fetch.hosts import add_hosts
from deep_research.fetch.hosts import load as load_allowlist
from deep_research.fetch.netpolicy import NetPolicy, check_host, check_url
from deep_research.plugin.runstate import (
    ActiveRun,
    append_ledger,
    fetcher_budget,
    in_flight,
    load_active,
    locked,
    pointer_path,
    read_ledger,
    session_state,
    sessions_dir,
    state_dir,
)
from deep_research.plugin.tasks import FETCHING, TASKS, declared_round, parse
from deep_research.urls import host_of, redact

AGENT_TOOLS = frozenset({"Agent", "Task"})
WRITE_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
#: Only named in a denial's hint: during a run every program off the lists below is denied.
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
# Written only by the CLI: a model editing one would forge a gate's input or reset a cap.
PROTECTED_FILES = frozenset(
    {
        RUN_FILE,
        "guard-log.jsonl",
        "allowed-hosts.json",
        "trace.json",
        "sources.jsonl",
        "fetch-log.jsonl",
        "audit.json",
    }
)
#: What Bash may run during a research run besides our CLI: programs that only read (none has
#: an option that writes a file or runs another program) and ``cd``.
READ_ONLY_PROGRAMS = frozenset(
    {"cat", "head", "tail", "wc", "grep", "jq", "ls", "echo", "printf", "true", "pwd"}
)
#: Our CLI's commands that a research run uses (skills/, agents/, ``deep-research next``).
RUN_COMMANDS = frozenset(
    {
        "start",
        "fresh",
        "next",
        "ingest",
        "fetch",
        "mcp-gate",
        "mcp-fetch",
        "normalize",
        "triangulate",
        "votes",
        "entail",
        "verdict",
        "counters",
        "trace",
        "validate",
        "refetch",
        "ciber",
        "render",
        "handoff",
        "hosts",
        "finish",
    }
)
_CLI_NAME = "deep-research"
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "yash", "fish", "busybox"})
#: Programs that run another program named in their arguments (for recognising our CLI outside
#: a run, and for naming the real program in a denial).
_WRAPPERS = frozenset(
    {
        "env",
        "sudo",
        "doas",
        "nohup",
        "time",
        "command",
        "builtin",
        "exec",
        "xargs",
        "nice",
        "ionice",
        "timeout",
        "stdbuf",
        "setsid",
        "flock",
        "chroot",
        "taskset",
        "unbuffer",
        "watch",
        "parallel",
        "find",
    }
)
#: Shell builtins that set or unset variables.
_VARIABLE_BUILTINS = frozenset(
    {"env", "export", "declare", "typeset", "local", "readonly", "unset", "set"}
)
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=")
_EVAL = re.compile(r"\beval\b")
#: Redirection targets under /dev that are not devices bash opens a socket for.
_DEV_OK = re.compile(r"^/dev/(null|stdin|stdout|stderr|fd/\d+)$")


@dataclass(frozen=True)
class Decision:
    allow: bool
    reason: str = ""
    #: An explicit allow: Claude Code skips its permission prompt (our own CLI calls only).
    approve: bool = False


ALLOW = Decision(True)
APPROVED_REASON = (
    "deep-research guard: our CLI, called as a research run uses it; every check passed"
)


def deny(reason: str) -> Decision:
    return Decision(False, reason)


def hook_output(decision: Decision) -> str:
    """What the hook prints on stdout for an allowed call: JSON for an explicit allow, else
    nothing (Claude Code's permission rules then decide)."""
    if not (decision.allow and decision.approve):
        return ""
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "allow",
                "permissionDecisionReason": decision.reason or APPROVED_REASON,
            }
        }
    )


# --- reading the event ----------------------------------------------------------------------


def parse_event(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except RecursionError:
        # A hook event nested past the interpreter's limit is not an event: deny, never crash.
        raise ValueError("the hook event is nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError("the hook event is not a JSON object")
    return value


def _tool_input(event: Mapping[str, Any]) -> Mapping[str, Any]:
    value = event.get("tool_input")
    return value if isinstance(value, Mapping) else {}


# --- reading a shell command line -----------------------------------------------------------


class Unparseable(ValueError):
    """The command line cannot be read with certainty."""


class Substitution(Unparseable):
    """The command line runs a command of its own making: ``$(…)``, backticks, ``<(…)``."""


@dataclass(frozen=True)
class Word:
    """One shell word after quote removal, and whether the shell would still rewrite it."""

    text: str
    expands: bool = False  # $NAME, ${…}, $'…': a value the guard cannot know
    globs: bool = False  # unquoted [ ] { } or a leading ~: pattern, brace or tilde expansion
    #: The word as a pathname pattern (quoted characters escaped) when it has an unquoted * or
    #: ?. Bash leaves a pattern that matches nothing as it is: a URL's ``?`` usually does.
    pattern: str | None = None

    @property
    def literal(self) -> bool:
        """Nothing for the shell to rewrite, whatever the file system holds."""
        return not (self.expands or self.globs or self.pattern is not None)

    def literal_in(self, cwds: Iterable[Path]) -> bool:
        """Read as it is in each of ``cwds``: a pattern only when it matches nothing there."""
        if self.expands or self.globs:
            return False
        if self.pattern is None:
            return True
        # One directory listing at most: a pattern that would walk a tree could outlast the
        # hook's timeout, and a hook that times out does not block the call.
        wild = [part for part in self.pattern.split("/") if glob.has_magic(part)]
        if len(wild) > 1 or "**" in self.pattern:
            return False
        return not any(_matches(self.pattern, cwd) for cwd in cwds)


def _matches(pattern: str, cwd: Path) -> bool:
    """Whether bash could expand ``pattern`` in ``cwd`` (hidden files included: dotglob)."""
    found = glob.iglob(pattern, root_dir=cwd, include_hidden=True)
    return next(found, None) is not None


@dataclass
class SimpleCommand:
    words: list[Word] = field(default_factory=list)
    redirects: list[tuple[str, Word]] = field(default_factory=list)


_CONTROL = ("&&", "||", ";;&", ";;", ";&", "|&", "|", "&", ";", "(", ")", "\n")
_REDIRECT = ("&>>", "&>", "<<<", "<<-", "<<", ">>", ">|", "<>", "<&", ">&", "<", ">")
_OPERATORS = sorted(_CONTROL + _REDIRECT, key=len, reverse=True)
_WRITES = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


class _Lexer:
    """Splits a command line into words and operators as a POSIX shell (bash) would."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.tokens: list[Word | str] = []
        self._reset()

    def _reset(self) -> None:
        self.buf: list[str] = []
        self.pattern: list[str] = []  # the word as a glob pattern, quoted characters escaped
        self.started = False
        self.quoted = False
        self.expands = False
        self.globs = False
        self.wild = False

    def _add(self, text: str, *, quoted: bool) -> None:
        self.buf.append(text)
        self.pattern.append(glob.escape(text) if quoted else text)
        self.started = True
        self.quoted = self.quoted or quoted

    def _flush(self) -> None:
        if self.started:
            pattern = "".join(self.pattern) if self.wild else None
            self.tokens.append(Word("".join(self.buf), self.expands, self.globs, pattern))
        self._reset()

    def run(self) -> list[Word | str]:
        line, i = self.line, 0
        while i < len(line):
            c = line[i]
            if c in " \t":
                self._flush()
                i += 1
            elif c == "\\":
                if line.startswith("\\\n", i):
                    i += 2  # a line continuation
                    continue
                self._add(line[i + 1 : i + 2] or "\\", quoted=True)
                i += 2
            elif c == "#" and not self.started:
                end = line.find("\n", i)
                i = len(line) if end < 0 else end
            elif c == "'":
                end = line.find("'", i + 1)
                if end < 0:
                    raise Unparseable("an unterminated quote")
                self._add(line[i + 1 : end], quoted=True)
                i = end + 1
            elif c == '"':
                i = self._double_quoted(i + 1)
            elif c == "`":
                raise Substitution("a backtick command substitution")
            elif c == "$":
                i = self._dollar(i, in_double=False)
            elif (op := self._operator(i)) is not None:
                if c in "<>" and line.startswith("(", i + 1):
                    raise Substitution("a process substitution")
                if op in ("<<", "<<-"):
                    raise Unparseable("a here-document")
                digits = "".join(self.buf)
                if op in _REDIRECT and digits.isdigit() and not self.quoted and op[0] in "<>":
                    self._reset()  # `2>file`: the digits name a file descriptor, not a word
                else:
                    self._flush()
                self.tokens.append(op)
                i += len(op)
            else:
                if c in "*?":
                    self.wild = True
                elif c in "[]{}" or (c == "~" and (not self.buf or self.buf[-1] in "=:")):
                    self.globs = True
                self._add(c, quoted=False)
                i += 1
        self._flush()
        return self.tokens

    def _operator(self, i: int) -> str | None:
        return next((op for op in _OPERATORS if self.line.startswith(op, i)), None)

    def _double_quoted(self, i: int) -> int:
        line = self.line
        self._add("", quoted=True)
        while i < len(line):
            c = line[i]
            if c == '"':
                return i + 1
            if c == "\\" and line[i + 1 : i + 2] in ("$", "`", '"', "\\", "\n"):
                if line[i + 1] != "\n":
                    self._add(line[i + 1], quoted=True)
                i += 2
            elif c == "`":
                raise Substitution("a backtick command substitution")
            elif c == "$":
                i = self._dollar(i, in_double=True)
            else:
                self._add(c, quoted=True)
                i += 1
        raise Unparseable("an unterminated quote")

    def _dollar(self, i: int, *, in_double: bool) -> int:
        line = self.line
        after = line[i + 1 : i + 2]
        self.started = True
        if after == "(":
            raise Substitution("a $(…) command substitution")
        if after == "{":
            end = line.find("}", i + 2)
            if end < 0:
                raise Unparseable("an unterminated ${…}")
            inner = line[i : end + 1]
            if "$(" in inner or "`" in inner:
                raise Substitution("a command substitution inside ${…}")
            self._add(inner, quoted=True)
            self.expands = True
            return end + 1
        if after == "'" and not in_double:  # $'…': escapes the guard does not decode
            end = i + 2
            while end < len(line) and line[end] != "'":
                end += 2 if line[end] == "\\" else 1
            if end >= len(line):
                raise Unparseable("an unterminated quote")
            self._add(line[i : end + 1], quoted=True)
            self.expands = True
            return end + 1
        if after == '"' and not in_double:  # $"…": a translated string
            self.expands = True
            return i + 1
        name = re.match(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-]", line[i + 1 :])
        if name is None:
            self._add("$", quoted=True)  # a lone $ is literal
            return i + 1
        self._add("$" + name.group(), quoted=True)
        self.expands = True
        return i + 1 + name.end()


def parse_command_line(line: str) -> list[SimpleCommand]:
    """The simple commands of a command line, each with its redirections.

    Raises :class:`Substitution` for a command substitution and :class:`Unparseable` for what
    cannot be read with certainty (an unterminated quote, a here-document, a dangling
    redirection)."""
    commands = [SimpleCommand()]
    tokens = _Lexer(line).run()
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if isinstance(token, Word):
            commands[-1].words.append(token)
        elif token in _CONTROL:
            commands.append(SimpleCommand())
        else:
            target = tokens[index + 1] if index + 1 < len(tokens) else None
            if not isinstance(target, Word):
                raise Unparseable(f"a {token} redirection without a target")
            commands[-1].redirects.append((token, target))
            index += 1
        index += 1
    return [command for command in commands if command.words or command.redirects]


def _program(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _mentions_cli(command: str) -> bool:
    return "deep-research" in command or "deep_research" in command


# --- reading our CLI's arguments, with the CLI's own parser ---------------------------------


class CliParseError(Exception):
    """The CLI would refuse these arguments (it exits 2 and runs nothing)."""


class _CliExit(Exception):  # not an error: --help or --version, nothing else runs
    pass


class _GuardParser(argparse.ArgumentParser):
    """The CLI's parser, raising where the CLI would print and exit."""

    def error(self, message: str) -> Any:
        raise CliParseError(message)

    def exit(self, status: int = 0, message: str | None = None) -> Any:
        if status:
            raise CliParseError(message or f"exit {status}")
        raise _CliExit

    def _print_message(self, message: str, file: Any = None) -> None:
        return None

    def print_help(self, file: Any = None) -> None:
        return None  # formatting help would load the backend registry: not on the hook path

    def print_usage(self, file: Any = None) -> None:
        return None


_PARSER: argparse.ArgumentParser | None = None


def parse_cli(arguments: list[str]) -> argparse.Namespace | None:
    """``deep-research ARGUMENTS`` as the CLI reads them; None for ``--help``/``--version``
    (which print and exit before any command runs). Raises :class:`CliParseError`."""
    global _PARSER
    if _PARSER is None:
        _PARSER = build_parser(_GuardParser)
    try:
        return _PARSER.parse_args(arguments)
    except _CliExit:
        return None


# --- checks ---------------------------------------------------------------------------------


def check_target(url: str, run: ActiveRun | None, *, tool: str) -> Decision:
    """SSRF always; during a run also the allow-list. Spends nothing."""
    if not re.fullmatch(r"https?://\S+", url.strip(), re.IGNORECASE):
        return deny(f"{tool}: the URL must be a literal http(s) URL, got {redact(url)[:80]!r}")
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
    return ALLOW


def check_fetch(url: str, run: ActiveRun | None, *, tool: str) -> Decision:
    """SSRF always; during a run also the allow-list and the budget (recorded when allowed)."""
    decision = check_target(url, run, tool=tool)
    if not decision.allow or run is None:
        return decision
    return spend_fetches(run, [(tool, host_of(url) or "?")])


def spend_fetch(run: ActiveRun, tool: str, target: str) -> Decision:
    """One fetch from the run's budget (page or MCP call alike), or a denial when it is spent."""
    return spend_fetches(run, [(tool, target)])


def spend_fetches(run: ActiveRun, fetches: list[tuple[str, str]]) -> Decision:
    """Fetches from the run's budget, all or none (one command line may make several)."""
    brief = Brief(run.brief)
    with locked(brief):
        spent = sum(1 for row in read_ledger(brief) if row.get("event") == "fetch")
        if spent + len(fetches) > run.caps.max_fetches:
            tool = fetches[0][0]
            return deny(f"{tool}: the run's fetch budget is spent ({spent}/{run.caps.max_fetches})")
        for tool, target in fetches:
            append_ledger(brief, {"event": "fetch", "tool": tool, "host": target})
    return ALLOW


def check_search(run: ActiveRun | None, tool_use_id: str) -> Decision:
    """One WebSearch from the run's search budget (recorded when allowed; the query is not)."""
    if run is None:
        return ALLOW
    brief = Brief(run.brief)
    with locked(brief):
        spent = sum(1 for row in read_ledger(brief) if row.get("event") == "search")
        if spent >= run.caps.max_searches:
            return deny(
                f"WebSearch: the run's search budget is spent ({spent}/{run.caps.max_searches})"
            )
        append_ledger(brief, {"event": "search", "id": tool_use_id})
    return ALLOW


def _fold(path: Path) -> str:
    return os.path.normcase(str(path)).casefold()


def _inside(path: Path, root: Path) -> bool:
    """``path`` is ``root`` or below it, names compared case-insensitively (macOS, Windows)."""
    folded = _fold(root)
    return _fold(path) == folded or any(_fold(parent) == folded for parent in path.parents)


def _code_roots() -> list[Path]:
    """The plugin's own code: what the guard and the CLI run from."""
    roots = [Path(__file__).resolve().parents[1]]  # the installed deep_research package
    if plugin_root := os.environ.get("CLAUDE_PLUGIN_ROOT"):
        roots.append(Path(plugin_root).resolve())
    if plugin_data := os.environ.get("CLAUDE_PLUGIN_DATA"):
        roots.append(Path(plugin_data).resolve())
    if sys.prefix != sys.base_prefix:  # a virtual environment: its interpreter and packages
        roots.append(Path(sys.prefix).resolve())
    return roots


def _resolve(target: str, cwd: Path) -> Path:
    path = Path(os.path.expanduser(target))
    return (path if path.is_absolute() else cwd / path).resolve()


def protected_record(
    target: str, run: ActiveRun | None, state: Path | None, cwd: Path
) -> str | None:
    """Which of the run's protected records ``target`` is (symlinks resolved), or None."""
    if not target:
        return None
    resolved = _resolve(target, cwd)
    if state is not None and _fold(resolved) == _fold(pointer_path(state).resolve()):
        return "active-run.json"
    if _inside(resolved, sessions_dir().resolve()) and resolved != sessions_dir().resolve():
        return "the session's run record"
    if run is None:
        return None
    root = run.brief.resolve()
    if _fold(resolved.parent) == _fold(root) and resolved.name.casefold() in PROTECTED_FILES:
        return resolved.name.casefold()
    if _inside(resolved, root / "corpus"):
        return "corpus/"
    if _inside(resolved, root / ".robots"):
        return ".robots/"  # a forged robots.txt cache would let fetches ignore a site's rules
    if state is not None:
        if _fold(resolved) == _fold((state / "mcp-config.json").resolve()):
            return "mcp-config.json"
        if _inside(resolved, (state / "mcp-manifests").resolve()):
            return "mcp-manifests/"
    if any(_inside(resolved, code) for code in _code_roots()):
        return "the plugin's own code"
    return None


def _record_denied(tool: str, name: str) -> Decision:
    if name in ("mcp-config.json", "mcp-manifests/"):
        return deny(
            f"{tool}: {name} is the MCP servers' reviewed configuration; it cannot change during "
            "a research run"
        )
    if name == "the plugin's own code":
        return deny(f"{tool}: the plugin's own code cannot be changed during a research run")
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


NO_RUN = (
    "deep-research {command}: no research run is active; fetches happen inside one, "
    "under its allow-list and budget — start it with `deep-research start`"
)
SETTINGS_FIXED = (
    "Bash: a research run's settings are fixed when it starts; during the run neither --set "
    "nor a DEEP_RESEARCH_* environment variable can change them"
)
NOT_LITERAL = (
    "Bash: during a research run the command must be spelled out literally — no "
    "$-expansions, command substitution or backticks — so the guard checks exactly what runs"
)
ASSIGNMENT = (
    "Bash: NAME=value assignments are not allowed during a research run: they can change what "
    "a command runs (PATH, PYTHONPATH, …)"
)
SUBSTITUTION = (
    "Bash: call deep-research directly, not through command substitution or eval, so the call "
    "can be checked"
)


def _not_allowed(program: str) -> Decision:
    hint = (
        "; fetch through `deep-research fetch URL --brief DIR` so the text is kept"
        if program in NETWORK_TOOLS
        else "; read files with the Read tool and write your own with Write"
    )
    return deny(
        f"Bash: {program} is not allowed during a research run: until `deep-research finish`, "
        f"Bash runs only deep-research, cd and the read-only "
        f"{', '.join(sorted(READ_ONLY_PROGRAMS))}{hint}"
    )


@dataclass
class _Context:
    """What one Bash call is checked against, and what its checks found."""

    run: ActiveRun | None
    state: Path | None
    cwds: set[Path]  # where the shell may be: the event's cwd and every `cd` target so far
    agent: str | None  # the subagent's id (None in the orchestrator's own loop)
    fetches: list[tuple[str, str]] = field(default_factory=list)  # spent only if all pass
    approve: bool = True  # nothing but our CLI's run commands, called by name
    saw_cli: bool = False

    def protected(self, target: str) -> str | None:
        for cwd in sorted(self.cwds):
            name = protected_record(target, self.run, self.state, cwd)
            if name is not None:
                return name
        return None

    def resolves_to(self, target: str, expected: Path) -> bool:
        """``target`` names ``expected`` wherever the shell may be."""
        want = _fold(expected.resolve())
        return all(_fold(_resolve(target, cwd)) == want for cwd in self.cwds)


def check_start(arguments: argparse.Namespace, run: ActiveRun | None) -> Decision:
    """A run's caps and hosts are fixed when it starts: no second start on top of an active run
    (it would reset the budget), and no static hosts chosen from inside Claude Code."""
    if run is not None:
        return deny(
            f"deep-research start: a research run is active ({run.brief.name}); "
            "finish it with `deep-research finish` before starting another"
        )
    if arguments.allow_host:
        return deny(
            "deep-research start: static hosts cannot be added from inside Claude Code; "
            "the run's allow-list grows from its search results"
        )
    return ALLOW


def check_bash(
    command: str,
    run: ActiveRun | None,
    state: Path | None = None,
    cwd: Path | None = None,
    agent: str | None = None,
) -> Decision:
    """One Bash call: every simple command of its line, then the fetches it would spend."""
    context = _Context(run, state, {(cwd or Path.cwd()).resolve()}, agent)
    decision = _check_line(command, context)
    if not decision.allow:
        return decision
    if context.fetches and run is not None:
        spent = spend_fetches(run, context.fetches)
        if not spent.allow:
            return spent
    if context.approve and context.saw_cli:
        return Decision(True, APPROVED_REASON, approve=True)
    return ALLOW


def _check_line(command: str, context: _Context) -> Decision:
    during = context.run is not None
    try:
        commands = parse_command_line(command)
    except Substitution as exc:
        if during:
            return deny(f"{NOT_LITERAL} (found {exc})")
        return deny(SUBSTITUTION) if _mentions_cli(command) else _pass(context)
    except Unparseable as exc:
        if during or _mentions_cli(command):
            return deny(
                f"Bash: the command line could not be parsed ({exc}), so it cannot be checked"
            )
        return _pass(context)
    if _mentions_cli(command) and _EVAL.search(command):
        return deny(SUBSTITUTION)
    for simple in commands:
        decision = _check_simple(simple, context) if during else _check_outside(simple, context)
        if not decision.allow:
            return decision
    return ALLOW


def _pass(context: _Context) -> Decision:
    context.approve = False
    return ALLOW


def _split_assignments(words: list[Word]) -> tuple[list[Word], list[Word]]:
    index = 0
    while index < len(words) and _ASSIGNMENT.match(words[index].text):
        index += 1
    return words[:index], words[index:]


def _sets_our_settings(assignments: list[Word], rest: list[Word]) -> bool:
    if any(word.text.startswith("DEEP_RESEARCH_") for word in assignments):
        return True
    program = _program(rest[0].text) if rest else ""
    if program in _VARIABLE_BUILTINS:
        return any("DEEP_RESEARCH_" in word.text for word in rest[1:])
    return False


def _effective_program(rest: list[Word]) -> str:
    """The program a wrapped command runs (``nice -n 5 curl …`` → curl), for a denial's text."""
    index = 0
    while index < len(rest):
        text = rest[index].text
        if not (
            _program(text) in _WRAPPERS
            or _ASSIGNMENT.match(text)
            or (index > 0 and (text.startswith("-") or re.fullmatch(r"[\d.]+[smhd]?", text)))
        ):
            return _program(text)
        index += 1
    return _program(rest[0].text) if rest else ""


def _shell_script(rest: list[Word]) -> Word | None:
    """The script of ``sh -c SCRIPT`` (``-lc``, ``-ec``, … too), past wrappers."""
    index = 0
    while index < len(rest) and (
        _program(rest[index].text) in _WRAPPERS or _ASSIGNMENT.match(rest[index].text)
    ):
        index += 1
    if index >= len(rest) or _program(rest[index].text) not in _SHELLS:
        return None
    for position, word in enumerate(rest[index + 1 :], start=index + 1):
        text = word.text
        if text.startswith("-") and not text.startswith("--") and "c" in text[1:]:
            return rest[position + 1] if position + 1 < len(rest) else None
        if not text.startswith("-") and text not in ("sh", "bash"):  # `busybox sh -c`
            return None
    return None


def _check_redirect(op: str, target: Word, context: _Context) -> Decision:
    """During a run: a redirection's target must be a literal path that is no record."""
    if op == "<<<":  # a here-string: the word is text, not a file
        return ALLOW if not target.expands else deny(NOT_LITERAL)
    if op in ("<&", ">&") and target.literal and re.fullmatch(r"\d*-?", target.text):
        return ALLOW  # `2>&1`, `>&-`: a file descriptor, not a file
    if not target.literal_in(context.cwds):
        return deny(
            "Bash: during a research run a redirection must name a literal path (no "
            "$-expansions, globs or ~), so the guard can tell whether it writes the run's records"
        )
    for cwd in context.cwds:
        path = os.path.normpath(target.text if os.path.isabs(target.text) else cwd / target.text)
        if path.startswith("/dev/") and not _DEV_OK.match(path):
            return deny(f"Bash: {path} is not a file: no redirection to it during a research run")
    if op in _WRITES:
        name = context.protected(target.text)
        if name is not None:
            return _record_denied("Bash", name)
    if target.text != "/dev/null":
        context.approve = False
    return ALLOW


def _check_simple(simple: SimpleCommand, context: _Context) -> Decision:
    """One simple command during a research run: an allow-list, not a deny-list."""
    assignments, rest = _split_assignments(simple.words)
    if _sets_our_settings(assignments, rest):
        return deny(SETTINGS_FIXED)
    for op, target in simple.redirects:
        decision = _check_redirect(op, target, context)
        if not decision.allow:
            return decision
    if not rest:
        return deny(ASSIGNMENT) if assignments else ALLOW
    head = rest[0]
    if head.expands:
        return deny(NOT_LITERAL)
    if not head.literal_in(context.cwds):
        return deny(
            "Bash: during a research run the program must be named literally, not by a glob"
        )
    program = _program(head.text)
    if program == _CLI_NAME or program == "cd" or program in READ_ONLY_PROGRAMS:
        if assignments:
            return deny(ASSIGNMENT)
        if program == _CLI_NAME:
            return _check_cli(head, rest[1:], context)
        if any(word.expands for word in rest[1:]):
            return deny(NOT_LITERAL)
        context.approve = False
        return _cd(rest[1:], context) if program == "cd" else ALLOW
    # Denied whatever it is; say the most useful thing about why.
    for word in rest[1:]:
        if not word.literal_in(context.cwds):
            continue
        for path in {word.text, word.text.split("=", 1)[-1]}:  # `of=PATH`, `--out=PATH`
            name = context.protected(path)
            if name is not None:
                return _record_denied("Bash", name)
    script = _shell_script(rest)
    if script is not None and script.literal_in(context.cwds):
        nested = _check_line(script.text, context)
        if not nested.allow:
            return nested
    return _not_allowed(_effective_program(rest))


def _cd(arguments: list[Word], context: _Context) -> Decision:
    operands = [word for word in arguments if not (word.text.startswith("-") and word.text != "-")]
    if not operands:
        context.cwds.add(Path.home().resolve())
        return ALLOW
    target = operands[0]
    if not target.literal_in(context.cwds) or target.text == "-":
        return deny(
            "Bash: during a research run cd needs a literal directory, so the guard can follow "
            "where the paths after it point"
        )
    # Kept beside the old ones: the cd may fail, or hold only inside a subshell or pipeline.
    context.cwds |= {_resolve(target.text, cwd) for cwd in context.cwds}
    return ALLOW


def _check_outside(simple: SimpleCommand, context: _Context) -> Decision:
    """One simple command with no run active: only our CLI's own rules apply."""
    assignments, rest = _split_assignments(simple.words)
    for op, target in simple.redirects:
        if not (op in ("<&", ">&") and re.fullmatch(r"\d*-?", target.text)) and (
            target.text != "/dev/null"
        ):
            context.approve = False
    if assignments:
        context.approve = False
    if not rest:
        return ALLOW
    call = _find_cli(rest)
    if call is None:
        context.approve = False
        script = _shell_script(rest)
        if script is not None:
            if not script.literal_in(context.cwds):
                return deny(SUBSTITUTION) if _mentions_cli(script.text) else ALLOW
            return _check_line(script.text, context)
        if any(_mentions_cli(w.text) and not w.literal_in(context.cwds) for w in rest):
            return deny(SUBSTITUTION)
        return ALLOW
    index, arguments = call
    if index > 0:
        context.approve = False  # wrapped (`nice deep-research …`): checked, not pre-approved
    return _check_cli(rest[index], arguments, context)


def _find_cli(rest: list[Word]) -> tuple[int, list[Word]] | None:
    """Where our CLI is called in a simple command, and its arguments: as the program, after
    wrappers (``env``, ``nice``, ``xargs``, …), or as ``python -m deep_research.cli``."""
    for index, word in enumerate(rest):
        name = _program(word.text)
        if name == _CLI_NAME and (index == 0 or _program(rest[0].text) in _WRAPPERS):
            return index, rest[index + 1 :]
        if word.text == "-m" and index + 1 < len(rest):
            module = rest[index + 1].text
            if module.startswith("deep_research"):
                return index + 1, rest[index + 2 :]
    return None


def _check_cli(program: Word, words: list[Word], context: _Context) -> Decision:
    """One call of our CLI, its arguments read by the CLI's own parser."""
    context.saw_cli = True
    if program.text != _CLI_NAME and not _is_plugin_launcher(program.text):
        context.approve = False  # another file of that name: checked, never pre-approved
    if not all(word.literal_in(context.cwds) for word in words):
        return deny(
            "deep-research: every argument must be literal — no $-expansions, globs, ~ or "
            "substitutions — so the guard checks exactly what the CLI will run"
        )
    try:
        arguments = parse_cli([word.text for word in words])
    except CliParseError as exc:
        return deny(
            f"deep-research: these arguments do not parse as the CLI reads them ({exc}); "
            "the guard denies what it cannot read"
        )
    if arguments is None:
        return ALLOW  # --help or --version: prints and exits before any command runs
    decision = _check_cli_command(arguments, context)
    if decision.allow and not _approvable(arguments):
        context.approve = False
    return decision


def _is_plugin_launcher(path: str) -> bool:
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    return root is not None and Path(path).resolve() == (Path(root) / "bin" / _CLI_NAME).resolve()


def _approvable(arguments: argparse.Namespace) -> bool:
    """A call Claude Code may run without asking: a run's command in its plain form. Never the
    MCP commands: they launch whatever command ``mcp-config.json`` names."""
    command = arguments.command
    return (
        command in RUN_COMMANDS
        and command not in ("mcp-gate", "mcp-fetch")
        and not getattr(arguments, "set", None)
        and not getattr(arguments, "output", None)
        and not getattr(arguments, "report", None)
        and not getattr(arguments, "archive_base", None)
        and not getattr(arguments, "record", False)
        and not (command == "hosts" and arguments.action == "add")
        and not (command == "start" and arguments.allow_host)
    )


def _check_cli_command(arguments: argparse.Namespace, context: _Context) -> Decision:
    run = context.run
    command = str(arguments.command)
    label = f"deep-research {command}"
    if command == "guard":
        return deny(
            f"{label}: the hooks' own entry point is not run from Bash (a hand-made event "
            "would forge a search result or an agent's completion)"
        )
    if context.agent is not None and command in ("start", "finish"):
        return deny(f"{label}: only the orchestrator starts or finishes a run, not a subagent")
    if run is not None:
        if command not in RUN_COMMANDS:
            return deny(
                f"{label} is not part of a research run, so it is not allowed during one; "
                "`deep-research finish` the run first"
            )
        if getattr(arguments, "set", None):
            return deny(SETTINGS_FIXED)
        for option in ("output", "report"):
            value = getattr(arguments, option, None)
            name = context.protected(value) if value else None
            if name is not None:
                return _record_denied(label, name)
    if command == "start":
        return check_start(arguments, run)
    if command == "fetch":
        return _check_fetch_call(arguments, context)
    if command == "mcp-fetch":
        if run is None:
            return deny(NO_RUN.format(command="mcp-fetch"))
        decision = _in_the_run(label, arguments, context)
        if decision.allow:
            # The gates run inside the command; the guard only counts it against the budget.
            context.fetches.append((label, f"mcp:{arguments.name}"))
        return decision
    if run is None:
        return ALLOW
    if command == "mcp-gate":
        if arguments.record:
            return deny(
                f"{label} --record: recording a server's reviewed tool list is a human's step, "
                "taken before a research run, not during one"
            )
        # A gate result recorded during the run lands in the run's own brief.
        return _in_the_run(label, arguments, context, brief=bool(arguments.brief))
    if command == "hosts" and arguments.action == "add":
        return deny(f"{label} add: during a run the allow-list grows only from search results")
    if command == "refetch" and arguments.archive_base:
        return deny(f"{label}: the archive base cannot be chosen during a research run")
    if command == "finish" and not context.resolves_to(arguments.brief, run.brief):
        return deny(f"{label}: name the active run's brief ({run.brief}) to finish it")
    return ALLOW


def _check_fetch_call(arguments: argparse.Namespace, context: _Context) -> Decision:
    run = context.run
    decision = check_target(arguments.url, run, tool="deep-research fetch")
    if not decision.allow:
        return decision
    if run is None:
        return deny(NO_RUN.format(command="fetch"))
    decision = _in_the_run("deep-research fetch", arguments, context, state=False)
    if decision.allow:
        context.fetches.append(("deep-research fetch", host_of(arguments.url) or "?"))
    return decision


def _in_the_run(
    label: str,
    arguments: argparse.Namespace,
    context: _Context,
    *,
    brief: bool = True,
    state: bool = True,
) -> Decision:
    """During a run a fetch lands in the run's brief, and an MCP command reads the run's state
    folder (its reviewed mcp-config.json), not one the model prepared elsewhere."""
    run = context.run
    assert run is not None
    if brief and not context.resolves_to(arguments.brief, run.brief):
        return deny(f"{label}: during a run, pass the run's brief: --brief {run.brief}")
    if state and context.state is not None:
        chosen = arguments.state or os.environ.get("DEEP_RESEARCH_STATE") or "state"
        if not context.resolves_to(chosen, context.state):
            return deny(
                f"{label}: during a run, MCP servers come from the run's state folder: "
                f"--state {context.state}"
            )
    return ALLOW


def check_agent(tool_input: Mapping[str, Any], run: ActiveRun | None, tool_use_id: str) -> Decision:
    """During a run, an allow-list: only the tasks ``deep-research next`` prints, each under its
    own agent type with its prompt verbatim (:mod:`deep_research.plugin.tasks`); then the round
    cap, the fan-out ceiling and the fetcher budget."""
    if run is None:
        return ALLOW
    agent_type = tool_input.get("subagent_type")
    prompt = tool_input.get("prompt")
    if not isinstance(agent_type, str) or agent_type not in TASKS:
        return deny(
            f"Agent: {str(agent_type)[:80]!r} is not an agent a research run dispatches; during "
            f"the run only {', '.join(sorted(TASKS))} start, as `deep-research next` prints them"
        )
    task = parse(agent_type, prompt) if isinstance(prompt, str) else None
    if task is None:
        return deny(
            f"Agent: this {agent_type} prompt is not a task `deep-research next` printed; "
            "dispatch its prompt verbatim"
        )
    declared = declared_round(task)
    if declared is not None and declared > run.caps.max_rounds:
        return deny(f"Agent: round {declared} exceeds the run's round cap ({run.caps.max_rounds})")
    is_fetcher = isinstance(task, FETCHING)
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
            budget = fetcher_budget(brief, run.record)
            if fetchers >= budget:
                return deny(
                    f"Agent: the run's fetcher dispatches are spent ({fetchers} of {budget}: "
                    "per planned sub-question and round: one, a retry and a top-up)"
                )
        row: dict[str, Any] = {
            "event": "dispatch",
            "id": tool_use_id,
            "agent": agent_type,
            "fetcher": is_fetcher,
        }
        if is_fetcher:
            # What `counters` counts rounds by: a round is only as real as its dispatches.
            row["round"] = declared
        append_ledger(brief, row)
    return ALLOW


def decide(event: Mapping[str, Any], state: Path) -> Decision:
    """The PreToolUse decision for one event. Errors deny (fail closed)."""
    tool = str(event.get("tool_name") or "")
    tool_input = _tool_input(event)
    cwd = Path(str(event.get("cwd") or "."))
    # Claude Code marks a subagent's tool calls with its agent_id (2.1.197); the orchestrator's
    # own calls carry none.
    agent = str(event.get("agent_id") or "") or None
    try:
        run = load_active(state)
    except Exception as exc:
        if tool in AGENT_TOOLS or tool in WRITE_TOOLS or tool in ("WebFetch", "WebSearch", "Bash"):
            return deny(
                f"guard: the active run's record is unreadable ({exc}); fix or remove "
                f"{state / 'active-run.json'}"
            )
        return ALLOW
    try:
        if tool == "WebFetch":
            return check_fetch(str(tool_input.get("url") or ""), run, tool="WebFetch")
        if tool == "WebSearch":
            return check_search(run, str(event.get("tool_use_id") or ""))
        if tool == "Bash":
            return check_bash(str(tool_input.get("command") or ""), run, state, cwd, agent)
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
