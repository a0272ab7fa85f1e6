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

``--curve`` runs every question again at each threshold of :data:`CURVE` (the score a finding
needs, ``deep_research.run.reasoners.MIN_SCORE``) and prints the four figures of each: the
curve the threshold is chosen on. Each point is a real run, since which passage a publisher's
answer keeps depends on which pass the threshold. Without it the threshold in force is
measured.

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

from deep_research.brief.layout import Brief
from deep_research.cli import main as cli_main
from deep_research.gates.trace import emitted_claims
from deep_research.run import reasoners

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "offline_questions_dev.json"
_LEAD = re.compile(r"^\*\*Most direct finding:\*\* (.+?)(?: ?\[S\d+\])+\s*$", re.MULTILINE)
CURVE = (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)


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


def load_rows(path: Path) -> list[dict[str, Any]]:
    """A labelled set's rows: the ``questions`` of its JSON file."""
    rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))["questions"]
    return rows


def corpus_of(row: dict[str, Any]) -> str:
    """What a row's runs ask: its own folder (relative to this file), else python-docs."""
    return str(HERE / row["corpus"]) if row.get("corpus") else "python-docs"


def run(row: dict[str, Any], state: Path, scores: dict[str, float]) -> Outcome:
    corpus = corpus_of(row)
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


def figures(outcomes: list[Outcome]) -> dict[str, Any]:
    """The four figures of a set's outcomes."""
    claims = hits = answered = lead = not_found = 0
    answerable = sum(o.answerable for o in outcomes)
    for o in outcomes:
        claims += len(o.claims)
        hits += sum(o.on_topic)
        if o.answerable:
            answered += any(o.on_topic)
            lead += o.lead is not None and on_topic(o.lead, _MARKERS.get(o.question, []))
        else:
            not_found += not o.claims
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--curve", action="store_true", help="threshold 0, then the curve")
    parser.add_argument("--show", action="store_true", help="every claim with its label")
    args = parser.parse_args(argv)
    rows = load_rows(args.questions)
    for row in rows:
        _MARKERS[row["question"]] = list(row.get("markers", []))
    scores: dict[str, float] = {}
    original = reasoners.ExtractiveReasoner.__init__

    def keep_scores(self: reasoners.ExtractiveReasoner, *a: Any, **k: Any) -> None:
        original(self, *a, **k)
        self.scores = scores  # one table for every run: each claim's score, for the curve

    reasoners.ExtractiveReasoner.__init__ = keep_scores  # type: ignore[method-assign]

    def run_all() -> list[Outcome]:
        with tempfile.TemporaryDirectory() as tmp:
            state = Path(tmp) / "state"
            return [run(row, state, scores) for row in rows]

    if args.curve:
        print("threshold  claims  precision  answered  answer-line  not-found")
        for threshold in CURVE:
            reasoners.MIN_SCORE = threshold
            scores.clear()
            f = figures(run_all())
            print(
                f"{threshold:>9.2f}  {f['claims']:>6}  {f['precision']!s:>9}  "
                f"{f['answered']:>8}  {f['answer_line']:>11}  {f['not_found']:>9}",
                flush=True,
            )
        return 0
    outcomes = run_all()
    for o in outcomes:
        mark = "ans " if o.answerable else "none"
        print(f"{mark} {sum(o.on_topic)}/{len(o.claims)} {o.verdict:<13} {o.question}")
        if args.show:
            for c, s, t in zip(o.claims, o.scores, o.on_topic, strict=True):
                print(f"     {'+' if t else '-'} {s:.3f} {c[:150]}")
            print(f"     lead: {(o.lead or '—')[:150]}")
    print(json.dumps(figures(outcomes), indent=1))
    seconds = sorted(o.seconds for o in outcomes)
    print(f"runs: median {seconds[len(seconds) // 2]:.2f} s, slowest {seconds[-1]:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
