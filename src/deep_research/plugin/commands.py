"""The commands of a plugin run (Claude Code calls these): start, resume, step, fetch, hosts,
next, wait, ingest, finish, the MCP gate and fetch; and the counters and the offline verify,
which read the guard's ledger. ``guard`` itself is wired in cli.py, which hands it the parser.
Each imports what it uses when it runs: the hook path must load nothing it does not need."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from deep_research.console import EXIT_OK, EXIT_VIOLATIONS, print_json


def cmd_fetch(args: argparse.Namespace) -> int:
    from deep_research.fetch.fetcher import run_fetch

    result, view = run_fetch(args.url, Path(args.brief), max_chars=args.max_chars)
    return print_fetched("fetch", result, view, as_json=args.json)


def print_fetched(command: str, result: Any, view: dict[str, Any], *, as_json: bool) -> int:
    """A fetch's agent view (JSON, or the corpus path and the wrapped text) and its exit code."""
    if as_json:
        print_json(view)
    elif view["text"] is not None:
        print(f"corpus: {view['corpus_path']}")
        print(view["text"])
    if not result.ok:
        from deep_research.decide.next_step import AFTER_FETCH

        print(f"{command} {result.entry.outcome}: {result.entry.reason}", file=sys.stderr)
        print(AFTER_FETCH, file=sys.stderr)
    return EXIT_OK if result.ok else EXIT_VIOLATIONS


def cmd_hosts(args: argparse.Namespace) -> int:
    from deep_research.fetch.hosts import run_hosts

    allowed = run_hosts(Path(args.brief), args.action, args.urls, static=args.static)
    print_json(allowed)
    if all(allowed.values()):
        return EXIT_OK
    from deep_research.decide.next_step import AFTER_HOSTS

    print(AFTER_HOSTS, file=sys.stderr)
    return EXIT_VIOLATIONS


def cmd_counters(args: argparse.Namespace) -> int:
    from deep_research.brief.record import open_brief
    from deep_research.decide.counters import run_counters
    from deep_research.plugin.runstate import fetcher_rounds, round_searches

    # The guard's ledger is the plugin's record: it reaches the counters as numbers.
    brief = open_brief(Path(args.brief))
    report = run_counters(
        brief.root,
        Path(args.plan) if args.plan else None,
        fetcher_rounds=fetcher_rounds(brief),
        searched=round_searches(brief),
    )
    print_json(report.as_dict())
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from deep_research.brief.layout import Brief
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
    print_json(report.as_dict())
    for line in report.mismatches + report.problems:
        print(f"differs: {line}", file=sys.stderr)
    return EXIT_OK if report.identical else EXIT_VIOLATIONS


def cmd_finish(args: argparse.Namespace) -> int:
    from deep_research.plugin.runstate import cli_state_dir, finish_run, forget_session

    state = cli_state_dir(args.state)
    cleared = finish_run(state, Path(args.brief))
    if cleared:
        forget_session(state)
    print_json({"brief": args.brief, "active_run_cleared": cleared})
    return EXIT_OK


def cmd_next(args: argparse.Namespace) -> int:
    from deep_research.plugin.guard.steps import remember_step
    from deep_research.plugin.next import next_action

    action = next_action(Path(args.brief))
    # The files this step names are the only ones the guard lets the write tools write.
    named = [action.path] if action.path else []
    remember_step(Path(args.brief), [*named, *(task.save_to for task in action.tasks)])
    if args.json:
        print_json(action.model_dump(exclude_defaults=True))
    else:
        print(action.text())
    return EXIT_OK


def cmd_wait(args: argparse.Namespace) -> int:
    from deep_research.plugin.progress import wait

    wait(Path(args.brief), args.seconds, lambda line: print(line, flush=True))
    return EXIT_OK


def cmd_ingest(args: argparse.Namespace) -> int:
    from deep_research.plugin.ingest import run_ingest

    print_json(run_ingest(Path(args.brief)).as_dict())
    return EXIT_OK


def cmd_mcp_gate(args: argparse.Namespace) -> int:
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
    print_json(result.as_dict())
    return EXIT_OK if result.ok else EXIT_VIOLATIONS


def cmd_mcp_fetch(args: argparse.Namespace) -> int:
    from deep_research.brief.layout import Brief
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

        print_json({"error": f"{failed.name}-failed", "reason": failed.detail})
        print(AFTER_FETCH, file=sys.stderr)
        return EXIT_VIOLATIONS
    view = agent_view(result, Brief(Path(args.brief)), args.max_chars)
    return print_fetched("mcp-fetch", result, view, as_json=args.json)


def cmd_start(args: argparse.Namespace) -> int:
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
    print_json({**record, **driver})
    return EXIT_OK


def cmd_resume(args: argparse.Namespace) -> int:
    from deep_research.plugin.runstate import cli_state_dir, resume_run

    moved = resume_run(cli_state_dir(args.state), Path(args.brief))
    print_json({"brief": args.brief, "session_changed": moved})
    return EXIT_OK


def cmd_step(args: argparse.Namespace) -> int:
    from deep_research.plugin.workflow import step

    failed = [word for value in args.failed or () for word in value.split(",") if word]
    done = step(Path(args.brief), failed)
    if args.json:
        print_json(done.for_script())
    else:
        print(f"{done.action} ({done.phase}): {done.why}")
        for line in done.log:
            print(f"  {line}")
        for task in done.tasks:
            print(f"  {task.agent}: {task.id}")
    return EXIT_OK
