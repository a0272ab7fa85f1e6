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
import shlex
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, TextIO

from deep_research.brief.layout import (
    Brief,
    brief_dir,
    question_key,
    slugify,
    state_lock,
    supersede,
)
from deep_research.brief.trace_phases import LedgerRecord, RunRecord
from deep_research.console import made_folder
from deep_research.decide.freshness import decide as freshness_decide
from deep_research.errors import InputError
from deep_research.gaps import NOT_FOUND
from deep_research.gates.trace import emitted_claims
from deep_research.models import Depth
from deep_research.run.checkpoint import read_record
from deep_research.run.crashpoint import crash_point
from deep_research.run.governor import (
    Budget,
    CapReached,
    Limits,
    Spend,
    bind_budget,
)
from deep_research.run.interface import (
    CallFailed,
    Reasoner,
    SearchAdapter,
)
from deep_research.run.ledger import Ledger, spend_lines, totals_by
from deep_research.run.phases import PHASE_FUNCTIONS, Context, brief_rows
from deep_research.run.pipeline import Phase, phases_for
from deep_research.run.progress import Progress
from deep_research.settings import Settings

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
    ledger: LedgerRecord | None = None

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
            "spend_by": _spend_by(self.ledger),
        }

    def summary_lines(self) -> list[str]:
        lines = [
            f"verdict: {self.verdict}"
            + (" (reused)" if self.reused else "")
            + (" — PARTIAL RUN (work left incomplete: see below)" if self.partial else ""),
        ]
        lines += [f"  {reason}" for reason in self.reasons]
        lines.append(
            f"claims: {self.claims} emitted, {self.stripped} stripped · sources: "
            f"{self.sources} · reasoner: {self.reasoner} · corpus: {self.adapter}"
        )
        lines += [f"not found: {gap}" for gap in self.not_found[:5]]
        lines += [f"incomplete: {reason}" for reason in self.incomplete[:5]]
        lines += spend_lines(self.ledger) if self.ledger is not None else []
        lines.append(f"brief: {self.brief}")
        lines.append(f"report: {self.report}" if self.report else "report: (not rendered)")
        return lines


def _spend_by(ledger: LedgerRecord | None) -> dict[str, dict[str, float]]:
    """Dollars per phase and per model, for ``--json``."""
    if ledger is None:
        return {}
    return {
        key: {name: round(t.usd, 6) for name, t in totals_by(ledger.entries, key).items()}
        for key in ("phase", "model")
    }


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
        ledger=state.ledger,
    )


def _pending(state: RunRecord) -> Iterator[tuple[int, Phase]]:
    """The phases not yet done, in order, numbered. The list is read again after each phase:
    under ``--depth auto`` the plan phase decides which depth the rest of the run has."""
    done: set[str] = set()
    while True:
        phases = phases_for(state.depth)
        found = next(
            (
                (index, phase)
                for index, phase in enumerate(phases, start=1)
                if phase.name not in state.completed and phase.name not in done
            ),
            None,
        )
        if found is None:
            return
        done.add(found[1].name)
        yield found


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
        limits,
        time.monotonic() + limits.deadline_s,
        spend=Spend.from_record(state.spend),
        ledger=Ledger.from_record(state.ledger),
    )
    bind_budget(budget, settings, "auto" if state.auto_depth else state.depth, reasoner, adapter)
    ctx = Context(brief, slug, adapter, reasoner, settings, limits, budget, state, progress)
    live = ctx.live()
    if live is not None:
        live.watch(budget)
    with brief.lock():
        ctx.save_state()
        where = "at the start"
        try:
            for index, phase in _pending(state):
                phases = phases_for(state.depth)
                where = f"during {phase.name}"
                budget.phase = phase.name
                if live is not None:
                    live.begin(phase.name, index, len(phases))
                try:
                    PHASE_FUNCTIONS[phase.name](ctx)
                    crash_point("within", phase.name)
                except CapReached as exc:
                    # A cap outside a worker (plan, synthesis): record it and go on to the gates.
                    ctx.mark_incomplete(f"{phase.name}: cap {exc.name}: {exc.detail}")
                except CallFailed as exc:
                    # A model call that failed for good (round 2's queries): the same.
                    ctx.mark_incomplete(f"{phase.name}: a model call failed: {exc}")
                ctx.checkpoint(phase.name)
                where = f"after {phase.name}"
                crash_point("after", phase.name)
                if phase.name == stop_after:
                    break
        except KeyboardInterrupt:
            # Nothing to save: the checkpoints on disk are the resumable state, and a phase not
            # recorded as done is redone from its start. The CLI turns this into exit 130.
            progress("interrupted", f"{where}; continue with: {resume_command(slug, state)}")
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
    #: The corpus as the run records it (:func:`~deep_research.run.registry.source_key`).
    corpus: str = ""
    auto_depth: bool = False


