"""Fetched bytes → the text that is stored and later searched for quotes.

HTML goes through trafilatura (boilerplate removal, precision-first) and, when it finds no main
text or fails, through selectolax's lexbor parser (all visible text, no boilerplate removal).
Plain text and JSON are decoded as they are. PDF goes through pypdf's text layer (no OCR); an
encrypted or unreadable file gives no text.

Markup and PDFs are hostile input to large parsers, so both are read in a separate process
(:mod:`deep_research.fetch.extractworker`) with a deadline and an address-space cap: a page
built to make a parser loop or balloon costs one bounded process, never the run. Plain text is
decoded here, in time linear in its size.

The declared charset is used only when it names an encoding the web uses (the WHATWG Encoding
Standard's: UTF-8 and UTF-16, the ISO 8859 and Windows code pages, KOI8, the Mac and CJK
encodings). Any other name — unknown, or a Python codec that is no web encoding (``punycode``,
``undefined``, ``utf-7``, ``rot13``) — falls back to UTF-8, undecodable bytes becoming U+FFFD.

No extractor gives offsets into the HTML and output varies between versions, so the extractor's
name and version are recorded with the text, and quotes are always located in the stored text,
never in a fresh extraction.
"""

from __future__ import annotations

import codecs
import json
import logging
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import date
from importlib.metadata import PackageNotFoundError, version
from io import BytesIO

log = logging.getLogger(__name__)

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "application/json"})
PDF_TYPE = "application/pdf"
#: The content types a page fetch accepts; anything else is refused before its body is read.
PAGE_TYPES = HTML_TYPES | TEXT_TYPES | {PDF_TYPE}
#: Seconds an extraction may take when its caller has no deadline of its own (a local corpus).
EXTRACT_TIMEOUT_S = 30.0
#: Pages read from one PDF; a longer document contributes its first pages only.
MAX_PDF_PAGES = 2000

#: Python's names for the encodings of the WHATWG Encoding Standard: the only charsets a page's
#: declaration is trusted with.
WEB_CODECS: frozenset[str] = frozenset(
    {
        "utf-8",
        "utf-16",
        "utf-16-le",
        "utf-16-be",
        "ascii",
        *(f"iso8859-{number}" for number in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 14, 15, 16)),
        *(f"cp{number}" for number in (866, 874, 932, 949, *range(1250, 1259))),
        "tis-620",
        "koi8-r",
        "koi8-u",
        "mac-roman",
        "mac-cyrillic",
        "gbk",
        "gb2312",
        "gb18030",
        "big5",
        "big5hkscs",
        "euc_jp",
        "iso2022_jp",
        "shift_jis",
        "euc_kr",
    }
)
#: WHATWG labels Python's codec registry does not know.
_WEB_ALIASES = {
    "windows-874": "cp874",
    "windows-31j": "cp932",
    "x-sjis": "shift_jis",
    "x-mac-roman": "mac-roman",
    "x-mac-cyrillic": "mac-cyrillic",
    "iso-8859-8-i": "iso8859-8",
    "unicode-1-1-utf-8": "utf-8",
}

_BLANK_RUNS = re.compile(r"\n{3,}")
_DROP_TAGS = ("script", "style", "noscript", "template", "svg", "iframe", "head")


@dataclass(frozen=True)
class Extracted:
    text: str
    extractor: str
    extractor_version: str
    # What an HTML page declares about itself (title, meta tags, structured data), never text
    # found in its body: a publication date is taken only as the page states it.
    title: str | None = None
    published_at: date | None = None


class ExtractionFailed(Exception):
    """The extractor process ran out of time or memory, or died: no text, and not "empty"."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def web_codec(charset: str | None) -> str | None:
    """Python's codec for a declared charset, when it is an encoding of the web; else None."""
    if not charset:
        return None
    label = charset.strip().strip("\"'").lower()
    try:
        name = codecs.lookup(_WEB_ALIASES.get(label, label)).name
    except (LookupError, ValueError):  # ValueError: a label with a NUL in it
        return None
    return name if name in WEB_CODECS else None


def decode(body: bytes, charset: str | None) -> str:
    """Bytes → str with the declared charset when it is a web encoding, else UTF-8; undecodable
    bytes become U+FFFD. Never raises."""
    for candidate in dict.fromkeys(name for name in (web_codec(charset), "utf-8") if name):
        try:
            return body.decode(candidate)
        except UnicodeError:
            continue
    return body.decode("utf-8", errors="replace")


def _clean(text: str) -> str:
    # NUL never belongs in text and makes the file look binary to every later reader.
    text = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    return _BLANK_RUNS.sub("\n\n", text).strip()


#: A page's first line that reads as its title: short, and not ending as a sentence ends.
MAX_TITLE_LINE = 120
_SENTENCE_END = re.compile(r"[.!?:;,][\"'”’)\]]*$")


def _blocks(text: str) -> str:
    """trafilatura's text with a blank line between blocks: it writes each heading and
    paragraph on one line of its own, and a heading read as one paragraph with the text
    under it would be glued onto that text's first sentence."""
    return "\n\n".join(line for line in text.split("\n"))


def title_apart(page: str) -> str:
    """A PDF page's text with its first line set apart by a blank line when it reads as a
    title (short, not ending as a sentence ends, and the text after it opening a sentence): a
    PDF's lines are wrapped prose, so only that line is told apart."""
    first, newline, rest = page.partition("\n")
    title = first.strip()
    if not newline or not rest.strip() or len(title) > MAX_TITLE_LINE:
        return page
    if not title or _SENTENCE_END.search(title):
        return page
    # Wrapped prose goes on in lower case ("…completed by the / board of…"); text under a
    # title opens a sentence.
    if not rest.lstrip()[:1].isupper():
        return page
    return f"{first}\n\n{rest}"


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


