"""The ``run`` command: the headless pipeline, stopped by SIGTERM the way Ctrl-C stops it."""

from __future__ import annotations

import argparse
from pathlib import Path

from deep_research.console import print_json, settings_from, verdict_exit


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def cmd_run(args: argparse.Namespace) -> int:
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
            settings=settings_from(args),
        )
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if args.json:
        print_json(result.as_dict())
    else:
        print("\n".join(result.summary_lines()))
    return verdict_exit(result.verdict)
