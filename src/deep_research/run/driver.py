"""The headless pipeline: ``deep-research run`` — a new run, a resumed one, or a brief reused.

The driver runs the phases of :mod:`deep_research.run.pipeline` in order (their work lives in
:mod:`deep_research.run.phases`), recording each completed one in ``trace.json``
(``phases.run.completed``) after its artifacts are written atomically, so a run killed at any
point (``kill -9`` included) leaves a brief that validates, and ``--resume`` continues with the
first phase not recorded as done.

Ctrl-C (SIGINT) stops the run where it is: the phase under way is not recorded as done, so the
brief is exactly what a kill at that point leaves — valid and resumable — and the CLI exits 130
with one line on stderr.

The run holds the brief's one lock from start to end (re-entrant, so the gates it calls nest
inside it): no other process writes claims.json or trace.json while it runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TextIO

from deep_research.brief import (
    Brief,
    brief_dir,
    parse_json,
    question_key,
    read_text,
    slugify,
    supersede,
)
from deep_research.decide.freshness import decide as freshness_decide
from deep_research.errors import InputError
from deep_research.gates.trace import emitted_claims
from deep_research.models import Depth
from deep_research.run.checkpoint import (
    RunRecord,
    read_record,
)
from deep_research.run.crashpoint import crash_point
from deep_research.run.governor import (
    Budget,
    CapReached,
    Limits,
    Spend,
)
from deep_research.run.interface import (
    Reasoner,
    SearchAdapter,
)
from deep_research.run.phases import NOT_FOUND, PHASE_FUNCTIONS, Context, brief_rows
from deep_research.run.pipeline import phase_names, phases_for
from deep_research.run.progress import Progress
from deep_research.settings import Settings

PHASES_FULL = phase_names("full")
PHASES_QUICK = phase_names("quick")


# --- the run --------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunResult:
    slug: str
    brief: Path
    verdict: str | None
    reasons: list[str]
    claims: int
    stripped: int
    sources: int
    incomplete: list[str]
    not_found: list[str]
    reasoner: str
    adapter: str
    report: Path | None
    spend: dict[str, float]
    reused: bool = False

    @property
    def partial(self) -> bool:
        return bool(self.incomplete)

    def as_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "brief": str(self.brief),
            "verdict": self.verdict,
            "verdict_reasons": self.reasons,
            "claims": self.claims,
            "stripped": self.stripped,
            "sources": self.sources,
            "partial": self.partial,
            "incomplete": self.incomplete,
            "not_found": self.not_found,
            "reasoner": self.reasoner,
            "adapter": self.adapter,
            "report": str(self.report) if self.report else None,
            "spend": self.spend,
            "reused": self.reused,
        }

    def summary_lines(self) -> list[str]:
        lines = [
            f"verdict: {self.verdict}"
            + (" (reused)" if self.reused else "")
            + (" — PARTIAL RUN (a cap stopped it)" if self.partial else ""),
        ]
        lines += [f"  {reason}" for reason in self.reasons[:4]]
        lines.append(
            f"claims: {self.claims} emitted, {self.stripped} stripped · sources: "
            f"{self.sources} · reasoner: {self.reasoner} · corpus: {self.adapter}"
        )
        lines += [f"not found: {gap}" for gap in self.not_found[:5]]
        lines += [f"incomplete: {reason}" for reason in self.incomplete[:5]]
        lines.append(f"brief: {self.brief}")
        lines.append(f"report: {self.report}" if self.report else "report: (not rendered)")
        return lines


def result_of(brief: Brief, state: RunRecord, slug: str, *, reused: bool = False) -> RunResult:
    document = brief.load_claims()
    emitted = emitted_claims(document)
    report = brief.root / "report.md"
    return RunResult(
        slug=slug,
        brief=brief.root,
        verdict=document.verdict,
        reasons=list(document.verdict_reasons),
        claims=len(emitted),
        stripped=len(document.stripped),
        sources=len(brief_rows(brief)),
        incomplete=list(state.incomplete),
        not_found=[
            g.removeprefix(NOT_FOUND) for g in document.coverage_gaps if g.startswith(NOT_FOUND)
        ],
        reasoner=state.reasoner,
        adapter=state.adapter,
        report=report if report.is_file() else None,
        spend=dict(state.spend),
        reused=reused,
    )


def execute(
    brief: Brief,
    slug: str,
    state: RunRecord,
    adapter: SearchAdapter,
    reasoner: Reasoner,
    settings: Settings,
    limits: Limits,
    progress: Callable[[str, str], None],
    *,
    stop_after: str | None = None,
) -> RunResult:
    """Run every phase not yet completed, in the pipeline's order, checkpointing after each."""
    # Caps are per run, not per process: a resumed run starts from what it already spent.
    budget = Budget(
        limits, time.monotonic() + limits.deadline_s, spend=Spend.from_record(state.spend)
    )
    ctx = Context(brief, slug, adapter, reasoner, settings, limits, budget, state, progress)
    phases = phases_for(state.depth)
    live = ctx.live()
    if live is not None:
        live.watch(budget)
    with brief.lock():
        ctx.save_state()
        where = "at the start"
        try:
            for index, phase in enumerate(phases, start=1):
                if phase.name in state.completed:
                    continue
                where = f"during {phase.name}"
                if live is not None:
                    live.begin(phase.name, index, len(phases))
                try:
                    PHASE_FUNCTIONS[phase.name](ctx)
                    crash_point("within", phase.name)
                except CapReached as exc:
                    # A cap outside a worker (plan, synthesis): record it and go on to the gates.
                    ctx.mark_incomplete(f"{phase.name}: cap {exc.cap}: {exc.detail}")
                ctx.checkpoint(phase.name)
                where = f"after {phase.name}"
                crash_point("after", phase.name)
                if phase.name == stop_after:
                    break
        except KeyboardInterrupt:
            # Nothing to save: the checkpoints on disk are the resumable state, and a phase not
            # recorded as done is redone from its start. The CLI turns this into exit 130.
            progress("interrupted", f"{where}; continue with: deep-research run --resume {slug}")
            raise
        state.wall_clock_seconds += time.monotonic() - ctx.started
        ctx.save_state()
    return result_of(brief, state, slug)


