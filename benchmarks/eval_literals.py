"""Literal fidelity on the labelled numeric eval rows: how often numeric_missing flags each label.

A: share of ``not_supported`` numeric rows with a missing numeric literal (higher is better).
B: share of ``supported`` numeric rows with a missing numeric literal (lower is better).
C: share of ``supported`` numeric rows with a missing name (reported, not tuned).

Usage: ``python benchmarks/eval_literals.py [path/to/vitaminc_dev.jsonl] [--show A|B|C]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from deep_research.literals import LiteralCheck, check

_DEFAULT = Path(__file__).resolve().parents[1].parent / "shared" / "eval" / "vitaminc_dev.jsonl"


def _default_path() -> Path:
    override = os.environ.get("DEEP_RESEARCH_EVAL_DIR")
    return Path(override) / "vitaminc_dev.jsonl" if override else _DEFAULT


def load(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def measure(rows: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Counts (flagged, total) for A, B and C over the numeric rows."""
    counts = {"A": [0, 0], "B": [0, 0], "C": [0, 0]}
    for row in rows:
        if row["kind"] != "numeric":
            continue
        result = check(row["claim"], [row["quote"]])
        numeric_flag = bool(result.numeric_missing)
        if row["expected"] == "not_supported":
            counts["A"][0] += numeric_flag
            counts["A"][1] += 1
        else:
            counts["B"][0] += numeric_flag
            counts["B"][1] += 1
            counts["C"][0] += bool(result.names_missing)
            counts["C"][1] += 1
    return {key: (value[0], value[1]) for key, value in counts.items()}


def _describe(result: LiteralCheck) -> str:
    return ", ".join(f"{token.kind}:{token.text!r}/{token.qualifier}" for token in result.missing)


def show(rows: list[dict[str, Any]], which: str) -> None:
    """Print the failure cases of one figure (A: missed refutes, B/C: false rejections)."""
    for row in rows:
        if row["kind"] != "numeric":
            continue
        result = check(row["claim"], [row["quote"]])
        if which == "A" and row["expected"] == "not_supported" and not result.numeric_missing:
            print(f"CLAIM {row['claim']}\nQUOTE {row['quote']}\n")
        elif which == "B" and row["expected"] == "supported" and result.numeric_missing:
            print(f"CLAIM {row['claim']}\nQUOTE {row['quote']}\nMISSING {_describe(result)}\n")
        elif which == "C" and row["expected"] == "supported" and result.names_missing:
            names = ", ".join(repr(token.text) for token in result.names_missing)
            print(f"CLAIM {row['claim']}\nQUOTE {row['quote']}\nNAMES {names}\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("path", nargs="?", type=Path, default=None)
    parser.add_argument("--show", choices=["A", "B", "C"], default=None)
    args = parser.parse_args(argv)
    path: Path = args.path or _default_path()
    if not path.is_file():
        print(f"eval data not present: {path}", file=sys.stderr)
        return 2
    rows = load(path)
    if args.show:
        show(rows, args.show)
        return 0
    began = time.perf_counter()
    counts = measure(rows)
    elapsed = time.perf_counter() - began
    labels = {
        "A": "not_supported numeric rows with numeric_missing (target >= 0.95)",
        "B": "supported numeric rows with numeric_missing     (target <= 0.10)",
        "C": "supported numeric rows with names_missing       (reported only)",
    }
    for key in ("A", "B", "C"):
        flagged, total = counts[key]
        share = flagged / total if total else 0.0
        print(f"{key}: {share:.3f}  ({flagged}/{total})  {labels[key]}")
    print(f"checked {counts['A'][1] + counts['B'][1]} numeric rows in {elapsed:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
