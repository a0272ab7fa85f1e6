"""The active run inside Claude Code: its caps, and the ledger the hooks keep.

``deep-research start`` (the orchestrator's first call) creates the brief, writes ``run.json``
with the run's caps — each requested value clamped to a hard constant the model cannot raise —
writes the static host allow-list, and points ``<state>/active-run.json`` at the brief and at the
Claude Code session that started it (the run confines that session, no other in the project).
The PreToolUse guard (:mod:`deep_research.plugin.guard`) reads those caps and appends every
fetch, WebSearch and agent dispatch it lets through to ``<brief>/guard-log.jsonl``, under an
exclusive lock, so parallel hook processes count exactly. The ledger holds hosts and ids only:
never a URL's path or query, nor a search's query (that is where an exfiltration attempt
carries its payload).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deep_research.brief.layout import Brief, brief_dir, slugify, supersede
from deep_research.brief.readers import jsonl_records, parse_json, read_text
from deep_research.brief.start_record import (
    HARD_MAX_ROUNDS,
    RecordedRun,
    Replaced,
    StartRecord,
    clamp_caps,
)
from deep_research.brief.writers import atomic_write_json, jsonl_line
from deep_research.depth import Depth, normalize_depth
from deep_research.errors import DeepResearchError, InputError, MissingArtifact, SchemaViolation
from deep_research.fetch.hosts import add_hosts

if TYPE_CHECKING:
    from deep_research.decide.counters import RoundSearches

#: A plan holds at most this many sub-questions, and a run at most this many fetcher dispatches.
HARD_MAX_SUB_QUESTIONS = 8
#: Per sub-question and round: the fetcher, its one retry, the round's one top-up.
FETCHERS_PER_TASK = 3
HARD_MAX_FETCHER_DISPATCHES = (FETCHERS_PER_TASK + 1) * HARD_MAX_SUB_QUESTIONS * HARD_MAX_ROUNDS
#: An agent dispatch with no completion after this long no longer counts as in flight.
STALE_DISPATCH_S = 3600.0


def fetcher_dispatches(run: StartRecord, planned_sub_questions: int | None) -> int:
    """The run's fetcher dispatches, sized from its plan: per sub-question and round one
    fetcher, one retry if it comes back incomplete and one top-up if the round falls short of
    its floor (and an mcp-fetcher beside each fetcher when the run names an MCP server) — never
    above the hard ceiling. Before a plan exists, one fan-out per round."""
    caps = run.caps
    if planned_sub_questions is None:
        return caps.max_fanout * caps.max_rounds
    planned = max(1, min(planned_sub_questions, HARD_MAX_SUB_QUESTIONS))
    per_task = FETCHERS_PER_TASK + (1 if run.mcp else 0)
    return min(HARD_MAX_FETCHER_DISPATCHES, planned * caps.max_rounds * per_task)


@dataclass(frozen=True)
class ActiveRun(RecordedRun):
    """The run the hooks enforce: its brief, what ``start`` recorded for it, and the Claude Code
    session it was started in (None: started outside one)."""

    brief: Path
    record: StartRecord
    session: str | None = None

    def guards(self, session_id: object) -> bool:
        """Whether the run confines a call of ``session_id``: its own session's calls (its
        subagents and workflow agents carry the same id, in 2.1.197 and 2.1.332 alike); every
        session's when ``start`` knew of none; and a call that names no session (fail closed)."""
        if self.session is None or not isinstance(session_id, str) or not session_id:
            return True
        return session_id == self.session


def state_dir(explicit: str | None = None, project_dir: str | None = None) -> Path:
    """``--state``, else ``$DEEP_RESEARCH_STATE``, else ``<project>/state``."""
    if explicit:
        return Path(explicit)
    if env := os.environ.get("DEEP_RESEARCH_STATE"):
        return Path(env)
    return Path(project_dir or ".") / "state"


def pointer_path(state: Path) -> Path:
    return state / "active-run.json"


# --- the session's run ----------------------------------------------------------------------
#
# Claude Code keeps a Bash shell's working directory between commands and gives Bash no
# CLAUDE_PROJECT_DIR, while hooks resolve the state folder from the project. A run started after
# a `cd` would land where the hooks never look, and its caps would go unenforced. So `start`
# also records, per Claude Code session (CLAUDE_CODE_SESSION_ID in Bash, ``session_id`` in hook
# events — the same id, subagents included), which state folder holds the run.

