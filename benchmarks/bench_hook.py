"""Benchmark: the wall time of one hook call, as Claude Code pays it on every tool call.

* **the shim** — ``hooks/guard pre`` started through ``sh -c`` (as Claude Code runs a hook
  command) for the hundred ordinary calls of tests/ordinary_calls.py, cycled to ``--calls``:
  with no research run, and beside another session's run (less its two Agent dispatches, which
  go to the guard), taken in turn with ``sh -c true`` — the floor, starting any hook at all — so
  the load weighs on the three alike. Every call must pass. Printed: p50, p99 and maximum, and
  the load average.
* **the guard** — ``deep-research guard --phase pre`` as a fresh process (what the shim hands a
  call to when a run confines it, and always for WebFetch) for a Read, a Bash command and a
  WebFetch, with no research run and during one: the median of ``--runs``.

    PYTHONPATH=src:tests python benchmarks/bench_hook.py [--calls 400] [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from deep_research.plugin import runstate
from ordinary_calls import session_events

REPO = Path(__file__).resolve().parents[1]
#: The session whose calls are timed, and the one that owns the run beside it.
SESSION = "5c9e4f10-this-session"
OWNER = "0b7d1c2e-run-session"

GUARD = [sys.executable, "-m", "deep_research.cli", "guard", "--phase", "pre"]
EVENTS = {
    # Every tool call reaches the hook (hooks.json matches all).
    "Read": {"tool_name": "Read", "tool_input": {"file_path": "notes.md"}},
    "Bash": {"tool_name": "Bash", "tool_input": {"command": "ls -la"}},
    "WebFetch": {
        "tool_name": "WebFetch",
        "tool_input": {"url": "https://docs.python.org/3/", "prompt": "x"},
    },
}


def shim_seconds(
    conditions: dict[str, tuple[list[str], dict[str, str], str]], calls: int
) -> dict[str, list[float]]:
    """The wall time of ``calls`` hook calls per condition — its events (cycled), environment
    and command line — taken in turn, so the machine's load weighs on each alike."""
    times: dict[str, list[float]] = {name: [] for name in conditions}
    for n in range(calls):
        for name, (events, env, command) in conditions.items():
            started = time.perf_counter()
            done = subprocess.run(
                ["/bin/sh", "-c", command],
                input=events[n % len(events)],
                text=True,
                capture_output=True,
                env=env,
                check=False,
            )
            times[name].append(time.perf_counter() - started)
            if done.returncode != 0:
                raise SystemExit(f"{name}: an ordinary call was denied: {done.stderr.strip()}")
    return times


def report_shim(label: str, times: list[float]) -> None:
    ms = sorted(t * 1000 for t in times)
    p99 = ms[min(len(ms) - 1, round(0.99 * len(ms)) - 1)]
    print(
        f"{label:<36} n={len(ms)}  p50 {statistics.median(ms):.1f} ms  p99 {p99:.1f} ms  "
        f"max {ms[-1]:.1f} ms"
    )


def median_seconds(event: dict[str, object], state: Path, runs: int) -> float:
    payload = json.dumps({**event, "cwd": str(state.parent)})
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(
            [*GUARD, "--state", str(state)],
            input=payload,
            text=True,
            capture_output=True,
            check=False,
        )
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def start(state: Path) -> dict[str, Any]:
    return runstate.start_run(
        "benchmark", depth="quick", state=state, requested={}, static_hosts=["docs.python.org"]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="shim calls per measurement")
    parser.add_argument("--runs", type=int, default=9, help="guard processes per median")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        quiet, beside = Path(tmp) / "no-run", Path(tmp) / "beside-a-run"
        for project in (quiet, beside):
            (project / "state").mkdir(parents=True)
        env = {**os.environ, "XDG_STATE_HOME": str(Path(tmp) / "xdg-state")}  # not the user's
        env.pop("DEEP_RESEARCH_STATE", None)
        os.environ[runstate.SESSION_ENV] = OWNER  # `start` run in the other session
        start(beside / "state")
        del os.environ[runstate.SESSION_ENV]
        shim = f'"{REPO}"/hooks/guard pre'
        events = session_events(SESSION, quiet)
        # Beside a run the two Explore dispatches go to the guard (timed below, as a process).
        plain = [e for e in session_events(SESSION, beside) if '"tool_name":"Agent"' not in e]
        load = os.getloadavg()
        times = shim_seconds(
            {
                "floor": (events, env, "true"),
                "no run": (events, {**env, "CLAUDE_PROJECT_DIR": str(quiet)}, shim),
                "beside": (plain, {**env, "CLAUDE_PROJECT_DIR": str(beside)}, shim),
            },
            args.calls,
        )
        after = os.getloadavg()
        print(f"load average {load[0]:.2f} before, {after[0]:.2f} after (1 min)")
        report_shim("sh -c true (starting any hook)", times["floor"])
        report_shim("shim, no run", times["no run"])
        report_shim("shim, another session's run", times["beside"])
        state = quiet / "state"
        for name, event in EVENTS.items():
            label = f"guard, {name}, no run"
            print(f"{label:<36} median {median_seconds(event, state, args.runs):.3f} s")
        start(state)
        for name, event in EVENTS.items():
            label = f"guard, {name}, during a run"
            print(f"{label:<36} median {median_seconds(event, state, args.runs):.3f} s")


if __name__ == "__main__":
    main()
