"""The tasks ``deep-research next`` dispatches to agents: typed records, and their prompts.

A task's prompt is what its agent reads (agents/*.md name the fields) and what the hook guard
checks before the dispatch runs, so both directions live here and nowhere else:
:meth:`Task.prompt` writes a record as text, :func:`parse` reads text back as a record.

The text is ``key=value`` fields, one space apart, in the order the record declares them. A
value is written bare when it is one word (no whitespace, not opening with a quote or bracket)
and as JSON otherwise: a path or scope line with spaces is a JSON string, a query list a JSON
array, an MCP gate result a JSON object. :func:`parse` admits only that exact text — each field
once, in its place, spelled as :meth:`Task.prompt` spells it (the record is written again and
compared). A field with a default is written only when it holds something else, and read as
its default when absent. Each shape has its own fields, so a text is at most one task, and the
task names the agent it is for. Anything else is no task at all: the guard denies it during a
run.

A judging task (triangulator, verifier, skeptic, CIBER) reads everything it judges from one
file, its ``input``: code writes it when ``next`` issues the task
(:mod:`deep_research.plugin.inputs`), under ``<brief>/inputs/`` named by the task, and the task
names no other one — a prompt whose ``input`` is not the file of its own task is no task.

Light by design (dataclasses and json only): the hook guard imports it on every tool call.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Any, ClassVar, Literal

#: Claude Code names a plugin's agents ``<plugin>:<agent>``; ours is ``deep-research``.
PLUGIN = "deep-research"

Kind = Literal["word", "text", "count", "strings", "object"]
#: How each field's value is written and read; a field name means the same in every task.
FIELD_KINDS: dict[str, Kind] = {
    "brief": "text",
    "sub_question": "word",
    "question": "text",
    "round": "count",
    "purpose": "word",
    "queries": "strings",
    "scope": "text",
    "exclude_hosts": "strings",
    "read_hosts": "strings",
    "mcp": "word",
    "gate": "object",
    "claim_id": "word",
    "source_ids": "strings",
    "input": "text",
    "top_n": "count",
    "k_per_claim": "count",
}
#: The folder of a brief the judging tasks' input files are written in.
INPUTS = "inputs"
#: Each judging agent's input file (in :data:`INPUTS`, ``.md``), named by its task's fields, a
#: tuple's items joined by ``-``: ``triangulate-r2``, ``verify-C1-S2-S3``, ``skeptic-C1``.
INPUT_NAMES: dict[str, str] = {
    "triangulator": "triangulate-r{round}",
    "verifier": "verify-{claim_id}-{source_ids}",
    "skeptic": "skeptic-{claim_id}",
    "ciber": "ciber",
}
#: Far longer than any prompt ``next`` builds (an MCP gate's tool list included); a longer text
#: is no task, unread.
MAX_PROMPT = 65_536
#: What a ``word`` may hold: plan ids (sq1), claim and source ids (C1, S1), MCP server names.
WORD_CHARACTERS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_OPENS_JSON = ('"', "[", "{")


@dataclass(frozen=True)
class Task:
    """One agent's task. Subclasses name their agent and declare their fields in prompt order,
    after the brief every task works on (the guard holds it to the active run's)."""

    agent: ClassVar[str]
    brief: str

    @classmethod
    def agent_type(cls) -> str:
        """The ``subagent_type`` the task is dispatched as."""
        return f"{PLUGIN}:{cls.agent}"

    def prompt(self) -> str:
        return " ".join(
            f"{item.name}={_write(FIELD_KINDS[item.name], getattr(self, item.name))}"
            for item in fields(self)
            if not _optional(item) or getattr(self, item.name) != item.default
        )


def _optional(item: Field[Any]) -> bool:
    return item.default is not MISSING


#: A fetcher's ``purpose`` in round 2: its queries are counter-queries.
COUNTER_EVIDENCE = "counter-evidence"


@dataclass(frozen=True)
class FetchTask(Task):
    """agents/fetcher.md: one sub-question's queries in one round (a retry and a top-up too).
    ``question``: the sub-question's text; ``purpose``: :data:`COUNTER_EVIDENCE` for round 2's
    counter-queries; ``exclude_hosts``: for a top-up, the hosts the run has already fetched;
    ``read_hosts``: for round 2, the hosts already read, to search past first."""

    agent: ClassVar[str] = "fetcher"
    sub_question: str
    round: int
    queries: tuple[str, ...]
    scope: str
    question: str = ""
    purpose: str = ""
    exclude_hosts: tuple[str, ...] = ()
    read_hosts: tuple[str, ...] = ()

    @property
    def top_up(self) -> bool:
        """A round's top-up fetcher: the one sent to find publishers the run has not fetched."""
        return bool(self.exclude_hosts)

    def ledger_marks(self) -> dict[str, Any]:
        """What the guard's ledger records of this dispatch beyond its round: for a top-up, that
        it is one and the hosts it must leave aside."""
        return {"top_up": True, "exclude_hosts": list(self.exclude_hosts)} if self.top_up else {}


@dataclass(frozen=True)
class McpFetchTask(Task):
    """agents/mcp-fetcher.md: the same sub-question through the run's gated MCP server, told
    its text (``question``) and, in round 2, that its queries look for counter-evidence."""

    agent: ClassVar[str] = "mcp-fetcher"
    sub_question: str
    round: int
    queries: tuple[str, ...]
    scope: str
    mcp: str
    gate: Mapping[str, Any]
    question: str = ""
    purpose: str = ""


@dataclass(frozen=True)
class JudgingTask(Task):
    """A task whose agent reads one file: ``input``, written by code for this task alone.

    Left empty, ``input`` is the task's own file; given, it must be that file."""

    #: Keyword-only, so it is written second (after ``brief``) and given by name, if at all.
    input: str = field(default="", kw_only=True)

    def input_name(self) -> str:
        """The name of the task's input file: its agent's :data:`INPUT_NAMES` entry, filled in."""
        values = ((item.name, getattr(self, item.name)) for item in fields(self))
        return INPUT_NAMES[self.agent].format_map(
            {name: "-".join(value) if isinstance(value, tuple) else value for name, value in values}
        )

    def __post_init__(self) -> None:
        own = input_path(self.brief, self.input_name())
        if not self.input:
            object.__setattr__(self, "input", own)
        elif self.input != own:
            raise ValueError(f"{self.input!r} is not the input file of this task ({own})")


def input_path(brief: str, name: str) -> str:
    """The file a judging task's agent reads: ``<brief>/inputs/<name>.md``."""
    return os.path.join(brief, INPUTS, f"{name}.md")


@dataclass(frozen=True)
class TriangulateTask(JudgingTask):
    """agents/triangulator.md: the claim graph once the last round is in."""

    agent: ClassVar[str] = "triangulator"
    round: int


#: The most (claim, source) pairs one verifier judges: every source of a claim in one reply
#: (claims cite a few), and a claim citing more is split, so an input and a reply stay small.
MAX_PAIRS_PER_VERIFIER = 4


@dataclass(frozen=True)
class VerifyTask(JudgingTask):
    """agents/verifier.md: does each source's located text entail one claim (one judgement per
    source, at most :data:`MAX_PAIRS_PER_VERIFIER`, each a distinct word like ``S3``)."""

    agent: ClassVar[str] = "verifier"
    claim_id: str
    source_ids: tuple[str, ...]

    def __post_init__(self) -> None:
        # The ids name the task's input file: only words, so no id reaches another file.
        ids = self.source_ids
        if not 1 <= len(ids) <= MAX_PAIRS_PER_VERIFIER or len(set(ids)) != len(ids):
            raise ValueError(f"a verifier judges 1 to {MAX_PAIRS_PER_VERIFIER} distinct sources")
        if not all(_is_word(source) for source in ids):
            raise ValueError("a source id is one word")
        super().__post_init__()


@dataclass(frozen=True)
class SkepticTask(JudgingTask):
    """agents/skeptic.md: one vote on one claim (every vote on it reads the same file)."""

    agent: ClassVar[str] = "skeptic"
    claim_id: str


@dataclass(frozen=True)
class CiberTask(JudgingTask):
    """agents/ciber.md: re-framings of the top high-confidence claims."""

    agent: ClassVar[str] = "ciber"
    top_n: int
    k_per_claim: int


TASKS: dict[str, type[Task]] = {
    kind.agent_type(): kind
    for kind in (FetchTask, McpFetchTask, TriangulateTask, VerifyTask, SkepticTask, CiberTask)
}
#: The tasks that fetch: each dispatch counts against the run's fetcher budget.
FETCHING: tuple[type[Task], ...] = (FetchTask, McpFetchTask)


def declared_round(task: Task) -> int | None:
    """The research round a task belongs to, for the tasks that name one."""
    value = getattr(task, "round", None)
    return value if isinstance(value, int) else None


def parse(prompt: str) -> Task | None:
    """The task ``prompt`` is, or None when it is not exactly one of ours — to the character,
    surrounding whitespace included. Never raises: whatever cannot be read is no task."""
    if len(prompt) > MAX_PROMPT:
        return None
    for kind in TASKS.values():
        task = _parse_as(kind, prompt)
        if task is not None:
            return task
    return None


def _parse_as(kind: type[Task], text: str) -> Task | None:
    values: dict[str, Any] = {}
    position = 0
    try:
        for index, item in enumerate(fields(kind)):
            key = f"{' ' if index else ''}{item.name}="
            if not text.startswith(key, position):
                if _optional(item):
                    continue  # absent: its default
                return None
            value, position = _read(FIELD_KINDS[item.name], text, position + len(key))
            values[item.name] = value
        if position != len(text):
            return None
        task = kind(**values)
        # Whatever the reading tolerated (a bare word JSON-quoted, JSON spacing, 01 for 1),
        # only the text the record writes is the task's prompt.
        return task if task.prompt() == text else None
    except (ValueError, TypeError, RecursionError):
        return None


def _write(kind: Kind, value: Any) -> str:
    if kind == "count":
        return str(value)
    if kind == "strings":
        return json.dumps(list(value), ensure_ascii=False)
    if kind == "object":
        return json.dumps(dict(value), ensure_ascii=False, separators=(",", ":"))
    if kind == "word" and not _is_word(value):
        raise ValueError(f"{value!r} cannot be a word of a task prompt")
    if kind == "text" and not _bare(value):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _is_word(value: str) -> bool:
    return bool(value) and all(character in WORD_CHARACTERS for character in value)


def _bare(value: str) -> bool:
    return bool(value) and not value.startswith(_OPENS_JSON) and value.split() == [value]


_DECODER = json.JSONDecoder()


def _read(kind: Kind, text: str, start: int) -> tuple[Any, int]:
    """One value of ``kind`` starting at ``start``, and where it ends; ValueError if none."""
    if text.startswith(_OPENS_JSON, start):
        value, end = _DECODER.raw_decode(text, start)
    else:
        end = text.find(" ", start)
        end = len(text) if end < 0 else end
        value = text[start:end]
    if kind == "count":
        if not (isinstance(value, str) and value.isascii() and value.isdigit()):
            raise ValueError("not a count")
        if int(value) < 1:
            raise ValueError("a count is 1 or more")
        return int(value), end
    if kind == "strings":
        if not (isinstance(value, list) and all(isinstance(item, str) for item in value)):
            raise ValueError("not a list of strings")
        return tuple(value), end
    if kind == "object":
        if not isinstance(value, dict):
            raise ValueError("not a JSON object")
        return value, end
    if not isinstance(value, str) or not value or (kind == "word" and not _is_word(value)):
        raise ValueError("not a word" if kind == "word" else "not a text")
    return value, end
