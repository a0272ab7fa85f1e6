"""The gates' commands: the batch gate, one quote located, the gate measured on labelled
rows, and a written answer checked claim by claim."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from deep_research.console import EXIT_OK, EXIT_VIOLATIONS, print_json
from deep_research.errors import InputError


def cmd_gate(args: argparse.Namespace) -> int:
    from deep_research.gates.batch import run_gate_file

    summary = run_gate_file(
        Path(args.input) if args.input != "-" else None,
        Path(args.output) if args.output else None,
        stdin=sys.stdin.buffer,
        stdout=sys.stdout,
    )
    print(summary, file=sys.stderr)
    return EXIT_OK


def cmd_locate(args: argparse.Namespace) -> int:
    from deep_research.brief.readers import read_text
    from deep_research.gates.locate import locate

    if not args.quote.strip():
        raise InputError("--quote is empty; give the words to locate")
    text = read_text(Path(args.text_file), what="text file")
    found = locate(args.quote, text)
    if found is None:
        print_json(None)
        print(f"not found: the quote is not in {args.text_file}", file=sys.stderr)
        return EXIT_VIOLATIONS
    print_json(
        {
            "hash": found.hash,
            "start": found.start,
            "end": found.end,
            "method": found.method,
            "score": found.score,
        }
    )
    return EXIT_OK


def cmd_eval(args: argparse.Namespace) -> int:
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
        print_json(
            {
                "quote_location": location.as_dict() if location else None,
                "literal_fidelity": literals.as_dict() if literals else None,
            }
        )
    else:
        print("\n".join(report_lines(location, literals, show=args.show)))
    return EXIT_OK


def cmd_answer(args: argparse.Namespace) -> int:
    from deep_research.brief.readers import read_text
    from deep_research.brief.record import open_brief
    from deep_research.gates.answer import check_answer

    brief = open_brief(Path(args.brief))
    document = brief.load_claims()
    text = read_text(Path(args.synthesis), what="synthesis") if args.synthesis else None
    if text is None:
        text = document.synthesis or ""
    if not text.strip():
        raise InputError("no synthesis to check: give --synthesis FILE, or write one first")
    checked = check_answer(brief, text, document)
    print_json(checked.as_dict())
    for sentence in checked.sentences:
        if not sentence.passed:
            print(f"stripped: {sentence.text} — {sentence.reason}", file=sys.stderr)
    if checked.accepted:
        return EXIT_OK
    print(f"next: {checked.next_step()}", file=sys.stderr)
    return EXIT_VIOLATIONS
