"""Benchmark: the guard's decision time, in process (bench_hook.py measures the process start).

Two figures:

* **Recorded mix** — 10,000 hook events in the shapes and proportions a full-depth run inside
  Claude Code 2.1.197 sends (tests/plugin/test_plugin_live_run.py: the orchestrator's Bash calls
  of our CLI, its Writes of what ``next`` names, its Agent dispatches; each fetcher's WebSearch
  and ``deep-research fetch`` calls; the PostToolUse events of searches and agents; the Read
  calls in between), replayed run after run, each on a fresh run so no budget runs out. Median,
  p99 and maximum of each decision's wall time.
* **Adversarial** — inputs built to be slow: the longest lines and prompts, many words, every
  shell metacharacter, deep nesting, a 10 MB Write, the fifteen relative ``cd``s that took the
  old guard 41.6 s. The worst time over them.

    python benchmarks/bench_guard.py [--events 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from deep_research.plugin import runstate
from deep_research.plugin.guard import run_guard
from deep_research.plugin.guard.steps import remember_step
from deep_research.plugin.tasks import FetchTask

REPO = Path(__file__).resolve().parents[1]
TOPIC = "How does the Harbourton tide-gauge network measure sea level?"
SUB_QUESTIONS = [f"sq{n}" for n in range(1, 6)]
FETCHER = "deep-research:fetcher"


class Events:
    """Hook events of one session, shaped as Claude Code sends them."""

    def __init__(self, project: Path, brief: Path) -> None:
        self.project, self.brief, self.count = project, brief, 0

    def event(
        self, tool: str, tool_input: dict[str, Any], *, agent: str | None = None, **extra: Any
    ) -> tuple[str, str]:
        self.count += 1
        body: dict[str, Any] = {
            "session_id": "bench-session",
            "transcript_path": str(self.project / "transcript.jsonl"),
            "cwd": str(self.project),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": f"toolu_{self.count:06d}",
        }
        if agent is not None:
            body |= {"agent_id": f"a{self.count:06d}", "agent_type": agent}
        body |= extra
        phase = "post" if body["hook_event_name"] != "PreToolUse" else "pre"
        return json.dumps(body), phase

    def bash(self, command: str, agent: str | None = None) -> tuple[str, str]:
        return self.event("Bash", {"command": command, "description": command[:40]}, agent=agent)


def one_run(events: Events) -> Iterator[tuple[str, str] | list[str]]:
    """A full run's hook traffic, in order; a list is the step next records (not timed)."""
    b = events.brief
    cli = f"deep-research {{}} {b}"
    yield events.bash(cli.format("next") + " --json")
    yield [str(b / "plan.json")]
    yield events.event("WebSearch", {"query": "harbourton tide gauges"})
    yield events.event("Write", {"file_path": str(b / "plan.json"), "content": "{}" * 400})
    for round_ in (1, 2):
        yield events.bash(cli.format("next") + " --json")
        saves = [str(b / "returns" / f"fetcher-{sq}-r{round_}.json") for sq in SUB_QUESTIONS]
        yield saves
        for sq in SUB_QUESTIONS:
            queries = (f"harbourton {sq} query 1", f"harbourton {sq} query 2")
            prompt = FetchTask(str(b), sq, round_, queries, f"only {sq}").prompt()
            dispatch = events.event(
                "Agent", {"description": sq, "subagent_type": FETCHER, "prompt": prompt}
            )
            yield dispatch
            for n in range(4 if round_ == 1 else 1):
                yield events.event("WebSearch", {"query": f"harbourton {sq} {n}"}, agent=FETCHER)
                hits = {"results": [{"content": [{"url": "https://ec.europa.eu/x", "title": "t"}]}]}
                yield events.event(
                    "WebSearch",
                    {"query": f"harbourton {sq} {n}"},
                    agent=FETCHER,
                    hook_event_name="PostToolUse",
                    tool_response=hits,
                )
            for n in range(4 if round_ == 1 else 2):
                url = f"https://ec.europa.eu/{sq}/r{round_}/{n}"
                yield events.bash(f"deep-research fetch {url} --brief {b} --json", FETCHER)
            yield events.event(
                "Read", {"file_path": str(b / "corpus" / "sha256-x.txt")}, agent=FETCHER
            )
            yield events.event(
                "Agent",
                {"subagent_type": FETCHER},
                hook_event_name="PostToolUse",
                tool_response="x",
                tool_use_id=json.loads(dispatch[0])["tool_use_id"],  # the dispatch's own
            )
        for path in saves:
            yield events.event("Write", {"file_path": path, "content": "{}" * 600})
        yield events.bash(cli.format("next") + " --json")
        yield events.bash(cli.format("ingest"))
    for command in ("trace", "triangulate", "refetch", "counters", "verdict", "render", "handoff"):
        yield events.bash(cli.format("next") + " --json")
        yield events.bash(cli.format(command))
    yield events.event("Read", {"file_path": str(b / "claims.json")})
    yield events.event("Grep", {"pattern": "S1", "path": str(b)})


