"""A Markdown report's sentences and what each one cites, with their places in the text.

Citations are read in the shapes reports are written in:

* inline links ``[text](https://…)`` and reference links ``[text][label]`` (``[label]: URL``);
* numbered references ``[1]``, ``[1, 2]``, ``[2-4]``, resolved through a sources list: a line
  ``[1] … URL`` or ``[1]: URL`` anywhere, or a numbered or bulleted item under a heading such as
  *Sources*, *References* or *Notes* (a bulleted item by its position);
* footnotes ``[^1]`` with their ``[^1]: … URL`` definitions;
* bare URLs, in parentheses, angle brackets or the text itself;
* a brief's source markers ``[S3]``, ``[S1, S4]``, ``[^S3]`` (dossier mode and the answer gate
  read them as written, :data:`SOURCE_MARKS`; here they only belong to the sentence they close).

One reader for every report: ``deep-research check`` reads what any tool wrote, the trace gate's
dossier mode and the answer gate what this project wrote (:func:`prose_sentences`).

A link to a file (``file:``, or a path with no scheme) is a citation no fetch may follow; a link
to an anchor of the report (``#top``) or a mail address is no citation at all. Headings, code,
sources lists and definitions are not prose; paragraphs, list items, quotes and table cells are.
A sentence ends at ``.``, ``!`` or ``?`` (past closing quotes and the citation markers that
follow it: "… in 2001.[1] Next") before white space and a capital, a digit or an opening mark,
unless the word before the stop is an abbreviation or an initial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

#: Words a full stop follows without ending a sentence (compared lower-cased, without the dot).
ABBREVIATIONS = frozenset(
    """e.g i.e etc vs cf al approx ca fig figs no nos vol pp p ed eds dr mr mrs ms prof st jr sr
    inc ltd co corp jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k""".split()
)
#: Headings whose section is a list of sources, never prose.
SOURCES_HEADING = re.compile(
    r"^\W*(sources|references|bibliography|citations|works cited|notes|footnotes|"
    r"links|further reading|sources cited|reference list)\W*$",
    re.IGNORECASE,
)

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_ATX = re.compile(r"^\s{0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$")
_SETEXT = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_FOOTNOTE_DEF = re.compile(r"^\s{0,3}\[\^([^\]\s]+)\]:\s*(.*)$")
_REFERENCE_DEF = re.compile(r"^\s{0,3}\[([^\]^][^\]]*)\]:\s*(.*)$")
_NUMBERED_DEF = re.compile(r"^\s{0,3}\[(\d{1,4})\][.:]?\s+(.*)$")
_ITEM = re.compile(r"^(\s*)(?:([-*+])|(\d{1,4})[.)])\s+")
_QUOTE_PREFIX = re.compile(r"^\s{0,3}(?:>\s?)+")
_TABLE_RULE = re.compile(r"^[\s|:-]+$")
_HTML_COMMENT = re.compile(r"^\s*<!--.*-->\s*$")

#: A brief's source markers: ``[S3]``, ``[S1, S4]``, ``[^S3]`` (the ids in group 1).
SOURCE_MARKS = re.compile(r"\[\^?(S\d+(?:\s*[,;]\s*S\d+)*)\]")
#: One source id of a marker (``S3``).
SOURCE_ID = re.compile(r"S\d+")
_URL_BODY = r"[^\s<>()\[\]\"'`]*[^\s<>()\[\]\"'`.,;:!?*_]"
_BARE_URL = re.compile(rf"https?://{_URL_BODY}")
_TARGET = r"\s*<?([^\s<>()]+(?:\([^\s()]*\)[^\s<>()]*)*)>?(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*"
_INLINE_LINK = re.compile(rf"(!?)\[([^\[\]]*)\]\({_TARGET}\)")
_REF_LINK = re.compile(r"\[([^\[\]]+)\]\[([^\[\]]*)\]")
_FOOTNOTE = re.compile(r"\[\^([^\]\s]+)\](?!:)")
_BRACKET = re.compile(r"\[([^\[\]]{1,80})\](?![(:\[])")
_NUMBERS = re.compile(
    r"^\s*\d{1,4}(?:\s*[-–]\s*\d{1,4})?(?:\s*[,;]\s*\d{1,4}(?:\s*[-–]\s*\d{1,4})?)*\s*$"
)
_ANGLE_URL = re.compile(r"<(https?://[^\s<>]+)>")
_PAREN_URL = re.compile(rf"\(\s*(https?://{_URL_BODY})\s*\)")
#: A citation marker that may stand after a sentence's stop and still belong to it.
_TRAILING = re.compile(
    rf"\s*(?:\[\^[^\]\s]+\]|\[\s*\d{{1,4}}(?:\s*[-–,;]\s*\d{{1,4}})*\s*\]|\(\s*https?://{_URL_BODY}\s*\)"
    rf"|<https?://[^\s<>]+>|{SOURCE_MARKS.pattern})"
)
_STOP = re.compile(r"[.!?]+")
_LAST_WORD = re.compile(r"[\w.]+$")
_INITIALS = re.compile(r"^(?:[A-Z]\.)+[A-Z]$")
#: Characters before a full stop read for the word it ends: longer than any abbreviation.
ABBREVIATION_CHARS = 24
_CLOSERS = re.compile(r"[\"'”’)\]*_]*")
_NEXT_START = re.compile(r"\s+(?=[A-Z0-9\"“‘'(\[*_`¿¡])")
_SPACE_BEFORE_PUNCT = re.compile(r"\s+([.,;:!?])")
_EMPTY_PARENS = re.compile(r"\(\s*(?:[,;]\s*)*\)")
#: A parenthesis holding nothing but links and their separators: a citation marker
#: ("(source 1, source 2)", "([nytimes.com](…))"), none of whose words the sentence claims.
_LINKS_ONLY = re.compile(rf"\(\s*(?:\[[^\[\]]*\]\({_TARGET}\)\s*[,;]?\s*)+\)")
#: A link's text that only labels a citation ("1", "[2]", "source 3", "ref. 4"): not prose.
_CITATION_LABEL = re.compile(
    r"^\s*\[?\s*(?:(?:sources?|refs?\.?|references?|citations?|notes?|links?)\s*)?"
    r"\d{1,4}\s*\]?\s*$",
    re.IGNORECASE,
)
_EMPHASIS = re.compile(r"(\*\*|__|`)")

#: A prose unit shorter than this many words is a label, not a claim.
MIN_SENTENCE_WORDS = 3


@dataclass(frozen=True)
class Cite:
    """One thing a sentence cites: a URL to fetch, or a link no fetch may follow."""

    target: str
    local: bool = False  # a file on someone's disk, never fetched


@dataclass(frozen=True)
class Sentence:
    """A prose sentence: where it is in the report's Markdown, the claim it makes (markers and
    link syntax removed), and what it cites."""

    number: int
    start: int
    end: int
    text: str
    cites: tuple[Cite, ...]
    unresolved: tuple[str, ...] = ()  # markers no definition resolves ("[7]")


@dataclass
class _Block:
    """A paragraph, list item, quote or table cell: its pieces of the report's text."""

    pieces: list[tuple[int, int]] = field(default_factory=list)


