"""The file side of ``deep-research normalize``: read fetcher output, write rows and the report.

:mod:`deep_research.normalize` is pure (text or typed drafts in, rows out); this module is where
files are read — the input (a path or stdin), the brief's ``sources.jsonl`` — and written, under
the brief's lock, every write atomic. It is part of the core, so it does not import the
normalize wing: the command hands it the normalizer
(:func:`deep_research.normalize.commands.cmd_normalize`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol, TextIO, TypeVar

from deep_research.brief.layout import Brief
from deep_research.brief.readers import decode_utf8, jsonl_records, load_sources, read_text
from deep_research.brief.writers import (
    atomic_write_json,
    atomic_write_text,
    escape_line_breaks,
    jsonl_line,
    model_dump,
)
from deep_research.errors import InputError, MissingArtifact, UnreadableInput
from deep_research.models import SourceRow

#: Largest fetcher output read. One fetcher returns kilobytes; more than this is a runaway.
MAX_INPUT_BYTES = 64 * 1024 * 1024


class RowsResult(Protocol):
    """What is written: the rows (existing rows first), and the report ``--report`` asks for."""

    rows: list[SourceRow]

    def report(self) -> dict[str, Any]: ...


_Result = TypeVar("_Result", bound=RowsResult)
_Result_co = TypeVar("_Result_co", bound=RowsResult, covariant=True)


class Normalizer(Protocol[_Result_co]):
    """Raw fetcher output to rows, merged into ``existing`` (``normalize_payload``)."""

    def __call__(
        self,
        text: str,
        *,
        start_id: int,
        existing: Sequence[SourceRow],
        sub_question: str | None,
        round: int | None,
    ) -> _Result_co: ...


#: What a command does to the normalized result, given the rows already there, before anything
#: is written (into a brief: fill new rows from its fetch record, ``normalize.enrich``).
Fill = Callable[[_Result, Sequence[SourceRow]], _Result]


@dataclass(frozen=True)
class NormalizeOptions:
    """What the ``normalize`` command was asked to do (see
    :func:`deep_research.normalize.commands.cmd_normalize`)."""

    input: Path | None = None
    brief: Path | None = None
    output: Path | None = None
    report: Path | None = None
    start_id: int | None = None
    sub_question: str | None = None
    round: int | None = None


def run_normalize(
    options: NormalizeOptions,
    normalize: Normalizer[_Result],
    *,
    stdin: BinaryIO,
    stdout: TextIO | None = None,
    fill: Fill[_Result] | None = None,
) -> _Result:
    """Read, normalize (then ``fill``), then write: rows to the brief, --output or stdout; the
    report if asked.

    Every check happens before the first write, and every file write is atomic, so an input
    error leaves the brief exactly as it was.
    """
    _check_options(options)
    if options.brief is None:
        return _normalize(options, normalize, fill, stdin, stdout)
    if not options.brief.is_dir():
        raise MissingArtifact(f"brief directory not found: {options.brief}")
    # The lock spans read-modify-write, so two normalizers cannot lose each other's rows.
    with Brief(options.brief).lock():
        return _normalize(options, normalize, fill, stdin, stdout)


def _normalize(
    options: NormalizeOptions,
    normalize: Normalizer[_Result],
    fill: Fill[_Result] | None,
    stdin: BinaryIO,
    stdout: TextIO | None,
) -> _Result:
    existing: list[SourceRow] = []
    existing_lines: list[str] = []
    if options.brief is not None:
        existing, existing_lines = _read_brief_sources(options.brief)
    highest = max((int(row.id[1:]) for row in existing), default=0)
    if options.start_id is not None and options.start_id <= highest:
        raise InputError(
            f"--start-id {options.start_id} would reuse an id: the brief already has S{highest}; "
            f"use {highest + 1} or more, or omit --start-id"
        )
    text = _read_input(options.input, stdin)
    result = normalize(
        text,
        start_id=options.start_id or 1,
        existing=existing,
        sub_question=options.sub_question,
        round=options.round,
    )
    if fill is not None:
        result = fill(result, existing)
    lines = _render_lines(result.rows, existing, existing_lines)
    if options.brief is not None:
        atomic_write_text(options.brief / "sources.jsonl", lines)
    elif options.output is not None:
        atomic_write_text(options.output, lines)
    else:
        (stdout or sys.stdout).write(lines)
    if options.report is not None:
        atomic_write_json(options.report, result.report())
    return result


def _check_options(options: NormalizeOptions) -> None:
    if options.start_id is not None and options.start_id < 1:
        raise InputError(f"--start-id must be 1 or more, got {options.start_id}")
    if options.round is not None and options.round < 1:
        raise InputError(f"--round must be 1 or more, got {options.round}")
    if options.sub_question is not None and not options.sub_question.strip():
        raise InputError("--sub-question must not be empty")


def _read_brief_sources(brief: Path) -> tuple[list[SourceRow], list[str]]:
    if not brief.is_dir():
        raise MissingArtifact(f"brief directory not found: {brief}")
    path = brief / "sources.jsonl"
    if not path.exists():
        return [], []
    rows = load_sources(path)
    text = read_text(path, what="sources.jsonl")
    lines = [line for line in jsonl_records(text) if line.strip()]
    return rows, lines if len(lines) == len(rows) else []


def _read_input(path: Path | None, stdin: BinaryIO) -> str:
    what = "stdin" if path is None else str(path)
    if path is None:
        data = stdin.read(MAX_INPUT_BYTES + 1)
    else:
        if not path.exists():
            raise MissingArtifact(f"fetcher output not found: {path}")
        if not path.is_file():
            raise UnreadableInput(f"fetcher output is not a regular file: {path}")
        with path.open("rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise UnreadableInput(
            f"{what} is larger than {MAX_INPUT_BYTES} bytes, the limit for fetcher output; "
            "pass one fetcher's output at a time"
        )
    return decode_utf8(data, what=what)


def _render_lines(
    rows: Sequence[SourceRow], existing: Sequence[SourceRow], existing_lines: Sequence[str]
) -> str:
    # Rows this run did not change are written back as they were read, but for the line breaks
    # another tool may have left raw in them.
    out: list[str] = []
    for index, row in enumerate(rows):
        if index < len(existing_lines) and index < len(existing) and row is existing[index]:
            out.append(escape_line_breaks(existing_lines[index].rstrip("\r")) + "\n")
        else:
            out.append(jsonl_line(model_dump(row)))
    return "".join(out)
