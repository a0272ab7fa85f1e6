"""What a person follows of a workflow run: one line per finished phase, with its figure.

The workflow (``workflows/research-run.js``) runs in the background; ``deep-research step``
keeps its current step in ``<brief>/workflow-step.json``. Two readers show the same lines:

* the script ticks each phase in ``/workflows`` — the ones code runs inside ``step`` (normalize,
  trace, triangulate, …) included — from the ``finished`` list each step carries
  (:func:`finished_between`, :func:`phase_line`);
* ``deep-research wait B`` (:func:`wait`), which the skill calls while the workflow runs, prints
  the lines of the phases that finished, and returns within a bound below Claude Code's Bash
  timeout. The main loop keeps its turn by calling it again, so ``claude -p`` — which stops
  background work a while after the main loop's last turn — waits for the verdict.

Every figure is read from the brief's own files, tolerantly: a file not written yet, or not
readable, gives the plain word ``done``; a progress line never fails a run.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from deep_research.brief.writers import atomic_write_json
from deep_research.depth import normalize_depth
from deep_research.errors import InputError
from deep_research.run.pipeline import phase_names

#: The longest one ``wait`` call blocks: below the 120 s Claude Code gives a Bash call by default,
#: so the call returns with its lines before the tool would kill it.
WAIT_BOUND_S = 90
#: How often ``wait`` reads the brief's step.
POLL_S = 2.0
#: What the skill is called with to relaunch the workflow on a brief a stopped run left.
RESUME = "/deep-research:deep-research --resume {brief}"
#: The phases ``wait`` has printed, so a phase finished between two calls is printed once.
SHOWN_FILE = "wait-progress.json"
WORKFLOW_STEP_FILE = "workflow-step.json"


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _lines(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return []
    rows = []
    for line in text.splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue
    return rows


def _entry(root: Path, name: str) -> dict[str, Any]:
    trace = _json(root / "trace.json")
    phases = trace.get("phases") if isinstance(trace, dict) else None
    entry = phases.get(name) if isinstance(phases, dict) else None
    return entry if isinstance(entry, dict) else {}


def _claims(root: Path) -> dict[str, Any]:
    value = _json(root / "claims.json")
    return value if isinstance(value, dict) else {}


def _count(value: Any) -> int:
    return len(value) if isinstance(value, list | dict) else 0


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _plan(root: Path) -> str:
    plan = _json(root / "plan.json")
    n = _count(plan.get("sub_questions")) if isinstance(plan, dict) else 0
    return _plural(n, "sub-question")


def _fetched(root: Path) -> str:
    rows = _lines(root / "fetch-log.jsonl")
    ok = sum(1 for row in rows if isinstance(row, dict) and row.get("outcome") == "ok")
    return f"{_plural(ok, 'page')} fetched and kept"


def _sources(root: Path) -> str:
    return f"{_plural(len(_lines(root / 'sources.jsonl')), 'source')} read"


def _round2(root: Path) -> str:
    return f"{_sources(root)} in all, {_fetched(root)}"


def _candidates(root: Path) -> str:
    return _plural(_count(_claims(root).get("claims")), "candidate claim")


def _entailed(root: Path) -> str:
    return f"{_plural(_count(_entry(root, 'entail').get('checked')), 'claim-source pair')} judged"


def _votes(root: Path) -> str:
    raw = _entry(root, "votes").get("raw")
    n = sum(_count(v) for v in raw.values()) if isinstance(raw, dict) else 0
    return f"{_plural(n, 'vote')} counted"


def _ciber(root: Path) -> str:
    entry = _entry(root, "ciber")
    if isinstance(entry.get("ciber_skipped"), str):
        return f"skipped ({entry['ciber_skipped']})"
    passed = entry.get("ciber_passed")
    return "done" if passed is None else ("passed" if passed else "failed")


def _synthesized(root: Path) -> str:
    return "answer written" if _claims(root).get("synthesis") else "done"


def _verdict(root: Path) -> str:
    verdict = _claims(root).get("verdict")
    return f"verdict {verdict}" if isinstance(verdict, str) else "done"


def _rendered(root: Path) -> str:
    return "report.md written" if (root / "report.md").exists() else "done"


def _recorded(phase: str, entry: dict[str, Any]) -> str:
    """The figures a phase keeps in its own trace.json entry; ``done`` until it holds them all,
    each a number."""
    match phase, entry:
        case "trace", {"total_cites_checked": int() as cites, "supported": int() as supported}:
            return f"{_plural(cites, 'citation')} traced, {supported} supported"
        case "triangulate", {"triangulation_score": int() | float() as score, "claims": int() as n}:
            return f"{_plural(n, 'claim')}, agreement τ {score:.2f}"
        case "refetch", {"sampled": int() as sampled, "passed": int() as passed}:
            return f"{passed} of {_plural(sampled, 'sampled page')} still hold their quotes"
    return "done"


#: Each phase's figure, read from the brief once the phase is over; a phase not here says what
#: its trace.json entry records (:func:`_recorded`).
FIGURES: dict[str, Callable[[Path], str]] = {
    "plan": _plan,
    "cast": _fetched,
    "normalize": _sources,
    "round2": _round2,
    "claims": _candidates,
    "entail": _entailed,
    "panel": _votes,
    "ciber": _ciber,
    "synthesize": _synthesized,
    "verdict": _verdict,
    "render": _rendered,
}


def figure(root: Path, phase: str) -> str:
    """The figure of a finished ``phase``: what it counted, or why it was skipped."""
    entry = _entry(root, phase)
    skipped = entry.get("skipped")
    if isinstance(skipped, str):
        return f"skipped ({skipped})"
    reader = FIGURES.get(phase)
    return reader(root) if reader is not None else _recorded(phase, entry)


def phase_line(root: Path, phase: str, phases: Sequence[str]) -> str:
    """``phase 3/13 normalize: 24 sources read`` — the line both readers show."""
    where = f"{phases.index(phase) + 1}/{len(phases)}" if phase in phases else "?"
    return f"phase {where} {phase}: {figure(root, phase)}"


def finished_between(
    phases: Sequence[str], before: str | None, now: str, *, done: bool
) -> list[str]:
    """The phases that finished while the run moved from phase ``before`` (None: the start) to
    ``now``; ``done``: the run reached its verdict, so every phase is over."""
    start = phases.index(before) if before in phases else 0
    end = len(phases) if done else (phases.index(now) if now in phases else start)
    return list(phases[start:end])


# --- waiting ----------------------------------------------------------------------------------


def run_phases(root: Path) -> tuple[str, ...]:
    """The phases the run on the brief at ``root`` goes through, by its recorded depth."""
    run = _json(root / "run.json")
    depth = run.get("depth") if isinstance(run, dict) else None
    return phase_names(normalize_depth(depth) if isinstance(depth, str) else "full")


def _step(root: Path) -> tuple[str, str, str]:
    """(action, phase, why) of the workflow's current step; none yet: it is planning."""
    step = _json(root / WORKFLOW_STEP_FILE)
    if not isinstance(step, dict):
        return "dispatch", "plan", ""
    return str(step.get("action") or ""), str(step.get("phase") or ""), str(step.get("why") or "")


