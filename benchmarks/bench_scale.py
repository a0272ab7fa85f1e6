"""Benchmark: how each brief command grows with the brief — CPU seconds and peak memory per scale.

Builds the trace benchmark's brief (``bench_trace.build``: 500 claims, 200 sources, 20 MB of
retained text at 1×) at 0.1×, 1× and 10× (100× with ``--hundred``), takes each through the
chain — ``trace``, ``triangulate``, ``verdict``, ``render``, ``verify --offline``, ``validate`` —
each command in a child process of its own, and prints per command and scale the child's CPU
seconds (user + system) and peak resident memory (``ru_maxrss``), then the growth factor per 10×
of brief. Then the batch ``gate`` on ``--gate-rows`` generated rows (100,000): CPU, peak memory
and rows per CPU second. Usage:

    python benchmarks/bench_scale.py [--dir DIR] [--hundred] [--gate-rows 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

#: (scale, claims, sources, megabytes of retained text).
SCALES = [(0.1, 50, 20, 2.0), (1.0, 500, 200, 20.0), (10.0, 5000, 2000, 200.0)]
HUNDRED = (100.0, 50000, 20000, 2000.0)
#: In the order they run: each reads what the one before it wrote.
COMMANDS = [
    ("trace", ["trace"]),
    ("triangulate", ["triangulate"]),
    ("verdict", ["verdict"]),
    ("render", ["render"]),
    ("verify --offline", ["verify", "--offline"]),
    ("validate", ["validate"]),
]
CLI = ["-m", "deep_research.cli"]
SHOWN = ["trace", "triangulate", "verdict", "verify --offline", "validate", "render"]


@dataclass(frozen=True)
class Usage:
    cpu: float
    peak_mb: float
    exit_code: int


def run_child(args: list[str]) -> Usage:
    """One CLI command in a child process; its own CPU time and peak RSS (from wait4).

    Linux keeps a process's peak RSS across exec, so the parent that forks the children stays
    small: the briefs and the gate rows are made by children of their own (``--make``).
    """
    child = subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in KiB on Linux.
    return Usage(usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode)


def prepare(root: Path, claims: int, sources: int, megabytes: float) -> None:
    """The trace benchmark's brief, as a quick-depth run that reached the verdict would leave
    it: one round of fetches, one sub-question. Made in a child (``--make brief``)."""
    from bench_trace import build

    build(root, claims, sources, megabytes)
    document = json.loads((root / "claims.json").read_text())
    document["depth"] = "quick"
    (root / "claims.json").write_text(json.dumps(document))
    counters = {
        "rounds": 1,
        "round1_fetches": sources,
        "distinct_sources": sources,
        "sub_questions": 1,
    }
    trace = {"topic": "bench", "depth": "quick", "counters": counters}
    (root / "trace.json").write_text(json.dumps(trace))


def measure_scale(root: Path) -> dict[str, Usage]:
    return {name: run_child([*CLI, *args, str(root)]) for name, args in COMMANDS}


def gate_rows(path: Path, rows: int) -> None:
    """Distinct (claim, quote, source_text) rows, a paragraph of the benchmark's prose each.
    Made in a child (``--make pairs``)."""
    from bench_trace import perturb, sentence

    rng = random.Random(20261130)
    with path.open("w", encoding="utf-8") as out:
        for number in range(rows):
            sentences = [sentence(rng) for _ in range(rng.randint(8, 14))]
            claim = rng.choice(sentences)
            row = {
                "id": f"r{number}",
                "claim": claim,
                "quote": perturb(claim, rng),
                "source_text": " ".join(sentences),
            }
            out.write(json.dumps(row) + "\n")


def growth(values: list[float]) -> str:
    steps = [f"{later / earlier:.1f}x" for earlier, later in pairwise(values)]
    return " / ".join(steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--hundred", action="store_true", help="also the 100x brief (2 GB)")
    parser.add_argument("--gate-rows", type=int, default=100_000)
    parser.add_argument("--only", choices=["briefs", "gate"], default=None)
    parser.add_argument("--make", nargs=5, help=argparse.SUPPRESS)  # KIND PATH N N MB
    args = parser.parse_args()
    if args.make:
        kind, path, first, second, megabytes = args.make
        if kind == "brief":
            prepare(Path(path), int(first), int(second), float(megabytes))
        else:
            gate_rows(Path(path), int(first))
        return
    scales = [*SCALES, HUNDRED] if args.hundred else SCALES
    with tempfile.TemporaryDirectory() as scratch:
        work = args.dir or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        results: dict[float, dict[str, Usage]] = {}
        if args.only != "gate":
            for scale, claims, sources, megabytes in scales:
                root = work / f"brief-{scale:g}x"
                made = [__file__, "--make", "brief", str(root), str(claims), str(sources)]
                if run_child([*made, str(megabytes)]).exit_code != 0:
                    raise SystemExit(f"building the {scale:g}x brief failed")
                results[scale] = measure_scale(root)
                print(
                    f"{scale:g}x: {claims} claims, {sources} sources, {megabytes:g} MB — "
                    + ", ".join(
                        f"{name} {u.cpu:.2f} s {u.peak_mb:.0f} MB"
                        for name, u in results[scale].items()
                    ),
                    flush=True,
                )
            print()
            print("| scale | " + " | ".join(SHOWN) + " |")
            print("|---" * (len(SHOWN) + 1) + "|")
            for scale, usage in results.items():
                cells = [f"{usage[n].cpu:.2f} s, {usage[n].peak_mb:.0f} MB" for n in SHOWN]
                print(f"| {scale:g}× | " + " | ".join(cells) + " |")
            print(
                "| growth per 10× (time) | "
                + " | ".join(growth([results[s][n].cpu for s in results]) for n in SHOWN)
                + " |"
            )
            failed = [
                f"{name} at {scale:g}x exited {u.exit_code}"
                for scale, usage in results.items()
                for name, u in usage.items()
                if u.exit_code not in (0, 1)
            ]
            if failed:
                print("commands that failed: " + "; ".join(failed))
        if args.only != "briefs" and args.gate_rows > 0:
            pairs = work / "pairs.jsonl"
            made = [__file__, "--make", "pairs", str(pairs), str(args.gate_rows), "0", "0"]
            if run_child(made).exit_code != 0:
                raise SystemExit("making the gate rows failed")
            out = work / "results.jsonl"
            usage = run_child([*CLI, "gate", "--input", str(pairs), "--output", str(out)])
            with out.open(encoding="utf-8") as handle:
                written = sum(1 for _ in handle)
            print(
                f"\ngate: {args.gate_rows:,} rows ({pairs.stat().st_size / 1e6:.0f} MB in), "
                f"{written:,} results, {usage.cpu:.1f} s CPU, peak {usage.peak_mb:.0f} MB, "
                f"{args.gate_rows / usage.cpu:,.0f} rows/s (exit {usage.exit_code})"
            )


if __name__ == "__main__":
    main()
