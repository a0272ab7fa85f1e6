"""The commands ``next`` asks code to run, as one typed table.

A ``run`` action of :func:`deep_research.plugin.next.next_action` carries a :class:`Run`: the
command by name and the arguments it takes. The loop's orchestrator runs its printed line
(:meth:`Run.line`) through Bash; the workflow's step (:func:`deep_research.plugin.workflow.step`,
called by ``deep-research step`` and by the hook that keeps a step's last answer) runs it in
its own process through :data:`RUNNERS` — the same library calls the CLI command makes, never
the CLI itself. Each runner returns what the progress log says of it.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from deep_research.errors import DeepResearchError
from deep_research.plugin.command_names import ByTheLoop, InProcess


class Run(BaseModel):
    """One command ``next`` asks for: its name and its arguments, as the CLI spells them."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    command: InProcess | ByTheLoop
    #: The words after the command name, as printed (the brief first, for every in-process one).
    words: tuple[str, ...]

    def line(self) -> str:
        return shlex.join(["deep-research", self.command, *self.words])


def brief_run(command: InProcess, brief: Path) -> Run:
    return Run(command=command, words=(str(brief),))


def run_in_process(run: Run) -> str:
    """Run ``run`` (a command of :data:`RUNNERS`) here; what it did, in a few words."""
    try:
        return RUNNERS[run.command](run)
    except DeepResearchError as error:
        return f"refused: {str(error)[:300]}"


def _brief(run: Run) -> Path:
    return Path(run.words[0])


def _ingest(run: Run) -> str:
    from deep_research.plugin.ingest import run_ingest

    run_ingest(_brief(run))
    return "done"


def _trace(run: Run) -> str:
    from deep_research.gates.trace import TraceOptions, run_trace

    report = run_trace(TraceOptions(brief=_brief(run)))
    found = report.describe_violations()
    return f"{len(found)} violation(s): {found[0][:200]}" if found else "done"


def _triangulate(run: Run) -> str:
    from deep_research.decide.contradictions import run_contradictions
    from deep_research.decide.triangulate import run_triangulate
    from deep_research.settings import settings_for

    # The one contradiction finder before triangulating, as `deep-research triangulate` runs it.
    settings = settings_for(_brief(run), ())
    run_contradictions(_brief(run), settings)
    run_triangulate(_brief(run), settings)
    return "done"


def _refetch(run: Run) -> str:
    from deep_research.decide.refetch_rate import run_refetch

    run_refetch(_brief(run), archive=None)
    return "done"


def ciber_skip_run(brief: Path, reason: str) -> Run:
    return Run(command="ciber", words=("apply", str(brief), "--skip", reason))


def _ciber_skip(run: Run) -> str:
    from deep_research.decide.ciber import run_ciber_apply
    from deep_research.settings import settings_for

    _, brief, _, reason = run.words  # apply B --skip REASON, as ciber_skip_run builds it
    run_ciber_apply(Path(brief), None, reason, settings_for(Path(brief), ()))
    return "done"


def counters_run(brief: Path, plan: Path) -> Run:
    return Run(command="counters", words=(str(brief), "--plan", str(plan)))


def _counters(run: Run) -> str:
    from deep_research.brief.record import open_brief
    from deep_research.decide.counters import run_counters
    from deep_research.plugin.runstate import fetcher_rounds, round_searches

    brief, _, plan = run.words  # B --plan P, as counters_run builds it
    # The guard's ledger is the plugin's record: it reaches the counters as numbers.
    opened = open_brief(Path(brief))
    run_counters(
        opened.root,
        Path(plan),
        fetcher_rounds=fetcher_rounds(opened),
        searched=round_searches(opened),
    )
    return "done"


def _verdict(run: Run) -> str:
    from deep_research.decide.verdict import run_verdict
    from deep_research.settings import settings_for

    return f"verdict {run_verdict(_brief(run), settings_for(_brief(run), ())).verdict}"


def _render(run: Run) -> str:
    from deep_research.gates.answer import check_answer
    from deep_research.render import run_render

    run_render(_brief(run), force=False, write=True, check_answer=check_answer)
    return "done"


def _mcp_gate(run: Run) -> str:
    from deep_research.plugin.mcpgate import record_gate, run_mcp_gate
    from deep_research.plugin.runstate import state_dir

    name, _, brief, _, state = run.words  # NAME --brief B --state S, as mcp_gate_run builds it
    result = run_mcp_gate(name, state_dir(state))
    record_gate(Path(brief), result)
    return "done" if result.ok else f"{result.gate} failed"


def mcp_gate_run(name: str, brief: Path, state: Path) -> Run:
    return Run(command="mcp-gate", words=(name, "--brief", str(brief), "--state", str(state)))


#: Every command a step runs in process, by name.
RUNNERS: dict[str, Callable[[Run], str]] = {
    "ingest": _ingest,
    "trace": _trace,
    "triangulate": _triangulate,
    "refetch": _refetch,
    "ciber": _ciber_skip,
    "counters": _counters,
    "verdict": _verdict,
    "render": _render,
    "mcp-gate": _mcp_gate,
}
