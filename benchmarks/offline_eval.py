"""The offline default measured on a labelled set: precision, answered, Answer line, not found.

Each question of a set (``offline_questions_dev.json`` by default) runs through the real
pipeline — ``deep-research run QUESTION --corpus CORPUS --depth quick`` with the extractive
reasoner, in this process — and every emitted claim is labelled by its row's markers (see
``extractive_eval.py``). A row may name its own corpus folder (``corpus``, relative to this
file); without one it asks python-docs. Four figures:

* precision = on-topic claims ÷ emitted claims, pooled over every question;
* answered = answerable questions with at least one on-topic claim ÷ answerable questions;
* Answer line = answerable questions whose report's Answer leads with an on-topic claim ÷
  answerable questions;
* not found = unanswerable questions that emitted no claim ÷ unanswerable questions.

``--curve`` runs every question with the score threshold at 0 and records each claim's score,
then prints what the four figures would be at each threshold: the curve the threshold
(``deep_research.run.reasoners.MIN_SCORE``) is chosen on. Without it the threshold in force
is measured.

    python benchmarks/offline_eval.py                                   # development part
    python benchmarks/offline_eval.py --curve                           # its threshold curve
    python benchmarks/offline_eval.py --questions benchmarks/offline_questions_heldout.json
"""

from __future__ import annotations

import argparse
import io
import json
import re
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
from deep_research.run import reasoners

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "offline_questions_dev.json"
_LEAD = re.compile(r"^\*\*Most direct finding:\*\* (.+?)(?: ?\[S\d+\])+\s*$", re.MULTILINE)
THRESHOLDS = [round(0.05 * n, 2) for n in range(0, 20)]


@dataclass
class Outcome:
    question: str
    answerable: bool
    claims: list[str]
    scores: list[float]
    on_topic: list[bool]
    lead: str | None
    verdict: str
    seconds: float


def on_topic(claim: str, markers: list[Any]) -> bool:
    folded = claim.casefold()
    return any(
        all(part.casefold() in folded for part in ([m] if isinstance(m, str) else m))
        for m in markers
    )


def run(row: dict[str, Any], state: Path, scores: dict[str, float]) -> Outcome:
    corpus = str(HERE / row["corpus"]) if row.get("corpus") else "python-docs"
    argv = ["run", row["question"], "--corpus", corpus, "--depth", "quick", "--json"]
    out, err = io.StringIO(), io.StringIO()
    began = time.monotonic()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main([*argv, "--state", str(state), "--refresh"])
    seconds = time.monotonic() - began
    if code not in (0, 1):
        print(f"run failed ({code}): {row['question']}: {err.getvalue()[-300:]}", file=sys.stderr)
        return Outcome(row["question"], row["answerable"], [], [], [], None, "", seconds)
    summary = json.loads(out.getvalue())
    brief = Brief(Path(summary["brief"]))
    claims = [c.claim for c in emitted_claims(brief.load_claims())]
    report = (brief.root / "report.md").read_text(encoding="utf-8")
    found = _LEAD.search(report)
    markers = list(row.get("markers", []))
    return Outcome(
        row["question"],
        bool(row["answerable"]),
        claims,
        [scores.get(" ".join(c.casefold().split()), 1.0) for c in claims],
        [bool(row["answerable"]) and on_topic(c, markers) for c in claims],
        found.group(1) if found else None,
        str(summary["verdict"]),
        seconds,
    )


def figures(outcomes: list[Outcome], threshold: float | None = None) -> dict[str, Any]:
    """The four figures; with ``threshold``, as if only claims scoring at least it were kept
    (the Answer then leads with the best-scoring kept claim)."""
    claims = hits = answered = lead = not_found = 0
    answerable = sum(o.answerable for o in outcomes)
    for o in outcomes:
        kept = [
            (s, t, c)
            for s, t, c in zip(o.scores, o.on_topic, o.claims, strict=True)
            if threshold is None or s >= threshold
        ]
        claims += len(kept)
        hits += sum(t for _, t, _ in kept)
        if o.answerable:
            answered += any(t for _, t, _ in kept)
            if threshold is None:
                lead += o.lead is not None and on_topic(o.lead, _markers_of(o, outcomes))
            elif kept:
                lead += max(kept, key=lambda item: item[0])[1]
        else:
            not_found += not kept
    unanswerable = len(outcomes) - answerable
    return {
        "claims": claims,
        "on_topic": hits,
        "precision": round(hits / claims, 3) if claims else None,
        "answered": f"{answered}/{answerable}",
        "answer_line": f"{lead}/{answerable}",
        "not_found": f"{not_found}/{unanswerable}",
    }


_MARKERS: dict[str, list[Any]] = {}


def _markers_of(outcome: Outcome, _: list[Outcome]) -> list[Any]:
    return _MARKERS.get(outcome.question, [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--curve", action="store_true", help="threshold 0, then the curve")
    parser.add_argument("--show", action="store_true", help="every claim with its label")
    args = parser.parse_args(argv)
    rows = json.loads(args.questions.read_text(encoding="utf-8"))["questions"]
    for row in rows:
        _MARKERS[row["question"]] = list(row.get("markers", []))
    scores: dict[str, float] = {}
    original = reasoners.ExtractiveReasoner.__init__

    def keep_scores(self: reasoners.ExtractiveReasoner, *a: Any, **k: Any) -> None:
        original(self, *a, **k)
        self.scores = scores  # one table for every run: each claim's score, for the curve

    reasoners.ExtractiveReasoner.__init__ = keep_scores  # type: ignore[method-assign]
    if args.curve:
        reasoners.MIN_SCORE = 0.0
    outcomes = []
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        for row in rows:
            outcomes.append(run(row, state, scores))
    for o in outcomes:
        mark = "ans " if o.answerable else "none"
        print(f"{mark} {sum(o.on_topic)}/{len(o.claims)} {o.verdict:<13} {o.question}")
        if args.show:
            for c, s, t in zip(o.claims, o.scores, o.on_topic, strict=True):
                print(f"     {'+' if t else '-'} {s:.3f} {c[:150]}")
            print(f"     lead: {(o.lead or '—')[:150]}")
    if args.curve:
        print("\nthreshold  claims  precision  answered  answer-line  not-found")
        for t in THRESHOLDS:
            f = figures(outcomes, t)
            print(
                f"{t:>9.2f}  {f['claims']:>6}  {f['precision']!s:>9}  {f['answered']:>8}  "
                f"{f['answer_line']:>11}  {f['not_found']:>9}"
            )
    else:
        print(json.dumps(figures(outcomes), indent=1))
    seconds = sorted(o.seconds for o in outcomes)
    print(f"runs: median {seconds[len(seconds) // 2]:.2f} s, slowest {seconds[-1]:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
