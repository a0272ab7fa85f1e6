"""The ``deep-research`` command line: each command parses arguments, calls one function, prints.

Exit codes (the only place errors become numbers):
  0  success (for checks: clean)
  1  the check ran and found violations
  2  input error: missing, unreadable or invalid input, refused evidence (see errors.py)
  3  the brief is busy: another run holds its lock
  130 interrupted (Ctrl-C; for `run`, SIGTERM too)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from deep_research import __version__
from deep_research.errors import BriefBusy, DeepResearchError, InputError

EXIT_OK = 0
EXIT_VIOLATIONS = 1
EXIT_INPUT = 2
EXIT_BUSY = 3
EXIT_INTERRUPTED = 130

Handler = Callable[[argparse.Namespace], int]


def exit_code_for(error: DeepResearchError) -> int:
    if isinstance(error, BriefBusy):
        return EXIT_BUSY
    return EXIT_INPUT if isinstance(error, InputError) else EXIT_VIOLATIONS


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


# --- commands -------------------------------------------------------------------------------


def _cmd_validate(args: argparse.Namespace) -> int:
    from deep_research.schemas import validate_brief

    report = validate_brief(Path(args.brief))
    _print_json(report.as_dict())
    for problem in report.problems:
        print(f"invalid: {problem}", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_VIOLATIONS


def _cmd_schemas(args: argparse.Namespace) -> int:
    from deep_research.schemas import check_schemas, write_schemas

    target = Path(args.dir)
    if args.check:
        stale = check_schemas(target)
        for name in stale:
            print(f"stale: {target / name} (run: deep-research schemas)", file=sys.stderr)
        return EXIT_VIOLATIONS if stale else EXIT_OK
    for path in write_schemas(target):
        print(path)
    return EXIT_OK


def _cmd_normalize(args: argparse.Namespace) -> int:
    from deep_research.normalize import normalize_payload
    from deep_research.normalize.enrich import BriefNormalizer
    from deep_research.normalize_io import NormalizeOptions, run_normalize

    options = NormalizeOptions(
        input=None if args.input in (None, "-") else Path(args.input),
        brief=Path(args.brief) if args.brief else None,
        output=Path(args.output) if args.output else None,
        report=Path(args.report) if args.report else None,
        start_id=args.start_id,
        sub_question=args.sub_question,
        round=args.round,
    )
    # Into a brief, new rows take their fetch fields from its record (normalize.enrich).
    normalizer = normalize_payload if options.brief is None else BriefNormalizer(options.brief)
    result = run_normalize(options, normalizer, stdin=sys.stdin.buffer)
    _print_capped("rejected", [rejection.describe() for rejection in result.rejections])
    _print_capped("warning", result.warnings)
    print(result.summary(), file=sys.stderr)
    return EXIT_OK


#: Lines of one kind a command prints on stderr, and characters of each: a file whose every
#: line is rejected gets a sample and a count, not its own size again on the terminal.
MAX_REPORTED_LINES = 20
MAX_REPORTED_CHARS = 300


def _print_capped(kind: str, lines: Sequence[str]) -> None:
    for line in lines[:MAX_REPORTED_LINES]:
        cut = line if len(line) <= MAX_REPORTED_CHARS else line[: MAX_REPORTED_CHARS - 1] + "…"
        print(f"{kind}: {cut}", file=sys.stderr)
    if len(lines) > MAX_REPORTED_LINES:
        print(
            f"{kind}: … and {len(lines) - MAX_REPORTED_LINES:,} more (--report FILE lists all)",
            file=sys.stderr,
        )


def _cmd_gate(args: argparse.Namespace) -> int:
    from deep_research.gates.batch import run_gate_file

    summary = run_gate_file(
        Path(args.input) if args.input != "-" else None,
        Path(args.output) if args.output else None,
        stdin=sys.stdin.buffer,
        stdout=sys.stdout,
    )
    print(summary, file=sys.stderr)
    return EXIT_OK


def _cmd_fetch(args: argparse.Namespace) -> int:
    from deep_research.fetch.fetcher import run_fetch

    result, view = run_fetch(args.url, Path(args.brief), max_chars=args.max_chars)
    return _print_fetched("fetch", result, view, as_json=args.json)


def _print_fetched(command: str, result: Any, view: dict[str, Any], *, as_json: bool) -> int:
    """A fetch's agent view (JSON, or the corpus path and the wrapped text) and its exit code."""
    if as_json:
        _print_json(view)
    elif view["text"] is not None:
        print(f"corpus: {view['corpus_path']}")
        print(view["text"])
    if not result.ok:
        from deep_research.decide.next_step import AFTER_FETCH

        print(f"{command} {result.entry.outcome}: {result.entry.reason}", file=sys.stderr)
        print(AFTER_FETCH, file=sys.stderr)
    return EXIT_OK if result.ok else EXIT_VIOLATIONS


