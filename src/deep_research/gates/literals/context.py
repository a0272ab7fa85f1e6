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

A **name** may also come from where a reader learns who is speaking and what the page is about
(:attr:`DocumentContext.name_passages`):

6. ``speaker``: when the located text is inside a quotation, the speaker its attribution names
   (:mod:`.voice`);
7. ``title``: besides the record's, the document's own first line when it is a heading;
8. ``lead``: the first sentence of the document's first paragraph of prose (in its first 3,000
   characters, above the span), where a report names its subject — later sentences of it do not
   count;
9. ``byline``: the publisher — the source record's (a web domain is read as its name's words:
   ``acme-energy.example`` is "acme energy"), a byline line near the top (``By …``,
   ``Published by …``, ``Author: …``), a page title's last part after ``|`` — only when the
   located text speaks in the first person outside any quotation: a publisher's "we" is its own.

A quotation speaks for its speaker, not for the publisher that reports it nor the one it was
told to (``told the Daily Courier``): :mod:`.matching` reads :attr:`DocumentContext.addressees`
and :attr:`DocumentContext.bylines` for that.

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

from deep_research.gates.literals.voice import Attribution, first_person, quoted_speaker
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

#: Where the lead paragraph and a byline are looked for, and how long a lead's sentence is read.
_LEAD_REACH = 3_000
_BYLINE_REACH = 1_500
_LEAD_MIN_CHARS = 40
_SENTENCE_CHARS = 400
_BYLINE_RE = re.compile(
    r"[ \t]*(?:By|Posted by|Published by|Written by|Authors?:)[ \t]+(\S.{0,99}?)[ \t]*",
)
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s|$)")
_TITLE_SITE_SEPARATOR = " | "
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


@dataclass(frozen=True)
class SourceFacts:
    """What a source's record says about its document besides the text: the context the literal
    check may read (never evidence of a figure)."""

    title: str | None = None
    published: date | None = None
    #: Who published it (a source row's ``owner``): whose "we" an unquoted passage is.
    publisher: str | None = None


