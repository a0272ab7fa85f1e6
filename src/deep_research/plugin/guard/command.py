"""Bash: during a research run, one call of our CLI with literal arguments, or nothing.

A command passes during a run only when all of these hold:

1. the line is one plain list of words (:mod:`.words`): no shell syntax at all;
2. its first word runs the plugin's launcher, found as bash finds it (:mod:`.program`);
3. the CLI's own parser (:class:`.cliargs.CliReader`, no abbreviated options) accepts the rest, so
   option order and spelling cannot change what the guard reads;
4. the caller may use that command: the orchestrator runs the steps ``deep-research next``
   prints, a fetcher subagent ``fetch``, an mcp-fetcher subagent ``mcp-fetch``;
5. the command's own rules: it names the run's brief (and state folder); no ``--set`` (a run's
   settings are fixed at ``start``), no option that writes a file or widens the allow-list; a
   fetch passes the SSRF checks and the allow-list, and it and an MCP call spend the fetch budget.

Everything else is denied with one line saying what to use instead: files are read with the Read
and Grep tools, pages fetched by the fetchers. The shell itself is never interpreted, so the time
is linear in the line's length and nothing depends on the file system beyond finding the
launcher.

With no run active, a line of plain words calling our CLI is checked by the CLI's rules that
hold outside a run (no fetch without a run, no static hosts chosen from inside Claude Code, no
``guard`` from Bash) and, when it is a command of the plugin's flow, explicitly allowed: Claude
Code then skips its permission prompt. Every other line passes without a word, and the user's
own permission rules decide. So it is in a session beside another session's run, which does not
confine it; there our CLI also starts no second run and works on no brief but that run's own
`finish`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import get_args

from deep_research.plugin.command_names import InProcess
from deep_research.plugin.guard.agents import resolve_agent
from deep_research.plugin.guard.budgets import check_target, spend_fetches
from deep_research.plugin.guard.cliargs import CliParseError
from deep_research.plugin.guard.decision import (
    ALLOW,
    APPROVED,
    Call,
    Decision,
    deny,
    not_this_sessions_run,
    resolved,
)
from deep_research.plugin.guard.program import (
    found_on_path,
    is_launcher,
    launcher,
    named_like_cli,
)
from deep_research.plugin.guard.words import NotAWordList, split_words
from deep_research.plugin.runstate import ActiveRun
from deep_research.urls import host_of

#: What the orchestrator runs during a run: every command ``next`` prints (``start`` only once
#: the run is finished) and the ones the skills name.
ORCHESTRATOR_COMMANDS = frozenset(
    {*get_args(InProcess), "finish", "next", "wait", "handoff", "resume", "validate", "hosts"}
)
#: What each subagent runs, by its resolved agent type (agents/*.md).
SUBAGENT_COMMANDS = {
    "fetcher": frozenset({"fetch"}),
    "mcp-fetcher": frozenset({"mcp-fetch"}),
    "stepper": frozenset({"step"}),  # the workflow's step: every other command runs inside it
}
#: The plugin flow's commands, explicitly allowed when every check passed. Never the MCP
#: commands: they launch whatever command ``mcp-config.json`` names, so the user decides.
APPROVABLE = (ORCHESTRATOR_COMMANDS | {"start", "fresh", "fetch", "step"}) - {"mcp-gate"}
#: Approved only inside this session's active run (on its brief, as every check there holds):
#: ``step`` runs every command ``next`` asks for on the folder it names, so outside a run the
#: user's permission rules decide it.
APPROVABLE_IN_A_RUN = frozenset({"step"})
#: Options no command of a run takes (``--set`` has its own message).
NOT_DURING_A_RUN = {
    "output": "writes a file of its own choosing",
    "report": "writes a file of its own choosing",
    "archive_base": "chooses where re-fetches go",
    "record": "records a server's reviewed tool list, a human's step before a run",
    "allow_host": "adds static hosts",
    "static": "adds static hosts",
    "claims": "reads claims from elsewhere than the brief",
    "sources": "reads sources from elsewhere than the brief",
    "dossier": "checks a file outside the brief",
    "corpus_file": "checks a file outside the brief",
}

READ_INSTEAD = (
    "read files with the Read tool and search them with Grep; pages are fetched by the "
    "fetchers (`deep-research fetch 'URL' --brief DIR`)"
)
SETTINGS_FIXED = (
    "Bash: a research run's settings are fixed when it starts; during the run neither --set "
    "nor a DEEP_RESEARCH_* environment variable can change them"
)
NO_RUN = (
    "deep-research {command}: no research run is active; fetches happen inside one, "
    "under its allow-list and budget — start it with `deep-research start`"
)


def check_bash(call: Call) -> Decision:
    line = str(call.tool_input.get("command") or "")
    try:
        words = split_words(line)
    except NotAWordList as refused:
        return _refused_line(line, str(refused), during=call.during_run)
    if not words or not named_like_cli(words[0]):
        if not call.during_run:
            return ALLOW
        return _not_allowed(words[0] if words else "")
    found = found_on_path(words[0], call.cwd)
    if found is None or not is_launcher(found):
        if not call.during_run:
            return ALLOW  # another program of that name: the user's permission rules decide
        where = f"runs {found}" if found is not None else "runs nothing"
        return deny(
            f"Bash: {words[0][:200]} {where}, not the plugin's launcher ({launcher()}); call "
            "deep-research by name"
        )
    try:
        arguments = call.cli.parse(words[1:])
    except CliParseError as exc:
        return deny(
            f"deep-research: these arguments do not parse as the CLI reads them ({exc}); "
            "the guard denies what it cannot read"
        )
    if arguments is None:
        return APPROVED  # --help or --version: prints and exits before any command runs
    decision = _check_command(arguments, call)
    if decision.allow and _approvable(arguments, call):
        return APPROVED
    return decision


def _refused_line(line: str, what: str, *, during: bool) -> Decision:
    """A line that is not a plain word list: during a run, denied; outside one, denied only
    when it calls our CLI (always called alone, so the guard reads what runs), else it passes
    to the user's permission rules."""
    first = line.split(maxsplit=1)[0] if line.strip() else ""
    if named_like_cli(first):
        return deny(
            f"Bash: deep-research runs alone, by name, with literal arguments, and this line "
            f"holds {what}; put an argument holding such characters (a URL's ? or &) in single "
            f"quotes. To look at files, {READ_INSTEAD}"
        )
    if not during:
        return ALLOW
    if first and _plain_name(first):
        return _not_allowed(first)
    return deny(
        f"Bash: during a research run Bash runs only deep-research, alone, with literal "
        f"arguments, and this line holds {what}. To look at files, {READ_INSTEAD}"
    )


