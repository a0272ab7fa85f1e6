"""run.json: what ``deep-research start`` fixed for a plugin run — its question, depth, clock,
caps and settings — defined once, written by ``start`` and read only by
:meth:`deep_research.brief.layout.Brief.load_run`.

A plain dataclass checked by hand, not a pydantic model, and deliberately so: the hook guard
reads this record on every tool call of a run, in a process of its own, and importing pydantic
and building a model there would cost more than the guard's whole decision (the guard must not
load pydantic at all; tests/plugin/test_guard.py keeps the hook path light). Every other reader
goes through the same :meth:`StartRecord.from_json`, so the file has one definition.

The caps are re-clamped on read: an edited run.json can lower a cap, never raise one past
:data:`HARD_CAPS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from deep_research.depth import Depth, normalize_depth
from deep_research.errors import InputError, SchemaViolation

#: Hard ceilings. A requested cap above one of these is clamped to it, never honoured.
HARD_MAX_FETCHES = 200
HARD_MAX_FANOUT = 8
HARD_MAX_ROUNDS = 3
HARD_MAX_SEARCHES = 100
#: Defaults per depth (full meets the floors: ≥ 20 round-1 fetches, ≥ 30 sources, 2 rounds).
#: Searches: a full run needs 2 scout searches + 5 sub-questions × 4 queries × 2 rounds (42)
#: and ≥ 1 counter-query per sub-question (47); quick, 2 + 3 × 2 (8). The rest is headroom.
DEFAULT_CAPS: dict[str, dict[str, int]] = {
    "full": {"max_fetches": 120, "max_fanout": 6, "max_rounds": 2, "max_searches": 60},
    "quick": {"max_fetches": 40, "max_fanout": 4, "max_rounds": 1, "max_searches": 20},
}
HARD_CAPS: dict[str, int] = {
    "max_fetches": HARD_MAX_FETCHES,
    "max_fanout": HARD_MAX_FANOUT,
    "max_rounds": HARD_MAX_ROUNDS,
    "max_searches": HARD_MAX_SEARCHES,
}
#: What every schema message ends with: the record is ``start``'s, so only ``start`` mends it.
RESTART = "run.json is written by `deep-research start`; start the run again"


@dataclass(frozen=True)
class RunCaps:
    max_fetches: int
    max_fanout: int
    max_rounds: int
    max_searches: int


def clamp_caps(depth: Depth, requested: Mapping[str, int | None]) -> tuple[RunCaps, list[str]]:
    """The depth's defaults, overridden by requested values, each clamped to [1, hard cap];
    and a note per value that was clamped."""
    values: dict[str, int] = {}
    notes: list[str] = []
    for name, default in DEFAULT_CAPS[depth].items():
        wanted = requested.get(name)
        value = default if wanted is None else wanted
        clamped = max(1, min(value, HARD_CAPS[name]))
        if clamped != value:
            notes.append(f"{name} {value} clamped to {clamped}")
        values[name] = clamped
    return RunCaps(**values), notes


@dataclass(frozen=True)
class Replaced:
    """The brief a regenerated run moved aside: its verdict (FAIL is regenerated only once)."""

    verdict: str | None
    path: str


@dataclass(frozen=True)
class StartRecord:
    """One plugin run's run.json, field for field in the order ``start`` writes them."""

    topic: str
    slug: str
    depth: Depth
    started_at: datetime  # aware; written to the second
    caps: RunCaps
    clamped: tuple[str, ...] = ()
    #: ``Settings.as_record()`` at start; validated as settings by
    #: :func:`deep_research.settings.frozen_settings` (None: a run started before they were kept).
    settings: Mapping[str, Any] | None = None
    #: The reviewed MCP server ``start --mcp`` named.
    mcp: str | None = None
    replaces: Replaced | None = None

    def as_json(self) -> dict[str, Any]:
        """The record as run.json holds it; optional keys appear only when set."""
        value: dict[str, Any] = {
            "topic": self.topic,
            "slug": self.slug,
            "depth": self.depth,
            "started_at": self.started_at.isoformat(timespec="seconds"),
            "caps": asdict(self.caps),
            "clamped": list(self.clamped),
        }
        if self.settings is not None:
            value["settings"] = dict(self.settings)
        if self.mcp:
            value["mcp"] = self.mcp
        if self.replaces is not None:
            value["replaces"] = asdict(self.replaces)
        return value

    @classmethod
    def from_json(cls, value: Any, *, source: str) -> StartRecord:
        """The record in a parsed run.json, or SchemaViolation naming the first bad field."""
        fields = _Fields(value, source)
        try:
            depth = normalize_depth(fields.text("depth"))
        except InputError:
            raise fields.bad("depth", "must be quick or full") from None
        return cls(
            topic=fields.text("topic"),
            slug=fields.text("slug"),
            depth=depth,
            started_at=fields.moment("started_at"),
            caps=fields.caps(depth),
            clamped=fields.texts("clamped"),
            settings=fields.mapping("settings"),
            mcp=fields.optional_text("mcp"),
            replaces=fields.replaced("replaces"),
        )


