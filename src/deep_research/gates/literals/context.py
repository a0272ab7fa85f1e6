"""Context from the document: what a reader of the located evidence also has in front of them.

A located sentence often leaves out what the page around it says — the subject (the page is
about one film), the year or the season (the section is about 2020). The check may take a
**year, a season or a name, never a figure**, from these passages, nearest first, each bounded:

1. ``paragraph``: the located span's own paragraph before the span (its last 1,000 characters);
2. ``paragraph before``: the paragraph above it, unless a heading comes first (context does not
   cross into another section; its last 1,000 characters);
3. ``heading``: the nearest heading above the span within 20,000 characters — a markdown heading
   (``## Box office``) with its shallower parents, or a short line with no closing punctuation
   followed by longer prose;
4. ``title``: the document's title, as its source record (or the batch row) gives it;
5. ``publication date``: only as the year of a date the text states without one.

Paragraphs are the blocks between blank lines, or lines where the text has no blank lines. What a
passage establishes is reported with the passage's name (``2020``, established by the
``title``), so a reader sees where it came from. Nothing here is ever invented: every passage is
text of the document or of its own record.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import cached_property

from deep_research.models import ContextPassage

#: The passage a context literal came from, as the literal check records it.
Where = ContextPassage

#: How far back a heading is looked for, and how much of a paragraph is read.
_HEADING_REACH = 20_000
_PARAGRAPH_CHARS = 1_000
_MAX_HEADINGS = 3
#: A plain-text heading: a short line that closes no sentence.
_HEADING_MAX_CHARS = 80
_HEADING_MAX_WORDS = 12

_MARKDOWN_HEADING_RE = re.compile(r"[ \t]{0,3}(#{1,6})[ \t]+(.+?)[ \t#]*")
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")
_CLOSES_A_SENTENCE = tuple(".!?,;:")
_LIST_MARKERS = tuple("-*•+|>")


@dataclass(frozen=True)
class Passage:
    """One piece of document context, named by where it sits."""

    where: Where
    text: str


def _heading(line: str, following: str | None) -> tuple[int, str] | None:
    """(level, text) when ``line`` is a heading; plain headings are level 7, below markdown's."""
    found = _MARKDOWN_HEADING_RE.fullmatch(line)
    if found is not None:
        return len(found.group(1)), found.group(2)
    stripped = line.strip()
    if (
        not stripped
        or len(stripped) > _HEADING_MAX_CHARS
        or len(stripped.split()) > _HEADING_MAX_WORDS
        or stripped.endswith(_CLOSES_A_SENTENCE)
        or stripped.startswith(_LIST_MARKERS)
        or not stripped[0].isalnum()
        or following is None
        or len(following.strip()) <= len(stripped)
    ):
        return None
    return 7, stripped


class DocumentContext:
    """The passages around located spans of one document, computed only when first asked for."""

    def __init__(
        self,
        text: str = "",
        spans: Sequence[tuple[int, int]] = (),
        *,
        title: str | None = None,
        published: date | None = None,
    ) -> None:
        self._text = text
        self._spans = tuple(spans)
        self.title = title.strip() if title and title.strip() else None
        self.published = published

    @cached_property
    def passages(self) -> tuple[Passage, ...]:
        """Every passage, nearest first (the order the year in force is looked for)."""
        found: list[Passage] = []
        for start, _ in self._spans:
            found.extend(self._around(start))
        if self.title:
            found.append(Passage("title", self.title))
        if self.published is not None:
            found.append(Passage("publication date", self.published.isoformat()))
        return tuple(dict.fromkeys(found))

    @cached_property
    def _blank_separated(self) -> bool:
        return _BLANK_LINE_RE.search(self._text) is not None

    def _paragraphs_before(self, start: int) -> list[str]:
        """The blocks above ``start``, nearest first, the span's own block (up to it) first."""
        window = self._text[max(0, start - _HEADING_REACH) : start]
        blocks = _BLANK_LINE_RE.split(window) if self._blank_separated else window.split("\n")
        return [block.replace("\n", " ").strip() for block in reversed(blocks)]

    def _around(self, start: int) -> list[Passage]:
        blocks = self._paragraphs_before(start) or [""]
        passages: list[Passage] = []
        if blocks[0]:
            passages.append(Passage("paragraph", blocks[0][-_PARAGRAPH_CHARS:]))
        headings: list[tuple[int, str]] = []
        following = f"{blocks[0]} {self._text[start : start + 4 * _HEADING_MAX_CHARS]}".strip()
        for block in blocks[1:]:
            if not block:
                continue
            heading = _heading(block, following)
            following = block
            if heading is None:
                if not headings and not any(p.where == "paragraph before" for p in passages):
                    passages.append(Passage("paragraph before", block[-_PARAGRAPH_CHARS:]))
                continue
            if headings and heading[0] >= headings[-1][0]:
                continue  # a sibling or a child of the heading already found, not a parent
            headings.append(heading)
            if heading[0] in (1, 7) or len(headings) == _MAX_HEADINGS:
                break  # the top, or a plain heading (which has no levels to climb)
        passages.extend(Passage("heading", text) for _, text in headings)
        return passages