def _cmd_hosts(args: argparse.Namespace) -> int:
    from deep_research.fetch.hosts import run_hosts

    allowed = run_hosts(Path(args.brief), args.action, args.urls, static=args.static)
    _print_json(allowed)
    if all(allowed.values()):
        return EXIT_OK
    from deep_research.decide.next_step import AFTER_HOSTS

    print(AFTER_HOSTS, file=sys.stderr)
    return EXIT_VIOLATIONS


def _cmd_refetch(args: argparse.Namespace) -> int:
    from deep_research.decide.refetch_rate import run_refetch

    report = run_refetch(Path(args.brief), archive=args.archive_base)
    _print_json(report.summary())
    return EXIT_OK


def _cmd_counters(args: argparse.Namespace) -> int:
    from deep_research.decide.counters import run_counters
    from deep_research.plugin.runstate import fetcher_rounds, round_searches
    from deep_research.record import open_brief

    # The guard's ledger is the plugin's record: it reaches the counters as numbers.
    brief = open_brief(Path(args.brief))
    report = run_counters(
        brief.root,
        Path(args.plan) if args.plan else None,
        fetcher_rounds=fetcher_rounds(brief),
        searched=round_searches(brief),
    )
    _print_json(report.as_dict())
    return EXIT_OK


def _cmd_verify(args: argparse.Namespace) -> int:
    from deep_research.brief import Brief
    from deep_research.decide.verify import run_verify
    from deep_research.plugin.runstate import fetcher_rounds, round_searches

    root = Path(args.brief)
    # The counters are checked as `counters` computed them: with the guard ledger's records.
    brief = Brief(root)
    report = run_verify(
        root,
        offline=args.offline,
        fetcher_rounds=fetcher_rounds(brief),
        searched=round_searches(brief) if root.is_dir() else (),
    )
    _print_json(report.as_dict())
    for line in report.mismatches + report.problems:
        print(f"differs: {line}", file=sys.stderr)
    return EXIT_OK if report.identical else EXIT_VIOLATIONS


def _cmd_trace(args: argparse.Namespace) -> int:
    from deep_research.gates.trace import TraceOptions, run_trace

    options = TraceOptions(
        brief=Path(args.brief) if args.brief else None,
        mode=args.mode,
        claims=Path(args.claims) if args.claims else None,
        sources=Path(args.sources) if args.sources else None,
        dossier=Path(args.dossier) if args.dossier else None,
        corpus_file=Path(args.corpus_file) if args.corpus_file else None,
        write=not args.no_write,
    )
    report = run_trace(options)
    _print_json(report.as_dict())
    for line in report.describe_violations():
        print(f"violation: {line}", file=sys.stderr)
    if args.report:
        from deep_research.brief import atomic_write_json

        atomic_write_json(Path(args.report), report.as_dict())
    if not report.violations:
        return EXIT_OK
    from deep_research.decide.next_step import after_trace

    print(after_trace(report.mode), file=sys.stderr)
    return EXIT_VIOLATIONS


def _cmd_locate(args: argparse.Namespace) -> int:
    from deep_research.brief import read_text
    from deep_research.gates.locate import locate

    if not args.quote.strip():
        raise InputError("--quote is empty; give the words to locate")
    text = read_text(Path(args.text_file), what="text file")
    found = locate(args.quote, text)
    if found is None:
        _print_json(None)
        print(f"not found: the quote is not in {args.text_file}", file=sys.stderr)
        return EXIT_VIOLATIONS
    _print_json(
        {
            "hash": found.hash,
            "start": found.start,
            "end": found.end,
            "method": found.method,
            "score": found.score,
        }
    )
    return EXIT_OK


