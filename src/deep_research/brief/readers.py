"""Reading a brief's files: bounded, UTF-8, JSON and JSON Lines, each fault a one-line
:class:`~deep_research.errors.InputError` that names the file and says what to do."""

from __future__ import annotations

import gc
import json
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deep_research.errors import (
    MissingArtifact,
    SchemaViolation,
    UnreadableInput,
)

if TYPE_CHECKING:
    # Imported where used: building the models costs more than the hook guard's whole decision,
    # and the guard reads paths and small JSON files only.

    from deep_research.models import SourceRow

MAX_ARTIFACT_BYTES = 512 * 1024 * 1024


def jsonl_records(text: str) -> list[str]:
    """The lines of a JSON Lines text, split at ``\n`` only (JSON Lines' one separator), so a
    record holding a raw U+2028 or U+0085 written by another tool stays one record."""
    return text.split("\n")


# --- reads ----------------------------------------------------------------------------------


def read_text(path: Path, *, what: str) -> str:
    """Text of a UTF-8 file, or an InputError that says which file and why."""
    if not path.exists():
        raise MissingArtifact(f"{what} not found: {path}")
    if not path.is_file():
        raise UnreadableInput(f"{what} is not a regular file: {path}")
    size = path.stat().st_size
    if size > MAX_ARTIFACT_BYTES:
        raise UnreadableInput(
            f"{what} is {size} bytes, over the {MAX_ARTIFACT_BYTES}-byte limit: {path}"
        )
    return decode_utf8(path.read_bytes(), what=f"{what} {path}")


def decode_utf8(data: bytes, *, what: str) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnreadableInput(
            f"{what} is not UTF-8 text (byte {exc.start}); pass the JSON file, not a binary"
        ) from None
    if "\x00" in text:
        raise UnreadableInput(f"{what} contains NUL bytes; it looks binary, not JSON")
    return text


@contextmanager
def acyclic_build() -> Iterator[None]:
    """The cyclic collector paused while a JSON value or its models are built.

    Parsed JSON is a tree, and the models validated from it hold no cycles either, so a
    collection can find nothing in them — yet the collector's full passes over the growing tree
    were a third of the time a 20 MB claims.json took to load. Collection resumes afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_json(text: str, *, what: str) -> Any:
    if not text.strip():
        raise UnreadableInput(f"{what} is empty; expected a JSON document")
    with acyclic_build():
        return _decoded(text, what, "nests too deeply to be a brief artifact", one_line=False)


def iter_jsonl(text: str, *, what: str) -> Iterator[tuple[int, Any]]:
    """(line number, value) for every non-blank line; a bad line raises with its number."""
    for number, line in enumerate(jsonl_records(text), start=1):
        if line.strip():
            yield number, _decoded(line, f"{what} line {number}", "nests too deeply", one_line=True)


def _decoded(text: str, subject: str, too_deep: str, *, one_line: bool) -> Any:
    """``text`` as JSON; what is not JSON, or nests past the parser's depth, raises
    :class:`UnreadableInput` about ``subject`` (where in a one-line record: its column)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"column {exc.colno}" if one_line else f"line {exc.lineno}, column {exc.colno}"
        raise UnreadableInput(f"{subject} is not valid JSON ({at}: {exc.msg})") from None
    except RecursionError:
        raise UnreadableInput(f"{subject} {too_deep}") from None


def lone_surrogate_at(value: Any, where: str = "$") -> str | None:
    """Path of the first string (or key) in a parsed JSON value holding a lone surrogate.

    JSON's ``\\ud800`` escapes decode to code points that are not text: no UTF-8 file can hold
    them, so a value carrying one is refused where it enters, never written.
    """
    if isinstance(value, str):
        return where if _has_surrogate(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if _has_surrogate(key):
                return where
            if (found := lone_surrogate_at(item, f"{where}.{key}")) is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            if (found := lone_surrogate_at(item, f"{where}[{index}]")) is not None:
                return found
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def load_sources(path: Path) -> list[SourceRow]:
    from deep_research.models import SourceRow, validate_model

    what = str(path)
    # An empty file is a search that found nothing: a legitimate, reportable outcome.
    text = read_text(path, what="sources.jsonl")
    with acyclic_build():
        rows = [
            validate_model(SourceRow, value, what=what, prefix=f"line {number}: $")
            for number, value in iter_jsonl(text, what=what)
        ]
    seen: set[str] = set()
    for row in rows:
        if row.id in seen:
            raise SchemaViolation(f"duplicate source id {row.id}", source=what)
        seen.add(row.id)
    return rows


def complete_lines(text: str, *, what: str) -> Iterator[tuple[int, Any]]:
    # The fetch log is append-only: a crash may truncate the last line and nothing else.
    complete, _, torn = text.rpartition("\n")
    if torn:
        warnings.warn(
            f"{what}: skipping a torn last line ({len(torn)} chars) left by a crash",
            stacklevel=3,
        )
    yield from iter_jsonl(complete, what=what)
