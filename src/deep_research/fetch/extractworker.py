"""The extractor, run as its own process: ``python -m deep_research.fetch.extractworker MEDIA
[CHARSET]``.

An HTML page or a PDF from the web is hostile input to a large parser; a file built to make it
loop or balloon must cost one bounded process, never the run. The parent
(:func:`deep_research.fetch.extract.extract_bounded`) sends the bytes on stdin and kills the
process at the fetch's deadline; the process caps its own address space first (where the
platform allows) and answers one JSON object on stdout: ``{"text": "…", "extractor": "…",
"version": "…", "title": …, "published_at": …}`` (what an HTML page declares, or null);
``{"empty": true}`` when nothing readable is in the body (with
``"unreadable": "<exception type>"`` when the parser gave up on it); or ``{"error":
"MemoryError"}`` at the cap.
"""

from __future__ import annotations

import json
import sys
from typing import Any

#: Address space the extractor may use; a body that needs more is unreadable, not a crash.
MEMORY_BYTES = 1024 * 1024 * 1024


def _cap_memory() -> None:
    try:
        import resource
    except ImportError:  # not POSIX: the parent's deadline still bounds the process
        return
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def answer(body: bytes, media_type: str, charset: str | None) -> dict[str, Any]:
    from deep_research.fetch.extract import extract_here

    try:
        extracted = extract_here(body, media_type, charset)
    except MemoryError:  # the address-space cap: the body is too costly to read
        return {"error": "MemoryError"}
    except Exception as exc:  # third-party parsers, hostile input: a file they cannot read
        return {"empty": True, "unreadable": type(exc).__name__}
    if extracted is None:
        return {"empty": True}
    return {
        "text": extracted.text,
        "extractor": extracted.extractor,
        "version": extracted.extractor_version,
        "title": extracted.title,
        "published_at": extracted.published_at and extracted.published_at.isoformat(),
    }


def main() -> None:
    _cap_memory()
    media_type = sys.argv[1] if len(sys.argv) > 1 else "text/html"
    charset = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else None
    reply = answer(sys.stdin.buffer.read(), media_type, charset)
    # "replace": a lone surrogate from a parser must not cost the answer.
    sys.stdout.buffer.write(json.dumps(reply, ensure_ascii=False).encode("utf-8", "replace"))


if __name__ == "__main__":
    main()