@dataclass
class _Definitions:
    labels: dict[str, str | None] = field(default_factory=dict)  # lower-cased label → target
    notes: dict[str, str | None] = field(default_factory=dict)  # footnote label → target

    def add(self, table: dict[str, str | None], label: str, rest: str) -> None:
        table.setdefault(label.strip().lower(), first_target(rest))


def first_target(text: str) -> str | None:
    """The first link target a definition's text gives: an inline link's, else a bare URL."""
    for match in _INLINE_LINK.finditer(text):
        if not match[1] and not match[3].startswith("#"):
            return match[3]
    found = _BARE_URL.search(text)
    if found is not None:
        return found[0]
    word = text.strip().split(maxsplit=1)
    if word and _is_link_target(word[0].strip("<>")):
        return word[0].strip("<>")
    return None


def _is_link_target(token: str) -> bool:
    return token.lower().startswith(("http://", "https://", "file:", "/", "./", "../"))


def _is_anchor_or_mail(target: str) -> bool:
    return target.startswith("#") or target.lower().startswith(("mailto:", "tel:", "javascript:"))


def classify(target: str) -> Cite | None:
    """A link target as a citation: a URL with a scheme is fetched (the fetcher refuses what its
    policy refuses), a file or a path is local; an anchor or a mail address is none."""
    if not target or _is_anchor_or_mail(target):
        return None
    scheme = urlsplit(target).scheme.lower() if ":" in target else ""
    if scheme == "file" or not scheme or (len(scheme) == 1 and target[1:3] in (":\\", ":/")):
        return Cite(target, local=True)
    return Cite(target)


