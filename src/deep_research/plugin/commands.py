"""The commands of a plugin run (Claude Code calls these): fetch, hosts, next, wait, ingest,
finish, guard, the MCP gate and fetch; and the counters and the offline verify, which read the
guard's ledger. Each imports what it uses when it runs: ``guard`` is called on every tool call
and must load nothing it does not need."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from deep_research.console import EXIT_INPUT, EXIT_OK, EXIT_VIOLATIONS, print_json


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


def cmd_guard(args: argparse.Namespace) -> int:
    from deep_research.plugin.guard import hook_output, run_guard

    decision = run_guard(sys.stdin.read(), args.phase, Path(args.state) if args.state else None)
    if decision.allow:
        # An explicit allow (our own CLI call that passed every check) is JSON on stdout.
        sys.stdout.write(hook_output(decision))
        return EXIT_OK
    print(decision.reason, file=sys.stderr)
    return EXIT_INPUT  # 2: Claude Code blocks the tool call and shows the reason


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

        print_json({"error": f"{failed.gate}-failed", "reason": failed.reason})
        print(AFTER_FETCH, file=sys.stderr)
        return EXIT_VIOLATIONS
    view = agent_view(result, Brief(Path(args.brief)), args.max_chars)
    return print_fetched("mcp-fetch", result, view, as_json=args.json)