def _pdf_pages(body: bytes) -> str:
    """The text layer, page by page, a blank line between pages ("" for an encrypted file)."""
    from pypdf import PdfReader

    reader = PdfReader(BytesIO(body), strict=False)
    if reader.is_encrypted:
        return ""
    pages = reader.pages[:MAX_PDF_PAGES]
    return "\n\n".join(title_apart(page.extract_text() or "") for page in pages)


def is_pdf(body: bytes) -> bool:
    """The body is a PDF by its signature, whatever its label says."""
    return body[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"%PDF-")


def extract_here(body: bytes, media_type: str, charset: str | None) -> Extracted | None:
    """The text of a body, extracted in this process with no bound: only the extractor process
    and trusted callers run it."""
    if media_type == PDF_TYPE:
        text = _clean(_pdf_pages(body))
        return Extracted(text, "pypdf", _version("pypdf")) if text else None
    if media_type in TEXT_TYPES:
        text = _clean(decode(body, charset))
        return Extracted(text, "plain", "1") if text else None
    title, published = _declared(decode(body, charset))
    primary = _trafilatura(body)
    if primary is not None and (text := _clean(_blocks(primary))):
        return Extracted(text, "trafilatura", _version("trafilatura"), title, published)
    fallback = _clean(_selectolax(decode(body, charset)))
    if fallback:
        return Extracted(fallback, "selectolax", _version("selectolax"), title, published)
    return None


#: Longest title kept: a title is a label; anything longer is markup gone wrong.
MAX_TITLE_CHARS = 300


def _declared(html: str) -> tuple[str | None, date | None]:
    """The title and publication date a page declares; dates in its running text are not
    searched (``extensive=False``)."""
    from trafilatura.metadata import extract_metadata

    try:
        found = extract_metadata(html, extensive=False)
    except Exception as exc:  # third-party code fed hostile input: the page declares nothing
        log.warning("page metadata could not be read (%s)", type(exc).__name__)
        return None, None
    return _title(found.title), _day(found.date)


def _title(value: object) -> str | None:
    if not isinstance(value, str):
        return None
    return " ".join(value.split())[:MAX_TITLE_CHARS] or None


def _day(value: object) -> date | None:
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


@dataclass(frozen=True)
class WorkerReply:
    """What the extractor process gave back: its raw stdout (one JSON object, or anything when
    it died) and its exit status."""

    stdout: bytes
    returncode: int


def run_extractor_process(
    body: bytes, media_type: str, charset: str | None, timeout_s: float
) -> WorkerReply:
    """Run :mod:`deep_research.fetch.extractworker` on ``body`` in its own process, killed after
    ``timeout_s`` (:class:`ExtractionFailed` ``extraction_timeout``)."""
    command = [sys.executable, "-m", "deep_research.fetch.extractworker", media_type]
    try:
        done = subprocess.run(
            [*command, charset or ""],
            input=body,
            capture_output=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ExtractionFailed("extraction_timeout") from None
    return WorkerReply(done.stdout, done.returncode)


#: How :func:`extract_bounded` reaches the extractor. Always the bounded process; the test suite
#: alone swaps it (by monkeypatching this name) for the worker's answer computed in-process, as
#: starting a Python per page is most of its run time. Nothing a user or a page controls reads
#: or writes it.
run_extractor = run_extractor_process


def extract_bounded(
    body: bytes, media_type: str, charset: str | None, timeout_s: float
) -> Extracted | None:
    """The text of a fetched body, or None when nothing readable is in it. Markup and PDFs are
    read by the extractor process, killed after ``timeout_s``; running out of time or memory
    raises :class:`ExtractionFailed`."""
    if media_type in TEXT_TYPES:
        return extract_here(body, media_type, charset)
    if timeout_s <= 0:
        raise ExtractionFailed("extraction_timeout")
    done = run_extractor(body, media_type, charset, timeout_s)
    try:
        answer = json.loads(done.stdout.decode("utf-8") or "{}")
    except ValueError:
        answer = {}
    if not isinstance(answer, dict):
        answer = {}
    text, extractor = answer.get("text"), answer.get("extractor")
    if isinstance(text, str) and isinstance(extractor, str):
        version = str(answer.get("version") or "unknown")
        declared = _title(answer.get("title")), _day(answer.get("published_at"))
        return Extracted(text, extractor, version, *declared)
    if answer.get("empty") is True:
        return None
    # MemoryError at the address-space cap, or a parser that took the process down with it.
    problem = answer.get("error") or f"exit {done.returncode}"
    raise ExtractionFailed(f"extraction_failed: {problem}")


def extract(body: bytes, media_type: str, charset: str | None) -> Extracted | None:
    """:func:`extract_bounded` for a caller with no deadline of its own (a local corpus): at
    most :data:`EXTRACT_TIMEOUT_S`; a failure is logged and gives no text."""
    try:
        return extract_bounded(body, media_type, charset, EXTRACT_TIMEOUT_S)
    except ExtractionFailed as failure:
        log.warning("a %s document could not be read (%s); it is skipped", media_type, failure)
        return None


def pdf_text(body: bytes) -> Extracted | None:
    """The text layer of a PDF (pages separated by a blank line), read by the bounded extractor
    process; None when there is no text, the file is encrypted or unreadable, or the extractor
    ran out of time or memory."""
    return extract(body, PDF_TYPE, None)
