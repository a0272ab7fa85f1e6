"""On-topic precision of the extractive reasoner on the python-docs corpus (a script, not a test).

Each question in ``extractive_questions.json`` goes through the real pipeline — ``deep-research
run QUESTION --corpus python-docs --depth quick --json --state <tmp>`` — and every emitted claim
is checked against the question's on-topic markers (terms a sentence answering the question uses
in the documentation, judged by reading it; matched case-insensitively as substrings, and a
marker given as a list needs all of its parts):

    python benchmarks/extractive_eval.py            # per question and overall
    python benchmarks/extractive_eval.py --show     # also every claim, marked on/off topic

precision = emitted claims containing a marker ÷ emitted claims. A question with no emitted claim
has no precision and counts as unanswered; "answered" (at least one on-topic claim) guards
against buying precision by emitting nothing.

Measured (on-topic / emitted claims), before → after the extractive reasoner ranked sentences by
the research question rather than by each sub-question's heading:

    chained comparisons        2/8   → 3/3     else clause of a for loop   4/15 → 4/8
    with / context manager     6/11  → 5/6     finally clause of try       6/15 → 7/13
    generators and yield       7/27  → 7/8     integer floor division      3/20 → 3/3
    global and nonlocal       10/14  → 9/9     string formatting           6/8  → 6/6
    slicing a sequence         4/24  → 8/8     lambda expression           4/22 → 4/4
    function decorators        3/19  → 3/3     is and == equality          6/20 → 1/1
    assert statement           2/13  → 2/2
    overall                   63/216 = 29.2% → 62/74 = 83.8% (mean per question 33.0% → 90.4%);
    answered 13/13 → 13/13; each run about 0.2 s.

The two weakest questions name a clause of a statement ("else" of "for", "finally" of "try"):
their other words ("clause", "statement", "loop") are shared by sibling clauses, which word
overlap alone cannot tell apart.
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

from deep_research.brief import Brief
from deep_research.cli import main as cli_main
from deep_research.gates.trace import emitted_claims

QUESTIONS = Path(__file__).resolve().parent / "extractive_questions.json"


@dataclass(frozen=True)
class Outcome:
    question: str
    claims: list[str]
    on_topic: list[bool]
    verdict: str
    seconds: float

    @property
    def hits(self) -> int:
        return sum(self.on_topic)

    @property
    def precision(self) -> float | None:
        return self.hits / len(self.claims) if self.claims else None


#: A marker is a phrase, or a list of phrases that must all appear (``["else", "loop"]``).
Marker = str | list[str]


def on_topic(claim: str, markers: list[Marker]) -> bool:
    folded = claim.casefold()
    return any(
        all(part.casefold() in folded for part in ([marker] if isinstance(marker, str) else marker))
        for marker in markers
    )


def run_question(question: str, markers: list[Marker], state: Path) -> Outcome:
    out, err = io.StringIO(), io.StringIO()
    argv = [
        "run",
        question,
        "--corpus",
        "python-docs",
        "--depth",
        "quick",
        "--json",
        "--state",
        str(state),
    ]
    began = time.monotonic()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main(argv)
    seconds = time.monotonic() - began
    if code != 0:
        raise SystemExit(f"run failed ({code}) for {question!r}:\n{err.getvalue()}")
    summary: dict[str, Any] = json.loads(out.getvalue())
    document = Brief(Path(summary["brief"])).load_claims()
    claims = [claim.claim for claim in emitted_claims(document)]
    return Outcome(
        question, claims, [on_topic(c, markers) for c in claims], str(summary["verdict"]), seconds
    )


def _percent(value: float | None) -> str:
    return "   n/a" if value is None else f"{100 * value:5.1f}%"


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
        # The first run builds the corpus index; index once so every timing is a run's own.
        run_question(str(rows[0]["question"]), list(rows[0]["markers"]), Path(tmp) / "warm")
        for row in rows:
            outcomes.append(run_question(str(row["question"]), list(row["markers"]), state))
    claims = sum(len(o.claims) for o in outcomes)
    hits = sum(o.hits for o in outcomes)
    answered = sum(1 for o in outcomes if o.hits)
    scored = [p for o in outcomes if (p := o.precision) is not None]
    micro = hits / claims if claims else None
    macro = sum(scored) / len(scored) if scored else None
    slowest = max(o.seconds for o in outcomes)
    if args.json:
        print(
            json.dumps(
                {
                    "questions": [
                        {
                            "question": o.question,
                            "claims": len(o.claims),
                            "on_topic": o.hits,
                            "precision": o.precision,
                            "verdict": o.verdict,
                            "seconds": round(o.seconds, 3),
                        }
                        for o in outcomes
                    ],
                    "overall": {
                        "claims": claims,
                        "on_topic": hits,
                        "precision": micro,
                        "macro_precision": macro,
                        "answered": answered,
                        "questions": len(outcomes),
                        "slowest_run_s": round(slowest, 3),
                    },
                },
                indent=2,
            )
        )
        return 0
    width = max(len(o.question) for o in outcomes)
    print(f"{'question':<{width}}  claims  on-topic  precision  verdict        run")
    for o in outcomes:
        print(
            f"{o.question:<{width}}  {len(o.claims):>6}  {o.hits:>8}     {_percent(o.precision)}"
            f"  {o.verdict:<13}  {o.seconds:.2f} s"
        )
        if args.show:
            for claim, ok in zip(o.claims, o.on_topic, strict=True):
                print(f"    {'+' if ok else '-'} {claim}")
    print(f"{'overall (claims pooled)':<{width}}  {claims:>6}  {hits:>8}     {_percent(micro)}")
    print(f"{'mean of per-question precision':<{width}}  {'':>6}  {'':>8}     {_percent(macro)}")
    print(
        f"answered (at least one on-topic claim): {answered}/{len(outcomes)}; "
        f"slowest run {slowest:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