def _plain_name(word: str) -> bool:
    try:
        return split_words(word) == [word]
    except NotAWordList:
        return False


def _not_allowed(program: str) -> Decision:
    shown = f"{program[:200]} is" if program else "an empty command is"
    return deny(
        f"Bash: {shown} not allowed during a research run: until `deep-research finish`, Bash "
        f"runs only deep-research itself; {READ_INSTEAD}"
    )


def _approvable(arguments: argparse.Namespace, call: Call) -> bool:
    """A call Claude Code may run without asking: a command of the plugin's flow, plain."""
    command = arguments.command
    return (
        command in APPROVABLE
        and (command not in APPROVABLE_IN_A_RUN or call.run is not None)
        and not getattr(arguments, "set", None)
        and not any(getattr(arguments, option, None) for option in NOT_DURING_A_RUN)
        and not (command == "hosts" and arguments.action == "add")
    )


def _check_command(arguments: argparse.Namespace, call: Call) -> Decision:
    command = str(arguments.command)
    label = f"deep-research {command}"
    if command == "guard":
        return deny(
            f"{label}: the hooks' own entry point is not run from Bash (a hand-made event "
            "would forge a search result or an agent's completion)"
        )
    if call.agent is not None and command in ("start", "finish", "resume"):
        return deny(
            f"{label}: only the orchestrator starts, resumes or finishes a run, not a subagent"
        )
    if call.run is None and call.foreign is not None:
        return _beside_another_sessions_run(label, arguments, call, call.foreign)
    if call.run is None:
        return _outside_a_run(arguments, call)
    if command == "check" and call.agent is None:
        return _check_beside_a_run(label, arguments, call)
    if command == "verify" and call.agent is None and arguments.offline:
        return ALLOW  # reads a folder with the network switched off: the user's rules decide
    if command == "start":
        return deny(
            f"{label}: a research run is active ({call.run.brief.name}); finish it with "
            "`deep-research finish` before starting another"
        )
    allowed = _commands_of(call)
    if command not in allowed:
        who = "the orchestrator" if call.agent is None else f"a {call.agent_type} subagent"
        runs = ", ".join(sorted(allowed)) or "no deep-research command"
        return deny(
            f"{label}: not a command {who} runs during a research run (it runs {runs}); "
            "do what `deep-research next` printed"
        )
    if getattr(arguments, "set", None):
        return deny(SETTINGS_FIXED)
    for option, why in NOT_DURING_A_RUN.items():
        if getattr(arguments, option, None):
            flag = "--" + option.replace("_", "-")
            return deny(f"{label} {flag}: not during a research run (it {why})")
    if command == "hosts" and arguments.action != "check":
        return deny(f"{label} add: during a run the allow-list grows only from search results")
    decision = _names_the_run(label, arguments, call)
    if not decision.allow:
        return decision
    if command == "fetch":
        checked = check_target(arguments.url, call.run, tool=label)
        if not checked.allow:
            return checked
        return spend_fetches(call.run, [(label, host_of(arguments.url) or "?")])
    if command == "mcp-fetch":
        # The three gates run inside the command; the guard counts it against the budget.
        return spend_fetches(call.run, [(label, f"mcp:{arguments.name}")])
    return ALLOW


