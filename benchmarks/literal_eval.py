"""Literal fidelity on the labelled dev rows, whole and split by page (a script, not a test).

    python benchmarks/literal_eval.py              # the whole split, then 2 halves and 5 folds
    python benchmarks/literal_eval.py --folds 10   # other fold counts (halves are always shown)

Every figure is :func:`deep_research.gates.evaluate.measure_literals` — the gate's own steps — on
``benchmarks/data/vitaminc_dev.jsonl`` (or ``--rows``). Rows are split by page (the Wikipedia
title), never by row: the two rows of a revision, and every revision of one page, land in the same
fold, so a rule written for one page's sentences shows as a fold that does better than the rest.
A page's fold is a hash of its title, fixed before any rule was measured on it; nothing is fitted
to a fold. The spread (lowest–highest fold) is the figure to read, not any one fold.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deep_research.gates.evaluate import DEFAULT_EVAL_DIR, Row, load_rows, measure_literals

# The figures a number rule moves, then the ones a name rule or the whole gate moves.
FIGURES = (
    ("numeric_not_supported_rejected_on_number_or_date", "refutations rejected on a number"),
    ("numeric_supported_rejected_on_number_or_date", "supported rows rejected on a number"),
    ("numeric_supported_missing_a_name", "supported rows missing a name"),
    ("numeric_not_supported_gate_rejected", "refutations rejected by the gate (any reason)"),
    ("numeric_supported_gate_rejected", "supported rows rejected by the gate (any reason)"),
)


def fold_of(row: Row, folds: int) -> int:
    page = str(row.get("title") or row.get("pair") or row["id"])
    return int(hashlib.sha256(page.encode("utf-8")).hexdigest(), 16) % folds


def split(rows: Sequence[Row], folds: int) -> list[list[Row]]:
    parts: list[list[Row]] = [[] for _ in range(folds)]
    for row in rows:
        parts[fold_of(row, folds)].append(row)
    return parts


def _percent(value: Any) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _table(title: str, parts: Sequence[Sequence[Row]]) -> list[str]:
    measured = [measure_literals(part).as_dict() for part in parts]
    lines = [f"{title}:"]
    sizes = ", ".join(
        f"{m['numeric_not_supported_rows']}+{m['numeric_supported_rows']}" for m in measured
    )
    lines.append(f"  numeric rows per part (not_supported+supported): {sizes}")
    for key, label in FIGURES:
        values = [m[key] for m in measured]
        shown = " | ".join(_percent(value) for value in values)
        known = [value for value in values if value is not None]
        spread = f"{_percent(min(known))}–{_percent(max(known))}" if known else "—"
        lines.append(f"  {label}: {shown}   (spread {spread})")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=str(DEFAULT_EVAL_DIR / "vitaminc_dev.jsonl"))
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)
    if args.folds < 2:
        print("literal_eval: --folds must be at least 2", file=sys.stderr)
        return 2
    rows = load_rows(Path(args.rows))
    lines = _table("whole split", [rows])
    lines += _table("two halves by page", split(rows, 2))
    lines += _table(f"{args.folds} folds by page", split(rows, args.folds))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
