"""Reading the brief's mutable artifacts together and writing them back in one locked step.

Every gate after ``trace`` reads claims.json and trace.json, decides, and writes both. Reading
both before the first write means a malformed trace.json can never leave claims.json updated and
trace.json stale; holding the lock from before the first read (:func:`writes_brief`) keeps a
second writer from deciding on what the first is about to replace.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from deep_research.brief.layout import Brief
from deep_research.brief.writers import atomic_write_json, model_dump, write_claims
from deep_research.errors import MissingArtifact
from deep_research.models import ClaimsFile, PhaseRecord, TraceEntryName, TraceFile, Verdict
from deep_research.settings import Settings, settings_hash


def open_brief(root: Path) -> Brief:
    if not root.is_dir():
        raise MissingArtifact(f"brief directory not found: {root}; pass the brief's folder")
    return Brief(root)


P = ParamSpec("P")
R = TypeVar("R")


def writes_brief(run: Callable[Concatenate[Path, P], R]) -> Callable[Concatenate[Path, P], R]:
    """``run(root, …)`` under the brief's lock, taken before its first read and kept past its
    last write: what it decides from is what it replaces, never a file another writer is about
    to change. A busy brief refuses (exit 3) before anything is read."""

    @functools.wraps(run)
    def locked(root: Path, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with open_brief(root).lock():
            return run(root, *args, **kwargs)

    return locked


def load_trace_or_empty(brief: Brief) -> TraceFile:
    return brief.load_trace() if brief.trace_path.exists() else TraceFile()


def decided_verdict(brief: Brief, document: ClaimsFile) -> Verdict | None:
    """``document``'s verdict when code decided it (trace.json records the verdict phase): a
    verdict in a file no verdict phase wrote is a model's draft, and no verdict at all."""
    return document.verdict if "verdict" in load_trace_or_empty(brief).phases else None


def record_phase(
    trace: TraceFile, phase: TraceEntryName, record: PhaseRecord, settings: Settings
) -> TraceFile:
    """trace.json with ``phase`` replaced by ``record`` — its ``settings_hash`` the settings in
    force — and those settings recorded beside it."""
    digest = settings_hash(settings)
    if "settings_hash" not in type(record).model_fields:
        raise TypeError(f"{type(record).__name__} has no settings_hash to record")
    stamped = record.model_copy(update={"settings_hash": digest})
    return trace.with_phase(phase, stamped).model_copy(
        update={"settings": settings.as_record(), "settings_hash": digest}
    )


def save(brief: Brief, claims: ClaimsFile, trace: TraceFile) -> None:
    """Write claims.json and trace.json; call inside ``brief.lock()`` (see :func:`writes_brief`)."""
    write_claims(brief.claims_path, claims)
    atomic_write_json(brief.trace_path, model_dump(trace))
