"""Relevance of the headless pipeline's claims over python-docs (a script, not a test).

Each question in ``extractive_questions.json`` goes through the real pipeline — ``deep-research
run QUESTION --corpus python-docs --depth quick --json --state <tmp>`` — and every emitted claim
is labelled by the question's on-topic markers: terms a sentence answering the question uses in
the documentation, chosen by reading the documents the row names (matched case-insensitively as
substrings; a marker given as a list needs all of its parts). A question the corpus cannot
answer has no markers, so every claim emitted for it is off topic; its right outcome is a brief
with no claim (``not found``).

    python benchmarks/extractive_eval.py            # per question and overall
    python benchmarks/extractive_eval.py --show     # also every claim, marked on/off topic

The three figures:

* precision = on-topic claims ÷ emitted claims, pooled over every question (answerable or not);
* answered = answerable questions with at least one on-topic claim ÷ answerable questions (it
  guards against buying precision by emitting nothing);
* not found = unanswerable questions that emitted no claim ÷ unanswerable questions.

Markers are a proxy for reading: a row's ``judged`` holds the label a reader gave each claim
read (keyed by its first 80 characters), and that label is used wherever there is one. A claim
is judged on topic when it states something about the very feature, statement, function or
task asked about, so that it belongs in an answer; off topic when it is about something else
that merely shares words with the question. ``--show`` prints every claim with its label (``?``:
not yet read, labelled by markers), and the summary says how many were read.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from deep_research.brief.layout import Brief
from deep_research.cli import main as cli_main
from deep_research.gates.trace import emitted_claims

QUESTIONS = Path(__file__).resolve().parent / "extractive_questions.json"
#: Characters of a claim that key a reader's label of it in a row's ``judged``.
PREFIX = 80
#: Exit codes of a run that completed: 0 READY/PARTIAL/PARTIAL_QUICK, 1 HOLD/FAIL (a question
#: nothing answers is a HOLD brief, which is the right outcome for an unanswerable one).
COMPLETED = (0, 1)

#: A marker is a phrase, or a list of phrases that must all appear (``["else", "loop"]``).
Marker = str | list[str]


@dataclass(frozen=True)
class Outcome:
    question: str
    answerable: bool
    claims: list[str]
    on_topic: list[bool]
    read: list[bool]  # whether each claim's label is a reader's (else its markers')
    verdict: str
    seconds: float
    failed: str = ""  # the run's error when it did not complete

    @property
    def hits(self) -> int:
        return sum(self.on_topic)

    @property
    def precision(self) -> float | None:
        return self.hits / len(self.claims) if self.claims else None

    @property
    def right(self) -> bool:
        """Answered with an on-topic claim, or (unanswerable) ended with none."""
        return self.hits > 0 if self.answerable else not (self.claims or self.failed)


def on_topic(claim: str, markers: list[Marker]) -> bool:
    folded = claim.casefold()
    return any(
        all(part.casefold() in folded for part in ([marker] if isinstance(marker, str) else marker))
        for marker in markers
    )


def read_label(claim: str, judged: dict[str, bool]) -> bool | None:
    """The label a reader gave this claim (``judged``: its first :data:`PREFIX` characters →
    on topic or not), or None when no one has read it."""
    return judged.get(claim[:PREFIX])


def label(claim: str, row: dict[str, Any]) -> tuple[bool, bool]:
    """(on topic, read): a reader's label when there is one, else the markers'."""
    read = read_label(claim, dict(row.get("judged", {})))
    if read is not None:
        return read, True
    return on_topic(claim, list(row["markers"])), False


def run_question(row: dict[str, Any], state: Path) -> Outcome:
    question = str(row["question"])
    out, err = io.StringIO(), io.StringIO()
    argv = ["run", question, "--corpus", "python-docs", "--depth", "quick", "--json"]
    began = time.monotonic()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main([*argv, "--state", str(state)])
    seconds = time.monotonic() - began
    if code not in COMPLETED:
        # Counted, never skipped: a run that fails answers nothing and finds nothing.
        error = err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else ""
        return Outcome(
            question, bool(row["answerable"]), [], [], [], "", seconds, error or str(code)
        )
    summary: dict[str, Any] = json.loads(out.getvalue())
    document = Brief(Path(summary["brief"])).load_claims()
    claims = [claim.claim for claim in emitted_claims(document)]
    labels = [label(c, row) for c in claims]
    return Outcome(
        question,
        bool(row["answerable"]),
        claims,
        [on for on, _ in labels],
        [read for _, read in labels],
        str(summary["verdict"]),
        seconds,
    )


def _percent(value: float | None) -> str:
    return "   n/a" if value is None else f"{100 * value:5.1f}%"


def figures(outcomes: list[Outcome]) -> dict[str, Any]:
    answerable = [o for o in outcomes if o.answerable]
    unanswerable = [o for o in outcomes if not o.answerable]
    claims = sum(len(o.claims) for o in outcomes)
    hits = sum(o.hits for o in outcomes)
    return {
        "questions": len(outcomes),
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "claims": claims,
        "on_topic": hits,
        "read": sum(sum(o.read) for o in outcomes),
        "precision": hits / claims if claims else None,
        "answered": sum(1 for o in answerable if o.hits),
        "answerable_not_found": sum(1 for o in answerable if not o.claims),
        "not_found": sum(1 for o in unanswerable if not o.claims and not o.failed),
        "failed": sum(1 for o in outcomes if o.failed),
        "slowest_run_s": round(max(o.seconds for o in outcomes), 3),
        "median_run_s": round(sorted(o.seconds for o in outcomes)[len(outcomes) // 2], 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--show", action="store_true", help="list every claim, on or off topic")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    rows = json.loads(args.questions.read_text(encoding="utf-8"))["questions"]
    outcomes: list[Outcome] = []
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        # The first run builds the corpus index; build it once so every timing is a run's own.
        began = time.monotonic()
        run_question(rows[0], state)
        index_seconds = time.monotonic() - began
        for row in rows:
            outcomes.append(run_question(row, state))
    total = figures(outcomes)
    total["first_run_with_index_build_s"] = round(index_seconds, 1)
    if args.json:
        per_question = [
            {
                "question": o.question,
                "answerable": o.answerable,
                "claims": len(o.claims),
                "on_topic": o.hits,
                "read": sum(o.read),
                "verdict": o.verdict,
                "seconds": round(o.seconds, 3),
                "failed": o.failed,
            }
            for o in outcomes
        ]
        print(json.dumps({"questions": per_question, "overall": total}, indent=2))
        return 0
    width = max(len(o.question) for o in outcomes)
    print(f"{'question':<{width}}  kind  claims  on-topic  precision  verdict        run")
    for o in outcomes:
        kind = "ans" if o.answerable else "none"
        mark = "" if o.right else "  ✗"
        print(
            f"{o.question:<{width}}  {kind:<4}  {len(o.claims):>6}  {o.hits:>8}     "
            f"{_percent(o.precision)}  {o.verdict:<13}  {o.seconds:.2f} s{mark}"
        )
        if o.failed:
            print(f"    run failed: {o.failed}")
        if args.show:
            for claim, ok, read in zip(o.claims, o.on_topic, o.read, strict=True):
                print(f"    {'+' if ok else '-'}{'' if read else '?'} {claim}")
    print(
        f"\nprecision (claims pooled): {total['on_topic']}/{total['claims']} = "
        f"{_percent(total['precision'])}"
    )
    print(
        f"answered (an on-topic claim): {total['answered']}/{total['answerable']} answerable; "
        f"{total['answerable_not_found']} of them ended not found"
    )
    print(f"not found: {total['not_found']}/{total['unanswerable']} unanswerable")
    print(
        f"labels: {total['read']} of {total['claims']} claims read and judged; the rest "
        "(marked ? with --show) by their question's markers"
    )
    print(f"runs that failed (counted as neither answered nor not found): {total['failed']}")
    print(
        f"runs: median {total['median_run_s']:.2f} s, slowest {total['slowest_run_s']:.2f} s; "
        f"first run with the index build {total['first_run_with_index_build_s']} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