def _lines(text: str) -> list[tuple[int, str]]:
    found = []
    position = 0
    for line in text.split("\n"):
        found.append((position, line))
        position += len(line) + 1
    return found


def _read_structure(text: str) -> tuple[list[_Block], _Definitions]:
    """The report's prose blocks, and the definitions its markers resolve through."""
    blocks: list[_Block] = []
    definitions = _Definitions()
    current: _Block | None = None
    in_fence = False
    sources_level: int | None = None
    listed = 0

    def flush() -> None:
        nonlocal current
        if current is not None and current.pieces:
            blocks.append(current)
        current = None

    def heading(level: int, title: str) -> None:
        nonlocal sources_level, listed
        if sources_level is not None and level <= sources_level:
            sources_level = None
        if SOURCES_HEADING.match(title.strip()):
            sources_level = level
            listed = 0

    for start, line in _lines(text):
        stripped = line.strip()
        if _FENCE.match(line):
            in_fence = not in_fence
            flush()
            continue
        if in_fence:
            continue
        atx = _ATX.match(line)
        if atx:
            flush()
            heading(len(atx[1]), atx[2] or "")
            continue
        if (
            _SETEXT.match(line)
            and current is not None
            and len(current.pieces) == 1
            and sources_level is None
        ):
            begin, end = current.pieces[0]
            current = None
            heading(1 if stripped.startswith("=") else 2, text[begin:end])
            continue
        footnote = _FOOTNOTE_DEF.match(line)
        if footnote:
            flush()
            definitions.add(definitions.notes, footnote[1], footnote[2])
            continue
        numbered = _NUMBERED_DEF.match(line)
        if numbered and first_target(numbered[2]) is not None:
            flush()
            definitions.add(definitions.labels, numbered[1], numbered[2])
            continue
        reference = _REFERENCE_DEF.match(line)
        if reference:
            flush()
            definitions.add(definitions.labels, reference[1], reference[2])
            continue
        if sources_level is not None:
            flush()
            item = _ITEM.match(line)
            if item:
                listed += 1
                label = item[3] or str(listed)
                definitions.add(definitions.labels, label, line[item.end() :])
            continue
        if not stripped or _HTML_COMMENT.match(line):
            flush()
            continue
        if stripped.startswith("|"):
            flush()
            if not _TABLE_RULE.match(stripped):
                blocks.append(_row(line, start))
            continue
        quoted = _QUOTE_PREFIX.match(line)
        offset = quoted.end() if quoted else 0
        item = _ITEM.match(line[offset:])
        if item:
            flush()
            offset += item.end()
        begin = start + offset + (len(line[offset:]) - len(line[offset:].lstrip()))
        end = start + len(line.rstrip())
        if end <= begin:
            continue
        if current is None:
            current = _Block()
        current.pieces.append((begin, end))
    flush()
    return blocks, definitions