def _shown(root: Path) -> list[str]:
    value = _json(root / SHOWN_FILE)
    shown = value.get("shown") if isinstance(value, dict) else None
    return [p for p in shown if isinstance(p, str)] if isinstance(shown, list) else []


def wait(
    root: Path,
    seconds: float | None,
    say: Callable[[str], None],
    *,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Wait up to ``seconds`` (None: :data:`WAIT_BOUND_S`, the most it waits) for the workflow
    on the brief at ``root`` to end, saying one line per phase as it finishes; the last line
    says whether the run ended. True when it ended (a verdict, or a stop ``next`` takes over
    from)."""
    if not (root / "run.json").is_file():
        raise InputError(f"{root} is no brief of a plugin run (no run.json)")
    bound = float(WAIT_BOUND_S) if seconds is None else min(max(seconds, 0.0), WAIT_BOUND_S)
    phases = run_phases(root)
    deadline = clock() + bound
    while True:
        action, phase, why = _step(root)
        ended = action in ("done", "stop")
        finished = finished_between(phases, None, phase, done=action == "done")
        shown = _shown(root)
        new = [p for p in finished if p not in shown]
        for name in new:
            say(phase_line(root, name, phases))
        if new:
            atomic_write_json(root / SHOWN_FILE, {"shown": [*shown, *new]})
        if ended or clock() >= deadline:
            break
        sleep(min(POLL_S, max(deadline - clock(), 0.0)))
    next_words = f"run `deep-research next {root} --json`"
    if action == "done":
        say(f"ended: the research reached its verdict; {next_words}")
    elif action == "stop":
        say(f"ended: the workflow stopped ({why[:300]}); {next_words}")
    else:
        say(
            f"running: the research has not finished (now: {phase or 'plan'}); call "
            f"`deep-research wait {root}` again. If this session ends first, the research did "
            f"not finish: resume it with {RESUME.format(brief=root)}"
        )
    return ended
