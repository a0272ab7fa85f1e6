"""A report as text: read within a size cap, refused when it is not text, HTML made Markdown.

Everything after this module reads Markdown: a plain-text report already is (its bare URLs and
``[1]`` markers are read the same way), and an HTML report is converted — block elements become
paragraphs, headings ``#`` lines, links ``[text](href)``; a link to an anchor of the page
(``href="#fn1"``) is a footnote marker ``[^fn1]``, and the element it points to, when it holds a
link, becomes the footnote's definition, so an HTML report's footnotes resolve as Markdown's do.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Literal

from deep_research.errors import InputError, MissingArtifact

#: The largest report read. A research report runs to tens of kilobytes; a file over this is not
#: one (a data dump, a log), and reading it whole would only spend memory.
MAX_REPORT_BYTES = 4 * 1024 * 1024
#: Bytes looked at to tell text from a binary file (a NUL byte is never in text).
SNIFF_BYTES = 8192

Format = Literal["markdown", "html"]
HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})


@dataclass(frozen=True)
class Report:
    """A report as read: its bytes, its format, and the Markdown every later step reads."""

    data: bytes
    format: Format
    markdown: str


def read_report(path: Path) -> Report:
    """The report at ``path``; a missing, special, oversized or binary file is an InputError
    naming what is wrong in one line."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise MissingArtifact(f"report not found: {path}") from None
    except OSError as exc:
        raise InputError(f"cannot read the report {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise InputError(f"{path} is a folder; give the report file")
        if not stat.S_ISREG(info.st_mode):
            raise InputError(f"{path} is not a regular file; give the report file")
        if info.st_size > MAX_REPORT_BYTES:
            raise InputError(
                f"{path} is {info.st_size:,} bytes, over the {MAX_REPORT_BYTES:,}-byte cap for "
                "a report; check it in parts"
            )
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = handle.read(MAX_REPORT_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_REPORT_BYTES:
        raise InputError(f"{path} grew over the {MAX_REPORT_BYTES:,}-byte cap while being read")
    return parse_report(data, path.suffix.lower(), where=str(path))


def parse_report(data: bytes, suffix: str = "", *, where: str = "report") -> Report:
    """``data`` as a report (``suffix`` names its format when it is an HTML one)."""
    if b"\x00" in data[:SNIFF_BYTES] or data.startswith(b"%PDF-"):
        raise InputError(
            f"{where} is a binary file, not a report; give Markdown, HTML or plain text"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{where} is not UTF-8 text; save the report as UTF-8") from None
    if suffix in HTML_SUFFIXES or _looks_like_html(text):
        return Report(data, "html", html_to_markdown(text))
    return Report(data, "markdown", text.replace("\r\n", "\n").replace("\r", "\n"))


def _looks_like_html(text: str) -> bool:
    head = text.lstrip()[:512].lower()
    return head.startswith(("<!doctype html", "<html")) or (
        head.startswith("<") and any(tag in head for tag in ("<body", "<p>", "<p ", "<article"))
    )


# --- HTML → Markdown ---------------------------------------------------------------------

_BLOCKS = frozenset(
    """p div section article main header footer aside nav blockquote pre table tr ul ol dl dd
    dt figure figcaption details summary address""".split()
)
_CELLS = frozenset({"td", "th"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_SKIPPED = frozenset({"script", "style", "template", "noscript", "svg", "head"})
_VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "wbr", "source", "col", "area"})


class _AnchorTargets(HTMLParser):
    """First pass: the anchors the page's own links point to (``#fn1`` → ``fn1``)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.targets: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href") or ""
        if tag == "a" and href.startswith("#") and len(href) > 1:
            self.targets.add(href[1:])


class _Converter(HTMLParser):
    """Second pass: the Markdown; an element a footnote marker points to is its definition."""

    def __init__(self, targets: set[str]) -> None:
        super().__init__(convert_charrefs=True)
        self.targets = targets
        self.out: list[str] = []
        self.skipping = 0
        self.links: list[tuple[str, list[str]]] = []  # open <a>: its href, its text so far
        self.note: tuple[str, str, int] | None = None  # open definition: id, tag, depth
        self.note_depth = 0
        self.note_url: str | None = None
        self.notes: list[tuple[str, str]] = []

    def _write(self, text: str) -> None:
        if self.note is not None:
            return  # a footnote's own text is not prose of the report
        if self.links:
            self.links[-1][1].append(text)
        else:
            self.out.append(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self.skipping += 1
            return
        if self.skipping:
            return
        found = dict(attrs)
        if self.note is not None and tag == self.note[1] and tag not in _VOID:
            self.note_depth += 1
        element_id = found.get("id")
        if self.note is None and element_id in self.targets and tag not in ("a", *_VOID):
            self.note = (element_id or "", tag, 0)
            self.note_depth = 0
            self.note_url = None
            return
        if tag == "a":
            href = (found.get("href") or "").strip()
            if self.note is not None:
                if self.note_url is None and href.startswith(("http://", "https://")):
                    self.note_url = href
                return
            self.links.append((href, []))
        elif tag in _HEADINGS:
            self._write(f"\n\n{'#' * int(tag[1])} ")
        elif tag == "li":
            self._write("\n\n- ")
        elif tag in _CELLS:
            self._write(" | ")
        elif tag == "br":
            self._write("\n")
        elif tag in _BLOCKS or tag == "hr":
            self._write("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.skipping = max(0, self.skipping - 1)
            return
        if self.skipping:
            return
        if self.note is not None:
            if tag == self.note[1]:
                if self.note_depth == 0:
                    if self.note_url is not None:
                        self.notes.append((self.note[0], self.note_url))
                    self.note = None
                else:
                    self.note_depth -= 1
            return
        if tag == "a" and self.links:
            href, parts = self.links.pop()
            label = " ".join("".join(parts).split())
            if href.startswith("#") and len(href) > 1:
                self._write(f"[^{href[1:]}]")
            elif href and not href.lower().startswith(("javascript:", "mailto:")):
                self._write(f"[{label}]({href.replace(' ', '%20')})")
            else:
                self._write(label)
        elif tag in _HEADINGS or tag in _BLOCKS or tag == "li":
            self._write("\n\n")

    def handle_data(self, data: str) -> None:
        if self.skipping:
            return
        self._write(_squeeze(data))


def _squeeze(text: str) -> str:
    """Runs of white space as one space, keeping a space at either edge the text had (white
    space alone is one space: it parts the words of the elements around it)."""
    if not text.strip():
        return " "
    lead = " " if text[:1].isspace() else ""
    tail = " " if text[-1:].isspace() else ""
    return f"{lead}{' '.join(text.split())}{tail}"


def html_to_markdown(html: str) -> str:
    """An HTML report as the Markdown the sentence reader takes (see the module docstring)."""
    first = _AnchorTargets()
    first.feed(html)
    first.close()
    converter = _Converter(first.targets)
    converter.feed(html)
    converter.close()
    body = "".join(converter.out)
    lines = [line.strip() for line in body.split("\n")]
    text = "\n".join(lines)
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    definitions = "".join(f"\n[^{name}]: {url}" for name, url in converter.notes)
    return text.strip() + ("\n" + definitions if definitions else "") + "\n"
