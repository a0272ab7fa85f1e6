"""The ``deep-research`` command line: the parser, and a dispatcher to each command's handler,
which lives with its concept (``cmd_<name>`` in schemas.py, normalize/, gates/, decide/, plugin/
and run/ ``commands.py``; the few that wire rooms the others may not import stay here).

Exit codes (errors become numbers here, in :func:`exit_code_for`; the codes are
:mod:`deep_research.console`'s):
  0  success (for checks: clean)
  1  the check ran and found violations
  2  input error: missing, unreadable or invalid input, refused evidence (see errors.py)
  3  the brief is busy: another run holds its lock
  130 interrupted (Ctrl-C; for `run`, SIGTERM too)
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path

from deep_research import __version__
from deep_research.check import command as check_command
from deep_research.console import (
    EXIT_BUSY,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_VIOLATIONS,
    one_line_warnings,
)
from deep_research.errors import BriefBusy, DeepResearchError, InputError

Handler = Callable[[argparse.Namespace], int]


def _handlers(module: str, *names: str) -> tuple[Handler, ...]:
    """The handlers ``cmd_<name>`` of ``deep_research.<module>``, each imported when it runs:
    building the parser (the hook guard does, on every tool call) imports nothing else."""

    def handler(name: str) -> Handler:
        def handle(args: argparse.Namespace) -> int:
            command: Handler = getattr(import_module(f"deep_research.{module}"), f"cmd_{name}")
            return command(args)

        return handle

    return tuple(handler(name) for name in names)


_cmd_validate, _cmd_schemas = _handlers("schemas", "validate", "schemas")
(_cmd_normalize,) = _handlers("normalize.commands", "normalize")
_cmd_gate, _cmd_locate, _cmd_eval, _cmd_answer = _handlers(
    "gates.commands", "gate", "locate", "eval", "answer"
)
_cmd_trace, _cmd_refetch, _cmd_triangulate, _cmd_votes, _cmd_entail = _handlers(
    "decide.commands", "trace", "refetch", "triangulate", "votes", "entail"
)
_cmd_ciber, _cmd_verdict, _cmd_fresh, _cmd_handoff = _handlers(
    "decide.commands", "ciber", "verdict", "fresh", "handoff"
)
_cmd_fetch, _cmd_hosts, _cmd_counters, _cmd_finish, _cmd_next = _handlers(
    "plugin.commands", "fetch", "hosts", "counters", "finish", "next"
)
_cmd_wait, _cmd_ingest, _cmd_mcp_gate, _cmd_mcp_fetch = _handlers(
    "plugin.commands", "wait", "ingest", "mcp_gate", "mcp_fetch"
)
_cmd_start, _cmd_resume, _cmd_step = _handlers("plugin.commands", "start", "resume", "step")
(_cmd_run,) = _handlers("run.commands", "run")
(_cmd_check,) = _handlers("check.command", "check")


def _cmd_verify(args: argparse.Namespace) -> int:
    """A check folder is re-derived by the check, a brief by the gates."""
    from deep_research.check.folder import is_check_folder

    owner = "check.command" if is_check_folder(Path(args.brief)) else "plugin.commands"
    return _handlers(owner, "verify")[0](args)


def exit_code_for(error: DeepResearchError) -> int:
    if isinstance(error, BriefBusy):
        return EXIT_BUSY
    return EXIT_INPUT if isinstance(error, InputError) else EXIT_VIOLATIONS


# --- commands -------------------------------------------------------------------------------


def _cmd_render(args: argparse.Namespace) -> int:
    from deep_research.gates.answer import check_answer
    from deep_research.render import run_render

    as_json = args.format == "json"
    report, _ = run_render(
        Path(args.brief), force=args.force, write=not as_json, check_answer=check_answer
    )
    if as_json:
        sys.stdout.write(report.model_dump_json(indent=2) + "\n")
    else:
        print(Path(args.brief) / "report.md")
    return EXIT_OK


def _cmd_guard(args: argparse.Namespace) -> int:
    from deep_research.plugin.guard import CliReader, hook_output, run_guard

    # The guard reads a Bash line calling us with this parser, passed in: it never imports us.
    state = Path(args.state) if args.state else None
    decision = run_guard(sys.stdin.read(), args.phase, state, CliReader(build_parser))
    if decision.allow:  # our own CLI call that passed every check: an explicit allow, on stdout
        sys.stdout.write(hook_output(decision))
        return EXIT_OK
    print(decision.reason, file=sys.stderr)
    return EXIT_INPUT  # 2: Claude Code blocks the tool call and shows the reason


class _LazyHelp(str):
    """A help string filled from the backend registry when argparse formats it."""

    def __new__(cls, which: str) -> _LazyHelp:
        made = super().__new__(cls, which)
        made.which = which
        return made

    which: str

    def __mod__(self, params: object) -> str:
        from deep_research.run.registry import help_lines, load_registry, search_help

        registry = load_registry()
        reasoners, sources = help_lines(registry)
        text = {"reasoner": reasoners, "corpus": sources}.get(self.which) or search_help(registry)
        return text.replace("%", "%%") % params


# --- parser ---------------------------------------------------------------------------------

#: The commands as ``--help`` lists them, by who runs them: a person, the Claude Code plugin's
#: run, or a pipeline step run by hand (``run`` does every step itself), each with its help (its
#: line in the listing, and the head of its own --help). Each registered command is in exactly
#: one group (tests/test_cli_help.py checks it).
COMMAND_GROUPS: tuple[tuple[str, dict[str, str]], ...] = (
    (
        "Using it",
        {
            "run": (
                "the headless pipeline: question → verified brief and report (exit 0 "
                "READY/PARTIAL/PARTIAL_QUICK, 1 HOLD/FAIL)"
            ),
            "check": check_command.HELP,
            "verify": "re-run the mechanical gates from the retained corpus",
            "render": "write report.md (refuses a FAIL brief unless --force)",
            "handoff": (
                "the consumer's metadata block and claim split (exit 1: HOLD or FAIL, nothing "
                "usable)"
            ),
            "fresh": "reuse or regenerate? (exit 0 reuse, 1 regenerate)",
            "gate": "check citations from any tool (batch, no model, no network)",
            "locate": "locate one quote in a text file",
            "validate": "validate every artifact of a brief against its schema",
            "eval": "measure the gate on labelled quote and literal data",
            "schemas": "write the JSON Schemas generated from the models",
        },
    ),
    (
        "The plugin's run (Claude Code calls these)",
        {
            "start": (
                "begin a run: create the brief, record its caps (clamped to hard limits), make it "
                "the active run the hooks guard"
            ),
            "next": "a plugin run's single next action, decided by code",
            "step": (
                "the workflow's next step: runs every command next asks for, then names the agents"
            ),
            "wait": (
                "wait (at most 90 s a call) for a plugin run's workflow to end; a line per "
                "finished phase"
            ),
            "ingest": (
                "feed every saved agent return of a plugin run to the command that consumes it"
            ),
            "finish": "end the active run (the hooks stop guarding it)",
            "resume": (
                "make an unfinished plugin run this Claude Code session's, to relaunch its workflow"
            ),
            "guard": (
                "Claude Code hook: read a tool event on stdin; exit 2 with the reason on stderr to "
                "block it"
            ),
            "fetch": "fetch one URL safely into the brief's corpus and fetch log",
            "hosts": "the run host allow-list: add hosts, or check URLs against it",
            "mcp-gate": (
                "the three MCP gates (manifest audit, version pin, least privilege) for one "
                "configured server (exit 1: a gate failed)"
            ),
            "mcp-fetch": (
                "one MCP tool call through the three gates; its text is kept in the brief's corpus "
                "and logged like a page fetch"
            ),
        },
    ),
    (
        "Pipeline steps (run does them all; call one to redo its step on a brief)",
        {
            "normalize": "coerce raw fetcher output into sources.jsonl rows",
            "trace": "trace every citation to its retained quote",
            "entail": (
                "admit the entailment judge's verdicts whose span lies in the claim's located "
                "evidence; a checked contradiction strips its claim (before triangulate)"
            ),
            "votes": "record the skeptic panel's votes per claim",
            "triangulate": "independence groups, τ, confidence; strip what fails",
            "refetch": "phase 6b: re-fetch a sample, re-locate cited quotes",
            "ciber": "CIBER: apply the agent's diagnosis mechanically",
            "counters": (
                "recompute the work counters from the brief's artifacts and plan.json; record them "
                "in trace.json"
            ),
            "verdict": "decide the verdict (exit 1 on HOLD or FAIL)",
            "answer": (
                "check a written answer claim by claim, and that it states every position of each "
                "open contradiction (exit 1: refused)"
            ),
        },
    ),
)
#: Each command's help, by name: what :func:`build_parser` gives each command.
COMMAND_HELP: dict[str, str] = {
    name: text for _, group in COMMAND_GROUPS for name, text in group.items()
}
#: Columns of the command listing (argparse wraps the rest of --help to the terminal).
HELP_WIDTH = 80
#: The ``--state`` option's help, the same on every command that takes it.
STATE_HELP = "state folder (default: $DEEP_RESEARCH_STATE or ./state)"


def _wrap(text: str, width: int) -> list[str]:
    # textwrap would cost every hook call its import: the guard builds this parser too.
    lines = [""]
    for word in text.split():
        if lines[-1] and len(lines[-1]) + 1 + len(word) > width:
            lines.append(word)
        else:
            lines[-1] = f"{lines[-1]} {word}".lstrip()
    return lines


def command_listing(helps: dict[str, str]) -> str:
    """Every command under its group's heading, one help line (or more, wrapped) each."""
    column = 2 + max(len(name) for name in helps) + 2
    out: list[str] = []
    for heading, names in COMMAND_GROUPS:
        out += ["", f"{heading}:"]
        for name in names:
            first, *rest = _wrap(helps[name], HELP_WIDTH - column)
            out.append(f"  {name}".ljust(column) + first)
            out += [" " * column + line for line in rest]
    return "\n".join(out[1:])