SESSION_ENV = "CLAUDE_CODE_SESSION_ID"
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def sessions_dir() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "deep-research" / "sessions"


def session_id_of(value: object) -> str | None:
    """``value`` when it is a well-formed session id (a file name, a word hooks/guard reads
    without a JSON parser), else None."""
    return value if isinstance(value, str) and _SESSION_ID.fullmatch(value) else None


def session_record(session_id: object) -> Path | None:
    """Where a session's run is recorded; None for a missing or malformed id."""
    checked = session_id_of(session_id)
    return None if checked is None else sessions_dir() / f"{checked}.json"


def current_session() -> str | None:
    """This process's Claude Code session id (Bash commands get it), or None outside one."""
    return session_id_of(os.environ.get(SESSION_ENV))


def register_session(state: Path) -> None:
    """Record ``state`` as this Claude Code session's state folder (no-op outside a session)."""
    record = session_record(current_session())
    if record is not None:
        record.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(record, {"state": str(state.resolve())})


def session_state(session_id: object) -> Path | None:
    """The state folder a session's run was started in, if `start` recorded one."""
    record = session_record(session_id)
    if record is None or not record.is_file():
        return None
    value = parse_json(read_text(record, what="session record"), what=str(record))
    if not isinstance(value, dict) or not isinstance(value.get("state"), str):
        raise SchemaViolation('expected {"state": "<dir>"}', source=str(record))
    return Path(value["state"])


def forget_session(state: Path) -> None:
    """Drop this session's record when it names ``state``."""
    session_id = os.environ.get(SESSION_ENV)
    record = session_record(session_id)
    known = session_state(session_id) if record is not None else None
    if record is not None and known is not None and known.resolve() == state.resolve():
        record.unlink(missing_ok=True)


def cli_state_dir(explicit: str | None) -> Path:
    """The state folder for `start`/`finish`: ``--state``, ``$DEEP_RESEARCH_STATE``, the
    session's recorded folder, else ``./state``."""
    if explicit or os.environ.get("DEEP_RESEARCH_STATE"):
        return state_dir(explicit)
    return session_state(os.environ.get(SESSION_ENV)) or state_dir(None)


def start_run(
    topic: str,
    *,
    depth: str,
    state: Path,
    requested: dict[str, int | None],
    static_hosts: list[str],
    mcp: str | None = None,
) -> dict[str, Any]:
    """Create (or reopen) the brief, record its caps, make it the active run. ``mcp``: a
    reviewed MCP server the run also researches through (``next`` gates it, then dispatches an
    mcp-fetcher beside each fetcher). The run belongs to the Claude Code session ``start`` runs
    in (:func:`current_session`; outside one, to every session)."""
    run_depth = normalize_depth(depth)
    caps, notes = clamp_caps(run_depth, requested)
    # Imported here: the settings model is pydantic, and the hook path never starts a run.
    from deep_research.settings import load_settings

    # Fixed here, once: every gate of the run decides under them (settings.settings_for).
    settings = load_settings()
    root = brief_dir(state, slugify(topic)).resolve()
    superseded = None
    replaced = None
    if root.exists() and _regenerate(Brief(root), run_depth, settings):
        verdict = _verdict_of(Brief(root))
        superseded = supersede(root)
        replaced = Replaced(verdict, str(superseded))
    root.mkdir(parents=True, exist_ok=True)
    brief = Brief(root)
    existing = brief.claims_path.exists()
    # A decided brief reused as it stands keeps the record of the run that decided it: the
    # start its wall clock counts from, its settings and caps, and the ledger its counters read
    # (`verify --offline` re-derives them from both).
    record = _decided_record(brief) if superseded is None else None
    if record is None:
        record = StartRecord(
            topic=topic,
            slug=root.name,
            depth=run_depth,
            started_at=datetime.now(UTC).replace(microsecond=0),
            caps=caps,
            clamped=tuple(notes),
            settings=settings.as_record(),
            mcp=mcp,
            # What this run replaces: `next` regenerates a FAIL brief once, not a second time.
            replaces=replaced,
        ).as_json()
        atomic_write_json(brief.run_path, record)
        ledger_path(brief).unlink(missing_ok=True)  # a new run starts with a fresh budget
    add_hosts(brief, static_hosts, static=True)
    point_at(state, root, current_session())
    moved = {"superseded": str(superseded)} if superseded is not None else {}
    return {"brief": str(root), "existing_brief": existing, **moved, **record}


