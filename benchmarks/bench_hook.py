"""Benchmark: the wall time of one hook decision, as Claude Code pays it on every guarded call.

Runs ``deep-research guard --phase pre`` as a fresh process (what hooks/guard does) for a Read,
a Bash command and a WebFetch, with no research run and during one, and prints the median of N
runs:

    python benchmarks/bench_hook.py [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from deep_research.plugin import runstate

EVENTS = {
    # Every tool call reaches the guard (hooks.json matches all): a Read pays the process too.
    "Read, no run": {"tool_name": "Read", "tool_input": {"file_path": "notes.md"}},
    "Bash, no run": {"tool_name": "Bash", "tool_input": {"command": "ls -la"}},
    "WebFetch, no run": {
        "tool_name": "WebFetch",
        "tool_input": {"url": "https://docs.python.org/3/", "prompt": "x"},
    },
}


def median_seconds(event: dict[str, object], state: Path, runs: int) -> float:
    payload = json.dumps({**event, "cwd": str(state.parent)})
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "deep_research.cli",
                "guard",
                "--phase",
                "pre",
                "--state",
                str(state),
            ],
            input=payload,
            text=True,
            capture_output=True,
            check=False,
        )
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "state"
        state.mkdir()
        for name, event in EVENTS.items():
            print(f"{name:<24} {median_seconds(event, state, args.runs):.3f} s")
        runstate.start_run(
            "benchmark", depth="quick", state=state, requested={}, static_hosts=["docs.python.org"]
        )
        for name, event in EVENTS.items():
            label = name.replace("no run", "during a run")
            print(f"{label:<24} {median_seconds(event, state, args.runs):.3f} s")


if __name__ == "__main__":
    main()
