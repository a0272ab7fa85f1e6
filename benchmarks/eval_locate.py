"""Measure quote location on the labelled eval data and on a synthetic large corpus.

Usage::

    python benchmarks/eval_locate.py [--eval-dir DIR] [--failures N] [--synthetic]

Prints, per ``kind``, the share of true quotes located at exactly the labelled span, the overall
share, how many foreign quotes were (wrongly) located, which methods fired, and the time taken.
``--synthetic`` also times ``normalize_text`` on a 20 MB string against ``str.lower`` and
locates quotes in a corpus of 200 documents of about 100 KB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from deep_research.locate import Document, Located, locate
from deep_research.textnorm import normalize_text

REPO = Path(__file__).resolve().parents[1]
EVAL_FILE = "wice_quotes_dev.jsonl"


def default_eval_dir() -> Path:
    override = os.environ.get("DEEP_RESEARCH_EVAL_DIR")
    return Path(override) if override else REPO.parent / "shared" / "eval"


def load_rows(eval_dir: Path) -> list[dict[str, Any]]:
    with (eval_dir / EVAL_FILE).open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def evaluate(rows: list[dict[str, Any]], show_failures: int) -> dict[str, Any]:
    documents: dict[str, Document] = {}
    totals: Counter[str] = Counter()
    exact: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    foreign_located = 0
    failures: list[tuple[dict[str, Any], Located | None]] = []
    began = time.perf_counter()
    for row in rows:
        text = row["source_text"]
        doc = documents.get(text)
        if doc is None:
            doc = documents[text] = Document(text)
        result = locate(row["quote"], doc)
        kind = row["kind"]
        if row["expected"] == "not_located":
            if result is not None:
                foreign_located += 1
                failures.append((row, result))
            continue
        totals[kind] += 1
        methods[result.method if result else "none"] += 1
        if result is not None and [result.start, result.end] == row["span"]:
            exact[kind] += 1
        else:
            failures.append((row, result))
    elapsed = time.perf_counter() - began
    for row, result in failures[:show_failures]:
        print(
            f"--- {row['id']} kind={row['kind']} expected={row['expected']} span={row.get('span')}"
        )
        print(f"    quote: {row['quote']!r}")
        if row.get("span"):
            start, end = row["span"]
            print(f"    truth: {row['source_text'][start:end]!r}")
        if result is not None:
            print(
                f"    got:   {result.method} {result.start}..{result.end} score={result.score:.1f}"
            )
            print(f"           {row['source_text'][result.start : result.end]!r}")
        else:
            print("    got:   not located")
    return {
        "per_kind": {kind: (exact[kind], totals[kind]) for kind in sorted(totals)},
        "overall": (sum(exact.values()), sum(totals.values())),
        "foreign_located": foreign_located,
        "foreign_total": sum(1 for row in rows if row["expected"] == "not_located"),
        "methods": dict(methods),
        "seconds": elapsed,
        "documents": len(documents),
    }


def print_eval(report: dict[str, Any]) -> None:
    print(f"{'kind':<14} {'exact span':>10}   share")
    for kind, (hit, total) in report["per_kind"].items():
        print(f"{kind:<14} {hit:>4}/{total:<5}   {100 * hit / total:6.2f}%")
    hit, total = report["overall"]
    print(f"{'overall':<14} {hit:>4}/{total:<5}   {100 * hit / total:6.2f}%")
    print(f"foreign located: {report['foreign_located']}/{report['foreign_total']}")
    print(f"methods: {report['methods']}")
    print(
        f"time: {report['seconds']:.3f} s for {sum(t for _, t in report['per_kind'].values())}"
        f" true + {report['foreign_total']} foreign quotes in {report['documents']} documents"
    )


def synthetic(rows: list[dict[str, Any]], seed: int = 7) -> None:
    rng = random.Random(seed)
    texts = sorted({row["source_text"] for row in rows})
    big_parts: list[str] = []
    size = 0
    while size < 20_000_000:
        part = texts[rng.randrange(len(texts))]
        big_parts.append(part)
        size += len(part) + 2
    big = "\n\n".join(big_parts)
    for label, sample in (("mixed", big), ("ascii-only", big.encode("ascii", "ignore").decode())):
        best_norm = min(_timed(normalize_text, sample) for _ in range(3))
        best_lower = min(_timed(str.lower, sample) for _ in range(3))
        print(
            f"normalize_text {label} {len(sample) / 1e6:.1f} MB: {best_norm:.3f} s"
            f"  (str.lower: {best_lower:.3f} s, ratio {best_norm / best_lower:.1f}x)"
        )

    # 200 documents of ~100 KB built from the eval pages, ~2,500 quotes: each true quote is
    # looked up in a document that holds its page, each foreign quote in a random document.
    docs: list[str] = []
    holders: dict[str, list[int]] = {}
    order = texts[:]
    cursor = len(order)
    for doc_index in range(200):
        parts: list[str] = []
        length = 0
        while length < 100_000:
            if cursor == len(order):
                rng.shuffle(order)
                cursor = 0
            part = order[cursor]
            cursor += 1
            parts.append(part)
            holders.setdefault(part, []).append(doc_index)
            length += len(part) + 2
        docs.append("\n\n".join(parts))
    true_rows = [row for row in rows if row["expected"] == "located"]
    foreign_rows = [row for row in rows if row["expected"] == "not_located"]
    jobs: list[tuple[int, str]] = []
    for _ in range(2500):
        if rng.random() < 0.3:
            row = foreign_rows[rng.randrange(len(foreign_rows))]
            doc_index = rng.randrange(len(docs))
        else:
            row = true_rows[rng.randrange(len(true_rows))]
            doc_index = rng.choice(holders[row["source_text"]])
        jobs.append((doc_index, row["quote"]))
    documents = [Document(text) for text in docs]
    began = time.perf_counter()
    for document in documents:
        _ = document.normalized
    normalized_at = time.perf_counter()
    located = sum(1 for index, quote in jobs if locate(quote, documents[index]) is not None)
    done = time.perf_counter()
    megabytes = sum(map(len, docs)) / 1e6
    print(
        f"corpus {len(docs)} docs / {megabytes:.1f} MB: normalize {normalized_at - began:.2f} s,"
        f" locate {len(jobs)} quotes {done - normalized_at:.2f} s ({located} located)"
    )


def _timed(func: Any, arg: str) -> float:
    began = time.perf_counter()
    func(arg)
    return time.perf_counter() - began


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--eval-dir", type=Path, default=default_eval_dir())
    parser.add_argument("--failures", type=int, default=0, help="print up to N failing rows")
    parser.add_argument("--synthetic", action="store_true", help="also run the 20 MB timings")
    args = parser.parse_args(argv)
    if not (args.eval_dir / EVAL_FILE).is_file():
        print(f"eval data not found: {args.eval_dir / EVAL_FILE}", file=sys.stderr)
        return 2
    rows = load_rows(args.eval_dir)
    print_eval(evaluate(rows, args.failures))
    if args.synthetic:
        synthetic(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
