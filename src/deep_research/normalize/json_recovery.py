"""JSON recovered from model text, from the strictest reading to the most lenient.

A document; JSONL; concatenated values; ```json blocks; JSON embedded in prose; trailing commas.
What could not be read is kept apart (``Extracted.bad``, ``Extracted.notes``) for the caller to
report at its place in the input.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from deep_research.brief.readers import jsonl_records
from deep_research.normalize.describe import excerpt

#: How many false starts of embedded JSON are tried in prose (bounds the work on garbage).
MAX_PROSE_ATTEMPTS = 16
#: Most JSON values taken from prose; real answers hold a few, garbage "{}{}{}…" millions.
MAX_PROSE_VALUES = 1000
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_FENCE_LANGUAGES = frozenset(("", "json", "jsonl", "json5", "jsonc", "javascript", "js", "ndjson"))
_JSON_START = re.compile(r"[{\[]")
_TRAILING_COMMA = re.compile(r",\s*[}\]]")
_STRING_OR_TRAILING_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"|,(\s*[}\]])')


@dataclass
class Extracted:
    """Every JSON value found in one text, each labelled by its place ("line 3", "block 2")."""

    docs: list[tuple[str, Any]] = field(default_factory=list)  # (label, value)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (label, warning)
    bad: list[tuple[str, str, str]] = field(default_factory=list)  # (label, reason, excerpt)


class NotJSON(Exception):
    """Text in which no JSON could be found; the message says what was wrong."""


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise NotJSON("nests too deeply") from None
    except json.JSONDecodeError as exc:
        raise NotJSON(
            f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except ValueError:  # an integer past Python's 4,300-digit conversion limit
        raise NotJSON("holds an integer too long to read") from None


_BRACKETED_WORD = re.compile(r"\[\s*(?!(?:true|false|null)\b)[A-Za-z]")


def extract_json(text: str, *, fences: bool = True) -> Extracted:
    """Every JSON value in ``text``, trying the shapes from strictest to most lenient."""
    stripped = text.strip()
    if not stripped:
        raise NotJSON("is empty")
    try:
        return Extracted(docs=[("", _loads(stripped))])
    except NotJSON as strict_error:
        error = strict_error
    if (jsonl := _extract_jsonl(text)) is not None:
        return jsonl
    if fences and "```" in stripped and (fenced := _extract_fenced(stripped)) is not None:
        return fenced
    # Prose may open with a bracketed word ("[Subagent hand-back] …", the frame Claude Code puts
    # around a subagent's reply); a JSON array never does (true, false and null aside).
    if stripped[0] in "{[" and not _BRACKETED_WORD.match(stripped):
        return _extract_leading(stripped, error)
    return _extract_from_prose(stripped)


def _extract_jsonl(text: str) -> Extracted | None:
    lines = [(n, line) for n, line in enumerate(jsonl_records(text), start=1) if line.strip()]
    if len(lines) < 2:
        return None
    try:
        first = json.loads(lines[0][1])
    except (ValueError, RecursionError):  # ValueError: also a >4,300-digit integer
        return None
    if not isinstance(first, dict | list):
        return None
    found = Extracted()
    for number, line in lines:
        try:
            found.docs.append((f"line {number}", _loads(line)))
        except NotJSON as exc:
            if line.lstrip()[:1] in ("{", "["):
                found.bad.append((f"line {number}", f"record {exc}", excerpt(line)))
            else:
                found.notes.append((f"line {number}", "ignored a line that is not JSON"))
    return found


def _extract_fenced(text: str) -> Extracted | None:
    blocks = [m for m in _FENCE.finditer(text) if m.group(1).lower() in _FENCE_LANGUAGES]
    if not blocks:
        return None
    found = Extracted()
    errors: list[str] = []
    for number, match in enumerate(blocks, start=1):
        label = f"block {number}" if len(blocks) > 1 else "block"
        try:
            inner = extract_json(match.group(2), fences=False)
        except NotJSON as exc:
            errors.append(str(exc))
            found.bad.append((label, f"the ```json block {exc}", excerpt(match.group(2))))
            continue
        found.docs += [(_join_labels(label, sub), value) for sub, value in inner.docs]
        found.notes += [(_join_labels(label, sub), note) for sub, note in inner.notes]
        found.bad += [(_join_labels(label, sub), reason, ex) for sub, reason, ex in inner.bad]
    if not found.docs:
        raise NotJSON(f"has a ```json block that {errors[0] if errors else 'holds no JSON'}")
    return found


def _extract_leading(text: str, error: NotJSON) -> Extracted:
    """A document with trailing commas, several concatenated values, or trailing prose."""
    repaired = _strip_trailing_commas(text)
    if repaired != text:
        try:
            value = _loads(repaired)
        except NotJSON:
            pass
        else:
            return Extracted(docs=[("", value)], notes=[("", "removed trailing commas")])
    decoder = json.JSONDecoder()
    found = Extracted()
    position = 0
    while position < len(text):
        try:
            value, end = decoder.raw_decode(text, position)
        except (ValueError, RecursionError):
            break
        found.docs.append((f"value {len(found.docs) + 1}", value))
        position = _skip_space(text, end)
    if not found.docs:
        raise error
    if len(found.docs) == 1:
        found.docs = [("", found.docs[0][1])]
    if position < len(text) and text[position] in "{[":
        found.bad.append(("", "a further JSON value is not valid (truncated?)", text[position:]))
    elif position < len(text):
        found.notes.append(("", f"ignored {len(text) - position} characters after the JSON"))
    return found


def _extract_from_prose(text: str) -> Extracted:
    decoder = json.JSONDecoder()
    found = Extracted()
    failures = 0
    position = 0
    while failures < MAX_PROSE_ATTEMPTS:
        match = _JSON_START.search(text, position)
        if match is None:
            break
        if len(found.docs) == MAX_PROSE_VALUES:
            found.notes.append(("", f"stopped after {MAX_PROSE_VALUES} JSON values in prose"))
            break
        try:
            value, end = decoder.raw_decode(text, match.start())
        except (ValueError, RecursionError):
            failures += 1
            position = match.start() + 1
            continue
        if isinstance(value, dict) or (
            isinstance(value, list) and any(isinstance(item, dict) for item in value)
        ):
            found.docs.append((f"value {len(found.docs) + 1}", value))
        position = end
    if not found.docs:
        raise NotJSON("contains no JSON object, array or ```json block")
    if len(found.docs) == 1:
        found.docs = [("", found.docs[0][1])]
    found.notes.append(("", "ignored the prose around the JSON"))
    return found


def _strip_trailing_commas(text: str) -> str:
    # A comma directly before a closing bracket, outside strings: the commonest hand-made JSON
    # slip. Strings are matched first so a ", ]" inside a quote is left alone.
    if not _TRAILING_COMMA.search(text):
        return text
    return _STRING_OR_TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(0), text)


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _join_labels(outer: str, inner: str) -> str:
    return f"{outer}, {inner}" if outer and inner else outer or inner