def adversarial(events: Events) -> dict[str, tuple[str, str]]:
    b = events.brief
    huge = "a" * 16_300
    return {
        "line of 16 KiB, one argument": events.bash(f"deep-research trace {huge}"),
        "line of 1 MB": events.bash("deep-research trace " + "a " * 500_000),
        "line of 1 MB of quotes": events.bash("deep-research " + "'" * 1_000_000),
        "63 words": events.bash("deep-research trace " + " ".join([str(b)] * 61)),
        "every metacharacter": events.bash(" ".join("$`;&|<>(){}[]*?~\\#!^\"'") * 1000),
        "15 relative cds": events.bash(
            " && ".join(f"cd d{n}" for n in range(15)) + " && printf x > trace.json"
        ),
        "prompt of 64 KiB": events.event(
            "Agent",
            {
                "subagent_type": FETCHER,
                "prompt": f"brief={b} sub_question=sq1 round=1 queries=" + "[" * 65_000,
            },
        ),
        "prompt of 1 MB of markers": events.event(
            "Agent", {"subagent_type": FETCHER, "prompt": f"brief={b}" + " round=1" * 125_000}
        ),
        "Write of 10 MB": events.event(
            "Write", {"file_path": str(b / "plan.json"), "content": "x" * 10_000_000}
        ),
        "path of 1 MB": events.event("Write", {"file_path": "/" + "a/" * 500_000}),
        "event nested 100,000 deep": ("[" * 100_000 + "]" * 100_000, "pre"),
        "search response of 100,000 hits": events.event(
            "WebSearch",
            {"query": "q"},
            hook_event_name="PostToolUse",
            tool_response={"results": [{"url": f"https://h{n}.example/"} for n in range(100_000)]},
        ),
    }


def kind(payload: str, phase: str) -> str:
    event = json.loads(payload)
    command = str(event.get("tool_input", {}).get("command", "")).split()
    name = f"{event['tool_name']} {command[1]}" if command[1:] else event["tool_name"]
    return f"{name} ({phase})"


DENIED: list[str] = []


def timed(payload: str, phase: str, state: Path) -> float:
    started = time.perf_counter()
    decision = run_guard(payload, phase, state)
    seconds = time.perf_counter() - started
    if not decision.allow:
        DENIED.append(decision.reason)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    args = parser.parse_args()
    # The guard runs as the plugin's hook does: Bash finds the launcher in the plugin's bin/.
    os.environ["CLAUDE_PLUGIN_ROOT"] = str(REPO)
    os.environ["PATH"] = "/usr/bin:/bin"
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        state = project / "state"
        os.environ["XDG_STATE_HOME"] = str(project / "xdg")
        times: list[float] = []
        by_kind: dict[str, list[float]] = {}
        started = time.perf_counter()
        while len(times) < args.events:
            record = runstate.start_run(
                TOPIC, depth="full", state=state, requested={}, static_hosts=["ec.europa.eu"]
            )
            events = Events(project, Path(record["brief"]))
            for item in one_run(events):
                if isinstance(item, list):
                    remember_step(events.brief, item)
                elif len(times) < args.events:
                    times.append(timed(*item, state))
                    by_kind.setdefault(kind(*item), []).append(times[-1])
        wall = time.perf_counter() - started
        # The recorded run is one the guard lets through: every decision an allow.
        assert not DENIED, DENIED[:3]
        times.sort()
        p99 = times[int(len(times) * 0.99) - 1]
        print(
            f"recorded mix: {len(times)} events, median {statistics.median(times) * 1e3:.2f} ms, "
            f"p99 {p99 * 1e3:.2f} ms, max {times[-1] * 1e3:.2f} ms ({wall:.1f} s wall)"
        )
        for name, spent in sorted(by_kind.items()):
            spent.sort()
            print(
                f"  {name:<30} {len(spent):5d} × median {statistics.median(spent) * 1e3:6.2f} ms, "
                f"p99 {spent[int(len(spent) * 0.99) - 1] * 1e3:6.2f} ms"
            )
        for n in range(15):
            (project / f"d{n}").mkdir(exist_ok=True)
        worst = ("", 0.0)
        for name, item in adversarial(Events(project, events.brief)).items():
            seconds = max(timed(*item, state) for _ in range(3))
            print(f"  adversarial: {name:<34} {seconds * 1e3:8.1f} ms")
            worst = max(worst, (name, seconds), key=lambda pair: pair[1])
        print(f"adversarial worst case: {worst[1] * 1e3:.1f} ms ({worst[0]})")


if __name__ == "__main__":
    main()