def _cmd_eval(args: argparse.Namespace) -> int:
    from deep_research.gates.evaluate import (
        DEFAULT_EVAL_DIR,
        load_rows,
        measure_literals,
        measure_location,
        report_lines,
    )

    directory = Path(args.eval_dir) if args.eval_dir else DEFAULT_EVAL_DIR
    location = measure_location(load_rows(directory / args.quotes)) if args.quotes else None
    literals = measure_literals(load_rows(directory / args.literals)) if args.literals else None
    if args.json:
        _print_json(
            {
                "quote_location": location.as_dict() if location else None,
                "literal_fidelity": literals.as_dict() if literals else None,
            }
        )
    else:
        print("\n".join(report_lines(location, literals, show=args.show)))
    return EXIT_OK


def _settings(args: argparse.Namespace) -> Any:
    from deep_research.settings import settings_for

    # A plugin run's brief carries the settings `start` fixed; an override there is refused.
    brief = getattr(args, "brief", None)
    return settings_for(Path(brief) if brief else None, args.set or ())


def _cmd_triangulate(args: argparse.Namespace) -> int:
    from deep_research.decide.contradictions import run_contradictions
    from deep_research.decide.triangulate import run_triangulate

    # The one contradiction finder, as the headless driver runs it before triangulating: a
    # plugin run's contradicted claims are contested and listed in the report the same way.
    settings = _settings(args)
    run_contradictions(Path(args.brief), settings)
    report = run_triangulate(Path(args.brief), settings)
    _print_json(report.as_dict())
    return EXIT_OK


def _cmd_votes(args: argparse.Namespace) -> int:
    from deep_research.decide.votes import run_votes

    result = run_votes(Path(args.brief), Path(args.input), _settings(args))
    _print_json(result)
    for item in result["discarded"]:
        print(f"discarded: {item['claim']} vote {item['vote']}: {item['reason']}", file=sys.stderr)
    return EXIT_OK


def _cmd_entail(args: argparse.Namespace) -> int:
    from deep_research.decide.entail import run_entail

    report = run_entail(Path(args.brief), Path(args.input))
    _print_json(report.as_dict())
    for item in report.ignored:
        print(f"ignored: {item.line()}", file=sys.stderr)
    return EXIT_OK


def _cmd_ciber(args: argparse.Namespace) -> int:
    from deep_research.decide.ciber import run_ciber_apply

    result = run_ciber_apply(
        Path(args.brief),
        Path(args.input) if args.input else None,
        args.skip,
        _settings(args),
    )
    _print_json(result)
    return EXIT_OK


def _verdict_exit(verdict: str | None) -> int:
    """The exit code of a command that reports a verdict: 0 when the brief is usable."""
    from deep_research.verdict_meanings import is_usable

    return EXIT_OK if is_usable(verdict) else EXIT_VIOLATIONS


def _cmd_verdict(args: argparse.Namespace) -> int:
    from deep_research.decide.verdict import run_verdict

    report = run_verdict(Path(args.brief), _settings(args))
    _print_json(report.as_dict())
    return _unusable_says_next(report.verdict, report.reasons)


def _unusable_says_next(verdict: str, reasons: Sequence[str]) -> int:
    """:func:`_verdict_exit`, printing what to do next when the brief is not usable."""
    code = _verdict_exit(verdict)
    if code != EXIT_OK:
        from deep_research.decide.next_step import after_verdict

        print(after_verdict(verdict, reasons), file=sys.stderr)
    return code


def _cmd_fresh(args: argparse.Namespace) -> int:
    from datetime import date

    from deep_research.decide.freshness import run_fresh

    try:
        today = date.fromisoformat(args.today) if args.today else None
    except ValueError:
        raise InputError(f"--today {args.today!r} is not a YYYY-MM-DD date") from None
    decision = run_fresh(Path(args.brief), today, _settings(args))
    _print_json(decision.as_dict())
    print(f"{decision.decision}: {decision.reason}", file=sys.stderr)
    return EXIT_OK if decision.decision == "reuse" else EXIT_VIOLATIONS


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