def _row(line: str, start: int) -> _Block:
    """A table row as one block of its cells: a claim and the link beside it are one sentence."""
    pieces = []
    position = 0
    for cell in line.split("|"):
        inner = cell.strip()
        if inner:
            begin = start + position + cell.find(inner)
            pieces.append((begin, begin + len(inner)))
        position += len(cell) + 1
    return _Block(pieces)


def _joined(text: str, block: _Block) -> tuple[str, list[tuple[int, int]]]:
    """The block's pieces joined by one space, and (joined offset, report offset) per piece."""
    parts = []
    anchors = []
    at = 0
    for begin, end in block.pieces:
        anchors.append((at, begin))
        parts.append(text[begin:end])
        at += end - begin + 1
    return " ".join(parts), anchors


def _to_report(anchors: list[tuple[int, int]], position: int) -> int:
    """A joined offset as the report's: inside the piece it falls in (a joining space maps to the
    end of the piece before it)."""
    chosen = anchors[0]
    for anchor in anchors:
        if anchor[0] > position:
            break
        chosen = anchor
    return chosen[1] + (position - chosen[0])


def _ends(joined: str) -> list[int]:
    """Offsets in ``joined`` where a sentence ends (after its stop, closers and markers)."""
    ends = []
    for stop in _STOP.finditer(joined):
        if stop.group() == "." and _abbreviated(joined, stop.start()):
            continue
        position = _CLOSERS.match(joined, stop.end())
        end = position.end() if position else stop.end()
        while (marker := _TRAILING.match(joined, end)) is not None:
            end = marker.end()
        if end >= len(joined.rstrip()) or _NEXT_START.match(joined, end):
            ends.append(end)
    return ends


def _abbreviated(text: str, dot: int) -> bool:
    word = _LAST_WORD.search(text, max(0, dot - ABBREVIATION_CHARS), dot)
    if word is None:
        return False
    token = word[0]
    if len(token) == 1 and token.isupper():
        return True  # an initial: "G. van Rossum"
    if _INITIALS.match(token):
        return True  # letters with stops between them: "The A.V. Club", "U.N."
    return token.lower().rstrip(".") in ABBREVIATIONS


def _sentences_of(joined: str) -> list[tuple[int, int, int]]:
    """Each sentence of a block's joined text: its start, its end, and where its words end
    (citation markers alone after its stop are its own, but their link text is no part of its
    claim)."""
    begin = 0
    pieces: list[tuple[int, int, int]] = []
    for end in [*_ends(joined), len(joined)]:
        if end <= begin:
            continue
        piece = joined[begin:end]
        if piece.strip():
            lead = len(piece) - len(piece.lstrip())
            start, stop = begin + lead, begin + len(piece.rstrip())
            if pieces and not _has_words(joined[start:stop]):
                pieces[-1] = (pieces[-1][0], stop, pieces[-1][2])
            else:
                pieces.append((start, stop, stop))
        begin = end
    return pieces


def prose_sentences(text: str) -> list[str]:
    """Every prose sentence of a Markdown text as written (its lines joined by a space, its
    citation markers kept), in order."""
    written: list[str] = []
    for block in _read_structure(text)[0]:
        joined = _joined(text, block)[0]
        written.extend(joined[start:end] for start, end, _ in _sentences_of(joined))
    return written


def split_sentences(text: str) -> list[Sentence]:
    """Every prose sentence of a Markdown report, in order, with what it cites."""
    blocks, definitions = _read_structure(text)
    found: list[Sentence] = []
    for block in blocks:
        joined, anchors = _joined(text, block)
        for start, end, words in _sentences_of(joined):
            claim, cites, unresolved = read_citations(joined[start:end], definitions)
            if words < end:
                claim = read_citations(joined[start:words], definitions)[0]
            if len(claim.split()) < MIN_SENTENCE_WORDS and not cites:
                continue
            found.append(
                Sentence(
                    len(found) + 1,
                    _to_report(anchors, start),
                    _to_report(anchors, end - 1) + 1,
                    claim,
                    cites,
                    unresolved,
                )
            )
    return found


