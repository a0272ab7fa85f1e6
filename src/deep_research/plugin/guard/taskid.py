"""Which task a dispatch prompt is: an exact parse of the prompts ``deep-research next`` builds.

``next`` gives every agent one line of ``key=value`` fields, in a fixed order, with the ids its
own code issued (the brief, a sub-question's id, a round, a claim's and a source's id). The guard
reads identity and round from those fields only — never from prose — and only when the whole
prompt is exactly one of these shapes; anything else is no task (denied during a run):

* fetcher: ``brief=B sub_question=SQ round=N queries=JSON-LIST scope=TEXT``
* mcp-fetcher: the same, then `` mcp=NAME gate=JSON-OBJECT``
* triangulator: ``brief=B round=N``
* skeptic: ``brief=B claim_id=C``
* verifier: ``brief=B claim_id=C source_id=S corpus_path=PATH``
* ciber: ``brief=B top_n=N k_per_claim=N``

Values are read in one pass with string searches and the JSON decoder (no backtracking
pattern), so the time is linear in the prompt's length; a prompt over :data:`MAX_PROMPT` is no
task.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

TaskKind = Literal["fetch", "mcp", "triangulate", "skeptic", "verify", "ciber"]
#: Far longer than any prompt next builds (the gate's tool list included).
MAX_PROMPT = 65_536

_SUB_QUESTION = re.compile(r"[A-Za-z0-9_.-]+")  # as replies.py names a fetcher's return
_CLAIM = re.compile(r"C[0-9]+")
_SOURCE = re.compile(r"S[0-9]+")
_NUMBER = re.compile(r"[1-9][0-9]{0,3}")
_SERVER = re.compile(r"[A-Za-z0-9_.-]+")
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Task:
    kind: TaskKind
    brief: str
    round: int | None = None
    sub_question: str | None = None
    claim_id: str | None = None
    source_id: str | None = None
    mcp: str | None = None


class _NoTask(Exception):
    pass


def task_of(prompt: str) -> Task | None:
    """The task ``prompt`` is, or None when it is not exactly one of next's shapes."""
    if len(prompt) > MAX_PROMPT or not prompt.startswith("brief="):
        return None
    # The brief runs to the first field marker; the first marker names the shape.
    markers = {
        marker: found
        for marker in (" sub_question=", " round=", " claim_id=", " top_n=")
        if (found := prompt.find(marker)) > len("brief=")
    }
    if not markers:
        return None
    marker = min(markers, key=markers.__getitem__)
    brief = prompt[len("brief=") : markers[marker]]
    reader = _Reader(prompt, markers[marker])
    try:
        if marker == " sub_question=":
            return _fetch_task(brief, reader)
        if marker == " round=":
            return Task("triangulate", brief, round=int(reader.last(" round=", _NUMBER)))
        if marker == " claim_id=":
            return _claim_task(brief, reader)
        # The CIBER pass's sizes: part of the shape, not of the task's identity.
        reader.token(" top_n=", _NUMBER)
        reader.last(" k_per_claim=", _NUMBER)
        return Task("ciber", brief)
    except _NoTask:
        return None


def _fetch_task(brief: str, reader: _Reader) -> Task:
    sub_question = reader.token(" sub_question=", _SUB_QUESTION)
    round_ = int(reader.token(" round=", _NUMBER))
    queries = reader.json(" queries=")
    if not isinstance(queries, list) or not all(isinstance(q, str) for q in queries):
        raise _NoTask
    rest = reader.rest(" scope=")
    # An mcp-fetcher's task ends ` mcp=NAME gate={…}`; a scope may hold anything before it.
    cut = rest.rfind(" mcp=")
    if cut >= 0:
        tail = _Reader(rest, cut)
        try:
            server = tail.token(" mcp=", _SERVER)
            gate = tail.json(" gate=")
            tail.end()
        except _NoTask:
            pass
        else:
            if isinstance(gate, dict):
                return Task("mcp", brief, round_, sub_question, mcp=server)
    return Task("fetch", brief, round_, sub_question)


def _claim_task(brief: str, reader: _Reader) -> Task:
    claim = reader.token(" claim_id=", _CLAIM)
    if reader.at_end():
        return Task("skeptic", brief, claim_id=claim)
    source = reader.token(" source_id=", _SOURCE)
    if not reader.rest(" corpus_path="):
        raise _NoTask
    return Task("verify", brief, claim_id=claim, source_id=source)


class _Reader:
    """Reads ``text`` field by field from ``at``; any mismatch raises :class:`_NoTask`."""

    def __init__(self, text: str, at: int) -> None:
        self.text = text
        self.at = at

    def _key(self, key: str) -> None:
        if not self.text.startswith(key, self.at):
            raise _NoTask
        self.at += len(key)

    def token(self, key: str, pattern: re.Pattern[str]) -> str:
        """A space-free value up to the next space."""
        self._key(key)
        end = self.text.find(" ", self.at)
        end = len(self.text) if end < 0 else end
        value = self.text[self.at : end]
        if not pattern.fullmatch(value):
            raise _NoTask
        self.at = end
        return value

    def last(self, key: str, pattern: re.Pattern[str]) -> str:
        """A space-free value that ends the text."""
        value = self.token(key, pattern)
        self.end()
        return value

    def json(self, key: str) -> Any:
        self._key(key)
        try:
            value, self.at = _DECODER.raw_decode(self.text, self.at)
        except (ValueError, RecursionError):
            raise _NoTask from None
        return value

    def rest(self, key: str) -> str:
        self._key(key)
        value = self.text[self.at :]
        self.at = len(self.text)
        return value

    def at_end(self) -> bool:
        return self.at == len(self.text)

    def end(self) -> None:
        if not self.at_end():
            raise _NoTask
