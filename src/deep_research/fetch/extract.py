"""Fetched bytes → the text that is stored and later searched for quotes.

HTML goes through trafilatura (boilerplate removal, precision-first) and, when it finds no main
text or fails, through selectolax's lexbor parser (all visible text, no boilerplate removal).
Plain text and JSON are decoded as they are. PDF goes through pypdf in a separate process with
a deadline and a memory cap (:mod:`deep_research.fetch.pdfworker`): a hostile file costs one bounded
process; an encrypted or unreadable one gives no text. No extractor gives offsets into the HTML
and output varies between versions, so the extractor's name and version are recorded with the
text, and quotes are always located in the stored text, never in a fresh extraction.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version

log = logging.getLogger(__name__)

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "application/json"})
#: The content types a page fetch accepts; anything else is refused before its body is read.
PDF_TYPE = "application/pdf"
PAGE_TYPES = HTML_TYPES | TEXT_TYPES | {PDF_TYPE}

_BLANK_RUNS = re.compile(r"\n{3,}")
_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "head")


@dataclass(frozen=True)
class Extracted:
    text: str
    extractor: str
    extractor_version: str


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def decode(body: bytes, charset: str | None) -> str:
    """Bytes → str with the declared charset, else UTF-8; undecodable bytes become U+FFFD."""
    for candidate in (charset, "utf-8"):
        if not candidate:
            continue
        try:
            return body.decode(candidate)
        except (LookupError, UnicodeDecodeError):
            continue
    return body.decode("utf-8", errors="replace")


def _clean(text: str) -> str:
    # NUL never belongs in text and makes the file look binary to every later reader.
    text = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    return _BLANK_RUNS.sub("\n\n", text).strip()


def _trafilatura(body: bytes) -> str | None:
    import trafilatura

    try:
        result = trafilatura.extract(
            body,
            favor_precision=True,
            include_comments=False,
            include_tables=True,
            deduplicate=False,
        )
    except Exception as exc:  # the extractor is third-party code fed hostile input
        log.warning("trafilatura failed (%s); using the fallback extractor", type(exc).__name__)
        return None
    return result if isinstance(result, str) else None


def _selectolax(html: str) -> str:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    for tag in _DROP_TAGS:
        for node in tree.css(tag):
            node.decompose()
    root = tree.body or tree.root
    return root.text(separator="\n") if root is not None else ""


def extract(body: bytes, media_type: str, charset: str | None) -> Extracted | None:
    """The text of a fetched body, or None when nothing readable is in it."""
    if media_type == PDF_TYPE:
        return pdf_text(body)
    if media_type in TEXT_TYPES:
        text = _clean(decode(body, charset))
        return Extracted(text, "plain", "1") if text else None
    primary = _trafilatura(body)
    if primary is not None and (text := _clean(primary)):
        return Extracted(text, "trafilatura", _version("trafilatura"))
    fallback = _clean(_selectolax(decode(body, charset)))
    if fallback:
        return Extracted(fallback, "selectolax", _version("selectolax"))
    return None


#: Seconds the extractor process gets for one PDF before it is killed.
PDF_TIMEOUT_S = 30.0


def pdf_text(body: bytes) -> Extracted | None:
    """The text layer of a PDF (pages separated by a blank line), extracted in a separate,
    bounded process (:mod:`deep_research.fetch.pdfworker`); None when there is no text, the file is
    encrypted or unreadable, or the extractor ran out of time or memory. No OCR."""
    import json
    import subprocess
    import sys

    try:
        done = subprocess.run(
            [sys.executable, "-m", "deep_research.fetch.pdfworker"],
            input=body,
            capture_output=True,
            timeout=PDF_TIMEOUT_S,
            check=False,
        )
        answer = json.loads(done.stdout.decode("utf-8") or "{}")
    except subprocess.TimeoutExpired:
        log.warning("a PDF took longer than %gs to read; it is skipped", PDF_TIMEOUT_S)
        return None
    except ValueError:
        answer = {}
    if not isinstance(answer, dict) or not isinstance(answer.get("text"), str):
        reason = answer.get("error") if isinstance(answer, dict) else None
        log.warning(
            "a PDF could not be read (%s); it is skipped", reason or f"exit {done.returncode}"
        )
        return None
    text = _clean(answer["text"])
    return Extracted(text, "pypdf", str(answer.get("version") or "unknown")) if text else None
