"""The pipeline steps' commands that decide from a brief's files: trace (its failure line says
what to do next, which is decided here), the re-fetch pass, triangulation, the panel's votes,
the entailment judge, CIBER, the verdict and freshness."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from deep_research.console import EXIT_OK, EXIT_VIOLATIONS, print_json, settings_from, verdict_exit
from deep_research.errors import InputError


def cmd_trace(args: argparse.Namespace) -> int:
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
    print_json(report.as_dict())
    for line in report.describe_violations():
        print(f"violation: {line}", file=sys.stderr)
    if args.report:
        from deep_research.brief.writers import atomic_write_json

        atomic_write_json(Path(args.report), report.as_dict())
    if not report.violations:
        return EXIT_OK
    from deep_research.decide.next_step import after_trace

    print(after_trace(report.mode), file=sys.stderr)
    return EXIT_VIOLATIONS


def cmd_refetch(args: argparse.Namespace) -> int:
    from deep_research.decide.refetch_rate import run_refetch

    report = run_refetch(Path(args.brief), archive=args.archive_base)
    print_json(report.summary())
    return EXIT_OK


def cmd_triangulate(args: argparse.Namespace) -> int:
    from deep_research.decide.contradictions import run_contradictions
    from deep_research.decide.triangulate import run_triangulate

    # The one contradiction finder, as the headless driver runs it before triangulating: a
    # plugin run's contradicted claims are contested and listed in the report the same way.
    settings = settings_from(args)
    run_contradictions(Path(args.brief), settings)
    summary = run_triangulate(Path(args.brief), settings).entry()
    del summary["settings_hash"]  # stamped only on the copy trace.json records
    print_json(summary)
    return EXIT_OK


def cmd_votes(args: argparse.Namespace) -> int:
    from deep_research.decide.votes import run_votes

    result = run_votes(Path(args.brief), Path(args.input), settings_from(args))
    print_json(result)
    for item in result["discarded"]:
        print(f"discarded: {item['claim']} vote {item['vote']}: {item['reason']}", file=sys.stderr)
    return EXIT_OK


def cmd_entail(args: argparse.Namespace) -> int:
    from deep_research.decide.entail import run_entail

    report = run_entail(Path(args.brief), Path(args.input))
    print_json(report.as_dict())
    for item in report.ignored:
        print(f"ignored: {item.line()}", file=sys.stderr)
    return EXIT_OK


def cmd_ciber(args: argparse.Namespace) -> int:
    from deep_research.decide.ciber import run_ciber_apply

    result = run_ciber_apply(
        Path(args.brief),
        Path(args.input) if args.input else None,
        args.skip,
        settings_from(args),
    )
    print_json(result)
    return EXIT_OK


def cmd_verdict(args: argparse.Namespace) -> int:
    from deep_research.decide.verdict import run_verdict

    report = run_verdict(Path(args.brief), settings_from(args))
    print_json(report.as_dict())
    return unusable_says_next(report.verdict, report.verdict_reasons)


def unusable_says_next(verdict: str, reasons: Sequence[str]) -> int:
    """:func:`verdict_exit`, printing what to do next when the brief is not usable."""
    code = verdict_exit(verdict)
    if code != EXIT_OK:
        from deep_research.decide.next_step import after_verdict

        print(after_verdict(verdict, reasons), file=sys.stderr)
    return code


def cmd_fresh(args: argparse.Namespace) -> int:
    from datetime import date

    from deep_research.decide.freshness import run_fresh

    try:
        today = date.fromisoformat(args.today) if args.today else None
    except ValueError:
        raise InputError(f"--today {args.today!r} is not a YYYY-MM-DD date") from None
    decision = run_fresh(Path(args.brief), today, settings_from(args))
    print_json(decision.as_dict())
    print(f"{decision.decision}: {decision.reason}", file=sys.stderr)
    return EXIT_OK if decision.decision == "reuse" else EXIT_VIOLATIONS


def cmd_handoff(args: argparse.Namespace) -> int:
    from deep_research.decide.handoff import handoff_reasons, run_handoff

    project = args.project or os.environ.get("CLAUDE_PROJECT_DIR")
    handoff = run_handoff(Path(args.brief), Path(project) if project else None)
    sys.stdout.write(handoff.model_dump_json(indent=2) + "\n")
    return unusable_says_next(handoff.verdict, handoff_reasons(Path(args.brief)))
