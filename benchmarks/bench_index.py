"""Benchmark: indexing a local folder, read in this process against read in the process pool.

Builds a folder of ``--files`` documents (deterministic, seeded): one in seven an HTML page of
the trace benchmark's prose inside navigation and boilerplate (HTML extraction is where indexing
spends its time), the rest markdown notes. Then indexes it twice into fresh SQLite files — every
file read here (``workers=1``), then in the pool sized to the machine — checks that the two
indexes hold the same rows, and prints wall seconds, CPU seconds (this process and its children)
and the pool's size. Usage:

    python benchmarks/bench_index.py [--files 350]
"""

from __future__ import annotations

import argparse
import random
import resource
import sqlite3
import tempfile
import time
from pathlib import Path

from bench_trace import sentence

from deep_research.run.localcorpus import CorpusIndex, _listed, pool_size, read_changed

NAV = "".join(f'<li><a href="/section/{n}">Section {n}</a></li>' for n in range(60))


def page(rng: random.Random) -> str:
    paragraphs = "".join(
        "<p>" + " ".join(sentence(rng) for _ in range(5)) + "</p>" for _ in range(40)
    )
    return (
        f"<html><head><title>{sentence(rng)}</title></head><body><nav><ul>{NAV}</ul></nav>"
        f"<article><h1>{sentence(rng)}</h1>{paragraphs}</article>"
        f"<footer><ul>{NAV}</ul></footer></body></html>"
    )


def build(root: Path, files: int) -> None:
    rng = random.Random(20261201)
    for number in range(files):
        folder = root / f"part{number % 10}"
        folder.mkdir(parents=True, exist_ok=True)
        if number % 7 == 0:
            (folder / f"page{number}.html").write_text(page(rng), encoding="utf-8")
        else:
            body = "\n\n".join(sentence(rng) for _ in range(30))
            (folder / f"note{number}.md").write_text(f"# Note {number}\n\n{body}\n")


def cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def index(root: Path, db: Path, workers: int) -> tuple[float, float, list[tuple[object, ...]]]:
    wall, used = time.perf_counter(), cpu()
    corpus = CorpusIndex(db, "bench")
    corpus.sync(read_changed(list(_listed(root, {})), "bench", workers=workers))
    wall, used = time.perf_counter() - wall, cpu() - used
    with sqlite3.connect(db) as connection:
        rows = connection.execute("SELECT * FROM docs ORDER BY path").fetchall()
    return wall, used, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=350)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "folder"
        build(root, args.files)
        megabytes = sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) / 1e6
        serial = index(root, Path(scratch) / "serial.sqlite", 1)
        workers = pool_size()
        pooled = index(root, Path(scratch) / "pooled.sqlite", workers)
    print(f"folder: {args.files} files, {megabytes:.1f} MB ({args.files // 7 + 1} HTML pages)")
    print(f"read here:        {serial[0]:.1f} s wall, {serial[1]:.1f} s CPU")
    print(f"pool of {workers}:        {pooled[0]:.1f} s wall, {pooled[1]:.1f} s CPU")
    print(f"same rows: {serial[2] == pooled[2]} ({len(serial[2])} documents)")


if __name__ == "__main__":
    main()
