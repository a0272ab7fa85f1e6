"""Benchmark: trace a synthetic brief against merely reading and normalizing its corpus once.

Builds a brief of 500 claims / 200 sources / ~20 MB of corpus text (deterministic, seeded), then
times, in one fresh process per run (a cold run), the two one after the other:

* baseline — read every corpus file and normalize it once (``textnorm.normalize_text``);
* trace — ``deep-research trace`` on the brief (stage 1 hash checks, quote location, literals,
  overlap, and the atomic write of claims.json).

Each is timed in CPU seconds of the process (what a machine shared with other work disturbs
least) and in wall seconds. The ratio trace / baseline in CPU is what RESULTS.md reports (goal
≤ 3×); with ``--runs N`` each run is a cold run of its own and the median is printed too. Usage:

    python benchmarks/bench_trace.py [--dir DIR] [--claims 500] [--sources 200] [--mb 20]
                                     [--runs 1]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from deep_research.gates.textnorm import normalize_text
from deep_research.gates.trace import TraceOptions, TraceReport, run_trace

WORDS = """
    agency council report market sales energy installers budget transport survey households
    prices grid capacity storage network regional national growth decline imports exports
    analysts figures quarter annual estimate forecast policy subsidy demand supply shortage
    programme training members companies firms cities homes buildings systems units
""".split()
NAMES = ["Norland", "Vestria", "Harbourton", "Eastline", "Lindqvist", "Berg", "Reyes"]


def sentence(rng: random.Random) -> str:
    words = rng.choices(WORDS, k=rng.randint(12, 22))
    words[0] = words[0].capitalize()
    words.insert(rng.randint(2, len(words) - 1), rng.choice(NAMES))
    words.insert(rng.randint(2, len(words) - 1), f"{rng.randint(2, 999):,}")
    words.insert(rng.randint(2, len(words) - 1), f"in {rng.randint(1990, 2025)}")
    return " ".join(words) + "."


def page_text(rng: random.Random, size: int) -> tuple[str, list[str]]:
    sentences: list[str] = []
    length = 0
    while length < size:
        paragraph = " ".join(sentence(rng) for _ in range(rng.randint(3, 7)))
        sentences.append(paragraph)
        length += len(paragraph) + 2
    text = "\n\n".join(sentences)
    return text, [s.strip() + "." for s in text.split(".") if len(s.strip()) > 60]


def perturb(quote: str, rng: random.Random) -> str:
    """A share of quotes arrive the way models write them: spacing, curly quotes, a lost char."""
    roll = rng.random()
    if roll < 0.08:
        return quote.replace(" ", "  ", 3)
    if roll < 0.12:
        cut = rng.randint(10, len(quote) - 10)
        return quote[:cut] + quote[cut + 1 :]
    if roll < 0.15:
        return quote[:30] + " … " + quote[-30:]
    return quote


def build(root: Path, claims: int, sources: int, megabytes: float) -> None:
    """Pages of synthetic prose; each claim's sentence is carried by 2–3 pages, as news is."""
    rng = random.Random(20261129)
    size = int(megabytes * 1_000_000 / sources)
    pages = [page_text(rng, size) for _ in range(sources)]
    texts = [text for text, _ in pages]
    findings: list[list[dict[str, str]]] = [[] for _ in range(sources)]
    claim_rows = []
    for number in range(1, claims + 1):
        carriers = rng.sample(range(sources), rng.choice((2, 3)))
        statement = rng.choice(pages[carriers[0]][1])
        cited = []
        for index in carriers:
            if index != carriers[0]:
                texts[index] += "\n\n" + statement
            finding_id = f"S{index + 1}.F{len(findings[index]) + 1}"
            findings[index].append(
                {"id": finding_id, "claim": statement, "quote": perturb(statement, rng)}
            )
            cited.append(finding_id)
        claim_rows.append(
            {
                "id": f"C{number}",
                "claim": statement,
                "supporting": sorted({f.split(".")[0] for f in cited}),
                "findings": cited,
            }
        )
    corpus = root / "corpus"
    corpus.mkdir(parents=True)
    rows, log = [], []
    for index, text in enumerate(texts):
        digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
        (corpus / f"{digest[7:]}.txt").write_text(text, encoding="utf-8")
        url = f"https://site{index + 1}.example/page"
        rows.append(
            {
                "id": f"S{index + 1}",
                "url": url,
                "content_hash": digest,
                "tier": "raw",
                "status": 200,
                "findings": findings[index],
            }
        )
        log.append({"url": url, "outcome": "ok", "status": 200, "content_hash": digest})
    (root / "sources.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "fetch-log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in log))
    (root / "claims.json").write_text(json.dumps({"topic": "bench", "claims": claim_rows}))


@dataclass(frozen=True)
class Timing:
    cpu: float  # seconds of this process's CPU (user + system): what other load disturbs least
    wall: float


def _timed(work: Callable[[], object]) -> tuple[Timing, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return Timing(time.process_time() - cpu, time.perf_counter() - wall), result


def baseline(root: Path) -> Timing:
    def read_all() -> None:
        for path in sorted((root / "corpus").glob("*.txt")):
            normalize_text(path.read_text(encoding="utf-8"))

    return _timed(read_all)[0]


def timed_trace(root: Path) -> tuple[Timing, dict[str, object]]:
    timing, report = _timed(lambda: run_trace(TraceOptions(brief=root)))
    assert isinstance(report, TraceReport)
    return timing, report.as_dict()


def measure(root: Path) -> dict[str, object]:
    """One cold run, in this fresh process: the floor, then trace."""
    base = baseline(root)
    seconds, report = timed_trace(root)
    return {"base": asdict(base), "trace": asdict(seconds), "report": report}


def cold_run(root: Path, pristine: bytes) -> dict[str, Any]:
    """:func:`measure` in a child process, on the brief as built (claims.json restored)."""
    (root / "claims.json").write_bytes(pristine)
    (root / "trace.json").unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, __file__, "--measure", str(root)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--claims", type=int, default=500)
    parser.add_argument("--sources", type=int, default=200)
    parser.add_argument("--mb", type=float, default=20.0)
    parser.add_argument("--runs", type=int, default=1, help="cold runs, each in a fresh process")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure is not None:
        print(json.dumps(measure(args.measure)))
        return
    with tempfile.TemporaryDirectory() as scratch:
        root = args.dir or Path(scratch) / "brief"
        build(root, args.claims, args.sources, args.mb)
        corpus_mb = sum(p.stat().st_size for p in (root / "corpus").glob("*.txt")) / 1e6
        pristine = (root / "claims.json").read_bytes()
        runs = [cold_run(root, pristine) for _ in range(args.runs)]
    report = runs[0]["report"]
    print(f"corpus: {args.sources} sources, {corpus_mb:.1f} MB; claims: {args.claims}")
    print(f"pairs checked: {report['total_cites_checked']}, pass rate {report['pass_rate']}")
    print("run | read + normalize once (CPU, wall) | trace (CPU, wall) | ratio CPU | ratio wall")
    ratios = []
    for number, run in enumerate(runs, start=1):
        base, trace = run["base"], run["trace"]
        ratios.append(trace["cpu"] / base["cpu"])
        print(
            f"{number} | {base['cpu']:.3f} s, {base['wall']:.3f} s | "
            f"{trace['cpu']:.3f} s, {trace['wall']:.3f} s | {ratios[-1]:.2f}x | "
            f"{trace['wall'] / base['wall']:.2f}x"
        )
    print(f"ratio trace / baseline (CPU): median {statistics.median(ratios):.2f}x")


if __name__ == "__main__":
    main()
