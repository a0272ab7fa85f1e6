"""WikiQA answer triggering through the real pipeline: does a run answer, and with the answer?

WikiQA (Yang, Yih & Meek, EMNLP 2015) pairs real search questions with the summary of one
Wikipedia page, each sentence labelled by crowd workers as answering the question or not;
about three in five questions have no answering sentence. Per question this script writes a
folder holding that one page — ``<title>.md``: the title as a ``# Title`` heading, then the
summary's sentences in their order, one paragraph each (the split into sentences is WikiQA's,
and a paragraph per sentence keeps it: a caption without a stop never runs into the next
sentence) — and runs the real pipeline on it, in this process:
``deep-research run QUESTION --corpus DIR --depth quick`` with the extractive reasoner, a
fresh temporary state folder per question.

Scored per question, as the paper scores answer triggering:

* **triggered**: the run emitted at least one claim;
* **correct**: a triggered question one of whose claims is a labelled answer sentence. A
  claim's quote is located in the page as written (whitespace collapsed); it *is* a sentence
  when it covers at least half of that sentence's characters (a quote may be the answer with
  the sentence before it). A quote located nowhere counts as wrong.

precision = correct ÷ triggered, recall = correct ÷ answerable questions (those with a
labelled answer), F1 their harmonic mean; claim precision = claims that are answer sentences ÷
claims emitted. The natural mix is scored: every question of the split (or a seeded sample of
``--limit`` of them), answerable or not.

    python benchmarks/wikiqa_eval.py --split train --limit 300 --seed 1
    python benchmarks/wikiqa_eval.py --split dev --json
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from deep_research.brief.layout import Brief
from deep_research.cli import main as cli_main
from deep_research.gates.trace import emitted_claims

HERE = Path(__file__).resolve().parent
SPLITS = ("train", "dev")
#: The share of a labelled sentence a quote must cover to be that sentence.
COVER = 0.5
_UNSAFE = re.compile(r"[^\w .,()'-]+")


@dataclass
class Outcome:
    id: str
    question: str
    answerable: bool
    claims: list[str]
    correct: list[bool]
    verdict: str
    seconds: float


def page(row: dict[str, Any]) -> tuple[str, list[tuple[int, int]]]:
    """The page's text and each sentence's span in it."""
    text = f"# {row['title']}\n\n"
    spans = []
    for sentence in row["sentences"]:
        spans.append((len(text), len(text) + len(sentence)))
        text += sentence + "\n\n"
    return text, spans


def file_name(title: str) -> str:
    name = _UNSAFE.sub("_", title).strip(" .") or "page"
    return f"{name[:120]}.md"


def _collapsed(text: str) -> tuple[str, list[int]]:
    """``text`` with each run of whitespace one space, and each kept character's offset."""
    out: list[str] = []
    where: list[int] = []
    for index, char in enumerate(text):
        if char.isspace():
            if out and out[-1] == " ":
                continue
            char = " "
        out.append(char)
        where.append(index)
    return "".join(out), where


def is_answer(quote: str, text: str, spans: list[tuple[int, int]], labels: list[int]) -> bool:
    """Whether ``quote``, located in the page ``text``, covers at least :data:`COVER` of a
    sentence labelled as answering."""
    flat, where = _collapsed(text)
    needle = " ".join(quote.split())
    at = flat.find(needle)
    if at < 0 or not needle:
        return False
    start, end = where[at], where[at + len(needle) - 1] + 1
    for (s, e), label in zip(spans, labels, strict=True):
        covered = max(0, min(e, end) - max(s, start))
        if label and e > s and covered >= COVER * (e - s):
            return True
    return False


def run(row: dict[str, Any], root: Path) -> Outcome:
    folder = root / row["id"] / "page"
    folder.mkdir(parents=True)
    text, spans = page(row)
    (folder / file_name(row["title"])).write_text(text, encoding="utf-8")
    state = root / row["id"] / "state"
    argv = ["run", row["question"], "--corpus", str(folder), "--depth", "quick", "--json"]
    out, err = io.StringIO(), io.StringIO()
    began = time.monotonic()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main([*argv, "--state", str(state)])
    seconds = time.monotonic() - began
    answerable = any(row["labels"])
    if code not in (0, 1):
        print(f"run failed ({code}): {row['id']}: {err.getvalue()[-300:]}", file=sys.stderr)
        return Outcome(row["id"], row["question"], answerable, [], [], "", seconds)
    summary = json.loads(out.getvalue())
    claims = emitted_claims(Brief(Path(summary["brief"])).load_claims())
    quotes = [c.claim for c in claims]
    correct = [
        any(is_answer(e.quote, text, spans, row["labels"]) for e in c.evidence) for c in claims
    ]
    return Outcome(
        row["id"], row["question"], answerable, quotes, correct, str(summary["verdict"]), seconds
    )


def figures(outcomes: list[Outcome]) -> dict[str, Any]:
    triggered = sum(1 for o in outcomes if o.claims)
    correct = sum(1 for o in outcomes if any(o.correct))
    answerable = sum(1 for o in outcomes if o.answerable)
    claims = sum(len(o.claims) for o in outcomes)
    right = sum(sum(o.correct) for o in outcomes)
    precision = correct / triggered if triggered else 0.0
    recall = correct / answerable if answerable else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "questions": len(outcomes),
        "answerable": answerable,
        "triggered": triggered,
        "correct": correct,
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "f1": round(f1, 3),
        "claims": claims,
        "claims_correct": right,
        "claim_precision": round(right / claims, 3) if claims else None,
        "unanswerable_not_found": sum(1 for o in outcomes if not o.answerable and not o.claims),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--split", choices=SPLITS, default="train")
    parser.add_argument(
        "--data",
        type=Path,
        default=Path(os.environ.get("DEEP_RESEARCH_EVAL_DIR") or HERE / "data"),
        help="folder of wikiqa_<split>.jsonl (default: $DEEP_RESEARCH_EVAL_DIR, else "
        "benchmarks/data)",
    )
    parser.add_argument("--limit", type=int, default=0, help="a seeded sample of N questions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="the figures as JSON")
    parser.add_argument("--show", action="store_true", help="every question and claim")
    args = parser.parse_args(argv)
    path = args.data / f"wikiqa_{args.split}.jsonl"
    if not path.is_file():
        print(f"no WikiQA data at {path}; pass --data DIR", file=sys.stderr)
        return 2
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    if args.limit:
        rows = random.Random(args.seed).sample(rows, min(args.limit, len(rows)))
    outcomes = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, row in enumerate(rows, start=1):
            outcome = run(row, Path(tmp))
            outcomes.append(outcome)
            if number % 25 == 0 or number == len(rows):
                f = figures(outcomes)
                print(
                    f"{number}/{len(rows)}: P {f['precision']} R {f['recall']} F1 {f['f1']}"
                    f" claim P {f['claim_precision']}",
                    file=sys.stderr,
                    flush=True,
                )
    if args.show:
        for o in outcomes:
            mark = "ans " if o.answerable else "none"
            print(f"{mark} {o.id} {o.question}")
            for claim, right in zip(o.claims, o.correct, strict=True):
                print(f"     {'+' if right else '-'} {claim[:160]}")
    result = {"split": args.split, "limit": args.limit, "seed": args.seed, **figures(outcomes)}
    if args.json:
        result["outcomes"] = [asdict(o) for o in outcomes]
        print(json.dumps(result, indent=1))
    else:
        print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