def _has_words(text: str) -> bool:
    bare = _INLINE_LINK.sub("", text)
    for pattern in (_FOOTNOTE, _BRACKET, _ANGLE_URL, _BARE_URL):
        bare = pattern.sub("", bare)
    return any(ch.isalnum() for ch in bare)


def read_citations(
    written: str, definitions: _Definitions | None = None
) -> tuple[str, tuple[Cite, ...], tuple[str, ...]]:
    """A sentence as written → the claim it makes, what it cites (in order), and the markers no
    definition resolves (``definitions``: the report's; none, when it has no sources list)."""
    if definitions is None:
        definitions = _Definitions()
    found: list[tuple[int, Cite]] = []
    unresolved: list[str] = []

    def cite(position: int, target: str | None, marker: str) -> None:
        if target is None:
            unresolved.append(marker)
            return
        made = classify(target)
        if made is not None:
            found.append((position, made))

    def inline(match: re.Match[str]) -> str:
        if match[1]:
            return ""  # an image is no claim and no citation
        cite(match.start(), match[3], match[0])
        return "" if _CITATION_LABEL.match(match[2]) else match[2]

    def links_only(match: re.Match[str]) -> str:
        # The links stay, to be cited in reading order; their text goes.
        return _INLINE_LINK.sub(lambda link: f"{link[1]}[]({link[3]})", match[0])

    def reference(match: re.Match[str]) -> str:
        label = (match[2] or match[1]).strip().lower()
        if label in definitions.labels:
            cite(match.start(), definitions.labels[label], match[0])
            return match[1]
        return match[0]

    def footnote(match: re.Match[str]) -> str:
        label = match[1].strip().lower()
        cite(match.start(), definitions.notes.get(label), match[0])
        return ""

    def bracket(match: re.Match[str]) -> str:
        inner = match[1]
        if _NUMBERS.match(inner):
            for number in _numbers(inner):
                key = str(number)
                cite(match.start(), definitions.labels.get(key), f"[{key}]")
            return ""
        label = inner.strip().lower()
        if label in definitions.labels:
            cite(match.start(), definitions.labels[label], match[0])
            return inner
        return match[0]

    def bare(match: re.Match[str]) -> str:
        cite(match.start(), match[1] if match.lastindex else match[0], match[0])
        return ""

    text = _LINKS_ONLY.sub(links_only, written)
    text = _INLINE_LINK.sub(inline, text)
    text = _REF_LINK.sub(reference, text)
    text = _FOOTNOTE.sub(footnote, text)
    text = _BRACKET.sub(bracket, text)
    text = _PAREN_URL.sub(bare, text)
    text = _ANGLE_URL.sub(bare, text)
    text = _BARE_URL.sub(bare, text)
    text = _EMPTY_PARENS.sub("", _EMPHASIS.sub("", text))
    claim = _SPACE_BEFORE_PUNCT.sub(r"\1", " ".join(text.split())).strip()
    # Positions are of the text each pattern saw; the order within one pattern is kept, which
    # is the order a reader meets the citations in all but contrived sentences.
    cites = tuple(dict.fromkeys(c for _, c in found))
    return claim, cites, tuple(dict.fromkeys(unresolved))


#: The most numbers one bracket expands to ("[1-2000]" is not 2,000 citations).
MAX_RANGE = 20


def _numbers(inner: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"[,;]", inner):
        bounds = [int(value) for value in re.findall(r"\d+", part)]
        if len(bounds) == 2 and 0 <= bounds[1] - bounds[0] < MAX_RANGE:
            numbers.extend(range(bounds[0], bounds[1] + 1))
        else:
            numbers.extend(bounds[:1])
    return numbers
