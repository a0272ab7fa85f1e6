"""The standalone batch gate (docs/contracts.md §13): check citations produced by any tool.

Input: JSONL, one ``{"id", "claim", "quote", "source_text" | "source_path"}`` per line, perhaps
with the source's ``title``, ``published`` (an ISO date) and ``publisher`` (document context the
literal check may read); other keys are ignored,
so labelled eval rows can be fed as they are. Output: one result per input line, in input order,
``{"id", "verdict", "reasons", "span", "literals"}``. Steps 2–4 of the gate only: no model, no
network.

A malformed line yields an ``unresolvable`` result with the reason — one result for every input
line, always, carrying the line's ``id`` when that id is itself sound; the batch never aborts on
one bad line. The whole input is refused (exit 2, nothing written) only when it is not a pairs
file at all: empty, or not one line of it is a JSON object (an object whose text is not text —
a lone surrogate — is still a row, answered).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import stat
import sys
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import IO, BinaryIO

from pydantic import ValidationError

from deep_research.brief.readers import decode_utf8, lone_surrogate_at
from deep_research.brief.writers import atomic_writer, jsonl_line
from deep_research.errors import InputError, MissingArtifact, UnreadableInput
from deep_research.gates.literals import SourceFacts
from deep_research.gates.locate import Document
from deep_research.gates.support import Support, check_support
from deep_research.models import GateInput, GateLiterals, GateResult

#: Longest input line read; a longer line is reported unresolvable, not loaded into memory.
MAX_LINE_BYTES = 64 * 1024 * 1024
#: Largest source_path file read for one line.
MAX_SOURCE_BYTES = 64 * 1024 * 1024
#: Results held in memory before the input is known to be a pairs file; past this, on disk.
SPOOL_BYTES = 1024 * 1024
#: The reasons of a line that is no JSON object at all: only lines with these leave the input
#: unproven as a pairs file.
NOT_AN_OBJECT = "malformed_line: not a JSON object"
LINE_TOO_LONG = f"line_too_long: over {MAX_LINE_BYTES} bytes"


def check_pair(
    claim: str,
    quote: str,
    source_text: str,
    *,
    pair_id: str | int | None = None,
    title: str | None = None,
    published: date | None = None,
    publisher: str | None = None,
) -> GateResult:
    """The gate's verdict on one (claim, quote, source text) triple, with what is known of its
    document: its title, publication date and publisher (docs/contracts.md §5.4)."""
    facts = SourceFacts(title=title, published=published, publisher=publisher)
    support = check_support(claim, [quote], Document(source_text), facts=facts)
    return _result(pair_id, support)


def _result(pair_id: str | int | None, support: Support) -> GateResult:
    located = support.quotes[0].located if support.quotes else None
    literals = GateLiterals()
    if support.literals is not None:
        literals = GateLiterals(
            claim=[token.text for token in support.literals.claim_literals],
            missing=[token.text for token in support.literals.missing],
            context=[use.record() for use in support.literals.context],
        )
    return GateResult(
        id=pair_id,
        verdict=support.outcome,
        reasons=list(support.reasons),
        span=(located.start, located.end) if located is not None else None,
        literals=literals,
    )


def unresolvable(pair_id: str | int | None, reason: str) -> GateResult:
    return GateResult(id=pair_id, verdict="unresolvable", reasons=[reason])


def check_line(raw: bytes | None, *, base_dir: Path) -> GateResult:
    """One input line → one result; every failure becomes an ``unresolvable`` result.

    ``None`` is a line that was over the size cap (and was skipped without being held).
    """
    if raw is None or len(raw) > MAX_LINE_BYTES:
        return unresolvable(None, LINE_TOO_LONG)
    try:
        value = json.loads(decode_utf8(raw, what="line"))
    except (InputError, ValueError, RecursionError):  # ValueError: also a >4,300-digit integer
        return unresolvable(None, NOT_AN_OBJECT)
    if not isinstance(value, dict):
        return unresolvable(None, NOT_AN_OBJECT)
    pair_id = _sound_id(value.get("id"))
    if (where := lone_surrogate_at(value)) is not None:
        # A JSON object, so a row of a pairs file: answered, never dropped with the input.
        return unresolvable(pair_id, f"invalid_text: {where} holds a lone surrogate, not text")
    if isinstance(value.get("id"), bool):  # JSON true is no id, though Python counts it an int
        return unresolvable(None, "invalid_field: id: a boolean, not a string or an integer")
    try:
        pair = GateInput.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "line"
        return unresolvable(pair_id, f"invalid_field: {field}: {first['msg']}")
    text = _source_text(pair, base_dir)
    if isinstance(text, GateResult):
        return text
    return check_pair(
        pair.claim,
        pair.quote,
        text,
        pair_id=pair.id,
        title=pair.title,
        published=pair.published,
        publisher=pair.publisher,
    )


def _sound_id(value: object) -> str | int | None:
    """The line's id as its answer may carry it: a string of text or an integer, else None."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return None
    return None if isinstance(value, str) and lone_surrogate_at(value) else value