@dataclass(frozen=True)
class RunRequest:
    question: str
    state_dir: Path
    depth: Depth = "quick"
    resume: str | None = None
    refresh: bool = False


PLUGIN_RUN = "run.json"  # written by the plugin's ``deep-research start``


def _plugin_record(brief: Brief) -> RunRecord | None:
    """A brief the Claude Code plugin started: its question and depth, as a run record."""
    path = brief.root / PLUGIN_RUN
    if not path.is_file():
        return None
    value = parse_json(read_text(path, what=PLUGIN_RUN), what=str(path))
    if not isinstance(value, dict) or not isinstance(value.get("topic"), str):
        return None
    return RunRecord(
        question=value["topic"],
        depth=value.get("depth", "quick"),
        adapter="claude-code plugin",
        reasoner="claude-code plugin",
    )


def start(
    request: RunRequest,
    adapter: SearchAdapter,
    reasoner: Reasoner,
    settings: Settings,
    limits: Limits,
    progress: Callable[[str, str], None],
    *,
    today: date | None = None,
    stop_after: str | None = None,
) -> RunResult:
    """A new run, a resumed one, or a fresh-enough brief of the same question reused."""
    slug = request.resume or slugify(request.question)
    brief = Brief(brief_dir(request.state_dir, slug))
    recorded = read_record(brief, "run", RunRecord) if brief.trace_path.exists() else None
    plugin = _plugin_record(brief) if recorded is None else None
    if request.resume is not None:
        if plugin:
            raise InputError(
                f"{brief.root} is a Claude Code plugin run (deep-research start), not a headless "
                "one; continue it in Claude Code, or research the question headless with "
                f'deep-research run "{plugin.question}" --refresh'
            )
        if recorded is None:
            raise InputError(f"no run to resume at {brief.root}; start it without --resume")
        progress("resume", f"{slug}: done so far: {', '.join(recorded.completed) or 'nothing'}")
        return execute(
            brief,
            slug,
            recorded,
            adapter,
            reasoner,
            settings,
            limits,
            progress,
            stop_after=stop_after,
        )
    if brief.root.exists():
        known = recorded or plugin
        if known is not None and question_key(known.question) != question_key(request.question):
            # Two questions whose digests collide: never answer one with the other's brief.
            raise InputError(
                f"{brief.root} holds the question {known.question!r}, not this one; pass "
                "--state DIR to research it in another state folder"
            )
        if known is not None and not request.refresh:
            if recorded is not None:
                finished = "verdict" in recorded.completed
            else:
                finished = brief.claims_path.exists() and brief.load_claims().verdict is not None
            if finished:
                decision = freshness_decide(
                    brief.load_claims(), today or datetime.now(UTC).date(), settings
                )
                if decision.decision == "reuse":
                    progress("fresh", f"reusing {slug}: {decision.reason}")
                    return result_of(brief, known, slug, reused=True)
                progress("fresh", f"regenerating {slug}: {decision.reason}")
            elif plugin:
                raise InputError(
                    f"{brief.root} is a Claude Code plugin run with no verdict yet; finish it "
                    "there, or start over headless with --refresh"
                )
            else:
                raise InputError(
                    f"{brief.root} holds an unfinished run; continue it with --resume {slug}, "
                    "or start over with --refresh"
                )
        supersede(brief.root)
    state = RunRecord(
        question=request.question,
        depth=request.depth,
        adapter=adapter.name,
        reasoner=reasoner.name,
    )
    return execute(
        brief, slug, state, adapter, reasoner, settings, limits, progress, stop_after=stop_after
    )


def state_root(state: Path | None) -> Path:
    if state is not None:
        return state
    return Path(os.environ.get("DEEP_RESEARCH_STATE") or "state")


def run_command(
    question: str | None,
    *,
    depth: str = "quick",
    corpus: str | None = None,
    reasoner: str = "auto",
    max_usd: float | None = None,
    resume: str | None = None,
    refresh: bool = False,
    state: Path | None = None,
    settings: Settings,
    quiet: bool = False,
    stream: TextIO | None = None,
) -> RunResult:
    """``deep-research run``: build the seams from the registry, then :func:`start`."""
    from deep_research.run.governor import default_limits
    from deep_research.run.registry import open_reasoner, open_source

    if depth not in ("quick", "full"):
        raise InputError(f"--depth {depth!r}: use quick or full")
    root = state_root(state)
    chosen = open_reasoner(reasoner)
    if resume is None and not (question or "").strip():
        raise InputError("give the research question, or --resume SLUG to continue a run")
    adapter = open_source(corpus, root)
    limits = default_limits(depth)
    if max_usd is not None:
        limits = limits.lowered(usd=max_usd)
    request = RunRequest(
        question=(question or "").strip(),
        state_dir=root,
        depth="full" if depth == "full" else "quick",
        resume=resume,
        refresh=refresh,
    )
    with Progress(stream, quiet=quiet) as progress:
        return start(request, adapter, chosen, settings, limits, progress)
