"""Writing a brief's files: every write atomic (temp file in the same directory, fsync, rename),
so a crash leaves either the old file or the new one — never half of either; one JSON style and
one JSON Lines style for every artifact."""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    # Imported where used: building the models costs more than the hook guard's whole decision,
    # and the guard reads paths and small JSON files only.
    from pydantic import BaseModel

    from deep_research.models import ClaimsFile


# --- atomic writes --------------------------------------------------------------------------


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` so readers see the old file or the new one, never a mix."""
    with atomic_writer(path) as handle:
        handle.write(data)


@contextmanager
def atomic_writer(path: Path) -> Iterator[BinaryIO]:
    """A file to write ``path``'s new content into as it is made: a temporary file beside it,
    renamed over ``path`` when the block ends, removed if it raises (``path`` is then untouched)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is on disk.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


#: Where the claims go in claims.json as a model with none writes it: the document's only
#: line that opens with two spaces and its ``"claims"`` key (a string cannot hold a newline).
_NO_CLAIMS = '\n  "claims": []'


def claims_chunks(document: ClaimsFile) -> Iterator[str]:
    """claims.json's text — exactly ``model_dump_json(by_alias=True, indent=2)`` and a newline
    — in pieces: the document around its claims, then each claim. Writing a brief of 50,000
    claims then holds one claim's JSON at a time, not the whole file's twice (text and bytes)."""
    shell = document.model_copy(update={"claims": []}).model_dump_json(by_alias=True, indent=2)
    if not document.claims:
        yield shell + "\n"
        return
    before, found, after = shell.partition(_NO_CLAIMS)
    if not found:  # pragma: no cover - only if the serializer's layout changed
        raise AssertionError("claims.json's layout has no top-level claims list")
    yield before + '\n  "claims": ['
    for position, claim in enumerate(document.claims):
        item = claim.model_dump_json(by_alias=True, indent=2).replace("\n", "\n    ")
        yield ("\n    " if position == 0 else ",\n    ") + item
    yield "\n  ]" + after + "\n"


def write_claims(path: Path, document: ClaimsFile) -> None:
    """claims.json written atomically, claim by claim (:func:`claims_chunks`)."""
    with atomic_writer(path) as handle:
        for chunk in claims_chunks(document):
            handle.write(chunk.encode("utf-8"))


def dump_json(value: Any) -> str:
    """The one JSON style of every artifact: UTF-8, two-space indent, trailing newline."""
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def atomic_write_json(path: Path, value: Any) -> None:
    atomic_write_text(path, dump_json(value))


# --- JSON Lines -----------------------------------------------------------------------------

#: Line boundaries of ``str.splitlines()`` that JSON leaves raw inside a string. The others
#: (\r, \x0b, \x0c, \x1c–\x1e) are control characters every JSON encoder escapes already. A raw
#: one would split a record for any reader that splits lines the way Python does.
_RAW_LINE_BREAKS = {0x85: "\\u0085", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def escape_line_breaks(json_text: str) -> str:
    """``json_text`` with every raw line boundary escaped; the JSON value is unchanged, because
    outside a string these characters are not valid JSON at all."""
    return json_text.translate(_RAW_LINE_BREAKS)


def jsonl_line(value: Any, *, sort_keys: bool = False) -> str:
    """The one JSON Lines record style: compact UTF-8 JSON on exactly one line, newline-ended.

    Every ``.jsonl`` artifact is written through here (or :func:`escape_line_breaks` for JSON
    already serialized), so no reader's line splitting can cut a record in two.
    """
    return escape_line_breaks(json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)) + "\n"


def model_dump(model: BaseModel) -> Any:
    """JSON-ready dict of a model, by alias, without unset-equivalent noise."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=False)


#: Characters that change how the text around them shows without being seen: C0 and C1
#: controls but tab and newline, bidirectional overrides, embeddings and isolates (U+202E makes
#: "txt.exe" read "exe.txt"), zero-width spaces and joiners of words, line separators, the BOM.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b\u200e\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff]"
)


def printable_text(text: str) -> str:
    """``text`` safe to print or write in a report: lone surrogates as ``?``, and every
    invisible control or direction override as its visible code point (``\\u202e``)."""
    cleaned = text.encode("utf-8", "replace").decode("utf-8")
    return _INVISIBLE.sub(lambda found: f"\\u{ord(found.group()):04x}", cleaned)
