"""Text normalization that remembers where every normalized character came from.

Quotes are matched against corpus text after both sides are normalized the same way:

* NFKC, then case-fold, then NFKC again (case-folding can produce unnormalized sequences);
* every quotation mark variant becomes ``'`` or ``"``; every dash, hyphen and minus becomes ``-``;
* every Unicode white-space character becomes a space, and a run of white space collapses to one
  space; leading and trailing white space is dropped;
* invisible format characters (Unicode category Cf: zero-width space/joiners, soft hyphen, BOM,
  bidirectional marks) are removed.

A match found in normalized text must be reported in the original text, so
:func:`normalize_text` also returns an offset map. ``offsets[i]`` is the index in the original of
the first character that produced normalized character ``i``; ``offsets[len(text)]`` is
``len(original)``. Each normalized character belongs to a *chunk* of the original: usually the
single character it was copied from; for an expansion (``"ﬁ"`` -> ``"fi"``) both output
characters share the one-character chunk; for a composition (``"e"`` + combining acute ->
``"é"``) the chunk spans both input characters. A collapsed white-space run is owned by its first
character; the rest of the run, like removed format characters, belongs to no chunk, which keeps
mapped spans tight.

Speed. Corpus documents are long and mostly ASCII, so per-character Python work is confined to
*irregular* stretches: runs of non-ASCII characters and runs of two or more white-space
characters, each widened to swallow adjacent white space (so collapsing never has to look across
a stretch boundary) and, when it starts with a combining mark, its base character. The text is
first encoded to ASCII bytes (``?`` for anything else), lower-cased and white-space-translated in
one ``bytes.translate``; the stretches are then found with ``bytes.find``, and everything between
them is copied as is, since its normalization is exactly that 1:1 translation. The map is stored
as segments (linear runs, or blocks produced by one chunk), not one integer per character, so
memory grows with the number of irregular stretches and a lookup is a binary search.

Inside a stretch, text is normalized per *cluster*: a base character plus the combining marks
after it (and any format characters between them, which are removed and must not keep a mark
from composing). Normalizing cluster by cluster keeps the result independent of where a slice
starts, which is what makes :meth:`NormalizedText.to_original` round-trip; the price is that the
rare compositions between two class-0 characters (conjoining Hangul jamo) are not made. Long
stretches (non-Latin text) translate the characters that normalize one for one with a single
``str.translate`` and go cluster by cluster only for the rest.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import AnyStr, overload

__all__ = ["NormalizedText", "OffsetMap", "normalize", "normalize_text"]

_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2039\u203a\uff07"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u00ab\u00bb\uff02"
_MINUS_SIGNS = "\u2212\u2796\ufe63\uff0d"
_ASCII_SPACES_TO_FIX = "\t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"

_MULTI_SPACE = re.compile(r" {2,}")
_QUESTION_MARKS = re.compile(rb"\?+")
_SPACES = re.compile(rb" +")
_SPACE_RUN = re.compile(r" +")
_SPACE = ord(" ")
_ASCII_FOLD = bytes.maketrans(
    bytes(range(ord("A"), ord("Z") + 1)) + _ASCII_SPACES_TO_FIX.encode("ascii"),
    bytes(range(ord("a"), ord("z") + 1)) + b" " * len(_ASCII_SPACES_TO_FIX),
)

# Segment kinds stored in OffsetMap: a linear segment copies characters one for one; a block
# segment is produced as a whole by an original chunk [start, end).
_LINEAR = -1


class OffsetMap(Sequence[int]):
    """``offsets[i]`` for ``i`` in ``0..len(text)``, stored as segments.

    Segment ``k`` starts at normalized index ``norm[k]`` and original index ``orig[k]``. When
    ``chunk_end[k] == -1`` it is linear (normalized ``norm[k] + j`` comes from original
    ``orig[k] + j``); otherwise every normalized character in it comes from the original chunk
    ``[orig[k], chunk_end[k])``.
    """

    __slots__ = ("_chunk_end", "_length", "_norm", "_orig", "_original_length")

    def __init__(
        self,
        norm: array[int],
        orig: array[int],
        chunk_end: array[int],
        text_length: int,
        original_length: int,
    ) -> None:
        self._norm = norm
        self._orig = orig
        self._chunk_end = chunk_end
        self._length = text_length + 1
        self._original_length = original_length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            return [self._start_of(i) for i in range(*index.indices(self._length))]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("offset index out of range")
        return self._start_of(index)

    def __iter__(self) -> Iterator[int]:
        return (self._start_of(i) for i in range(self._length))

    def _start_of(self, index: int) -> int:
        if index == self._length - 1:
            return self._original_length
        k = bisect_right(self._norm, index) - 1
        if self._chunk_end[k] == _LINEAR:
            return self._orig[k] + (index - self._norm[k])
        return self._orig[k]

    def chunk_end(self, index: int) -> int:
        """End (exclusive) in the original of the chunk that produced normalized char ``index``."""
        if not 0 <= index < self._length - 1:
            raise IndexError("normalized index out of range")
        k = bisect_right(self._norm, index) - 1
        end = self._chunk_end[k]
        if end == _LINEAR:
            return self._orig[k] + (index - self._norm[k]) + 1
        return end

    @property
    def segment_count(self) -> int:
        return len(self._norm)


@dataclass(frozen=True)
class NormalizedText:
    """Normalized text plus the map back to the original it came from."""

    text: str
    offsets: Sequence[int]

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """Map normalized ``[start, end)`` to the tightest original ``[start, end)`` covering it.

        The start is the first original character of the chunk holding ``text[start]``; the end
        is the end of the chunk holding ``text[end - 1]``. An empty range maps to an empty range.
        """
        if not 0 <= start <= end <= len(self.text):
            raise ValueError(f"range [{start}, {end}) outside normalized text of {len(self.text)}")
        begin = self.offsets[start]
        if start == end:
            return begin, begin
        offsets = self.offsets
        if isinstance(offsets, OffsetMap):
            return begin, offsets.chunk_end(end - 1)
        # A plain sequence only records starts: the chunk of text[end-1] ends where the next
        # distinct start begins, which may include removed characters (not tight, still correct).
        last = offsets[end - 1]
        nxt = end
        while nxt < len(offsets) - 1 and offsets[nxt] == last:
            nxt += 1
        return begin, offsets[nxt]


@lru_cache(maxsize=65536)
def _normalize_cluster(cluster: str) -> str:
    """Normalize one cluster (a base character and its combining marks) in isolation."""
    # Format characters go first, so that a mark separated from its base by one still composes.
    visible = "".join(char for char in cluster if not _is_format(char))
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", visible).casefold())
    out: list[str] = []
    for char in folded:
        if char.isspace():
            out.append(" ")
        elif char in _SINGLE_QUOTES:
            out.append("'")
        elif char in _DOUBLE_QUOTES:
            out.append('"')
        elif char in _MINUS_SIGNS or unicodedata.category(char) == "Pd":
            out.append("-")
        elif _is_format(char):
            continue
        else:
            out.append(char)
    return "".join(out)


def _is_format(char: str) -> bool:
    return unicodedata.category(char) == "Cf"


def _irregular_spans(s: str, folded: bytes) -> list[tuple[int, int]]:
    """Sorted, disjoint stretches of ``s`` that need per-cluster normalization.

    ``folded`` is ``s`` encoded to ASCII with ``?`` for each non-ASCII character, lower-cased and
    with every ASCII white-space character turned into a space, so the scans below are byte
    searches. A genuine ``?`` swept into a stretch is harmless: it normalizes to itself.
    """
    found: list[tuple[int, int]] = []
    if not s.isascii():
        i = folded.find(b"?")
        while i >= 0:
            end = _run_end(_QUESTION_MARKS, folded, i)
            found.append((i, end))
            i = folded.find(b"?", end)
    i = folded.find(b"  ")
    while i >= 0:
        end = _run_end(_SPACES, folded, i)
        found.append((i, end))
        i = folded.find(b"  ", end)
    n = len(s)
    if n and folded[0] == _SPACE:
        found.append((0, 1))
    if n and folded[-1] == _SPACE:
        found.append((n - 1, n))
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        # Widen so that no ASCII gap begins or ends with white space next to a stretch (collapsing
        # then never looks across a boundary), and so that a stretch starting with a combining
        # mark (or a format character) keeps the base character before it.
        if start > 0 and _attaches_to_previous(s, start):
            start -= 1
        while start > 0 and folded[start - 1] == _SPACE:
            start -= 1
        while end < n and folded[end] == _SPACE:
            end += 1
        if merged and start <= merged[-1][1]:
            merged[-1] = (min(merged[-1][0], start), max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _run_end(pattern: re.Pattern[AnyStr], data: AnyStr, start: int) -> int:
    match = pattern.match(data, start)
    return match.end() if match else start + 1


# A stretch plan: the normalized output and its segments relative to the stretch, as
# (normalized start, original start, original end or _LINEAR).
_Plan = tuple[str, tuple[tuple[int, int, int], ...]]


class _StretchBuilder:
    """Output and segments of one stretch, collapsing white space as pieces arrive."""

    def __init__(self, after_space: bool) -> None:
        self.pieces: list[str] = []
        self.segments: list[tuple[int, int, int]] = []
        self.length = 0
        self.last_is_space = after_space

    def cluster(self, out: str, start: int, end: int) -> None:
        """The normalized form ``out`` of the cluster ``[start, end)``."""
        if out == " ":
            if self.last_is_space:
                return
            # The first white-space character of a run owns the collapsed space.
            end = start + 1
        elif self.last_is_space:
            out = out.lstrip(" ")
        if "  " in out:
            out = _MULTI_SPACE.sub(" ", out)
        if not out:
            return
        one_to_one = len(out) == 1 and end - start == 1
        self._emit(out, start, _LINEAR if one_to_one else end)

    def one_to_one(self, out: str, start: int) -> None:
        """``out`` maps character for character to the original from ``start``."""
        i = len(out) - len(out.lstrip(" ")) if self.last_is_space else 0
        while i < len(out):
            run = out.find("  ", i)
            if run < 0:
                self._emit(out[i:], start + i, _LINEAR)
                return
            self._emit(out[i : run + 1], start + i, _LINEAR)
            i = _run_end(_SPACE_RUN, out, run)

    def _emit(self, out: str, start: int, end: int) -> None:
        self.pieces.append(out)
        self.segments.append((self.length, start, end))
        self.length += len(out)
        self.last_is_space = out.endswith(" ")

    def plan(self) -> _Plan:
        return "".join(self.pieces), tuple(self.segments)


def _plan_stretch(stretch: str, after_space: bool) -> _Plan:
    """Normalize one stretch, collapsing white space inside it.

    A stretch never touches white space outside itself, so the only context it needs is whether
    it opens the text (``after_space``: leading white space is dropped there).
    """
    builder = _StretchBuilder(after_space)
    if len(stretch) < _LONG_STRETCH:
        _add_clusters(builder, stretch, 0, len(stretch))
        return builder.plan()
    # Long stretches are non-Latin text. Characters that normalize one for one in isolation are
    # translated in bulk; only the rest (expansions, marks, removed characters) go cluster by
    # cluster.
    table = _OneToOneTable()
    translated = stretch.translate(table)
    position = 0
    for start, end in [*_hard_runs(stretch, table.hard), (len(stretch), len(stretch))]:
        if start > position:
            builder.one_to_one(translated[position:start], position)
        _add_clusters(builder, stretch, start, end)
        position = end
    return builder.plan()


class _OneToOneTable(dict[int, str]):
    """A ``str.translate`` table filled on first sight of each character.

    A character whose normalization is not a single character (or that is a mark or a format
    character) maps to itself and is recorded in ``hard``; callers redo those positions.
    """

    def __init__(self) -> None:
        super().__init__()
        self.hard: list[str] = []

    def __missing__(self, code: int) -> str:
        char = chr(code)
        out = _normalize_cluster(char)
        if len(out) != 1 or _is_format(char) or unicodedata.combining(char):
            self.hard.append(char)
            out = char
        self[code] = out
        return out


def _add_clusters(builder: _StretchBuilder, stretch: str, start: int, end: int) -> None:
    for c_start, c_end in _clusters(stretch, start, end):
        builder.cluster(_normalize_cluster(stretch[c_start:c_end]), c_start, c_end)


def _hard_runs(stretch: str, hard: list[str]) -> list[tuple[int, int]]:
    """Runs of ``hard`` characters, each widened to the base its first character attaches to."""
    if not hard:
        return []
    pattern = re.compile("[" + "".join(re.escape(char) for char in hard) + "]+")
    runs: list[tuple[int, int]] = []
    for match in pattern.finditer(stretch):
        start, end = match.span()
        if start > 0 and _attaches_to_previous(stretch, start):
            start -= 1
        if runs and start <= runs[-1][1]:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    return runs


_plan_short_stretch = lru_cache(maxsize=16384)(_plan_stretch)
_CACHEABLE_STRETCH = 32
_LONG_STRETCH = 256


def _attaches_to_previous(text: str, index: int) -> bool:
    """Whether ``text[index]`` belongs to the cluster before it.

    Combining marks do; so do invisible format characters that sit between a base and its mark
    (they are removed, and must not keep the mark from composing). Other format characters stay
    clusters of their own, so the spans around them stay tight.
    """
    if unicodedata.combining(text[index]):
        return True
    end = index
    while end < len(text) and _is_format(text[end]):
        end += 1
    return end > index and end < len(text) and bool(unicodedata.combining(text[end]))


def _clusters(stretch: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each cluster in ``stretch[start:end]``: a base and its marks."""
    begin = start
    for i in range(start + 1, end):
        if not _attaches_to_previous(stretch, i):
            yield begin, i
            begin = i
    if begin < end:
        yield begin, end


