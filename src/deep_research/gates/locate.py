"""Find where a cited quote sits in a corpus document.

:func:`locate` returns the quote's span ``[start, end)`` in the *original* document text, or
``None``. Stages run cheapest first and the first hit wins:

1. **exact** -- ``str.find`` of the quote as given (first occurrence).
2. **normalized** -- both sides normalized by :mod:`deep_research.gates.textnorm` (NFKC, case-fold,
   straight quotes, ``-`` for every dash, white space collapsed, invisible characters removed);
   the match is mapped back through the offset map.
3. **ellipsis** -- ``…`` or ``...`` (also ``[...]`` and ``. . .``) splits the quote into
   segments. Every segment must be found, in order, each starting at most
   :data:`ELLIPSIS_MAX_GAP` normalized characters after the previous one ended; an ellipsis elides
   words inside a passage, and a segment further away than a few paragraphs is not part of the
   same passage. A segment is matched normalized-exactly, or fuzzily (stage 4 rules) when it is
   long enough. Of all chains, the one with the fewest edits and then the shortest wins (a
   heading often repeats the passage's first words). The span runs from the first segment's
   start to the last one's end, plus a leading/trailing ellipsis when the document has one there.
   Quotes whose segments are degenerate (no segment, or a segment with fewer than
   :data:`ELLIPSIS_MIN_SEGMENT_ALNUM` letters/digits) are never located.
4. **fuzzy** -- for quotes with extraction noise or typos. The acceptance rule is an edit budget:
   the normalized quote and the normalized span may differ by at most
   ``max(1, int(FUZZY_EDIT_RATE * len(quote)))`` Levenshtein edits, and digit runs and negation
   words must agree exactly (a changed figure or a dropped "not" is a different statement, not a
   typo). Quotes shorter than :data:`FUZZY_MIN_CHARS` are never matched fuzzily.

   Candidate windows come from a pigeonhole filter: split the quote into ``budget + 1`` pieces;
   an alignment with at most ``budget`` edits leaves at least one piece verbatim, so searching the
   pieces with ``str.find`` finds every acceptable match, and only windows around piece hits
   (ranked by how many pieces agree on the same diagonal) are aligned. A whole-document alignment
   could only find matches the budget then rejects, so there is none; the piece search itself is
   capped for huge documents. Each window is screened with
   ``rapidfuzz.fuzz.partial_ratio_alignment`` and a score cutoff (for quotes up to
   500 characters; beyond that its cost on non-matching windows explodes and a bounded
   Levenshtein distance is the screen), then aligned with ``Levenshtein.opcodes`` against a
   slightly widened window. The alignment core runs from the first to the last ``equal`` block of
   at least ``min(8, len/4)`` characters that lies on the main diagonal (a global alignment
   happily matches the opening words to an earlier heading that repeats them). The quote's
   remaining prefix and suffix are placed by trying each start/end within the edit budget and
   keeping the one with the smallest insert/delete distance (which prefers matching characters to
   substituting them), plus a penalty for cutting a word in two when the quote itself begins/ends
   with a word: quotes are cut at word boundaries, so a span edge inside a word usually means the
   quote lost a character there.

Windows: stages 2–4 need the document normalized, which costs as much as reading it. When the
document has not been normalized yet, a rare plain piece of the quote (16 ASCII characters,
compared lower-cased) is looked up in the raw text, and only windows around its occurrences are
normalized; each stage runs across all windows before the next, exactly as over the whole text,
and a hit near a window's cut edge is not trusted. Nothing found in the windows (or no usable
piece) falls back to the whole document, so a quote the windows miss is still found; on the
labelled eval data every span is the one the whole-document path gives.

Edge white space: a quote that begins or ends with white space keeps one space of the document
there when the document has one (the span covers what the quote covers).

What a fuzzy match means: the document's text ``text[start:end]`` is the evidence, not the quote
string. A long quote with one word changed can be within the edit budget; callers must check
claims against the located span's text. :data:`MIN_SUPPORT_CHARS` is exported for callers: a span
shorter than that cannot support a claim alone; :func:`locate` still locates short quotes.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Literal

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, Levenshtein

from deep_research.gates.textnorm import NormalizedText, normalize, normalize_text

__all__ = [
    "ELLIPSIS_MAX_GAP",
    "ELLIPSIS_MIN_SEGMENT_ALNUM",
    "FUZZY_EDIT_RATE",
    "FUZZY_MIN_CHARS",
    "FUZZY_SCORE_CUTOFF",
    "MIN_SUPPORT_CHARS",
    "Document",
    "Located",
    "Method",
    "locate",
]

Method = Literal["exact", "normalized", "ellipsis", "fuzzy"]

MIN_SUPPORT_CHARS = 40
"""A located span shorter than this cannot support a claim alone (enforced by the caller)."""

FUZZY_MIN_CHARS = 30
"""Normalized quotes shorter than this are only matched exactly or normalized."""

FUZZY_EDIT_RATE = 0.05
"""Edit budget of the fuzzy stage, as a share of the normalized quote length."""

FUZZY_SCORE_CUTOFF = 90.0
"""``partial_ratio`` screen for candidate windows; looser than the edit budget it precedes."""

ELLIPSIS_MAX_GAP = 1000
"""Normalized characters allowed between the end of one segment and the start of the next."""

ELLIPSIS_MIN_SEGMENT_ALNUM = 3
"""Letters/digits every ellipsis segment needs; below that the quote is degenerate."""

_MID_WORD_PENALTY = 1.5  # more than one edit: extending a span by one char to a word edge wins
_REFINE_PAD = 32
_MAX_WINDOWS = 32
_MAX_PIECE_HITS = 200
_MAX_FIRST_SEGMENT_TRIES = 64
_PARTIAL_RATIO_MAX_CHARS = 500
_SCAN_BUDGET = 256_000_000  # characters searched for pigeonhole pieces per fuzzy lookup
_ANCHOR_CHARS = 16  # length of the quote pieces looked up verbatim to place windows
_ANCHOR_TRIES = 5  # pieces tried, spread over the quote
_MAX_ANCHOR_HITS = 8  # a piece more common than this does not narrow the search enough
# ASCII letters, digits, single spaces and punctuation that normalization leaves alone.
_PLAIN_PIECE = re.compile(r"(?:[a-z0-9,;:!?()/%$&+=#@*]| (?! ))+")
_WINDOW_MARGIN = 128  # characters a window keeps beyond the quote on each side

_ELLIPSIS = re.compile(r"\s*[\[(]?\s*\.(?: ?\.){2,}\s*[\])]?\s*")
_MEANING_TOKENS = re.compile(
    r"\d+|\b(?:not|no|never|nor|neither|none|nothing|nobody|without|cannot)\b|n't"
)


@dataclass(frozen=True)
class Located:
    """Where a quote was found, in original-text offsets of the document with ``hash``."""

    hash: str
    start: int
    end: int
    method: Method
    score: float
    matched_chars: int


class Document:
    """A corpus text with lazily computed, cached hash and normalized form.

    Normalization dominates lookup cost, and callers locate many quotes in one document, so build
    one ``Document`` per corpus file and reuse it.
    """

    def __init__(self, text: str, content_hash: str | None = None) -> None:
        self.text = text
        self._content_hash = content_hash

    @property
    def content_hash(self) -> str:
        if self._content_hash is None:
            self._content_hash = "sha256:" + hashlib.sha256(self.text.encode("utf-8")).hexdigest()
        return self._content_hash

    @cached_property
    def normalized(self) -> NormalizedText:
        return normalize_text(self.text)

    def is_normalized(self) -> bool:
        return "normalized" in self.__dict__

    @cached_property
    def lowered(self) -> str | None:
        """The text lower-cased, when that keeps every offset (no character changes length)."""
        lowered = self.text.lower()
        return lowered if len(lowered) == len(self.text) else None


@dataclass(frozen=True)
class _Hit:
    """A match in normalized document text."""

    start: int
    end: int
    score: float
    edits: int = 0


def locate(quote: str, document: Document | str) -> Located | None:
    """Locate ``quote`` in ``document`` (see the module docstring), or ``None``."""
    doc = document if isinstance(document, Document) else Document(document)
    # An ASCII quote with a letter or digit keeps one when normalized, so the exact stage may run
    # before the quote is normalized (most quotes are found there).
    plain = quote.isascii() and _has_alnum(quote)
    found = doc.text.find(quote) if plain else -1
    if found >= 0:
        return Located(doc.content_hash, found, found + len(quote), "exact", 100.0, len(quote))
    nq = normalize(quote)
    # An empty or punctuation-only quote is a substring of nearly every page and supports nothing.
    if not _has_alnum(nq):
        return None
    found = -1 if plain else doc.text.find(quote)
    if found >= 0:
        return Located(doc.content_hash, found, found + len(quote), "exact", 100.0, len(quote))
    segments = _ellipsis_segments(nq)
    placed = None
    if not doc.is_normalized():
        windows = _windows(quote, doc, max(0, len(segments or ()) - 1))
        if windows:
            placed = _place_in_windows(quote, nq, segments, doc.text, windows)
    if placed is None:
        placed = _place([(doc.normalized, 0, (False, False))], quote, nq, segments)
    return replace(placed, hash=doc.content_hash) if placed is not None else None


_Piece = tuple[NormalizedText, int, tuple[bool, bool]]  # normalized text, its base, cut edges


def _place_in_windows(
    quote: str, nq: str, segments: list[str] | None, text: str, windows: list[tuple[int, int]]
) -> Located | None:
    pieces = [
        (normalize_text(text[start:end]), start, (start > 0, end < len(text)))
        for start, end in windows
    ]
    return _place(pieces, quote, nq, segments)


def _place(
    pieces: Sequence[_Piece], quote: str, nq: str, segments: list[str] | None
) -> Located | None:
    """Stages 2–4 over ``pieces`` (the whole document, or windows of it in document order),
    each stage across all of them before the next, as over the whole text: the first normalized
    occurrence, else the best ellipsis chain, else the best fuzzy match. A hit within
    :data:`_WINDOW_MARGIN` of a cut edge is not trusted (the cut may hide what the whole text
    has there)."""
    for norm, base, cut in pieces:
        found = norm.text.find(nq)
        if found >= 0 and _trusted(norm, cut, found, found + len(nq)):
            return _located(norm, base, quote, [_Hit(found, found + len(nq), 100.0)], "normalized")
    if segments == []:
        return None  # a degenerate ellipsis quote is only ever matched as a whole
    best: tuple[tuple[int, ...], _Piece, list[_Hit], Method] | None = None
    for index, piece in enumerate(pieces):
        norm, base, cut = piece
        if segments:
            chain = _locate_segments(segments, norm.text)
            if chain is None:
                continue
            hits = _keep_edge_ellipses(nq, norm.text, chain)
            key: tuple[int, ...] = (sum(h.edits for h in chain), chain[-1].end - chain[0].start)
            method: Method = "ellipsis"
        else:
            hits = _fuzzy_hits(nq, norm.text)[:1]
            if not hits:
                continue
            key, method = (hits[0].edits, index, hits[0].start), "fuzzy"
        if _trusted(norm, cut, hits[0].start, hits[-1].end) and (best is None or key < best[0]):
            best = (key, piece, hits, method)
    if best is None:
        return None
    _, (norm, base, _), hits, method = best
    return _located(norm, base, quote, hits, method)


def _trusted(norm: NormalizedText, cut: tuple[bool, bool], start: int, end: int) -> bool:
    return not (cut[0] and start < _WINDOW_MARGIN) and not (
        cut[1] and end > len(norm.text) - _WINDOW_MARGIN
    )


def _windows(quote: str, doc: Document, ellipses: int) -> list[tuple[int, int]]:
    """Stretches of the document around each place a rare piece of the quote occurs.

    Normalizing a whole document costs as much as reading it; most quotes that miss the exact
    stage are a few characters off (case, white space, typography, a lost letter, an ellipsis),
    and most of their text is still on the page. Pieces are plain ASCII and compared lower-cased,
    so they read the same before and after normalization. A window spans the quote's length with
    room for collapsed white space and elided passages, and starts and ends at white space. No
    window (no piece found, or only pieces too common to narrow the search) sends the caller to
    the whole document — as does a set of windows where nothing is found.
    """
    lowered = doc.lowered
    anchor = _rare_piece(quote.lower(), lowered) if lowered is not None else None
    if lowered is None or anchor is None:
        return []
    offset, occurrences = anchor
    text = doc.text
    reach = len(quote) + _WINDOW_MARGIN + 2 * ELLIPSIS_MAX_GAP * ellipses
    windows: list[tuple[int, int]] = []
    for at in occurrences:
        start = _snap_back(text, max(0, at - offset - reach))
        end = _snap_forward(text, min(len(text), at - offset + len(quote) + reach))
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], end)
        else:
            windows.append((start, end))
    return windows


def _rare_piece(quote: str, text: str) -> tuple[int, list[int]] | None:
    """A plain piece of the (lower-cased) quote occurring at least once and at most
    :data:`_MAX_ANCHOR_HITS` times (counted without overlaps) in the (lower-cased) ``text``: its
    offset in the quote, and every place it occurs (overlapping ones too)."""
    if len(quote) < 2 * _ANCHOR_CHARS:
        return None
    last = len(quote) - _ANCHOR_CHARS
    for offset in sorted({last * i // (_ANCHOR_TRIES - 1) for i in range(_ANCHOR_TRIES)}):
        piece = quote[offset : offset + _ANCHOR_CHARS]
        if not _PLAIN_PIECE.fullmatch(piece):
            continue
        occurrences = _occurrences(piece, text)
        if occurrences:
            return offset, occurrences
    return None


def _occurrences(piece: str, text: str) -> list[int]:
    """Where ``piece`` occurs in ``text``; none when it occurs more than
    :data:`_MAX_ANCHOR_HITS` times without overlaps (``str.count``'s reckoning). One scan both
    counts and places it, stopping as soon as it is too common."""
    found: list[int] = []
    count = 0
    free_from = 0  # where the next occurrence that does not overlap a counted one may start
    at = text.find(piece)
    while at >= 0:
        if at >= free_from:
            count += 1
            if count > _MAX_ANCHOR_HITS:
                return []
            free_from = at + len(piece)
        found.append(at)
        at = text.find(piece, at + 1)
    return found


def _snap_back(text: str, position: int) -> int:
    space = max(text.rfind(" ", 0, position), text.rfind("\n", 0, position))
    return space + 1 if space >= 0 and position - space < _WINDOW_MARGIN else position


def _snap_forward(text: str, position: int) -> int:
    ends = [found for mark in (" ", "\n") if (found := text.find(mark, position)) >= 0]
    end = min(ends, default=len(text))
    return end if end - position < _WINDOW_MARGIN else position


_ALNUM = re.compile(r"[^\W_]")  # \w is a letter or digit (isalnum) or "_"


def _has_alnum(text: str) -> bool:
    return _ALNUM.search(text) is not None


def _located(
    norm: NormalizedText, base: int, quote: str, hits: Sequence[_Hit], method: Method
) -> Located:
    start, end = hits[0].start, hits[-1].end
    if quote[:1].isspace() and start > 0 and norm.text[start - 1] == " ":
        start -= 1
    if quote[-1:].isspace() and end < len(norm.text) and norm.text[end] == " ":
        end += 1
    orig_start, orig_end = norm.to_original(start, end)
    if len(hits) == 1:
        matched = orig_end - orig_start
    else:
        matched = sum(b - a for a, b in (norm.to_original(h.start, h.end) for h in hits))
    score = min(hit.score for hit in hits)
    return Located("", base + orig_start, base + orig_end, method, score, matched)


# --- ellipsis ---------------------------------------------------------------------------------


def _ellipsis_segments(nq: str) -> list[str] | None:
    """Segments of a normalized quote split at ellipses; ``None`` without an ellipsis.

    An empty list means the quote is degenerate and must not be located.
    """
    # Every ellipsis holds ".." or ". ." (the pattern's leading white space would otherwise have
    # it tried at every position of every quote).
    if (".." not in nq and ". ." not in nq) or not _ELLIPSIS.search(nq):
        return None
    segments = [part.strip() for part in _ELLIPSIS.split(nq)]
    segments = [part for part in segments if part]
    if any(sum(char.isalnum() for char in s) < ELLIPSIS_MIN_SEGMENT_ALNUM for s in segments):
        return []
    return segments


def _keep_edge_ellipses(nq: str, text: str, chain: list[_Hit]) -> list[_Hit]:
    """A leading/trailing ellipsis the document also has there is part of the quoted text."""
    first, last = chain[0], chain[-1]
    if nq.startswith("..."):
        for mark in ("...", "... "):
            if first.start >= len(mark) and text.startswith(mark, first.start - len(mark)):
                first = replace(first, start=first.start - len(mark))
                break
    if nq.endswith("..."):
        for mark in ("...", " ..."):
            if text.startswith(mark, last.end):
                last = replace(last, end=last.end + len(mark))
                break
    if len(chain) == 1:
        return [replace(first, end=last.end)]
    return [first, *chain[1:-1], last]


def _locate_segments(segments: Sequence[str], text: str) -> list[_Hit] | None:
    """The tightest chain of segments in order, each within the gap bound after the previous.

    Headings and teasers repeat phrases of the passage they announce, so the first place where
    the first segment occurs is often not the passage quoted; the chain with the fewest edits,
    then the shortest, is. For a fixed first segment, taking each next segment at its earliest
    position gives the earliest end.
    """
    best: tuple[tuple[int, int], list[_Hit]] | None = None
    # Fuzzy places of the first segment are only worth their cost when no exact one chains.
    for candidates in (_exact_hits(segments[0], text), _fuzzy_hits(segments[0], text)):
        for first in candidates:
            chain = _chain_after(first, segments[1:], text)
            if chain is not None:
                key = (sum(hit.edits for hit in chain), chain[-1].end - chain[0].start)
                if best is None or key < best[0]:
                    best = (key, chain)
        if best is not None:
            return best[1]
    return None


def _chain_after(first: _Hit, segments: Sequence[str], text: str) -> list[_Hit] | None:
    chain = [first]
    for segment in segments:
        lo = chain[-1].end
        hit = _find_segment(segment, text, lo, min(len(text), lo + ELLIPSIS_MAX_GAP))
        if hit is None:
            return None
        chain.append(hit)
    return chain


def _exact_hits(segment: str, text: str) -> list[_Hit]:
    hits: list[_Hit] = []
    found = text.find(segment)
    while found >= 0 and len(hits) < _MAX_FIRST_SEGMENT_TRIES:
        hits.append(_Hit(found, found + len(segment), 100.0))
        found = text.find(segment, found + 1)
    return hits


def _find_segment(segment: str, text: str, lo: int, latest_start: int) -> _Hit | None:
    """First match of ``segment`` starting in ``[lo, latest_start]``."""
    found = text.find(segment, lo, latest_start + len(segment))
    if found >= 0:
        return _Hit(found, found + len(segment), 100.0)
    budget = _edit_budget(len(segment))
    hi = min(len(text), latest_start + len(segment) + budget)
    hits = [hit for hit in _fuzzy_hits(segment, text, lo, hi) if hit.start <= latest_start]
    return min(hits, key=lambda hit: hit.start) if hits else None


# --- fuzzy ------------------------------------------------------------------------------------


def _edit_budget(length: int) -> int:
    return max(1, int(length * FUZZY_EDIT_RATE))


def _fuzzy_hits(q: str, text: str, lo: int = 0, hi: int | None = None) -> list[_Hit]:
    """Acceptable fuzzy matches of ``q`` inside ``text[lo:hi]``, best first."""
    if len(q) < FUZZY_MIN_CHARS:
        return []
    hi = len(text) if hi is None else hi
    budget = _edit_budget(len(q))
    hits: dict[tuple[int, int], _Hit] = {}
    for w_start, w_end in _candidate_windows(q, text, lo, hi, budget):
        hit = _align(q, text, w_start, w_end, lo, hi, budget)
        if hit is not None:
            hits.setdefault((hit.start, hit.end), hit)
    return sorted(hits.values(), key=lambda hit: (hit.edits, hit.start))


def _candidate_windows(q: str, text: str, lo: int, hi: int, budget: int) -> list[tuple[int, int]]:
    """Windows around verbatim piece hits, most-agreed diagonals first (pigeonhole filter)."""
    count = budget + 1
    bounds = [len(q) * i // count for i in range(count + 1)]
    scans = max(1, _SCAN_BUDGET // max(1, hi - lo))
    # Past the scan budget (huge documents, long quotes) only evenly spread pieces are searched:
    # the filter stays bounded and still finds all but heavily edited quotes.
    indices = range(count) if count <= scans else sorted({i * count // scans for i in range(scans)})
    diagonals: list[tuple[int, int]] = []
    for index in indices:
        offset = bounds[index]
        piece = q[offset : bounds[index + 1]]
        found = text.find(piece, lo, hi)
        hits = 0
        while found >= 0 and hits < _MAX_PIECE_HITS:
            diagonals.append((found - offset, index))
            hits += 1
            found = text.find(piece, found + 1, hi)
    if not diagonals:
        return []
    diagonals.sort()
    # Hits of one alignment lie within `budget` of each other on the diagonal.
    clusters: list[tuple[int, int, set[int]]] = []
    for diagonal, index in diagonals:
        if clusters and diagonal - clusters[-1][0] <= 2 * budget:
            first, _, pieces = clusters[-1]
            pieces.add(index)
            clusters[-1] = (first, diagonal, pieces)
        else:
            clusters.append((diagonal, diagonal, {index}))
    clusters.sort(key=lambda cluster: (-len(cluster[2]), cluster[0]))
    return [
        (max(lo, first - budget), min(hi, last + len(q) + budget))
        for first, last, _ in clusters[:_MAX_WINDOWS]
    ]


def _align(
    q: str, text: str, w_start: int, w_end: int, lo: int, hi: int, budget: int
) -> _Hit | None:
    window = text[w_start:w_end]
    if len(q) <= _PARTIAL_RATIO_MAX_CHARS:
        alignment = fuzz.partial_ratio_alignment(q, window, score_cutoff=FUZZY_SCORE_CUTOFF)
        if alignment is None:
            return None
        r_start = max(lo, w_start + alignment.dest_start - _REFINE_PAD)
        r_end = min(hi, w_start + alignment.dest_end + _REFINE_PAD)
    else:
        # partial_ratio's cost grows with the cube of the quote length on windows that do not
        # match (118 ms for 3,000 chars). A bounded global distance is a necessary condition
        # instead: an acceptable match plus the window's surplus characters.
        slack = 2 * budget + max(0, len(window) - len(q))
        if Levenshtein.distance(q, window, score_cutoff=slack) > slack:
            return None
        r_start = max(lo, w_start - _REFINE_PAD)
        r_end = min(hi, w_end + _REFINE_PAD)
    min_block = max(1, min(8, len(q) // 4))
    blocks = [
        op
        for op in Levenshtein.opcodes(q, text[r_start:r_end])
        if op.tag == "equal" and op.src_end - op.src_start >= min_block
    ]
    if not blocks:
        return None
    # A global alignment happily matches the quote's opening words to an earlier heading that
    # repeats them; blocks off the main diagonal (that of the longest block) by more than the
    # edit budget cannot belong to an acceptable alignment.
    main = max(blocks, key=lambda op: op.src_end - op.src_start)
    diagonal = main.dest_start - main.src_start
    blocks = [op for op in blocks if abs(op.dest_start - op.src_start - diagonal) <= budget]
    core_start = r_start + blocks[0].dest_start
    core_end = r_start + blocks[-1].dest_end
    start = _place_start(q, blocks[0].src_start, text, core_start, lo, budget)
    end = _place_end(q, blocks[-1].src_end, text, core_end, hi, budget)
    span = text[start:end]
    edits = Levenshtein.distance(q, span, score_cutoff=budget)
    if edits > budget or _MEANING_TOKENS.findall(q) != _MEANING_TOKENS.findall(span):
        return None
    return _Hit(start, end, fuzz.ratio(q, span), edits)


def _place_start(q: str, q_core: int, text: str, core_start: int, lo: int, budget: int) -> int:
    """Start of the span: where the quote prefix ``q[:q_core]`` fits best before the core."""
    prefix = q[:q_core]
    expected = core_start - len(prefix)
    wants_word_edge = q[:1].isalnum()
    best: tuple[float, int, int] | None = None
    for start in range(max(lo, expected - budget), min(core_start, expected + budget) + 1):
        if text[start] == " ":
            continue
        cost: float = Indel.distance(prefix, text[start:core_start])
        if wants_word_edge and _inside_word(text, start):
            cost += _MID_WORD_PENALTY
        key = (cost, abs(start - expected), start)  # on a tie, the longer span
        if best is None or key < best:
            best = key
    return best[2] if best is not None else core_start


def _place_end(q: str, q_core: int, text: str, core_end: int, hi: int, budget: int) -> int:
    """End of the span: where the quote suffix ``q[q_core:]`` fits best after the core."""
    suffix = q[q_core:]
    expected = core_end + len(suffix)
    wants_word_edge = q[-1:].isalnum()
    best: tuple[float, int, int] | None = None
    for end in range(max(core_end, expected - budget), min(hi, expected + budget) + 1):
        if text[end - 1] == " ":
            continue
        cost: float = Indel.distance(suffix, text[core_end:end])
        if wants_word_edge and _inside_word(text, end):
            cost += _MID_WORD_PENALTY
        key = (cost, abs(end - expected), -end)  # on a tie, the longer span
        if best is None or key < best:
            best = key
    return -best[2] if best is not None else core_end


def _inside_word(text: str, boundary: int) -> bool:
    """Whether a span edge at ``boundary`` cuts a word in two."""
    return 0 < boundary < len(text) and text[boundary - 1].isalnum() and text[boundary].isalnum()