def _source_text(pair: GateInput, base_dir: Path) -> str | GateResult:
    if pair.source_text is not None:
        return pair.source_text
    if pair.source_path is None:
        return unresolvable(pair.id, "no_source: give source_text or source_path")
    if "\x00" in pair.source_path:
        return unresolvable(pair.id, "source_unreadable: source_path holds a NUL byte")
    path = Path(pair.source_path)
    if not path.is_absolute():
        path = base_dir / path
    try:
        data = _read_regular_file(path)
    except OSError as exc:
        return unresolvable(pair.id, f"source_unreadable: {exc.strerror or exc}")
    if data is None:
        return unresolvable(pair.id, "source_unreadable: not a regular file")
    if len(data) > MAX_SOURCE_BYTES:
        return unresolvable(pair.id, f"source_too_large: over {MAX_SOURCE_BYTES} bytes")
    try:
        return decode_utf8(data, what=str(path))
    except InputError as exc:
        return unresolvable(pair.id, f"source_unreadable: {exc}")


def _read_regular_file(path: Path) -> bytes | None:
    """At most one byte past the cap of a regular file; None for anything else. Opened without
    blocking and checked on the open descriptor, so a FIFO cannot hang the batch and a device
    (/dev/zero) cannot fill memory, even if the path is swapped after a check."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(MAX_SOURCE_BYTES + 1)
    finally:
        os.close(fd)


def _lines(stream: BinaryIO) -> Iterator[bytes | None]:
    """Non-blank input lines; ``None`` stands for a line over the size cap."""
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES:
            # Skip the rest of an oversized line without holding it in memory.
            while raw and not raw.endswith(b"\n"):
                raw = stream.readline(MAX_LINE_BYTES)
            yield None
            continue
        if raw.strip():
            yield raw


@dataclass
class GateSummary:
    counts: Counter[str]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __str__(self) -> str:
        parts = ", ".join(f"{name} {self.counts[name]}" for name in sorted(self.counts))
        return f"gate: {self.total} checked ({parts})"


def run_gate(stream: BinaryIO, out: IO[str], *, base_dir: Path) -> GateSummary:
    """Each input line's result written to ``out`` as it is made, in input order; memory stays
    constant in the number of lines.

    Whether the input is a pairs file at all is known only at its first JSON object line, so the
    results before it wait in a spool (memory up to a cap, then a temporary file); an input
    without one is refused with nothing written to ``out``.
    """
    counts: Counter[str] = Counter()
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES, mode="w+", encoding="utf-8") as held:
        accepted = False
        for raw in _lines(stream):
            result = check_line(raw, base_dir=base_dir)
            counts[result.verdict] += 1
            if not accepted and not _not_an_object(result):
                accepted = True
                held.seek(0)
                shutil.copyfileobj(held, out)
            (out if accepted else held).write(_dump(result))
    if not counts:
        raise UnreadableInput(
            "gate input is empty; expected JSONL lines of {id, claim, quote, source_text}"
        )
    if not accepted:
        raise UnreadableInput(
            "gate input has no JSON object lines; expected JSONL of {id, claim, quote, source_text}"
        )
    return GateSummary(counts)


def _not_an_object(result: GateResult) -> bool:
    return result.reasons[:1] in ([NOT_AN_OBJECT], [LINE_TOO_LONG])


def run_gate_file(
    input_path: Path | None,
    output_path: Path | None,
    *,
    stdin: BinaryIO,
    stdout: IO[str] = sys.stdout,
) -> GateSummary:
    """Run the batch from a file (or stdin), streaming results into a temporary file renamed over
    ``output_path`` at the end (atomic: a refused or interrupted batch leaves it untouched), or to
    stdout."""
    if input_path is not None and not input_path.is_file():
        if input_path.exists():
            raise UnreadableInput(
                f"gate input {input_path} is not a file (a folder?); pass a pairs.jsonl "
                "file, or - for stdin"
            )
        raise MissingArtifact(f"gate input not found: {input_path}")
    with contextlib.ExitStack() as stack:
        if input_path is None:
            stream, base_dir = stdin, Path.cwd()
        else:
            stream, base_dir = stack.enter_context(input_path.open("rb")), input_path.parent
        out = stdout
        if output_path is not None:
            handle = stack.enter_context(atomic_writer(output_path))
            out = io.TextIOWrapper(handle, encoding="utf-8", newline="")
            stack.callback(out.detach)  # flushed, and the file left for the writer to close
        return run_gate(stream, out, base_dir=base_dir)


def _dump(result: GateResult) -> str:
    return jsonl_line(result.model_dump(mode="json"))