def normalize_text(s: str) -> NormalizedText:
    """Normalize ``s`` (see the module docstring) and keep the map back to ``s``."""
    folded = s.encode("ascii", "replace").translate(_ASCII_FOLD)
    pieces: list[str] = []
    norm = array("q", [0])
    orig = array("q", [0])
    chunk_end = array("q", [_LINEAR])
    length = 0
    position = 0
    for start, end in [*_irregular_spans(s, folded), (len(s), len(s))]:
        if start > position:
            gap = folded[position:start].decode("ascii")
            pieces.append(gap)
            # A linear run continuing the previous linear segment needs no segment of its own.
            if chunk_end[-1] != _LINEAR or orig[-1] + length - norm[-1] != position:
                norm.append(length)
                orig.append(position)
                chunk_end.append(_LINEAR)
            length += len(gap)
        if end > start:
            stretch = s[start:end]
            plan = _plan_short_stretch if len(stretch) <= _CACHEABLE_STRETCH else _plan_stretch
            out, segments = plan(stretch, start == 0)
            pieces.append(out)
            for rel_norm, rel_start, rel_end in segments:
                at_norm = length + rel_norm
                at_orig = start + rel_start
                if rel_end == _LINEAR:
                    if chunk_end[-1] == _LINEAR and orig[-1] + at_norm - norm[-1] == at_orig:
                        continue
                    chunk_end.append(_LINEAR)
                else:
                    chunk_end.append(start + rel_end)
                norm.append(at_norm)
                orig.append(at_orig)
            length += len(out)
        position = end
    text = "".join(pieces)
    if text.endswith(" "):
        # Only a stretch at the very end leaves a trailing space; drop it (and its segment if
        # nothing else is in it).
        text = text[:-1]
        if len(norm) > 1 and norm[-1] == len(text):
            norm.pop()
            orig.pop()
            chunk_end.pop()
    return NormalizedText(text, OffsetMap(norm, orig, chunk_end, len(text), len(s)))


def normalize(s: str) -> str:
    """The normalized form of ``s`` without the offset map."""
    if s.isascii():
        # For ASCII, NFKC and case-folding are lower(), nothing is a quote variant or invisible,
        # and str.split's white space is exactly the set folded to spaces: collapsing is a join.
        return " ".join(s.lower().split())
    return normalize_text(s).text
