"""The PDF text extractor, run as its own process: ``python -m deep_research.fetch.pdfworker``.

A PDF from the web is hostile input to a large parser; a file built to make it loop or balloon
must cost one bounded process, never the run. The parent
(:func:`deep_research.fetch.extract.pdf_text`)
sends the bytes on stdin and kills the process at a deadline; the process caps its own address
space first (where the platform allows) and answers one JSON object on stdout:
``{"text": "…", "version": "…"}``, or ``{"error": "<exception type>"}``.
"""

from __future__ import annotations

import json
import sys
from io import BytesIO

#: Pages read from one PDF; a longer document contributes its first pages only.
MAX_PDF_PAGES = 2000
#: Address space the extractor may use; a file that needs more is unreadable, not a crash.
MEMORY_BYTES = 1024 * 1024 * 1024


def _cap_memory() -> None:
    try:
        import resource
    except ImportError:  # not POSIX: the parent's deadline still bounds the process
        return
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def pages_text(body: bytes) -> str:
    """The text layer, page by page, a blank line between pages ("" for an encrypted file)."""
    from pypdf import PdfReader

    reader = PdfReader(BytesIO(body), strict=False)
    if reader.is_encrypted:
        return ""
    return "\n\n".join(page.extract_text() or "" for page in reader.pages[:MAX_PDF_PAGES])


def main() -> None:
    _cap_memory()
    from importlib.metadata import version

    body = sys.stdin.buffer.read()
    try:
        answer = {"text": pages_text(body), "version": version("pypdf")}
    except Exception as exc:  # third-party parser, hostile input (MemoryError included at the cap)
        answer = {"error": type(exc).__name__}
    sys.stdout.write(json.dumps(answer, ensure_ascii=False))


if __name__ == "__main__":
    main()
