"""The ``normalize`` command: fetcher output in, canonical rows into a brief or a file out."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from deep_research.console import EXIT_OK, print_capped


def cmd_normalize(args: argparse.Namespace) -> int:
    from deep_research.normalize import normalize_payload
    from deep_research.normalize.enrich import FillFromBrief
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
    fill = None if options.brief is None else FillFromBrief(options.brief)
    result = run_normalize(options, normalize_payload, stdin=sys.stdin.buffer, fill=fill)
    print_capped("rejected", [rejection.describe() for rejection in result.rejections])
    print_capped("warning", result.warnings)
    print(result.summary(), file=sys.stderr)
    return EXIT_OK