def build_parser(
    parser_class: type[argparse.ArgumentParser] = argparse.ArgumentParser,
) -> argparse.ArgumentParser:
    """The command line, built by ``parser_class`` (every subparser too).

    The hook guard (:mod:`deep_research.plugin.guard`) builds this same parser with a class
    whose errors raise instead of exiting, so it reads a command exactly as the CLI will. No
    parser accepts an abbreviated option (``--bri`` for ``--brief``): what the guard checks is
    spelled the way it runs. Building it imports nothing beyond argparse (the hook path).
    """
    parser = parser_class(
        allow_abbrev=False,
        prog="deep-research",
        description="Verified research briefs: every emitted claim traces to fetched text.",
        # The epilog (set below, once every command is added) is the grouped command listing,
        # already laid out: kept as written.
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        help="one of the commands below; deep-research COMMAND --help shows its options",
    )

    def add(name: str, handler: Handler, *, brief: bool = False) -> argparse.ArgumentParser:
        """A command; ``brief``: it takes the brief directory first, as most commands do."""
        # No help= here: argparse would list every command again, ungrouped, in registration order.
        sub = commands.add_parser(name, description=COMMAND_HELP[name], allow_abbrev=False)
        sub.set_defaults(handler=handler)
        if brief:
            sub.add_argument("brief", help="brief directory")
        return sub

    sub = add("validate", _cmd_validate, brief=True)

    sub = add("schemas", _cmd_schemas)
    sub.add_argument("--dir", default="schemas", help="target directory (default: schemas)")
    sub.add_argument("--check", action="store_true", help="only report stale files (exit 1)")

    sub = add("normalize", _cmd_normalize)
    sub.add_argument("input", nargs="?", default="-", help="fetcher output file, or - (stdin)")
    sub.add_argument("--brief", help="brief directory: merge into its sources.jsonl")
    sub.add_argument("--output", help="write rows here instead of stdout (ignored with --brief)")
    sub.add_argument("--report", help="write the JSON report (rows kept, rejections) here")
    sub.add_argument("--start-id", type=int, default=None, help="first S-id number to assign")
    sub.add_argument("--sub-question", help="sub-question id to record on every row")
    sub.add_argument("--round", type=int, default=None, help="research round of these rows")

    sub = add("trace", _cmd_trace)
    sub.add_argument("brief", nargs="?", help="brief directory (default: parent of --sources)")
    sub.add_argument("--mode", choices=["claims", "dossier"], default=None)
    sub.add_argument("--claims", help="claims.json (default: the brief's)")
    sub.add_argument("--sources", help="sources.jsonl (default: the brief's)")
    sub.add_argument("--dossier", help="markdown report whose sentences cite [S#] or URLs")
    sub.add_argument("--corpus-file", help="verify against this file (must be a corpus file)")
    sub.add_argument("--report", help="also write the JSON report here")
    sub.add_argument("--no-write", action="store_true", help="do not update claims.json")

    sub = add("gate", _cmd_gate)
    sub.add_argument("--input", required=True, help="pairs.jsonl, or - (stdin)")
    sub.add_argument("--output", help="results.jsonl (default: stdout)")

    sub = add("fetch", _cmd_fetch)
    sub.add_argument("url")
    sub.add_argument("--brief", required=True, help="brief directory")
    sub.add_argument("--json", action="store_true", help="print a JSON object")
    sub.add_argument("--max-chars", type=int, default=20_000, help="page text shown (20000)")

    sub = add("hosts", _cmd_hosts)
    sub.add_argument("action", choices=["add", "check"])
    sub.add_argument("urls", nargs="+", help="URLs or host names")
    sub.add_argument("--brief", required=True, help="brief directory")
    sub.add_argument("--static", action="store_true", help="add to the static list")

    sub = add("refetch", _cmd_refetch, brief=True)
    sub.add_argument("--archive-base", help="Wayback base URL (default: the Internet Archive)")

    sub = add("counters", _cmd_counters, brief=True)
    sub.add_argument("--plan", help="the orchestrator's plan (default: <brief>/plan.json)")

    check_command.add_arguments(add("check", _cmd_check))

    sub = add("verify", _cmd_verify)
    sub.add_argument("brief", help="brief directory, or a check folder (deep-research check)")
    sub.add_argument("--offline", action="store_true", help="switch the network off (refused)")

    sub = add("eval", _cmd_eval)
    sub.add_argument(
        "--eval-dir",
        default=os.environ.get("DEEP_RESEARCH_EVAL_DIR"),
        help="folder of labelled JSONL files (default: $DEEP_RESEARCH_EVAL_DIR, else the "
        "repository's benchmarks/data)",
    )
    sub.add_argument("--quotes", default="wice_quotes_dev.jsonl", help="quote-location rows")
    sub.add_argument("--literals", default="vitaminc_dev.jsonl", help="literal-fidelity rows")
    sub.add_argument("--show", type=int, default=0, help="print this many misses per figure")
    sub.add_argument("--json", action="store_true", help="print the figures as JSON")

    def brief_command(name: str, handler: Handler) -> argparse.ArgumentParser:
        sub = add(name, handler, brief=True)
        sub.add_argument(
            "--set",
            action="append",
            metavar="NAME=VALUE",
            help="override a setting (recorded in trace.json); repeatable",
        )
        return sub

    brief_command("triangulate", _cmd_triangulate)
    sub = brief_command("votes", _cmd_votes)
    sub.add_argument("--input", required=True, help='votes JSON: {"C1": [vote, …], …}')

    sub = add("entail", _cmd_entail, brief=True)
    sub.add_argument("--input", required=True, help="verifier verdicts: one object or a list")

    brief_command("verdict", _cmd_verdict)

    sub = brief_command("fresh", _cmd_fresh)
    sub.add_argument("--today", help="date to judge against, YYYY-MM-DD (default: today, UTC)")

    sub = add("render", _cmd_render, brief=True)
    sub.add_argument("--force", action="store_true", help="render a FAIL brief, marked as such")
    sub.add_argument(
        "--format", choices=["md", "json"], default="md", help="json: print the render model"
    )

    sub = add("answer", _cmd_answer, brief=True)
    sub.add_argument(
        "--synthesis", help="the answer to check (markdown); default: claims.json's synthesis"
    )

    sub = add("handoff", _cmd_handoff, brief=True)
    sub.add_argument(
        "--project",
        help="paths inside this folder are given relative to it "
        "(default: $CLAUDE_PROJECT_DIR, else the working directory)",
    )

    ciber = add("ciber", _cmd_ciber)
    ciber_actions = ciber.add_subparsers(dest="action", required=True, metavar="ACTION")
    sub = ciber_actions.add_parser(
        "apply", help="apply a diagnosis, or record a valid skip", allow_abbrev=False
    )
    sub.set_defaults(handler=_cmd_ciber)
    sub.add_argument("brief", help="brief directory")
    sub.add_argument("--input", help="the CIBER agent's JSON output")
    sub.add_argument(
        "--skip",
        help="record a skip instead (depth-quick, "
        "insufficient-high-confidence-claims, refetch-hard-fail)",
    )
    sub.add_argument("--set", action="append", metavar="NAME=VALUE", help="override a setting")

    sub = add("start", _cmd_start)
    sub.add_argument("topic", help="the research question or topic (names the brief)")
    sub.add_argument("--depth", default="full", choices=["full", "quick", "shallow"])
    sub.add_argument("--state", help=STATE_HELP)
    sub.add_argument("--max-fetches", type=int, help="fetch budget for the run")
    sub.add_argument("--fan-out", type=int, help="agents in flight at once")
    sub.add_argument("--rounds", type=int, help="research rounds")
    sub.add_argument("--max-searches", type=int, help="WebSearch calls for the run")
    sub.add_argument("--allow-host", action="append", help="a host on the static allow-list")
    sub.add_argument("--mcp", metavar="NAME", help="also research through this reviewed MCP server")

    sub = add("next", _cmd_next, brief=True)
    sub.add_argument("--json", action="store_true", help="print the action as JSON")

    sub = add("step", _cmd_step, brief=True)
    sub.add_argument(
        "--failed", action="append", metavar="IDS", help="tasks whose agents ended unanswered"
    )
    sub.add_argument("--json", action="store_true", help="print the step as JSON")

    sub = add("wait", _cmd_wait, brief=True)
    sub.add_argument(
        "--seconds", type=float, help="the longest this call waits (default and at most: 90)"
    )

    sub = add("ingest", _cmd_ingest, brief=True)

    sub = add("finish", _cmd_finish, brief=True)
    sub.add_argument("--state", help=STATE_HELP)

    sub = add("resume", _cmd_resume, brief=True)
    sub.add_argument("--state", help=STATE_HELP)

    sub = add("guard", _cmd_guard)
    sub.add_argument("--phase", choices=["pre", "post"], default="pre")
    sub.add_argument("--state", help="state folder (default: see deep_research.plugin.guard)")

    sub = add("run", _cmd_run)
    sub.add_argument("question", nargs="?", help="the research question (omit with --resume)")
    sub.add_argument(
        "--depth",
        choices=["quick", "full", "auto"],
        help="quick (default) or full, or auto: the planner's first call chooses (within the "
        "caps of full); a resumed run keeps its own",
    )
    # Named backends come from the registry, read only when a run or its --help needs them:
    # scanning entry points would cost every hook call its time.
    sub.add_argument("--corpus", metavar="DIR|NAME", help=_LazyHelp("corpus"))
    sub.add_argument("--search", metavar="NAME", help=_LazyHelp("search"))
    sub.add_argument("--reasoner", metavar="NAME", default="auto", help=_LazyHelp("reasoner"))
    sub.add_argument(
        "--model",
        action="append",
        metavar="ROLE=ID",
        help="the model of one role (plan, synthesize, triangulate, extract, search, skeptic, "
        "ciber); repeatable",
    )
    sub.add_argument(
        "--batch", action="store_true", help="skeptic votes as Message Batches (half price)"
    )
    sub.add_argument("--max-usd", type=float, help="dollar cap (lowers the built-in cap only)")
    sub.add_argument(
        "--resume",
        metavar="SLUG",
        help="continue an interrupted run: its question, depth and corpus are remembered",
    )
    sub.add_argument("--refresh", action="store_true", help="never reuse an existing brief")
    sub.add_argument("--state", help=STATE_HELP)
    sub.add_argument(
        "--json", action="store_true", help="print the summary as JSON (progress stays on stderr)"
    )
    sub.add_argument("--set", action="append", metavar="NAME=VALUE", help="override a setting")

    sub = add("mcp-gate", _cmd_mcp_gate)
    sub.add_argument("name", help="the server's name in <state>/mcp-config.json")
    sub.add_argument(
        "--record",
        action="store_true",
        help="after reviewing its tool list: record the server's fingerprint",
    )
    sub.add_argument("--state", help=STATE_HELP)
    sub.add_argument(
        "--timeout", type=float, default=30.0, help="seconds the server gets to list its tools (30)"
    )
    sub.add_argument("--brief", help="record the gate's result in this run's brief")

    sub = add("mcp-fetch", _cmd_mcp_fetch)
    sub.add_argument("name", help="the server's name in <state>/mcp-config.json")
    sub.add_argument("tool", help="the tool to call (one of the reviewed tool list)")
    sub.add_argument("--arguments", default="{}", help="the tool's arguments as a JSON object")
    sub.add_argument("--brief", required=True, help="the brief directory to retain the text in")
    sub.add_argument("--json", action="store_true", help="print the result as JSON")
    sub.add_argument(
        "--max-chars",
        type=int,
        default=20_000,
        help="characters of text to print (all is retained)",
    )
    sub.add_argument("--state", help=STATE_HELP)
    sub.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds for the whole call: start, gates, tool (30)",
    )

    sub = add("locate", _cmd_locate)
    sub.add_argument("--quote", required=True)
    sub.add_argument("--text-file", required=True)

    exits = _wrap(
        "Exit codes: 0 ok, 1 violations, 2 input error, 3 brief busy, 130 interrupted (Ctrl-C, "
        "or SIGTERM during run).",
        HELP_WIDTH,
    )
    parser.epilog = command_listing(COMMAND_HELP) + "\n\n" + "\n".join(exits)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        with one_line_warnings(args.command):
            return handler(args)
    except DeepResearchError as error:
        print(f"deep-research {args.command}: {error}", file=sys.stderr)
        return exit_code_for(error)
    except KeyboardInterrupt:
        print("deep-research: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