def _commands_of(call: Call) -> frozenset[str]:
    if call.agent is None:
        return ORCHESTRATOR_COMMANDS
    return SUBAGENT_COMMANDS.get(resolve_agent(call.agent_type), frozenset())


def _outside_a_run(arguments: argparse.Namespace, call: Call) -> Decision:
    """No run is active: fetches wait for one (else `finish` then a fetch would leave the
    allow-list behind), and a run's static hosts are not chosen from inside Claude Code."""
    command = arguments.command
    if command == "fetch":
        checked = check_target(arguments.url, None, tool="deep-research fetch")
        return checked if not checked.allow else deny(NO_RUN.format(command=command))
    if command == "mcp-fetch":
        return deny(NO_RUN.format(command=command))
    if command == "start" and arguments.allow_host:
        return deny(
            "deep-research start: static hosts cannot be added from inside Claude Code; "
            "the run's allow-list grows from its search results"
        )
    return ALLOW


def _beside_another_sessions_run(
    label: str, arguments: argparse.Namespace, call: Call, foreign: ActiveRun
) -> Decision:
    """Another session's run is active: this session starts no second one (the pointer names
    one run) and does not drive that one; it may end it (`finish`) or take it over (`resume`,
    after which the run confines this session instead), and otherwise our CLI's rules outside
    a run apply."""
    if arguments.command == "start":
        return deny(
            f"{label}: a research run is active in another Claude Code session "
            f"({foreign.brief.name}); end it with `deep-research finish {foreign.brief}` "
            "before starting another"
        )
    brief = getattr(arguments, "brief", None)
    taking = arguments.command in ("finish", "resume")
    if not taking and brief and _same(call, brief, str(foreign.brief)):
        return not_this_sessions_run(label, foreign)
    return _outside_a_run(arguments, call)


def _check_beside_a_run(label: str, arguments: argparse.Namespace, call: Call) -> Decision:
    """``check`` reads a report the user names into a folder of its own: beside a run it is the
    user's permission rules that decide it (never approved here, it fetches what the report
    cites), and its folder is never inside the run's brief or state folder."""
    assert call.run is not None
    folder = getattr(arguments, "state", None)
    given = resolved(call.cwd, folder) if folder else None
    for what, root in (("brief", call.run.brief), ("state folder", call.state)):
        inside = resolved(call.cwd, str(root))
        if (
            given is not None
            and inside is not None
            and Path(inside) in (Path(given), *Path(given).parents)
        ):
            return deny(f"{label} --state: not inside the active run's {what} ({root})")
    return ALLOW


def _names_the_run(label: str, arguments: argparse.Namespace, call: Call) -> Decision:
    """During a run a command works on the run's brief and reads the run's state folder (its
    reviewed MCP configuration), never on ones the model prepared elsewhere."""
    run = call.run
    assert run is not None
    brief = getattr(arguments, "brief", None)
    if brief and not _same(call, brief, str(run.brief)):
        return deny(f"{label}: name the active run's brief ({run.brief})")
    state = getattr(arguments, "state", None)
    if arguments.command in ("mcp-gate", "mcp-fetch"):
        state = state or os.environ.get("DEEP_RESEARCH_STATE") or "state"
    if state and not _same(call, state, str(call.state)):
        return deny(f"{label}: during a run, use the run's state folder: --state {call.state}")
    return ALLOW


def _same(call: Call, given: str, expected: str) -> bool:
    """``given`` (relative to the shell's directory) is ``expected``, symlinks resolved."""
    path = resolved(call.cwd, given)
    return path is not None and path == resolved(call.cwd, expected)