def _decided_record(brief: Brief) -> dict[str, Any] | None:
    """The run record of a brief that holds a verdict (one ``start`` reuses), else None."""
    if not brief.run_path.exists() or _verdict_of(brief) is None:
        return None
    try:
        return brief.load_run().as_json()
    except DeepResearchError:
        return None


def _verdict_of(brief: Brief) -> str | None:
    try:
        from deep_research.brief.record import decided_verdict

        if not brief.claims_path.exists():
            return None
        return decided_verdict(brief, brief.load_claims())
    except DeepResearchError:
        return None


def _regenerate(brief: Brief, depth: Depth, settings: Any) -> bool:
    """Whether an existing brief must make way for a new run rather than be reopened.

    A decided brief is reopened only when freshness says reuse (its verdict then stands and
    ``next`` prints it); FAIL, stale, quick-depth or unreadable briefs are moved aside whole.
    An unfinished brief is reopened to continue, unless it was started at another depth.
    """
    from deep_research.decide.freshness import decide

    try:
        document = brief.load_claims() if brief.claims_path.exists() else None
        recorded = brief.load_run() if brief.run_path.exists() else None
    except DeepResearchError:
        return True
    if document is not None and _verdict_of(brief) is not None:
        return decide(document, datetime.now(UTC).date(), settings).decision != "reuse"
    return recorded is not None and recorded.depth != depth


def finish_run(state: Path, brief_dir: Path) -> bool:
    """Clear the active-run pointer if it names ``brief_dir``; True when it did."""
    active = read_pointer(state)
    if active is None or active.resolve() != brief_dir.resolve():
        if not brief_dir.is_dir():
            # Nothing to end and nothing there: a mistyped name, not a finished run.
            raise MissingArtifact(f"brief directory not found: {brief_dir}; name the run's brief")
        return False
    pointer_path(state).unlink(missing_ok=True)
    return True


#: The ledger row of a run taken over by another session (``resume``): a workflow launched
#: before it is no longer running, whatever its idle time says.
RESUME_EVENT = "resume"


def resume_run(state: Path, brief_dir: Path) -> bool:
    """Make the active run on ``brief_dir`` this Claude Code session's (the session it
    confines), so a session that did not start it can relaunch its workflow: a ``claude -p``
    the CLI stopped leaves its run to the next one. True when it changed the owner."""
    pointer = _pointer(state)
    if pointer is None or pointer[0].resolve() != brief_dir.resolve():
        if not brief_dir.is_dir():
            raise MissingArtifact(f"brief directory not found: {brief_dir}; name the run's brief")
        raise InputError(
            f"no unfinished run on {brief_dir} is active in {state}; research it again with "
            "/deep-research:deep-research <question>"
        )
    root, owner = pointer
    session = current_session()
    brief = Brief(root)
    with locked(brief):
        point_at(state, root, session)
        append_ledger(brief, {"event": RESUME_EVENT, "from": owner, "to": session})
    register_session(state)
    return owner != session


def point_at(state: Path, root: Path, session: str | None) -> None:
    """Make the run on ``root`` the active one, confining ``session`` (every session: None)."""
    # hooks/guard reads the session from this file without a JSON parser: a word of
    # [A-Za-z0-9_-], on its own line as dump_json writes it.
    owner = {"session": session} if session is not None else {}
    atomic_write_json(pointer_path(state), {"brief": str(root), **owner})


def read_pointer(state: Path) -> Path | None:
    pointer = _pointer(state)
    return None if pointer is None else pointer[0]


def _pointer(state: Path) -> tuple[Path, str | None] | None:
    """The active run's brief and session, or None when no run is active. A session id that is
    not one (edited by hand) is read as none: the run then confines every session."""
    path = pointer_path(state)
    if not path.exists():
        return None
    value = parse_json(read_text(path, what="active-run.json"), what=str(path))
    if not isinstance(value, dict) or not isinstance(value.get("brief"), str):
        raise SchemaViolation('expected {"brief": "<dir>"}', source=str(path))
    return Path(value["brief"]), session_id_of(value.get("session"))


def load_active(state: Path) -> ActiveRun | None:
    """The active run, or None when there is none. A broken record raises (callers fail closed)."""
    pointer = _pointer(state)
    if pointer is None:
        return None
    root, session = pointer
    return ActiveRun(root, Brief(root).load_run(), session)


# --- the ledger -----------------------------------------------------------------------------