def command(*words: str) -> str:
    """A ``deep-research run`` command line, quoted so it works pasted as printed."""
    return " ".join(shlex.quote(word) for word in ("deep-research", "run", *words))


def resume_command(slug: str, record: RunRecord) -> str:
    """The command that continues ``record``'s run: the brief remembers its corpus and depth,
    so only the state folder (absolute, so it works from any directory) is repeated."""
    return command("--resume", slug, *(("--state", record.state) if record.state else ()))


def refresh_command(record: RunRecord) -> str:
    """The command that researches ``record``'s question again from the start."""
    words = [record.question, "--depth", record.depth]
    if record.corpus:
        words += ["--corpus", record.corpus]
    if record.state:
        words += ["--state", record.state]
    return command(*words, "--refresh")


def _plugin_record(brief: Brief) -> RunRecord | None:
    """A brief the Claude Code plugin started: its question and depth, as a run record."""
    if not brief.run_path.exists():
        return None
    started = brief.load_run()
    return RunRecord(
        question=started.topic,
        depth=started.depth,
        adapter="claude-code plugin",
        reasoner="claude-code plugin",
    )


def cannot_resume(brief: Brief) -> str:
    """Why ``--resume`` finds nothing to continue at ``brief``."""
    plugin = _plugin_record(brief)
    if plugin is not None:
        return (
            f"{brief.root} is a Claude Code plugin run (deep-research start), not a headless one; "
            "continue it in Claude Code, or research the question headless with "
            f"{command(plugin.question, '--refresh')} and your --corpus"
        )
    return f"no run to resume at {brief.root}; start it without --resume"


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
        if recorded is None:
            raise InputError(cannot_resume(brief))
        progress("resume", f"{slug}: done so far: {', '.join(recorded.completed) or 'nothing'}")
        # A record written before the brief remembered its corpus and state learns them now.
        recorded.corpus = recorded.corpus or request.corpus
        recorded.state = recorded.state or str(request.state_dir.resolve())
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
    state = RunRecord(
        question=request.question,
        depth=request.depth,
        adapter=adapter.name,
        reasoner=reasoner.name,
        corpus=request.corpus,
        state=str(request.state_dir.resolve()),
        auto_depth=request.auto_depth,
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
                why = decision.reason
                other = recorded.corpus if recorded is not None else ""
                if other and request.corpus and other != request.corpus:
                    why = f"it was researched over {other}, not {request.corpus}"
                elif decision.decision == "reuse":
                    progress(
                        "fresh",
                        f"reusing the brief at {brief.root} ({why}); nothing is researched "
                        "again (--refresh would)",
                    )
                    return result_of(brief, known, slug, reused=True)
                progress(
                    "fresh",
                    f"not reusing the brief at {brief.root}: {why}; researching the question "
                    f"again at {request.depth} depth (the earlier brief is kept in "
                    f"{brief.root.parent / '.superseded'})",
                )
            elif recorded is None:
                raise InputError(
                    f"{brief.root} is a Claude Code plugin run with no verdict yet; finish it "
                    "there, or start over headless with --refresh"
                )
            else:
                raise InputError(
                    f"{brief.root} holds an unfinished run; continue it with "
                    f"{resume_command(slug, recorded)}, or start over with "
                    f"{refresh_command(recorded)}"
                )
        supersede(brief.root)
    return execute(
        brief, slug, state, adapter, reasoner, settings, limits, progress, stop_after=stop_after
    )


def state_root(state: Path | None) -> Path:
    """The state folder (``--state``, else ``$DEEP_RESEARCH_STATE``, else ``./state``), created
    when missing; one that cannot be a folder is an input error, before anything is written."""
    root = state if state is not None else Path(os.environ.get("DEEP_RESEARCH_STATE") or "state")
    made_folder(root, option="--state", what="the state folder")
    if not os.access(root, os.W_OK | os.X_OK):
        raise InputError(f"cannot write in the state folder {root}; pass --state DIR you can write")
    return root


def resume_record(root: Path, slug: str) -> RunRecord | None:
    """The run record of the brief ``slug`` under ``root``, or None when it has none."""
    brief = Brief(brief_dir(root, slug))
    return read_record(brief, "run", RunRecord) if brief.trace_path.exists() else None


def _resume_conflicts(
    record: RunRecord, question: str, depth: str | None, corpus: str | None, refresh: bool
) -> list[str]:
    """What a ``--resume`` command line asks that the run it continues did not."""
    found = []
    if refresh:
        found.append("--refresh starts the question over, --resume continues it: pass one")
    if question and question_key(question) != question_key(record.question):
        found.append(f"the run researches {record.question!r}, not {question!r}")
    if depth is not None and depth != record.depth:
        found.append(f"the run is at --depth {record.depth}, not {depth}")
    if corpus is not None and record.corpus and corpus != record.corpus:
        found.append(f"the run searches --corpus {record.corpus}, not {corpus}")
    return found


def run_command(
    question: str | None,
    *,
    depth: str | None = None,
    corpus: str | None = None,
    search: str | None = None,
    reasoner: str = "auto",
    models: list[str] | None = None,
    batch: bool = False,
    max_usd: float | None = None,
    resume: str | None = None,
    refresh: bool = False,
    state: Path | None = None,
    settings: Settings,
    quiet: bool = False,
    stream: TextIO | None = None,
) -> RunResult:
    """``deep-research run``: build the seams from the registry, then :func:`start`.

    A resumed run takes its question, depth and corpus from its record; a command line that
    asks for another one is refused rather than silently ignored. Runs on one state folder take
    turns (:func:`~deep_research.brief.layout.state_lock`).
    """
    from deep_research.run.claude.roles import parse_model_options
    from deep_research.run.governor import default_limits
    from deep_research.run.registry import Options, open_reasoner, open_source, source_key

    if depth is not None and depth not in ("quick", "full", "auto"):
        raise InputError(f"--depth {depth!r}: use quick, full or auto")
    if batch and depth == "quick":
        from deep_research.run.governor import QUICK_DEADLINE_S

        raise InputError(
            f"--batch cannot fit a quick run's {QUICK_DEADLINE_S:g} s deadline (a batch may "
            "take up to 24 hours); drop --batch, or use --depth full"
        )
    options = Options(parse_model_options(models), batch)
    chosen = open_reasoner(reasoner, options)
    asked = (question or "").strip()
    if resume is None and not asked:
        raise InputError("give the research question, or --resume SLUG to continue a run")
    if resume is not None and (not resume or "/" in resume or resume in (".", "..")):
        raise InputError(f"--resume {resume!r}: give the brief's name (its folder under briefs/)")
    given = corpus is not None or search is not None
    key = source_key(corpus, search=search) if given or resume is None else None
    root = state_root(state)
    with (
        Progress(stream, quiet=quiet) as progress,
        state_lock(
            root, lambda holder: progress("wait", f"{holder}; this run starts when it ends")
        ),
    ):
        auto = depth == "auto"
        if resume is not None:
            record = resume_record(root, resume)
            if record is None:
                raise InputError(cannot_resume(Brief(brief_dir(root, resume))))
            conflicts = _resume_conflicts(record, asked, None if auto else depth, key, refresh)
            if conflicts:
                raise InputError(
                    f"--resume {resume}: {'; '.join(conflicts)}; continue it with "
                    f"{resume_command(resume, record)}, or research anew without --resume"
                )
            if key is None and not record.corpus:
                raise InputError(
                    f"--resume {resume}: the run records no corpus; pass the --corpus it searched"
                )
            key = key or record.corpus
            depth = record.depth
            auto = False  # the record's depth was decided when it was planned
        # auto: the caps of a full run are the ceiling; the planner may choose less.
        run_depth: Depth = "full" if depth in ("full", "auto") else "quick"
        adapter = open_source(key, root, progress, options=options)  # indexing reports
        limits = default_limits(run_depth)
        if max_usd is not None:
            limits = limits.lowered(usd=max_usd)
        request = RunRequest(
            question=asked,
            state_dir=root,
            depth=run_depth,
            resume=resume,
            refresh=refresh,
            corpus=key or "",
            auto_depth=auto,
        )
        return start(request, adapter, chosen, settings, limits, progress)
