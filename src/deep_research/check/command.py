"""``deep-research check REPORT [--json] [--state DIR] [--reasoner extractive|claude]``.

Its arguments, and its handler. Building the arguments imports nothing beyond argparse (the
hook guard builds the whole parser on every call); the handler imports the check when it runs.
Exit 0 when no sentence is flagged, 1 when one is, 2 for a bad report or option (one line on
stderr, nothing written).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HELP = "check a report's cited sentences against their pages (exit 1: a sentence is flagged)"


def add_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("report", help="the report: Markdown, HTML or plain text")
    sub.add_argument("--json", action="store_true", help="print the result as JSON")
    sub.add_argument(
        "--state",
        metavar="DIR",
        help="the check folder: the pages fetched and the result (default: a new folder under "
        "$DEEP_RESEARCH_STATE or ./state, named on stderr)",
    )
    sub.add_argument(
        "--reasoner",
        choices=["extractive", "claude"],
        default="extractive",
        help="claude: a model judges the sentences the literal checks cannot decide "
        "(needs ANTHROPIC_API_KEY)",
    )


def cmd_check(args: argparse.Namespace) -> int:
    from deep_research.check.folder import run_check
    from deep_research.check.output import flagged_line, summary_line

    voter = None
    if args.reasoner == "claude":
        from deep_research.check.votes import ModelVoter

        voter = ModelVoter.from_environment()
    path = Path(args.report)
    folder = Path(args.state) if args.state else None

    def progress(line: str) -> None:
        print(line, file=sys.stderr)

    checked = run_check(path, folder, reasoner=args.reasoner, voter=voter, progress=progress)
    for line in voter.spend() if voter is not None else []:
        print(line, file=sys.stderr)
    if not args.state:
        print(f"check folder: {checked.folder}", file=sys.stderr)
    counts = checked.result["summary"]
    if args.json:
        sys.stdout.write(json.dumps(checked.result, ensure_ascii=False, indent=2) + "\n")
        if not counts["cited"]:
            print(summary_line(counts, str(checked.folder)), file=sys.stderr)
    else:
        for row in checked.rows:
            if row.flagged:
                print(flagged_line(row))
        print(summary_line(counts, str(checked.folder)))
    return 1 if counts["flagged"] else 0


def cmd_verify(args: argparse.Namespace) -> int:
    """``verify CHECK_FOLDER``: every verdict, the summary and annotated.md re-derived offline."""
    from deep_research.check.folder import verify_check

    report = verify_check(Path(args.brief))
    sys.stdout.write(json.dumps(report.as_dict(), ensure_ascii=False, indent=2) + "\n")
    for line in report.mismatches:
        print(f"differs: {line}", file=sys.stderr)
    return 0 if report.identical else 1