class DocumentContext:
    """The passages around located spans of one document, computed only when first asked for."""

    def __init__(
        self,
        text: str = "",
        spans: Sequence[tuple[int, int]] = (),
        facts: SourceFacts | None = None,
    ) -> None:
        facts = facts or SourceFacts()
        self._text = text
        self._spans = tuple(spans)
        self.title = facts.title.strip() if facts.title and facts.title.strip() else None
        self.published = facts.published
        self.publisher = (
            facts.publisher.strip() if facts.publisher and facts.publisher.strip() else None
        )

    @property
    def text(self) -> str:
        """The whole document."""
        return self._text

    @property
    def located(self) -> tuple[str, ...]:
        """The located spans' text."""
        return tuple(self._text[start:end] for start, end in self._spans)

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
            if not block or _BYLINE_RE.fullmatch(block):
                continue  # a byline is neither a heading nor prose: the ``byline`` passage
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

    # --- names: who speaks, what the page is about ------------------------------------------

    def _block_at(self, position: int) -> tuple[int, int]:
        """The paragraph holding ``position``: its start and end offsets."""
        if not self._blank_separated:
            start = self._text.rfind("\n", 0, position) + 1
            end = self._text.find("\n", position)
            return start, len(self._text) if end < 0 else end
        lowest = max(0, position - _HEADING_REACH)
        before = list(_BLANK_LINE_RE.finditer(self._text, lowest, position))
        after = _BLANK_LINE_RE.search(self._text, position, position + _HEADING_REACH)
        start = before[-1].end() if before else lowest
        return start, after.start() if after else min(len(self._text), position + _HEADING_REACH)

    @cached_property
    def _speech(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """For each located span inside an attributed quotation: the speaker's words and the
        addressee's (if any)."""
        found: list[tuple[str, tuple[str, ...]]] = []
        for start, _ in self._spans:
            block_start, block_end = self._block_at(start)
            block = self._text[block_start:block_end]
            said: Attribution | None = quoted_speaker(block, start - block_start)
            if said is None:
                continue
            addressee = () if said.addressee is None else (block[slice(*said.addressee)],)
            found.append((block[slice(*said.speaker)], addressee))
        return tuple(found)

    @property
    def quoted(self) -> bool:
        """Whether a located span is inside a quotation its document attributes to a speaker."""
        return bool(self._speech)

    @cached_property
    def _first_person(self) -> bool:
        """Whether the located text speaks for its writer: "we", "our", "I" outside quotes."""
        return not self.quoted and any(first_person(span) for span in self.located)

    @cached_property
    def bylines(self) -> tuple[str, ...]:
        """The publisher's names: the record's, a byline line near the top, a title's site."""
        found: list[str] = []
        if self.publisher:
            found.append(_publisher_name(self.publisher))
        for line in self._text[:_BYLINE_REACH].splitlines():
            byline = _BYLINE_RE.fullmatch(line)
            if byline is not None:
                found.append(byline.group(1))
        if self.title and _TITLE_SITE_SEPARATOR in self.title:
            found.append(self.title.rsplit(_TITLE_SITE_SEPARATOR, 1)[1].strip())
        return tuple(dict.fromkeys(name for name in found if name.strip()))

    @property
    def subjects(self) -> tuple[str, ...]:
        """What the page says it is about: its titles (without a site's name after `` | ``)
        and its lead."""
        return tuple(
            p.text.split(_TITLE_SITE_SEPARATOR)[0] if p.where == "title" else p.text
            for p in self.name_passages
            if p.where in ("title", "lead")
        )

    @property
    def addressees(self) -> tuple[str, ...]:
        """Whom the quotations of the located text were told to ("told the Daily Courier")."""
        return tuple(dict.fromkeys(name for _, told in self._speech for name in told))

    @cached_property
    def _opening(self) -> list[tuple[int, str]]:
        """The blocks of the document's first characters: (offset, text), in order."""
        window = self._text[:_LEAD_REACH]
        separator = _BLANK_LINE_RE if self._blank_separated else re.compile(r"\n")
        blocks: list[tuple[int, str]] = []
        position = 0
        for found in [*separator.finditer(window), None]:
            end = found.start() if found is not None else len(window)
            if window[position:end].strip():
                blocks.append((position, window[position:end].strip()))
            position = found.end() if found is not None else end
        return blocks

    def _text_title(self, first_span: int) -> Passage | None:
        """The document's first line, when it is a heading above the located text."""
        blocks = self._opening
        if not blocks or blocks[0][0] >= first_span:
            return None
        line, *rest = blocks[0][1].split("\n")
        after = [*rest, *(block for _, block in blocks[1:])]
        following = next((text for text in after if not _BYLINE_RE.fullmatch(text)), None)
        heading = _heading(line, following)
        return Passage("title", heading[1]) if heading is not None else None

    def _lead(self, first_span: int) -> Passage | None:
        """The first sentence of the first paragraph of prose above the located text."""
        blocks = self._opening
        own_block = self._block_at(first_span)[0]
        for index, (offset, block) in enumerate(blocks):
            if offset >= own_block:
                return None  # the span's own paragraph is the ``paragraph`` passage
            following = blocks[index + 1][1] if index + 1 < len(blocks) else None
            one_line = block.replace("\n", " ")
            end = _SENTENCE_END_RE.search(one_line)
            if (
                end is None  # no sentence: a heading, a caption, a line of a list
                or len(one_line) < _LEAD_MIN_CHARS
                or _BYLINE_RE.fullmatch(one_line)
                or _heading(one_line, following) is not None
            ):
                continue
            return Passage("lead", one_line[: min(end.end(), _SENTENCE_CHARS)])
        return None

    @cached_property
    def name_passages(self) -> tuple[Passage, ...]:
        """Every passage that may establish a name, nearest first."""
        found = [p for p in self.passages if p.where not in ("title", "publication date")]
        found.extend(Passage("speaker", speaker) for speaker, _ in self._speech)
        if self.title:
            found.append(Passage("title", self.title))
        if self._spans:
            first_span = min(start for start, _ in self._spans)
            found.extend(p for p in (self._text_title(first_span), self._lead(first_span)) if p)
        if self._first_person:
            found.extend(Passage("byline", name) for name in self.bylines)
        return tuple(dict.fromkeys(found))


def _publisher_name(publisher: str) -> str:
    """A registrable web domain as its name's words (``acme-energy.example`` is "acme energy",
    ``bbc.co.uk`` "bbc"); any other publisher (a declared author, a folder) as it is."""
    if " " in publisher or "." not in publisher:
        return publisher
    labels = publisher.lower().split(".")[:-1]  # the last label is the top-level domain
    while len(labels) > 1 and len(labels[-1]) <= 3:
        labels.pop()  # co.uk, com.au: a second-level suffix, not the name
    return re.sub(r"[-_]+", " ", labels[-1])
