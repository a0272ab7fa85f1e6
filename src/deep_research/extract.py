"""Fetched bytes → the text that is stored and later searched for quotes.

HTML goes through trafilatura (boilerplate removal, precision-first) and, when it finds no main
text or fails, through selectolax's lexbor parser (all visible text, no boilerplate removal).
Plain text and JSON are decoded as they are. PDF (local corpora only: the web fetcher refuses the
type) goes through pypdf, page by page, at most :data:`MAX_PDF_PAGES` pages; an encrypted or
unreadable file gives no text. No extractor gives offsets into the HTML and output
varies between versions, so the extractor's name and version are recorded with the text, and
quotes are always located in the stored text, never in a fresh extraction.
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
PAGE_TYPES = HTML_TYPES | TEXT_TYPES

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


#: Pages read from one PDF; a longer document contributes its first pages only.
MAX_PDF_PAGES = 2000


def pdf_text(body: bytes) -> Extracted | None:
    """The text layer of a PDF, pages separated by a blank line, or None (no text, encrypted,
    unreadable). Scanned pages without a text layer contribute nothing: no OCR."""
    from io import BytesIO

    from pypdf import PdfReader

    try:
        reader = PdfReader(BytesIO(body), strict=False)
        if reader.is_encrypted:
            return None
        pages = [page.extract_text() or "" for page in reader.pages[:MAX_PDF_PAGES]]
    except Exception as exc:  # the parser is third-party code fed whatever is in the folder
        log.warning("pypdf could not read a PDF (%s); it is skipped", type(exc).__name__)
        return None
    text = _clean("\n\n".join(pages))
    return Extracted(text, "pypdf", _version("pypdf")) if text else None
