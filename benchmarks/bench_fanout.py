"""Fan-out efficiency of the headless runner's cast phase (a benchmark, not a timed test).

Six workers research the built-in python-docs corpus with a reasoner whose every read sleeps
(standing in for model latency; worker k sleeps k x SLEEP_S per read, so workers differ).
Concurrency is working when the phase's wall time is close to the slowest worker's own time:

    python benchmarks/bench_fanout.py        # prints wall / slowest; goal <= 1.3
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from deep_research.brief.layout import Brief
from deep_research.run.checkpoint import RunRecord
from deep_research.run.governor import default_limits, fan_out, new_budget
from deep_research.run.interface import FindingDraft, Retained, SubQuestionPlan
from deep_research.run.localcorpus import open_corpus
from deep_research.run.phases import Context, research
from deep_research.run.reasoners import ExtractiveReasoner
from deep_research.settings import load_settings

SLEEP_S = 0.02
WORKERS = 6
QUERIES = ("chained comparisons", "operator precedence", "boolean operations", "identity")


class SleepyReasoner(ExtractiveReasoner):
    def extract(self, sub_question: SubQuestionPlan, document: Retained) -> list[FindingDraft]:
        time.sleep(SLEEP_S * int(sub_question.id.removeprefix("sq")))
        return super().extract(sub_question, document)


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp)
        corpus = open_corpus("python-docs", state)
        limits = default_limits("quick")
        budget = new_budget(limits)
        state_record = RunRecord(
            question="bench", depth="quick", adapter=corpus.name, reasoner="sleepy"
        )
        ctx = Context(
            Brief(state / "brief"),
            "bench",
            corpus,
            SleepyReasoner(),
            load_settings(environ={}),
            limits,
            budget,
            state_record,
            lambda phase, message: None,
        )
        plans = [
            SubQuestionPlan(f"sq{n}", "How are comparisons evaluated?", QUERIES, 4)
            for n in range(1, WORKERS + 1)
        ]
        durations: dict[str, float] = {}

        def timed(sq: SubQuestionPlan) -> None:
            began = time.monotonic()
            research(ctx, sq, sq.queries)
            durations[sq.id] = time.monotonic() - began

        began = time.monotonic()
        fan_out(plans, timed, budget, limits.workers)
        wall = time.monotonic() - began
    slowest = max(durations.values())
    total = sum(durations.values())
    print(
        f"workers {WORKERS}: wall {wall:.3f} s, slowest worker {slowest:.3f} s, "
        f"sum of workers {total:.3f} s"
    )
    print(f"wall / slowest = {wall / slowest:.3f} (goal <= 1.3); sum / wall = {total / wall:.2f}")
    return 0 if wall / slowest <= 1.3 else 1


if __name__ == "__main__":
    sys.exit(main())