def _cmd_answer(args: argparse.Namespace) -> int:
    from deep_research.brief import read_text
    from deep_research.gates.answer import check_answer
    from deep_research.record import open_brief

    brief = open_brief(Path(args.brief))
    document = brief.load_claims()
    text = read_text(Path(args.synthesis), what="synthesis") if args.synthesis else None
    if text is None:
        text = document.synthesis or ""
    if not text.strip():
        raise InputError("no synthesis to check: give --synthesis FILE, or write one first")
    checked = check_answer(brief, text, document)
    _print_json(checked.as_dict())
    for sentence in checked.sentences:
        if not sentence.passed:
            print(f"stripped: {sentence.text} — {sentence.reason}", file=sys.stderr)
    if checked.accepted:
        return EXIT_OK
    print(f"next: {checked.next_step()}", file=sys.stderr)
    return EXIT_VIOLATIONS


def _cmd_handoff(args: argparse.Namespace) -> int:
    from deep_research.decide.handoff import handoff_reasons, run_handoff

    project = args.project or os.environ.get("CLAUDE_PROJECT_DIR")
    handoff = run_handoff(Path(args.brief), Path(project) if project else None)
    sys.stdout.write(handoff.model_dump_json(indent=2) + "\n")
    return _unusable_says_next(handoff.verdict, handoff_reasons(Path(args.brief)))


def _cmd_start(args: argparse.Namespace) -> int:
    from deep_research.plugin.runstate import register_session, start_run, state_dir

    requested = {
        "max_fetches": args.max_fetches,
        "max_fanout": args.fan_out,
        "max_rounds": args.rounds,
        "max_searches": args.max_searches,
    }
    state = state_dir(args.state)
    record = start_run(
        args.topic,
        depth=args.depth,
        state=state,
        requested=requested,
        static_hosts=args.allow_host or [],
        mcp=args.mcp,
    )
    register_session(state)
    from deep_research.plugin.drivers import WORKFLOW_NAME, choose

    driver = choose()
    if driver["driver"] == "workflow":
        driver["workflow"] = {"name": WORKFLOW_NAME, "args": {"brief": record["brief"]}}
    _print_json({**record, **driver})
    return EXIT_OK


def _cmd_finish(args: argparse.Namespace) -> int:
    from deep_research.plugin.runstate import cli_state_dir, finish_run, forget_session

    state = cli_state_dir(args.state)
    cleared = finish_run(state, Path(args.brief))
    if cleared:
        forget_session(state)
    _print_json({"brief": args.brief, "active_run_cleared": cleared})
    return EXIT_OK


def _cmd_resume(args: argparse.Namespace) -> int:
    from deep_research.plugin.runstate import cli_state_dir, resume_run

    moved = resume_run(cli_state_dir(args.state), Path(args.brief))
    _print_json({"brief": args.brief, "session_changed": moved})
    return EXIT_OK


def _cmd_next(args: argparse.Namespace) -> int:
    from deep_research.plugin.guard.steps import remember_step
    from deep_research.plugin.next import next_action

    action = next_action(Path(args.brief))
    # The files this step names are the only ones the guard lets the write tools write.
    named = [action.path] if action.path else []
    remember_step(Path(args.brief), [*named, *(task.save_to for task in action.tasks)])
    if args.json:
        _print_json(action.model_dump(exclude_defaults=True))
    else:
        print(action.text())
    return EXIT_OK


def _cmd_step(args: argparse.Namespace) -> int:
    from deep_research.plugin.workflow import step

    failed = [word for value in args.failed or () for word in value.split(",") if word]
    done = step(Path(args.brief), failed)
    if args.json:
        _print_json(done.for_script())
    else:
        print(f"{done.action} ({done.phase}): {done.why}")
        for line in done.log:
            print(f"  {line}")
        for task in done.tasks:
            print(f"  {task.agent}: {task.id}")
    return EXIT_OK