class RecordedRun:
    """A run held with what ``start`` recorded of it (``record``): its depth and caps, read
    through it."""

    record: StartRecord

    @property
    def depth(self) -> Depth:
        return self.record.depth

    @property
    def caps(self) -> RunCaps:
        return self.record.caps


class _Fields:
    """run.json's fields, each checked as it is taken."""

    def __init__(self, value: Any, source: str) -> None:
        if not isinstance(value, dict):
            raise SchemaViolation(f"expected a JSON object; {RESTART}", source=source)
        self.value = value
        self.source = source

    def bad(self, name: str, problem: str) -> SchemaViolation:
        return SchemaViolation(f"{problem}; {RESTART}", json_path=f"$.{name}", source=self.source)

    def text(self, name: str) -> str:
        found = self.value.get(name)
        if not isinstance(found, str) or not found:
            raise self.bad(name, "missing, or not a non-empty string")
        return found

    def optional_text(self, name: str) -> str | None:
        return self.text(name) if self.value.get(name) is not None else None

    def texts(self, name: str) -> tuple[str, ...]:
        found = self.value.get(name, [])
        if not isinstance(found, list) or not all(isinstance(item, str) for item in found):
            raise self.bad(name, "must be a list of strings")
        return tuple(found)

    def mapping(self, name: str) -> dict[str, Any] | None:
        found = self.value.get(name)
        if found is not None and not isinstance(found, dict):
            raise self.bad(name, "must be a JSON object")
        return found

    def moment(self, name: str) -> datetime:
        try:
            found = datetime.fromisoformat(self.text(name))
        except ValueError:
            raise self.bad(name, "is not an ISO 8601 time") from None
        if found.tzinfo is None:
            raise self.bad(name, "has no time zone")
        return found

    def caps(self, depth: Depth) -> RunCaps:
        found = self.value.get("caps")
        if not isinstance(found, dict):
            raise self.bad("caps", "missing, or not a JSON object")
        numbers: dict[str, int] = {}
        for name, default in DEFAULT_CAPS[depth].items():
            # A run started before the search cap existed gets its depth's default for it.
            number = found.get(name, default if name == "max_searches" else None)
            if not isinstance(number, int) or isinstance(number, bool):
                raise self.bad(f"caps.{name}", "missing, or not a whole number")
            # Re-clamped on read: an edited run.json cannot raise a cap either.
            numbers[name] = max(1, min(number, HARD_CAPS[name]))
        return RunCaps(**numbers)

    def replaced(self, name: str) -> Replaced | None:
        found = self.value.get(name)
        if found is None:
            return None
        verdict = found.get("verdict") if isinstance(found, dict) else None
        path = found.get("path") if isinstance(found, dict) else None
        if not isinstance(path, str) or not (verdict is None or isinstance(verdict, str)):
            raise self.bad(name, 'must be {"verdict": <verdict or null>, "path": <folder>}')
        return Replaced(verdict, path)