def ledger_path(brief: Brief) -> Path:
    return brief.root / "guard-log.jsonl"


@contextmanager
def locked(brief: Brief) -> Iterator[None]:
    """Exclusive across processes: parallel hooks read-count-append one at a time."""
    with (brief.root / ".guard.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def read_ledger(brief: Brief) -> list[dict[str, Any]]:
    path = ledger_path(brief)
    if not path.exists():
        return []
    rows: list[dict[str, Any]] = []
    for line in jsonl_records(path.read_text(encoding="utf-8")):
        if not line.strip():
            continue
        row = json.loads(line)  # a corrupt ledger raises: the guard then fails closed
        if isinstance(row, dict):
            rows.append(row)
    return rows


def fetcher_rounds(brief: Brief) -> list[int] | None:
    """The round of every fetcher dispatch the guard let through (what `counters` caps a run's
    rounds by), or None when the brief has no ledger: it was assembled outside a plugin run."""
    if not ledger_path(brief).exists():
        return None
    return [
        int(row.get("round") or 1)
        for row in read_ledger(brief)
        if row.get("event") == "dispatch" and row.get("fetcher")
    ]


def planned_sub_questions(brief: Brief) -> int | None:
    """How many sub-questions the run's plan.json holds; None while it has no readable plan."""
    from deep_research.decide.counters import load_plan

    try:
        return len(load_plan(brief.root / "plan.json").sub_questions)
    except (OSError, DeepResearchError):
        return None


def fetcher_budget(brief: Brief, run: StartRecord) -> int:
    """The one definition of a run's fetcher dispatches, read by the guard and by ``next``."""
    return fetcher_dispatches(run, planned_sub_questions(brief))


def append_ledger(brief: Brief, row: dict[str, Any]) -> None:
    stamped = {"at": datetime.now(UTC).timestamp(), **row}
    with ledger_path(brief).open("a", encoding="utf-8") as handle:
        handle.write(jsonl_line(stamped, sort_keys=True))
        handle.flush()
        os.fsync(handle.fileno())


def in_flight(rows: list[dict[str, Any]], now: float) -> int:
    """Agent dispatches without a completion, ignoring those older than the stale limit. A
    workflow's agents are not among them: the workflow starts one step's tasks at a time, never
    more than the fan-out ceiling (``next`` sizes each step), and reports no completion here."""
    done = {row.get("id") for row in rows if row.get("event") == "done"}
    return sum(
        1
        for row in rows
        if row.get("event") == "dispatch"
        and row.get("via") != "workflow"
        and row.get("id") not in done
        and now - float(row.get("at", 0.0)) < STALE_DISPATCH_S
    )


def round_searches(brief: Brief) -> list[RoundSearches]:
    """Each research round as the ledger recorded it (what `counters` counts a round's work and
    the searches' exhaustion from): its fetcher dispatches, and the searches from its first
    dispatch until a later round's first, with every host they listed (a search's listing is
    matched by its id: one the hook never recorded is counted as unlisted)."""
    from deep_research.decide.counters import RoundSearches

    rows = read_ledger(brief) if ledger_path(brief).exists() else []
    dispatched = [
        (index, int(row.get("round") or 1))
        for index, row in enumerate(rows)
        if row.get("event") == "dispatch" and row.get("fetcher")
    ]
    found = []
    for round_ in sorted({r for _, r in dispatched}):
        first = min(i for i, r in dispatched if r == round_)
        end = min((i for i, r in dispatched if r > round_ and i > first), default=len(rows))
        window = rows[first:end]
        searches = [row.get("id") for row in window if row.get("event") == "search"]
        recorded = {row.get("id") for row in rows if row.get("event") == "listed"}
        found.append(
            RoundSearches(
                round=round_,
                fetchers=sum(1 for _, r in dispatched if r == round_),
                searches=len(searches),
                unlisted=sum(1 for search in searches if search not in recorded),
                listed=frozenset(
                    str(host)
                    for row in window
                    if row.get("event") == "listed"
                    for host in row.get("hosts") or []
                ),
            )
        )
    return found


def unread_listed(brief: Brief) -> list[str]:
    """The hosts the run's searches listed so far that it has neither read nor tried: where a
    top-up can still find a source (none: a top-up could only fetch pages already read)."""
    from deep_research.decide.counters import search_work

    sources = brief.load_sources() if brief.sources_path.exists() else []
    return list(search_work(round_searches(brief), sources, brief.load_fetch_log()).unread)