def _cmd_wait(args: argparse.Namespace) -> int:
    from deep_research.plugin.progress import wait

    wait(Path(args.brief), args.seconds, lambda line: print(line, flush=True))
    return EXIT_OK


def _cmd_ingest(args: argparse.Namespace) -> int:
    from deep_research.plugin.ingest import run_ingest

    _print_json(run_ingest(Path(args.brief)).as_dict())
    return EXIT_OK


def _cmd_guard(args: argparse.Namespace) -> int:
    from deep_research.plugin.guard import CliReader, hook_output, run_guard

    # The guard reads a Bash line calling us with this parser, passed in: it never imports us.
    state = Path(args.state) if args.state else None
    decision = run_guard(sys.stdin.read(), args.phase, state, CliReader(build_parser))
    if decision.allow:
        # An explicit allow (our own CLI call that passed every check) is JSON on stdout.
        sys.stdout.write(hook_output(decision))
        return EXIT_OK
    print(decision.reason, file=sys.stderr)
    return EXIT_INPUT  # 2: Claude Code blocks the tool call and shows the reason


def _cmd_mcp_gate(args: argparse.Namespace) -> int:
    from deep_research.plugin.mcpgate import print_review, run_mcp_gate
    from deep_research.plugin.runstate import state_dir

    result = run_mcp_gate(
        args.name, state_dir(args.state), record=args.record, timeout=args.timeout
    )
    if args.record or result.gate == "manifest-audit":
        print_review(result)  # the tool list a human reviews before (re-)recording
    if args.brief:
        from deep_research.plugin.mcpgate import record_gate

        record_gate(Path(args.brief), result)
    _print_json(result.as_dict())
    return EXIT_OK if result.ok else EXIT_VIOLATIONS


def _cmd_mcp_fetch(args: argparse.Namespace) -> int:
    from deep_research.brief import Brief
    from deep_research.fetch.fetcher import agent_view
    from deep_research.plugin.mcpfetch import parse_arguments, run_mcp_fetch
    from deep_research.plugin.runstate import state_dir

    result, failed = run_mcp_fetch(
        args.name,
        args.tool,
        parse_arguments(args.arguments),
        Path(args.brief),
        state_dir(args.state),
        timeout=args.timeout,
    )
    if failed is not None:
        from deep_research.decide.next_step import AFTER_FETCH

        _print_json({"error": f"{failed.gate}-failed", "reason": failed.reason})
        print(AFTER_FETCH, file=sys.stderr)
        return EXIT_VIOLATIONS
    view = agent_view(result, Brief(Path(args.brief)), args.max_chars)
    return _print_fetched("mcp-fetch", result, view, as_json=args.json)


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _cmd_run(args: argparse.Namespace) -> int:
    import signal
    import threading

    from deep_research.run.driver import run_command

    # A scheduler's SIGTERM (timeouts, shutdown) stops a run the way Ctrl-C does: the phase
    # under way is not recorded as done, so the brief stays valid and resumable.
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        result = run_command(
            args.question,
            depth=args.depth,
            corpus=args.corpus,
            search=args.search,
            reasoner=args.reasoner,
            models=args.model,
            batch=args.batch,
            max_usd=args.max_usd,
            resume=args.resume,
            refresh=args.refresh,
            state=Path(args.state) if args.state else None,
            settings=_settings(args),
        )
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if args.json:
        _print_json(result.as_dict())
    else:
        print("\n".join(result.summary_lines()))
    return _verdict_exit(result.verdict)


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
#: run, or a pipeline step run by hand (``run`` does every step itself). Each registered command
#: is in exactly one group (tests/test_cli.py checks it).
COMMAND_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Using it",
        (
            "run",
            "verify",
            "render",
            "handoff",
            "fresh",
            "gate",
            "locate",
            "validate",
            "eval",
            "schemas",
        ),
    ),
    (
        "The plugin's run (Claude Code calls these)",
        (
            "start",
            "next",
            "step",
            "wait",
            "ingest",
            "finish",
            "resume",
            "guard",
            "fetch",
            "hosts",
            "mcp-gate",
            "mcp-fetch",
        ),
    ),
    (
        "Pipeline steps (run does them all; call one to redo its step on a brief)",
        (
            "normalize",
            "trace",
            "entail",
            "votes",
            "triangulate",
            "refetch",
            "ciber",
            "counters",
            "verdict",
            "answer",
        ),
    ),
)

#: Columns of the command listing (argparse wraps the rest of --help to the terminal).
HELP_WIDTH = 80


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
    helps: dict[str, str] = {}

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        # No help= here: argparse would list every command again, ungrouped, in registration order.
        sub = commands.add_parser(name, description=help_text, allow_abbrev=False)
        sub.set_defaults(handler=handler)
        helps[name] = help_text
        return sub

    sub = add("validate", _cmd_validate, "validate every artifact of a brief against its schema")
    sub.add_argument("brief", help="brief directory")

    sub = add("schemas", _cmd_schemas, "write the JSON Schemas generated from the models")
    sub.add_argument("--dir", default="schemas", help="target directory (default: schemas)")
    sub.add_argument("--check", action="store_true", help="only report stale files (exit 1)")

    sub = add("normalize", _cmd_normalize, "coerce raw fetcher output into sources.jsonl rows")
    sub.add_argument("input", nargs="?", default="-", help="fetcher output file, or - (stdin)")
    sub.add_argument("--brief", help="brief directory: merge into its sources.jsonl")
    sub.add_argument("--output", help="write rows here instead of stdout (ignored with --brief)")
    sub.add_argument("--report", help="write the JSON report (rows kept, rejections) here")
    sub.add_argument("--start-id", type=int, default=None, help="first S-id number to assign")
    sub.add_argument("--sub-question", help="sub-question id to record on every row")
    sub.add_argument("--round", type=int, default=None, help="research round of these rows")

    sub = add("trace", _cmd_trace, "trace every citation to its retained quote")
    sub.add_argument("brief", nargs="?", help="brief directory (default: parent of --sources)")
    sub.add_argument("--mode", choices=["claims", "dossier"], default=None)
    sub.add_argument("--claims", help="claims.json (default: the brief's)")
    sub.add_argument("--sources", help="sources.jsonl (default: the brief's)")
    sub.add_argument("--dossier", help="markdown report whose sentences cite [S#] or URLs")
    sub.add_argument("--corpus-file", help="verify against this file (must be a corpus file)")
    sub.add_argument("--report", help="also write the JSON report here")
    sub.add_argument("--no-write", action="store_true", help="do not update claims.json")

    sub = add("gate", _cmd_gate, "check citations from any tool (batch, no model, no network)")
    sub.add_argument("--input", required=True, help="pairs.jsonl, or - (stdin)")
    sub.add_argument("--output", help="results.jsonl (default: stdout)")

    sub = add("fetch", _cmd_fetch, "fetch one URL safely into the brief's corpus and fetch log")
    sub.add_argument("url")
    sub.add_argument("--brief", required=True, help="brief directory")
    sub.add_argument("--json", action="store_true", help="print a JSON object")
    sub.add_argument("--max-chars", type=int, default=20_000, help="page text shown (20000)")

    sub = add("hosts", _cmd_hosts, "the run host allow-list: add hosts, or check URLs against it")
    sub.add_argument("action", choices=["add", "check"])
    sub.add_argument("urls", nargs="+", help="URLs or host names")
    sub.add_argument("--brief", required=True, help="brief directory")
    sub.add_argument("--static", action="store_true", help="add to the static list")

    sub = add("refetch", _cmd_refetch, "phase 6b: re-fetch a sample, re-locate cited quotes")
    sub.add_argument("brief", help="brief directory")
    sub.add_argument("--archive-base", help="Wayback base URL (default: the Internet Archive)")

    sub = add(
        "counters",
        _cmd_counters,
        "recompute the work counters from the brief's "
        "artifacts and plan.json; record them in trace.json",
    )
    sub.add_argument("brief", help="brief directory")
    sub.add_argument("--plan", help="the orchestrator's plan (default: <brief>/plan.json)")

    sub = add("verify", _cmd_verify, "re-run the mechanical gates from the retained corpus")
    sub.add_argument("brief", help="brief directory")
    sub.add_argument("--offline", action="store_true", help="switch the network off (refused)")

    sub = add("eval", _cmd_eval, "measure the gate on labelled quote and literal data")
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

    def brief_command(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        sub = add(name, handler, help_text)
        sub.add_argument("brief", help="brief directory")
        sub.add_argument(
            "--set",
            action="append",
            metavar="NAME=VALUE",
            help="override a setting (recorded in trace.json); repeatable",
        )
        return sub

    brief_command(
        "triangulate", _cmd_triangulate, "independence groups, τ, confidence; strip what fails"
    )
    sub = brief_command("votes", _cmd_votes, "record the skeptic panel's votes per claim")
    sub.add_argument("--input", required=True, help='votes JSON: {"C1": [vote, …], …}')

    sub = add(
        "entail",
        _cmd_entail,
        "admit the entailment judge's verdicts whose span lies in the claim's located "
        "evidence; a checked contradiction strips its claim (before triangulate)",
    )
    sub.add_argument("brief", help="brief directory")
    sub.add_argument("--input", required=True, help="verifier verdicts: one object or a list")

    brief_command("verdict", _cmd_verdict, "decide the verdict (exit 1 on HOLD or FAIL)")

    sub = brief_command("fresh", _cmd_fresh, "reuse or regenerate? (exit 0 reuse, 1 regenerate)")
    sub.add_argument("--today", help="date to judge against, YYYY-MM-DD (default: today, UTC)")

    sub = add("render", _cmd_render, "write report.md (refuses a FAIL brief unless --force)")
    sub.add_argument("brief", help="brief directory")
    sub.add_argument("--force", action="store_true", help="render a FAIL brief, marked as such")
    sub.add_argument(
        "--format", choices=["md", "json"], default="md", help="json: print the render model"
    )

    sub = add(
        "answer",
        _cmd_answer,
        "check a written answer claim by claim, and that it states every position of each "
        "open contradiction (exit 1: refused)",
    )
    sub.add_argument("brief", help="brief directory")
    sub.add_argument(
        "--synthesis", help="the answer to check (markdown); default: claims.json's synthesis"
    )

    sub = add(
        "handoff",
        _cmd_handoff,
        "the consumer's metadata block and claim split (exit 1: HOLD or FAIL, nothing usable)",
    )
    sub.add_argument("brief", help="brief directory")
    sub.add_argument(
        "--project",
        help="paths inside this folder are given relative to it "
        "(default: $CLAUDE_PROJECT_DIR, else the working directory)",
    )

    ciber = add("ciber", _cmd_ciber, "CIBER: apply the agent's diagnosis mechanically")
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

    sub = add(
        "start",
        _cmd_start,
        "begin a run: create the brief, record its caps (clamped "
        "to hard limits), make it the active run the hooks guard",
    )
    sub.add_argument("topic", help="the research question or topic (names the brief)")
    sub.add_argument("--depth", default="full", choices=["full", "quick", "shallow"])
    sub.add_argument("--state", help="state folder (default: $DEEP_RESEARCH_STATE or ./state)")
    sub.add_argument("--max-fetches", type=int, help="fetch budget for the run")
    sub.add_argument("--fan-out", type=int, help="agents in flight at once")
    sub.add_argument("--rounds", type=int, help="research rounds")
    sub.add_argument("--max-searches", type=int, help="WebSearch calls for the run")
    sub.add_argument("--allow-host", action="append", help="a host on the static allow-list")
    sub.add_argument("--mcp", metavar="NAME", help="also research through this reviewed MCP server")

    sub = add("next", _cmd_next, "a plugin run's single next action, decided by code")
    sub.add_argument("brief", help="brief directory")
    sub.add_argument("--json", action="store_true", help="print the action as JSON")

    sub = add(
        "step",
        _cmd_step,
        "the workflow's next step: runs every command next asks for, then names the agents",
    )
    sub.add_argument("brief", help="brief directory")
    sub.add_argument(
        "--failed", action="append", metavar="IDS", help="tasks whose agents ended unanswered"
    )
    sub.add_argument("--json", action="store_true", help="print the step as JSON")

    sub = add(
        "wait",
        _cmd_wait,
        "wait (at most 90 s a call) for a plugin run's workflow to end; a line per finished phase",
    )
    sub.add_argument("brief", help="brief directory")
    sub.add_argument(
        "--seconds", type=float, help="the longest this call waits (default and at most: 90)"
    )

    sub = add(
        "ingest",
        _cmd_ingest,
        "feed every saved agent return of a plugin run to the command that consumes it",
    )
    sub.add_argument("brief", help="brief directory")

    sub = add("finish", _cmd_finish, "end the active run (the hooks stop guarding it)")
    sub.add_argument("brief", help="brief directory")
    sub.add_argument("--state", help="state folder (default: $DEEP_RESEARCH_STATE or ./state)")

    sub = add(
        "resume",
        _cmd_resume,
        "make an unfinished plugin run this Claude Code session's, to relaunch its workflow",
    )
    sub.add_argument("brief", help="brief directory")
    sub.add_argument("--state", help="state folder (default: $DEEP_RESEARCH_STATE or ./state)")

    sub = add(
        "guard",
        _cmd_guard,
        "Claude Code hook: read a tool event on stdin; exit 2 with "
        "the reason on stderr to block it",
    )
    sub.add_argument("--phase", choices=["pre", "post"], default="pre")
    sub.add_argument("--state", help="state folder (default: see deep_research.plugin.guard)")

    sub = add(
        "run",
        _cmd_run,
        "the headless pipeline: question → verified brief and report "
        "(exit 0 READY/PARTIAL/PARTIAL_QUICK, 1 HOLD/FAIL)",
    )
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
    sub.add_argument("--state", help="state folder (default: $DEEP_RESEARCH_STATE or ./state)")
    sub.add_argument(
        "--json", action="store_true", help="print the summary as JSON (progress stays on stderr)"
    )
    sub.add_argument("--set", action="append", metavar="NAME=VALUE", help="override a setting")

    sub = add(
        "mcp-gate",
        _cmd_mcp_gate,
        "the three MCP gates (manifest audit, version pin, "
        "least privilege) for one configured server (exit 1: a gate failed)",
    )
    sub.add_argument("name", help="the server's name in <state>/mcp-config.json")
    sub.add_argument(
        "--record",
        action="store_true",
        help="after reviewing its tool list: record the server's fingerprint",
    )
    sub.add_argument("--state", help="state folder (default: $DEEP_RESEARCH_STATE or ./state)")
    sub.add_argument(
        "--timeout", type=float, default=30.0, help="seconds the server gets to list its tools (30)"
    )
    sub.add_argument("--brief", help="record the gate's result in this run's brief")

    sub = add(
        "mcp-fetch",
        _cmd_mcp_fetch,
        "one MCP tool call through the three gates; its "
        "text is kept in the brief's corpus and logged like a page fetch",
    )
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
    sub.add_argument("--state", help="state folder (default: $DEEP_RESEARCH_STATE or ./state)")
    sub.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="seconds for the whole call: start, gates, tool (30)",
    )

    sub = add("locate", _cmd_locate, "locate one quote in a text file")
    sub.add_argument("--quote", required=True)
    sub.add_argument("--text-file", required=True)

    exits = _wrap(
        "Exit codes: 0 ok, 1 violations, 2 input error, 3 brief busy, 130 interrupted (Ctrl-C, "
        "or SIGTERM during run).",
        HELP_WIDTH,
    )
    parser.epilog = command_listing(helps) + "\n\n" + "\n".join(exits)
    return parser


@contextlib.contextmanager
def _one_line_warnings(command: str) -> Iterator[None]:
    """A warning on the command line is one line naming the command; Python's default shows
    the library's source line under it, which says nothing to the person reading it."""
    import warnings

    def show(message: Warning | str, *_: object, **__: object) -> None:
        print(f"deep-research {command}: warning: {message}", file=sys.stderr)

    previous, warnings.showwarning = warnings.showwarning, show
    try:
        yield
    finally:
        warnings.showwarning = previous


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler = args.handler
    try:
        with _one_line_warnings(args.command):
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
