"""Coerce raw fetcher output into canonical ``sources.jsonl`` rows.

Fetcher agents are small models and their JSON drifts: other key names, extra wrappers, findings
as maps or pairs, dates in prose, JSON inside a string inside a code fence. This module accepts
every shape listed in ``docs/drift-shapes.md`` and turns it into :class:`SourceRow` objects, in
three stages:

1. **extract** — find the JSON in the text (a document, JSONL, concatenated values, fenced
   blocks, JSON embedded in prose, JSON encoded in a string);
2. **walk** — find the source objects inside whatever wrappers surround them;
3. **coerce and merge** — map aliases to fields, validate enums and dates, canonicalize URLs,
   merge duplicates by canonical URL, and assign stable ids.

Nothing is dropped silently: a finding without a quote, a source without a usable URL or an
element that is not a source becomes a :class:`Rejection` naming its place in the input and the
reason; a value that had to be discarded or defaulted (an unparseable date, an unknown enum) is a
warning. Input that holds no recognizable source at all raises an :class:`InputError` before
anything is written. Model output is data only: it is never evaluated, and no string from it is
ever used as a path.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, BinaryIO, TextIO, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from deep_research.brief import (
    Brief,
    atomic_write_json,
    atomic_write_text,
    decode_utf8,
    load_sources,
    model_dump,
    read_text,
)
from deep_research.errors import InputError, MissingArtifact, SchemaViolation, UnreadableInput
from deep_research.models import Finding, Importance, SourceRow, SourceType, Tier, Via
from deep_research.urls import InvalidURL, canonical_or_none, canonicalize, registrable_domain

#: Largest fetcher output read. One fetcher returns kilobytes; more than this is a runaway.
MAX_INPUT_BYTES = 64 * 1024 * 1024
#: Deepest wrapper nesting followed; deeper structures are reported, not recursed into.
MAX_DEPTH = 40
#: How many false starts of embedded JSON are tried in prose (bounds the work on garbage).
MAX_PROSE_ATTEMPTS = 16
#: Most JSON values taken from prose; real answers hold a few, garbage "{}{}{}…" millions.
MAX_PROSE_VALUES = 1000
EXCERPT_CHARS = 160
_T = TypeVar("_T")
EXPECTED = "expected fetcher JSON: an object, an array, JSONL or a ```json block"

# --- aliases (keys are compared after _norm_key: snake_case, lower-case) ----------------------

URL_KEYS = (
    "url",
    "source_url",
    "link",
    "href",
    "uri",
    "page_url",
    "web_url",
    "permalink",
    "source_link",
    "address",
)
TITLE_KEYS = ("title", "source_title", "name", "headline", "page_title")
PUBLISHED_KEYS = (
    "published_at",
    "date",
    "published",
    "publication_date",
    "pub_date",
    "published_date",
    "date_published",
    "publish_date",
    "pubdate",
    "published_on",
    "release_date",
)
RETRIEVED_KEYS = (
    "retrieved_at",
    "retrieved",
    "accessed",
    "accessed_at",
    "access_date",
    "date_accessed",
    "fetched_at",
    "retrieval_date",
)
SOURCE_TYPE_KEYS = ("source_type", "type", "kind", "category", "type_of_source")
TIER_KEYS = ("tier", "fetch_tier", "retrieval_tier", "fetch_method", "retrieval_method")
HASH_KEYS = ("content_hash", "hash", "sha256", "corpus_hash", "text_hash")
STATUS_KEYS = ("status", "status_code", "http_status", "http_code")
FINAL_URL_KEYS = ("final_url", "resolved_url", "redirected_url", "redirect_url", "landing_url")
CITES_KEYS = ("cites", "citations", "cited_urls", "outbound_links", "links")
ALIAS_KEYS = ("aliases", "alternate_urls", "alt_urls", "other_urls", "mirrors")
FINDINGS_KEYS = (
    "findings",
    "claims",
    "facts",
    "key_findings",
    "key_facts",
    "extracted_findings",
    "extractions",
    "key_points",
    "points",
    "quotes",
    "evidence",
    "excerpts",
)
SQ_KEYS = ("sub_questions", "sub_question", "sq", "sqs", "subquestion", "subquestions")
ROUND_KEYS = ("round", "research_round")
QUERY_KEYS = ("query", "search_query", "search_term", "q")
ADAPTER_KEYS = ("adapter", "tool", "search_engine", "engine", "provider", "backend")
MCP_KEYS = ("mcp", "mcp_server")
VIA_KEYS = ("via",)

CLAIM_KEYS = (
    "claim",
    "statement",
    "fact",
    "finding",
    "assertion",
    "claim_text",
    "text",
    "point",
    "summary",
)
QUOTE_KEYS = (
    "quote",
    "quotes",
    "evidence",
    "excerpt",
    "excerpts",
    "verbatim",
    "quotation",
    "verbatim_quote",
    "supporting_quote",
    "source_quote",
    "exact_quote",
    "quote_text",
    "passage",
    "snippet",
)
IMPORTANCE_KEYS = (
    "importance",
    "weight",
    "priority",
    "significance",
    "relevance",
    "centrality",
    "importance_level",
    "level",
)
CENTRAL_FLAG_KEYS = ("is_key", "key_finding", "is_central", "central", "key")
#: Keys that are ours to compute (ids, owner, spans), so a fetcher's value is ignored quietly.
COMPUTED_KEYS = ("id", "source_id", "finding_id", "owner", "span", "index", "rank")

SOURCE_LIST_KEYS = (
    "sources",
    "results",
    "items",
    "documents",
    "docs",
    "pages",
    "articles",
    "hits",
    "entries",
    "records",
    "search_results",
    "fetched",
    "fetched_sources",
    "source_list",
)
WRAPPER_KEYS = (
    "result",
    "data",
    "fetcher_output",
    "fetcher_result",
    "output",
    "response",
    "payload",
    "body",
    "content",
    "choices",
    "message",
    "source",
)

SOURCE_KEY_GROUPS: dict[str, tuple[str, ...]] = {
    "url": URL_KEYS,
    "title": TITLE_KEYS,
    "published_at": PUBLISHED_KEYS,
    "retrieved_at": RETRIEVED_KEYS,
    "source_type": SOURCE_TYPE_KEYS,
    "tier": TIER_KEYS,
    "content_hash": HASH_KEYS,
    "status": STATUS_KEYS,
    "final_url": FINAL_URL_KEYS,
    "cites": CITES_KEYS,
    "aliases": ALIAS_KEYS,
    "sub_questions": SQ_KEYS,
    "round": ROUND_KEYS,
    "query": QUERY_KEYS,
    "adapter": ADAPTER_KEYS,
    "mcp": MCP_KEYS,
    "via": VIA_KEYS,
}
INLINE_FINDING_KEYS = frozenset(CLAIM_KEYS + QUOTE_KEYS + IMPORTANCE_KEYS + CENTRAL_FLAG_KEYS)
#: On a source object only unmistakable claim/quote keys make it carry a finding inline:
#: "text", "summary" or "snippet" there describe the page, not a finding.
SOURCE_CLAIM_KEYS = ("claim", "statement", "fact", "finding", "assertion", "claim_text")
SOURCE_QUOTE_KEYS = tuple(key for key in QUOTE_KEYS if key not in ("passage", "snippet"))
SOURCE_INLINE_KEYS = frozenset(SOURCE_CLAIM_KEYS + SOURCE_QUOTE_KEYS)

# --- enum synonyms (compared lower-case, "_"/"-" as spaces) --------------------------------

IMPORTANCE_SYNONYMS: dict[str, Importance] = {
    **dict.fromkeys(
        (
            "central",
            "key",
            "high",
            "critical",
            "core",
            "main",
            "primary",
            "major",
            "essential",
            "crucial",
            "very high",
            "highest",
            "top",
        ),
        "central",
    ),
    **dict.fromkeys(
        (
            "supporting",
            "support",
            "medium",
            "moderate",
            "secondary",
            "normal",
            "supplementary",
            "mid",
            "average",
            "standard",
            "relevant",
        ),
        "supporting",
    ),
    **dict.fromkeys(
        (
            "tangential",
            "low",
            "minor",
            "peripheral",
            "background",
            "context",
            "contextual",
            "marginal",
            "lowest",
            "incidental",
            "trivial",
        ),
        "tangential",
    ),
}
SOURCE_TYPE_SYNONYMS: dict[str, SourceType] = {
    **dict.fromkeys(
        (
            "primary",
            "primary source",
            "original",
            "dataset",
            "data",
            "standard",
            "specification",
            "spec",
            "legislation",
            "law",
            "regulation",
            "court",
            "filing",
        ),
        "primary",
    ),
    **dict.fromkeys(
        (
            "academic",
            "paper",
            "journal",
            "journal article",
            "peer reviewed",
            "scholarly",
            "preprint",
            "research",
            "research paper",
            "study",
            "scientific",
            "conference paper",
            "thesis",
        ),
        "academic",
    ),
    **dict.fromkeys(
        (
            "government",
            "gov",
            "governmental",
            "official",
            "agency",
            "public sector",
            "intergovernmental",
            "regulator",
            "ministry",
        ),
        "government",
    ),
    **dict.fromkeys(
        (
            "news",
            "newspaper",
            "news article",
            "press",
            "media",
            "journalism",
            "magazine",
            "wire",
            "news outlet",
        ),
        "news",
    ),
    **dict.fromkeys(
        (
            "secondary",
            "secondary source",
            "encyclopedia",
            "wiki",
            "wikipedia",
            "reference",
            "aggregator",
        ),
        "secondary",
    ),
    **dict.fromkeys(
        (
            "vendor",
            "company",
            "corporate",
            "commercial",
            "manufacturer",
            "product",
            "press release",
            "marketing",
            "industry",
            "business",
        ),
        "vendor",
    ),
    **dict.fromkeys(("blog", "blog post", "personal", "newsletter", "substack"), "blog"),
    **dict.fromkeys(
        (
            "forum",
            "q&a",
            "qa",
            "discussion",
            "reddit",
            "social",
            "social media",
            "community",
            "stack overflow",
            "comments",
        ),
        "forum",
    ),
    **dict.fromkeys(("unknown", "other", "n/a", "na", "none", "unspecified"), "unknown"),
}
TIER_SYNONYMS: dict[str, Tier] = {
    **dict.fromkeys(
        (
            "raw",
            "full",
            "full text",
            "fulltext",
            "html",
            "page",
            "direct",
            "fetched",
            "fetch",
            "live",
            "complete",
        ),
        "raw",
    ),
    **dict.fromkeys(
        (
            "summarizer",
            "summary",
            "summarised",
            "summarized",
            "summarizer model",
            "abridged",
            "condensed",
        ),
        "summarizer",
    ),
    **dict.fromkeys(
        (
            "degraded",
            "archive",
            "archived",
            "wayback",
            "cache",
            "cached",
            "partial",
            "truncated",
            "fallback",
        ),
        "degraded",
    ),
    **dict.fromkeys(
        ("snippet", "search snippet", "serp", "search result", "search", "preview"), "snippet"
    ),
}
#: Tier given to a source whose stated tier is not recognized: the weakest, because nothing
#: vouches that the quote came from the full page.
DEFAULT_TIER: Tier = "snippet"
DEFAULT_IMPORTANCE: Importance = "supporting"

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_WEEKDAYS = frozenset(
    (
        "monday",
        "mon",
        "tuesday",
        "tue",
        "tues",
        "wednesday",
        "wed",
        "thursday",
        "thu",
        "thur",
        "thurs",
        "friday",
        "fri",
        "saturday",
        "sat",
        "sunday",
        "sun",
    )
)
_DATE_FILLER = frozenset(("st", "nd", "rd", "th", "of", "the", "on", "at"))
_ISO_DATE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$"
)
_YMD = re.compile(r"^(\d{4})[/.](\d{1,2})[/.](\d{1,2})$")
_COMPACT = re.compile(r"^(\d{4})(\d{2})(\d{2})$")
_DMY_NUMERIC = re.compile(r"^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$")
_PARTIAL = re.compile(r"^\d{4}(?:[-/.]\d{1,2})?$")
_TIME_TAIL = re.compile(
    r"(?:[ ,]+|(?<=\d)T)\d{1,2}:\d{2}(?::\d{2})?(?:\.\d+)?\s*(?:[ap]\.?m\.?)?\s*"
    r"(?:gmt|utc|z|[+-]\d{2}:?\d{2}|[a-z]{3,4})?$",
    re.IGNORECASE,
)
_HASH = re.compile(r"^(?:sha256:)?([0-9a-f]{64})$")
_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_FENCE_LANGUAGES = frozenset(("", "json", "jsonl", "json5", "jsonc", "javascript", "js", "ndjson"))
_JSON_START = re.compile(r"[{\[]")
_TRAILING_COMMA = re.compile(r",\s*[}\]]")
_STRING_OR_TRAILING_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"|,(\s*[}\]])')
_QUOTE_PAIRS = (('"', '"'), ("“", "”"), ("‘", "’"), ("«", "»"), ("„", "“"), ("'", "'"))


# --- results --------------------------------------------------------------------------------


@dataclass(frozen=True)
class NormalizeOptions:
    """What the ``normalize`` command was asked to do (see ``cli._cmd_normalize``)."""

    input: Path | None = None
    brief: Path | None = None
    output: Path | None = None
    report: Path | None = None
    start_id: int | None = None
    sub_question: str | None = None
    round: int | None = None


@dataclass(frozen=True)
class Rejection:
    """Something in the input that could not become a row or a finding, and why."""

    where: str
    reason: str
    excerpt: str = ""

    def describe(self) -> str:
        tail = f" — {json.dumps(self.excerpt, ensure_ascii=False)}" if self.excerpt else ""
        return f"{self.where}: {self.reason}{tail}"

    def as_dict(self) -> dict[str, str]:
        return {"where": self.where, "reason": self.reason, "excerpt": self.excerpt}


@dataclass
class NormalizeResult:
    """The rows to write (existing rows first when merging into a brief) and what was refused.

    ``new_rows`` counts rows this input created; ``merged`` counts input sources folded into an
    existing row or into an earlier source of the same input.
    """

    rows: list[SourceRow]
    rejections: list[Rejection] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    new_rows: int = 0
    merged: int = 0

    def summary(self) -> str:
        return (
            f"normalize: kept {self.new_rows} new row(s) ({len(self.rows)} in total), "
            f"merged {self.merged} duplicate(s), {len(self.rejections)} rejection(s), "
            f"{len(self.warnings)} warning(s)"
        )

    def report(self) -> dict[str, Any]:
        return {
            "rows": self.new_rows,
            "merged": self.merged,
            "total_rows": len(self.rows),
            "rejections": [rejection.as_dict() for rejection in self.rejections],
            "warnings": list(self.warnings),
        }


class _Log:
    """Collects rejections and warnings in input order."""

    def __init__(self) -> None:
        self.rejections: list[Rejection] = []
        self.warnings: list[str] = []

    def reject(self, where: str, reason: str, item: Any = None) -> None:
        self.rejections.append(Rejection(where, reason, _excerpt(item)))

    def warn(self, where: str, message: str) -> None:
        self.warnings.append(f"{where}: {message}")


def _excerpt(item: Any) -> str:
    if item is None:
        return ""
    try:
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        text = _kind(item)  # deeper than the encoder goes: say what it was instead
    text = " ".join(text.split())
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


# --- stage 1: extract JSON from text ------------------------------------------------------


@dataclass
class _Extracted:
    docs: list[tuple[str, Any]] = field(default_factory=list)  # (label, value)
    notes: list[tuple[str, str]] = field(default_factory=list)  # (label, warning)
    bad: list[tuple[str, str, str]] = field(default_factory=list)  # (label, reason, excerpt)


class _NotJSON(Exception):
    """Text in which no JSON could be found; the message says what was wrong."""


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:
        raise _NotJSON("nests too deeply") from None
    except json.JSONDecodeError as exc:
        raise _NotJSON(
            f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None


def _extract(text: str, *, fences: bool = True) -> _Extracted:
    """Every JSON value in ``text``, trying the shapes from strictest to most lenient."""
    stripped = text.strip()
    if not stripped:
        raise _NotJSON("is empty")
    try:
        return _Extracted(docs=[("", _loads(stripped))])
    except _NotJSON as strict_error:
        error = strict_error
    if (jsonl := _extract_jsonl(text)) is not None:
        return jsonl
    if fences and "```" in stripped and (fenced := _extract_fenced(stripped)) is not None:
        return fenced
    if stripped[0] in "{[":
        return _extract_leading(stripped, error)
    return _extract_from_prose(stripped)


def _extract_jsonl(text: str) -> _Extracted | None:
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if len(lines) < 2:
        return None
    try:
        first = json.loads(lines[0][1])
    except (json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(first, dict | list):
        return None
    found = _Extracted()
    for number, line in lines:
        try:
            found.docs.append((f"line {number}", _loads(line)))
        except _NotJSON as exc:
            if line.lstrip()[:1] in ("{", "["):
                found.bad.append((f"line {number}", f"record {exc}", _excerpt(line)))
            else:
                found.notes.append((f"line {number}", "ignored a line that is not JSON"))
    return found


def _extract_fenced(text: str) -> _Extracted | None:
    blocks = [m for m in _FENCE.finditer(text) if m.group(1).lower() in _FENCE_LANGUAGES]
    if not blocks:
        return None
    found = _Extracted()
    errors: list[str] = []
    for number, match in enumerate(blocks, start=1):
        label = f"block {number}" if len(blocks) > 1 else "block"
        try:
            inner = _extract(match.group(2), fences=False)
        except _NotJSON as exc:
            errors.append(str(exc))
            found.bad.append((label, f"the ```json block {exc}", _excerpt(match.group(2))))
            continue
        found.docs += [(_join(label, sub), value) for sub, value in inner.docs]
        found.notes += [(_join(label, sub), note) for sub, note in inner.notes]
        found.bad += [(_join(label, sub), reason, ex) for sub, reason, ex in inner.bad]
    if not found.docs:
        raise _NotJSON(f"has a ```json block that {errors[0] if errors else 'holds no JSON'}")
    return found


def _extract_leading(text: str, error: _NotJSON) -> _Extracted:
    """A document with trailing commas, several concatenated values, or trailing prose."""
    repaired = _strip_trailing_commas(text)
    if repaired != text:
        try:
            value = _loads(repaired)
        except _NotJSON:
            pass
        else:
            return _Extracted(docs=[("", value)], notes=[("", "removed trailing commas")])
    decoder = json.JSONDecoder()
    found = _Extracted()
    position = 0
    while position < len(text):
        try:
            value, end = decoder.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError):
            break
        found.docs.append((f"value {len(found.docs) + 1}", value))
        position = _skip_space(text, end)
    if not found.docs:
        raise error
    if len(found.docs) == 1:
        found.docs = [("", found.docs[0][1])]
    if position < len(text) and text[position] in "{[":
        found.bad.append(("", "a further JSON value is not valid (truncated?)", text[position:]))
    elif position < len(text):
        found.notes.append(("", f"ignored {len(text) - position} characters after the JSON"))
    return found


def _extract_from_prose(text: str) -> _Extracted:
    decoder = json.JSONDecoder()
    found = _Extracted()
    failures = 0
    position = 0
    while failures < MAX_PROSE_ATTEMPTS:
        match = _JSON_START.search(text, position)
        if match is None:
            break
        if len(found.docs) == MAX_PROSE_VALUES:
            found.notes.append(("", f"stopped after {MAX_PROSE_VALUES} JSON values in prose"))
            break
        try:
            value, end = decoder.raw_decode(text, match.start())
        except (json.JSONDecodeError, RecursionError):
            failures += 1
            position = match.start() + 1
            continue
        if isinstance(value, dict) or (
            isinstance(value, list) and any(isinstance(item, dict) for item in value)
        ):
            found.docs.append((f"value {len(found.docs) + 1}", value))
        position = end
    if not found.docs:
        raise _NotJSON("contains no JSON object, array or ```json block")
    if len(found.docs) == 1:
        found.docs = [("", found.docs[0][1])]
    found.notes.append(("", "ignored the prose around the JSON"))
    return found


def _strip_trailing_commas(text: str) -> str:
    # A comma directly before a closing bracket, outside strings: the commonest hand-made JSON
    # slip. Strings are matched first so a ", ]" inside a quote is left alone.
    if not _TRAILING_COMMA.search(text):
        return text
    return _STRING_OR_TRAILING_COMMA.sub(lambda m: m.group(1) or m.group(0), text)


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def _join(outer: str, inner: str) -> str:
    return f"{outer}, {inner}" if outer and inner else outer or inner


def _root(label: str) -> str:
    return f"{label}: $" if label else "$"


# --- stage 2: find the source objects ----------------------------------------------------


@dataclass(frozen=True)
class _Context:
    """What a wrapper says about every source inside it."""

    query: str | None = None
    adapter: str | None = None
    mcp: str | None = None
    sub_questions: tuple[str, ...] = ()
    round: int | None = None


@dataclass(frozen=True)
class _Candidate:
    where: str
    item: dict[str, Any]
    context: _Context


def _norm_key(key: object) -> str:
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(key).strip())
    return re.sub(r"[^a-z0-9&]+", "_", text.lower()).strip("_")


def _keymap(item: dict[str, Any]) -> dict[str, str]:
    """Normalized key → original key (the first spelling wins)."""
    out: dict[str, str] = {}
    for key in item:
        out.setdefault(_norm_key(key), key)
    return out


def _is_http_url(value: object) -> bool:
    return isinstance(value, str) and value.strip().lower().startswith(("http://", "https://"))


class _Walker:
    """Finds source candidates inside wrappers, lists, URL-keyed maps and encoded strings."""

    def __init__(self, log: _Log, accept: Callable[[_Candidate], None]) -> None:
        self.log = log
        self.accept = accept  # called at once, so rejections come out in input order
        self.found = 0
        self.saw_empty_list = False

    def _candidate(self, where: str, item: dict[str, Any], context: _Context) -> None:
        self.found += 1
        self.accept(_Candidate(where, item, context))

    def walk(self, value: Any, where: str, context: _Context, depth: int = 0) -> None:
        if depth > MAX_DEPTH:
            self.log.reject(where, f"nested more than {MAX_DEPTH} levels deep; not followed")
        elif isinstance(value, dict):
            self._walk_object(value, where, context, depth)
        elif isinstance(value, list):
            self.saw_empty_list |= not value
            for index, item in enumerate(value):
                self.walk(item, f"{where}[{index}]", context, depth + 1)
        elif isinstance(value, str):
            self._walk_string(value, where, context, depth)
        elif value is None:
            self.log.reject(where, "expected a source object, got null")
        else:
            self.log.reject(where, f"expected a source object, got {_kind(value)}", value)

    def _walk_string(self, value: str, where: str, context: _Context, depth: int) -> None:
        if _is_http_url(value):
            self._candidate(where, {"url": value}, context)
            return
        try:
            found = _extract(value)
        except _NotJSON:
            self.log.reject(where, "expected a source object, got text", value)
            return
        for label, note in found.notes:
            self.log.warn(_suffix(where, label), note)
        for label, reason, excerpt in found.bad:
            self.log.rejections.append(Rejection(_suffix(where, label), reason, excerpt))
        for label, doc in found.docs:
            self.walk(doc, _suffix(where, label), context, depth + 1)

    def _walk_object(self, item: dict[str, Any], where: str, context: _Context, depth: int) -> None:
        keys = _keymap(item)
        if _is_content_block(item, keys):
            key = keys["text"] if "text" in keys else keys["input"]
            self.walk(item[key], f"{where}.{key}", context, depth + 1)
            return
        if any(k in keys for k in URL_KEYS) or _source_url_key(item, keys):
            self._candidate(where, item, context)
            return
        containers = [
            k for k in SOURCE_LIST_KEYS + WRAPPER_KEYS if k in keys and _may_hold(item[keys[k]])
        ]
        if containers:
            inner = _wrapper_context(item, keys, context, where, self.log)
            for norm in containers:
                key = keys[norm]
                if item[key] is None:
                    self.saw_empty_list = True
                else:
                    self.walk(item[key], f"{where}.{key}", inner, depth + 1)
            return
        if any(k in keys for k in FINDINGS_KEYS + TITLE_KEYS) or SOURCE_INLINE_KEYS & keys.keys():
            self._candidate(where, item, context)
            return
        if "error" in keys or "complete" in keys:
            # {"complete": false, "error": "…"}: a canonical fetcher answer that found nothing.
            _wrapper_context(item, keys, context, where, self.log)
            self.saw_empty_list = True
            return
        if item and all(_is_http_url(key) for key in item):
            self._walk_url_map(item, where, context)
            return
        self.log.reject(
            where, "not a source: no url, title or findings, and no sources list inside", item
        )

    def _walk_url_map(self, item: dict[str, Any], where: str, context: _Context) -> None:
        for url, details in item.items():
            here = f"{where}[{json.dumps(url)}]"
            if isinstance(details, dict):
                self._candidate(here, {**details, "url": url}, context)
            elif isinstance(details, list):
                self._candidate(here, {"url": url, "findings": details}, context)
            else:
                self.log.warn(here, f"ignored a {_kind(details)} given as this URL's details")
                self._candidate(here, {"url": url}, context)


def _source_url_key(item: dict[str, Any], keys: dict[str, str]) -> str | None:
    """The key of a ``"source"`` that holds a URL (elsewhere "source" may be a wrapper)."""
    key = keys.get("source")
    return key if key is not None and _is_http_url(item[key]) else None


def _may_hold(value: Any) -> bool:
    """Whether a wrapper key's value could contain sources (so "source": "Reuters" does not)."""
    if value is None or isinstance(value, dict | list):
        return True
    if isinstance(value, str):
        text = value.strip()
        return text[:1] in ("{", "[") or "```" in text
    return False


def _is_content_block(item: dict[str, Any], keys: dict[str, str]) -> bool:
    # Chat-API envelopes: {"type": "text", "text": "..."} and {"type": "tool_use", "input": {...}}
    kind = item[keys["type"]] if "type" in keys else None
    if kind == "text" and "text" in keys:
        return keys.keys() <= {"type", "text", "citations", "annotations"}
    return kind == "tool_use" and "input" in keys


def _wrapper_context(
    item: dict[str, Any], keys: dict[str, str], context: _Context, where: str, log: _Log
) -> _Context:
    if (error := _first(item, keys, ("error", "errors"))) not in (None, "", [], {}):
        log.warn(where, f"the fetcher reported an error: {_excerpt(error)}")
    query = _text_or_none(_first(item, keys, QUERY_KEYS))
    adapter = _text_or_none(_first(item, keys, ADAPTER_KEYS))
    mcp = _text_or_none(_first(item, keys, MCP_KEYS))
    sub_questions = _string_list(_first(item, keys, SQ_KEYS))
    round_value = _first(item, keys, ROUND_KEYS)
    return replace(
        context,
        query=query or context.query,
        adapter=adapter or context.adapter,
        mcp=mcp or context.mcp,
        sub_questions=tuple(sub_questions) or context.sub_questions,
        round=_round_or_none(round_value) or context.round,
    )


def _first(item: dict[str, Any], keys: dict[str, str], aliases: Iterable[str]) -> Any:
    for alias in aliases:
        if alias in keys:
            return item[keys[alias]]
    return None


def _suffix(where: str, label: str) -> str:
    return f"{where} ({label})" if label else where


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)"
    if isinstance(value, dict):
        shown = ", ".join(" ".join(str(key).split())[:30] for key in list(value)[:5])
        return f"an object with keys {shown}" if value else "an empty object"
    return "null" if value is None else type(value).__name__


# --- stage 3a: coerce one source -----------------------------------------------------------


class FindingDraft(BaseModel):
    """One (claim, verbatim quote) pair before it is numbered; no importance means "supporting"."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    claim: str
    quote: str
    importance: Importance | None = None


class SourceDraft(BaseModel):
    """One source as typed code states it, before merging; fields left None get the defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    title: str | None = None
    tier: Tier | None = None
    status: int | None = None
    content_hash: str | None = None
    source_type: SourceType | None = None
    retrieved_at: datetime | None = None
    published_at: date | None = None
    via: Via | None = None
    findings: list[FindingDraft] = Field(default_factory=list)


@dataclass
class _SourceFields:
    """The row fields one input source states: None (or an empty list) means "not stated"."""

    title: str | None = None
    published_at: date | None = None
    retrieved_at: datetime | None = None
    source_type: SourceType | None = None
    tier: Tier | None = None
    content_hash: str | None = None
    status: int | None = None
    final_url: str | None = None
    cites: list[str] = field(default_factory=list)
    sub_questions: list[str] = field(default_factory=list)
    round: int | None = None
    via: Via = field(default_factory=Via)

    def stated(self) -> dict[str, Any]:
        values = {name.name: getattr(self, name.name) for name in fields(self)}
        return {name: value for name, value in values.items() if value is not None}

    def merged(self, later: _SourceFields) -> _SourceFields:
        """The first statement of a field wins; lists are united; via is merged part by part."""
        return _SourceFields(
            title=_first_stated(self.title, later.title),
            published_at=_first_stated(self.published_at, later.published_at),
            retrieved_at=_first_stated(self.retrieved_at, later.retrieved_at),
            source_type=_first_stated(self.source_type, later.source_type),
            tier=_first_stated(self.tier, later.tier),
            content_hash=_first_stated(self.content_hash, later.content_hash),
            status=_first_stated(self.status, later.status),
            final_url=_first_stated(self.final_url, later.final_url),
            cites=_unique([*self.cites, *later.cites]),
            sub_questions=_unique([*self.sub_questions, *later.sub_questions]),
            round=_first_stated(self.round, later.round),
            via=Via(
                query=self.via.query or later.via.query,
                adapter=self.via.adapter or later.via.adapter,
                mcp=self.via.mcp or later.via.mcp,
            ),
        )


def _first_stated(first: _T | None, later: _T | None) -> _T | None:
    return first if first is not None else later


@dataclass(frozen=True)
class _CanonicalSource:
    """One input source ready to merge: its URL canonical, its fields typed, its place known."""

    where: str
    given_url: str
    url: str
    aliases: list[str]
    fields: _SourceFields
    findings: list[FindingDraft]


def _coerce_source(
    candidate: _Candidate, log: _Log, options: _RowOptions
) -> _CanonicalSource | None:
    item, where = candidate.item, candidate.where
    keys = _keymap(item)
    used: set[str] = set()

    def take(group: tuple[str, ...]) -> tuple[str, Any] | None:
        present = [alias for alias in group if alias in keys]
        used.update(keys[alias] for alias in present)
        if not present:
            return None
        for extra in present[1:]:
            log.warn(f"{where}.{keys[extra]}", f"ignored; {keys[present[0]]!s} was used instead")
        return keys[present[0]], item[keys[present[0]]]

    url_entry = take(URL_KEYS)
    if url_entry is None and (source_key := _source_url_key(item, keys)):
        used.add(source_key)
        url_entry = (source_key, item[source_key])
    resolved = _resolve_url(url_entry, where, item, log)
    if resolved is None:
        return None  # the rejection carries the whole object, findings included
    findings = _source_findings(item, keys, where, used, log)
    given_url, url, extra_aliases = resolved
    fields, stated_aliases = _source_fields(take, where, candidate.context, options, log)
    used.update(keys[k] for k in COMPUTED_KEYS if k in keys)
    ignored = [str(key) for key in item if key not in used]
    if ignored:
        log.warn(where, "ignored unknown key(s): " + ", ".join(ignored))
    aliases = _unique([given_url, *extra_aliases, *stated_aliases], exclude=url)
    return _CanonicalSource(where, given_url, url, aliases, fields, findings)


def _resolve_url(
    entry: tuple[str, Any] | None, where: str, item: dict[str, Any], log: _Log
) -> tuple[str, str, list[str]] | None:
    """(URL as given, canonical URL, further URLs given alongside) or None after a rejection."""
    if entry is None:
        log.reject(where, "source has no url", item)
        return None
    key, value = entry
    extra: list[str] = []
    if isinstance(value, dict):
        value = _first(value, _keymap(value), URL_KEYS)
    if isinstance(value, list):
        urls = [url for url in value if isinstance(url, str) and url.strip()]
        value, extra = (urls[0], [u.strip() for u in urls[1:]]) if urls else (None, [])
    if not isinstance(value, str):
        reason = "source has no url" if value is None else f"url is {_kind(value)}, not text"
        log.reject(f"{where}.{key}", reason, item)
        return None
    canonical = _canonical_url(value, f"{where}.{key}", log, item)
    if canonical is None:
        return None
    return *canonical, [u for u in extra if _valid_url(u)]


def _canonical_url(value: str, where: str, log: _Log, item: Any) -> tuple[str, str] | None:
    """(the URL as given, stripped; its canonical form), or None after a rejection."""
    if not value.strip():
        log.reject(where, "source has an empty url", item)
        return None
    given = value.strip()
    try:
        return given, canonicalize(given)
    except InvalidURL as exc:
        log.reject(where, f"invalid url: {exc}", given)
        return None


def _valid_url(url: str) -> bool:
    try:
        canonicalize(url)
    except InvalidURL:
        return False
    return True


@dataclass(frozen=True)
class _RowOptions:
    """What the caller states for every new row; it overrides what the input says."""

    sub_question: str | None
    round: int | None

    def apply(self, fields: _SourceFields) -> _SourceFields:
        if self.sub_question is not None:
            fields = replace(fields, sub_questions=[self.sub_question])
        if self.round is not None:
            fields = replace(fields, round=self.round)
        return fields


def _source_fields(
    take: Callable[[tuple[str, ...]], tuple[str, Any] | None],
    where: str,
    context: _Context,
    options: _RowOptions,
    log: _Log,
) -> tuple[_SourceFields, list[str]]:
    """The fields the source states, with its wrapper's and the caller's; and its aliases."""
    fields: dict[str, Any] = {}
    for name, group in SOURCE_KEY_GROUPS.items():
        if name == "url" or (entry := take(group)) is None:
            continue
        key, value = entry
        if value is None:
            continue
        coerced = _FIELD_COERCERS[name](value, f"{where}.{key}", log)
        if coerced is not None:
            fields[name] = coerced
    via = fields.pop("via", None) or Via()
    fields["via"] = Via(
        query=fields.pop("query", None) or via.query or context.query,
        adapter=fields.pop("adapter", None) or via.adapter or context.adapter,
        mcp=fields.pop("mcp", None) or via.mcp or context.mcp,
    )
    if "sub_questions" not in fields and context.sub_questions:
        fields["sub_questions"] = list(context.sub_questions)
    if "round" not in fields and context.round is not None:
        fields["round"] = context.round
    aliases: list[str] = fields.pop("aliases", [])
    return options.apply(_SourceFields(**fields)), aliases


def _coerce_title(value: Any, where: str, log: _Log) -> str | None:
    if isinstance(value, str):
        return " ".join(value.split()) or None
    log.warn(where, f"title is {_kind(value)}, not text; set to null")
    return None


def _coerce_published(value: Any, where: str, log: _Log) -> date | None:
    parsed, problem = parse_date(value)
    if problem:
        log.warn(where, f"{problem}; published_at set to null")
    return parsed


def _coerce_retrieved(value: Any, where: str, log: _Log) -> datetime | None:
    parsed, problem = parse_datetime(value)
    if problem:
        log.warn(where, f"{problem}; retrieved_at set to null")
    return parsed


def _coerce_source_type(value: Any, where: str, log: _Log) -> SourceType:
    found = SOURCE_TYPE_SYNONYMS.get(_enum_text(value))
    if found is None:
        log.warn(where, f"unknown source_type {_excerpt(value)!r}; set to 'unknown'")
        return "unknown"
    return found


def _coerce_tier(value: Any, where: str, log: _Log) -> Tier:
    found = TIER_SYNONYMS.get(_enum_text(value))
    if found is None:
        log.warn(where, f"unknown tier {_excerpt(value)!r}; set to {DEFAULT_TIER!r}")
        return DEFAULT_TIER
    return found


def _coerce_hash(value: Any, where: str, log: _Log) -> str | None:
    match = _HASH.match(value.strip().lower()) if isinstance(value, str) else None
    if match is None:
        log.warn(where, f"content_hash {_excerpt(value)!r} is not a sha256 digest; set to null")
        return None
    return f"sha256:{match.group(1)}"


def _coerce_status(value: Any, where: str, log: _Log) -> int | None:
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and (match := re.match(r"^\s*(\d{3})\b", value)):
        number = int(match.group(1))
    if number is None or not 100 <= number <= 599:
        log.warn(where, f"status {_excerpt(value)!r} is not an HTTP status; set to null")
        return None
    return number


def _coerce_final_url(value: Any, where: str, log: _Log) -> str | None:
    if isinstance(value, str) and _valid_url(value.strip()):
        return value.strip()  # a record of where the fetch landed, kept as observed
    log.warn(where, f"final_url {_excerpt(value)!r} is not an http(s) URL; set to null")
    return None


def _coerce_url_list(value: Any, where: str, log: _Log, *, canonical: bool) -> list[str]:
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for index, entry in enumerate(items):
        if isinstance(entry, dict):
            entry = _first(entry, _keymap(entry), URL_KEYS)
        here = f"{where}[{index}]" if isinstance(value, list) else where
        if not isinstance(entry, str):
            log.warn(here, f"ignored {_kind(entry)}; expected a URL")
            continue
        try:
            out.append(canonicalize(entry) if canonical else _checked(entry.strip()))
        except InvalidURL as exc:
            log.warn(here, f"ignored invalid URL: {exc}")
    return _unique(out)


def _checked(url: str) -> str:
    canonicalize(url)
    return url


def _coerce_cites(value: Any, where: str, log: _Log) -> list[str]:
    return _coerce_url_list(value, where, log, canonical=True)


def _coerce_aliases(value: Any, where: str, log: _Log) -> list[str]:
    return _coerce_url_list(value, where, log, canonical=False)


def _coerce_sub_questions(value: Any, where: str, log: _Log) -> list[str] | None:
    found = _string_list(value)
    if not found:
        log.warn(where, f"sub_questions {_excerpt(value)!r} holds no ids; ignored")
        return None
    return found


def _coerce_round(value: Any, where: str, log: _Log) -> int | None:
    found = _round_or_none(value)
    if found is None:
        log.warn(where, f"round {_excerpt(value)!r} is not a positive integer; ignored")
    return found


def _coerce_text(value: Any, where: str, log: _Log) -> str | None:
    text = _text_or_none(value)
    if text is None:
        log.warn(where, f"ignored {_kind(value)}; expected text")
    return text


def _coerce_via(value: Any, where: str, log: _Log) -> Via | None:
    if not isinstance(value, dict):
        log.warn(where, f"via is {_kind(value)}, not an object; ignored")
        return None
    keys = _keymap(value)
    return Via(
        query=_text_or_none(_first(value, keys, QUERY_KEYS)),
        adapter=_text_or_none(_first(value, keys, ADAPTER_KEYS)),
        mcp=_text_or_none(_first(value, keys, MCP_KEYS)),
    )


_FIELD_COERCERS: dict[str, Callable[[Any, str, _Log], Any]] = {
    "title": _coerce_title,
    "published_at": _coerce_published,
    "retrieved_at": _coerce_retrieved,
    "source_type": _coerce_source_type,
    "tier": _coerce_tier,
    "content_hash": _coerce_hash,
    "status": _coerce_status,
    "final_url": _coerce_final_url,
    "cites": _coerce_cites,
    "aliases": _coerce_aliases,
    "sub_questions": _coerce_sub_questions,
    "round": _coerce_round,
    "query": _coerce_text,
    "adapter": _coerce_text,
    "mcp": _coerce_text,
    "via": _coerce_via,
}


def _enum_text(value: Any) -> str:
    return " ".join(re.sub(r"[_\-]+", " ", str(value)).lower().split())


def _text_or_none(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def _string_list(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return _unique(text for item in items if (text := _text_or_none(item)) is not None)


def _round_or_none(value: Any) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return None


def _unique(items: Iterable[str], *, exclude: str | None = None) -> list[str]:
    seen: set[str] = set() if exclude is None else {exclude}
    out: list[str] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


# --- stage 3b: findings --------------------------------------------------------------------


def _source_findings(
    item: dict[str, Any], keys: dict[str, str], where: str, used: set[str], log: _Log
) -> list[FindingDraft]:
    findings: list[FindingDraft] = []
    inline = {norm: keys[norm] for norm in keys if norm in SOURCE_INLINE_KEYS}
    for norm in FINDINGS_KEYS:
        if norm not in keys:
            continue
        key = keys[norm]
        value = item[key]
        if isinstance(value, str) and norm in SOURCE_INLINE_KEYS:
            continue  # "quotes"/"evidence" holding one text: an inline finding, handled below
        used.add(key)
        inline.pop(norm, None)
        findings += _findings_from(value, f"{where}.{key}", log)
    level_keys = {norm: keys[norm] for norm in keys if norm in IMPORTANCE_KEYS + CENTRAL_FLAG_KEYS}
    used.update(level_keys.values())
    if inline:
        # The source object itself carries one finding: {"url", "claim", "quote"}.
        used.update(inline.values())
        findings += _finding_from_object(item, where, log, keys={**inline, **level_keys})
        return findings
    # An importance stated on the source is the default of its findings.
    default = _importance(_first(item, level_keys, IMPORTANCE_KEYS), where, log)
    if default is None and True in (item[key] for key in level_keys.values()):
        default = "central"
    return [
        finding.model_copy(
            update={"importance": finding.importance or default or DEFAULT_IMPORTANCE}
        )
        for finding in findings
    ]


def _findings_from(value: Any, where: str, log: _Log, depth: int = 0) -> list[FindingDraft]:
    if value is None:
        return []
    if isinstance(value, list):
        out: list[FindingDraft] = []
        for index, entry in enumerate(value):
            out += _finding_from_entry(entry, f"{where}[{index}]", log, depth)
        return out
    if isinstance(value, dict):
        keys = _keymap(value)
        if INLINE_FINDING_KEYS & keys.keys():
            return _finding_from_object(value, where, log, keys=keys)
        if value and all(isinstance(entry, dict) for entry in value.values()):
            return [  # {"F1": {...}, "F2": {...}}
                finding
                for key, entry in value.items()
                for finding in _finding_from_object(entry, f"{where}.{key}", log)
            ]
        return _findings_from_claim_map(value, where, log)
    return _finding_from_entry(value, where, log, depth)


def _finding_from_entry(entry: Any, where: str, log: _Log, depth: int) -> list[FindingDraft]:
    if isinstance(entry, dict):
        keys = _keymap(entry)
        if not INLINE_FINDING_KEYS & keys.keys() and len(entry) == 1:
            return _findings_from_claim_map(entry, where, log)  # [{"claim": "quote"}]
        return _finding_from_object(entry, where, log, keys=keys)
    if isinstance(entry, list):
        if len(entry) in (2, 3):
            importance = entry[2] if len(entry) == 3 else None
            return _make_findings(
                entry[0], entry[1], importance, where, log, quote_where=f"{where}[1]", origin=entry
            )
        log.reject(where, f"a finding list must be [claim, quote] (got {len(entry)} items)", entry)
        return []
    if isinstance(entry, str) and depth < 2 and entry.strip()[:1] in ("{", "["):
        try:
            found = _extract(entry)
        except _NotJSON:
            pass
        else:
            return [f for _, doc in found.docs for f in _findings_from(doc, where, log, depth + 1)]
    if isinstance(entry, str):
        log.reject(where, "finding has no quote (a bare string; expected {claim, quote})", entry)
        return []
    log.reject(where, f"expected a finding object, got {_kind(entry)}", entry)
    return []


def _finding_from_object(
    entry: Any, where: str, log: _Log, *, keys: dict[str, str] | None = None
) -> list[FindingDraft]:
    if not isinstance(entry, dict):
        log.reject(where, f"expected a finding object, got {_kind(entry)}", entry)
        return []
    keys = keys if keys is not None else _keymap(entry)
    claim_key = next((keys[k] for k in CLAIM_KEYS if k in keys), None)
    quote_key = next((keys[k] for k in QUOTE_KEYS if k in keys and keys[k] != claim_key), None)
    importance: Any = _first(entry, keys, IMPORTANCE_KEYS)
    flags = [entry[keys[k]] for k in CENTRAL_FLAG_KEYS if k in keys]
    if importance is None and True in flags:
        importance = "central"
    if quote_key is None:
        reason = "finding has no quote" if claim_key else "finding has no claim and no quote"
        log.reject(where, reason, entry)
        return []
    claim = entry[claim_key] if claim_key else None
    return _make_findings(
        claim,
        entry[quote_key],
        importance,
        where,
        log,
        quote_where=f"{where}.{quote_key}",
        origin=entry,
    )


def _findings_from_claim_map(value: dict[str, Any], where: str, log: _Log) -> list[FindingDraft]:
    out: list[FindingDraft] = []
    for claim, quote in value.items():
        here = f"{where}[{json.dumps(claim, ensure_ascii=False)[:60]}]"
        out += _make_findings(claim, quote, None, here, log, quote_where=here)
    return out


def _make_findings(
    claim: Any,
    quote: Any,
    importance: Any,
    where: str,
    log: _Log,
    *,
    quote_where: str,
    origin: Any = None,
) -> list[FindingDraft]:
    """One finding per quote; a list of quotes is several findings of the same claim.

    ``origin`` is the input the finding came from, shown as the excerpt of a rejection.
    """
    shown = {"claim": claim, "quote": quote} if origin is None else origin
    if not isinstance(claim, str) or not claim.strip():
        missing = claim is None or isinstance(claim, str)
        reason = "finding has no claim" if missing else f"claim is {_kind(claim)}, not text"
        log.reject(where, reason, shown)
        return []
    level = _importance(importance, where, log)
    quotes = quote if isinstance(quote, list) else [quote]
    out: list[FindingDraft] = []
    for index, entry in enumerate(quotes):
        here = f"{quote_where}[{index}]" if isinstance(quote, list) else quote_where
        text = _quote_text(entry)
        if text is None:
            reason = (
                "finding has no quote" if entry is None else (f"quote is {_kind(entry)}, not text")
            )
            log.reject(here, reason, shown)
        elif not text.strip():
            log.reject(here, "finding has an empty quote", shown)
        else:
            out.append(_trimmed_finding(claim, text, level))
    if not quotes:
        log.reject(where, "finding has no quote (an empty list)", shown)
    return out


def _trimmed_finding(claim: str, quote: str, importance: Importance | None) -> FindingDraft:
    return FindingDraft(
        claim=claim.strip(), quote=_unwrap_quote(quote.strip()), importance=importance
    )


def _quote_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        inner = _first(value, _keymap(value), ("text", *QUOTE_KEYS))
        return inner if isinstance(inner, str) else None
    return None


def _unwrap_quote(text: str) -> str:
    # Models often wrap a verbatim quote in quotation marks; the marks are not on the page.
    for opening, closing in _QUOTE_PAIRS:
        inner = text[len(opening) : -len(closing)]
        if (
            len(text) > len(opening) + len(closing)
            and text.startswith(opening)
            and text.endswith(closing)
            and opening not in inner
            and closing not in inner
            and inner.strip()
        ):
            return inner.strip()
    return text


def _importance(value: Any, where: str, log: _Log) -> Importance | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "central" if value else DEFAULT_IMPORTANCE
    found = IMPORTANCE_SYNONYMS.get(_enum_text(value)) if isinstance(value, str) else None
    if found is None:
        log.warn(where, f"unknown importance {_excerpt(value)!r}; set to {DEFAULT_IMPORTANCE!r}")
        return DEFAULT_IMPORTANCE
    return found


# --- dates ---------------------------------------------------------------------------------


def parse_date(value: Any) -> tuple[date | None, str | None]:
    """(date, None) for a date stated in a common format, else (None, why) — never a guess.

    Accepts ISO dates and datetimes (the date as written, no time-zone shift), ``2024/03/05``,
    ``20240305``, month-name forms (``March 5, 2024``, ``5 Mar 2024``, ``Tue, 05 Mar 2024
    10:00:00 GMT``, ``5th of March 2024``) and day/month/year numbers only when unambiguous
    (``25/03/2024``; ``03/05/2024`` is refused). A year or a month alone is refused: there is no
    day to record.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    if not isinstance(value, str):
        return None, f"date {_excerpt(value)!r} is {_kind(value)}, not a date string"
    text = value.strip()
    parts = _date_parts(text)
    if isinstance(parts, str):
        return None, f"{parts}: {text!r}"
    try:
        return date(*parts), None
    except ValueError:
        return None, f"no such date: {text!r}"


def _date_parts(text: str) -> tuple[int, int, int] | str:
    for pattern in (_ISO_DATE, _YMD, _COMPACT):
        if match := pattern.match(text):
            return int(match.group(1)), int(match.group(2)), int(match.group(3))
    if match := _DMY_NUMERIC.match(text):
        first, second, year = (int(group) for group in match.groups())
        if first > 12 >= second:
            return year, second, first
        if second > 12 >= first or first == second:
            return year, first, second
        return "ambiguous day/month order"
    if _PARTIAL.match(text):
        return "partial date without a day"
    return _named_month_parts(text)


def _named_month_parts(text: str) -> tuple[int, int, int] | str:
    tokens = re.findall(r"[a-z]+|\d+", _TIME_TAIL.sub("", text.lower()))
    tokens = [t for t in tokens if t not in _WEEKDAYS and t not in _DATE_FILLER]
    months = [_MONTHS[t] for t in tokens if t in _MONTHS]
    numbers = [t for t in tokens if t.isdigit()]
    if len(months) != 1 or len(tokens) != len(numbers) + 1:
        return "unparseable date"
    years = [int(t) for t in numbers if len(t) == 4]
    days = [int(t) for t in numbers if len(t) <= 2]
    if len(years) == 1 and not days and len(numbers) == 1:
        return "partial date without a day"
    if len(years) != 1 or len(days) != 1 or len(numbers) != 2:
        return "unparseable date"
    return years[0], months[0], days[0]


def parse_datetime(value: Any) -> tuple[datetime | None, str | None]:
    """(UTC datetime, None) for an ISO datetime (naive means UTC), else (None, why)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, None
    if not isinstance(value, str):
        return None, f"datetime {_excerpt(value)!r} is {_kind(value)}, not an ISO string"
    text = value.strip()
    if "T" not in text.upper() and " " not in text:
        return None, f"a date without a time is not a retrieval time: {text!r}"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None, f"not an ISO datetime: {text!r}"
    return _as_utc(parsed), None


def _as_utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a naive datetime is taken to be UTC already."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


# --- stage 3c: merge and number ------------------------------------------------------------


@dataclass
class _Slot:
    """One output row under construction: an existing row or one created from the input."""

    sid: str
    url: str
    row: SourceRow | None  # the existing row this slot extends; None for a new row
    where: str  # where the input first stated a new row (named by its rejection)
    fields: _SourceFields  # a new row's fields, merged over every input source of it
    aliases: list[str]
    findings: list[FindingDraft]
    known: set[tuple[str, str]]
    touched: bool = False


def _finding_key(claim: str, quote: str) -> tuple[str, str]:
    return " ".join(claim.split()), " ".join(quote.split())


def _existing_slot(row: SourceRow) -> _Slot:
    known = {_finding_key(f.claim, f.quote) for f in row.findings}
    return _Slot(row.id, row.url, row, "", _SourceFields(), list(row.aliases), [], known)


class _Merger:
    """Dedup by canonical URL (and by any alias's canonical URL) and assign stable ids."""

    def __init__(self, existing: Sequence[SourceRow], start_id: int) -> None:
        self.slots: list[_Slot] = []
        self.index: dict[str, _Slot] = {}
        self.merged = 0
        for row in existing:
            slot = _existing_slot(row)
            self.slots.append(slot)
            self._register(slot, [row.url, *row.aliases])
        highest = max((int(row.id[1:]) for row in existing), default=0)
        self.next_id = max(start_id, highest + 1)

    def _register(self, slot: _Slot, urls: Iterable[str]) -> None:
        for url in urls:
            canonical = canonical_or_none(url) or url
            self.index.setdefault(canonical, slot)

    def add(self, source: _CanonicalSource) -> None:
        slot = self._find(source)
        if slot is None:
            sid = f"S{self.next_id}"
            slot = _Slot(
                sid, source.url, None, source.where, source.fields, [*source.aliases], [], set()
            )
            self.next_id += 1
            self.slots.append(slot)
            self._register(slot, [source.url, *source.aliases])
        else:
            self.merged += 1
            self._merge_fields(slot, source)
        self._add_findings(slot, source.findings)

    def _find(self, source: _CanonicalSource) -> _Slot | None:
        for url in [source.url, *source.aliases]:
            slot = self.index.get(canonical_or_none(url) or url)
            if slot is not None:
                return slot
        return None

    def _merge_fields(self, slot: _Slot, source: _CanonicalSource) -> None:
        for url in _unique([source.given_url, source.url, *source.aliases], exclude=slot.url):
            if url not in slot.aliases:
                slot.aliases.append(url)
                slot.touched = True
        self._register(slot, [source.url, *source.aliases])
        if slot.row is None:  # an existing row keeps its fields: only findings and aliases grow
            slot.fields = slot.fields.merged(source.fields)

    def _add_findings(self, slot: _Slot, findings: Iterable[FindingDraft]) -> None:
        for finding in findings:
            key = _finding_key(finding.claim, finding.quote)
            if key not in slot.known:
                slot.known.add(key)
                slot.findings.append(finding)
                slot.touched = True

    def rows(self, log: _Log) -> tuple[list[SourceRow], int]:
        rows: list[SourceRow] = []
        created = 0
        for slot in self.slots:
            row = self._build(slot, log)
            if row is not None:
                rows.append(row)
                created += slot.row is None
        return rows, created

    def _build(self, slot: _Slot, log: _Log) -> SourceRow | None:
        if slot.row is not None:
            if not slot.touched:
                return slot.row
            first = 1 + max((int(f.id.rsplit("F", 1)[1]) for f in slot.row.findings), default=0)
            extra = _numbered(slot.sid, slot.findings, first)
            return slot.row.model_copy(
                update={"aliases": slot.aliases, "findings": [*slot.row.findings, *extra]}
            )
        try:
            return SourceRow.model_validate(
                {
                    **slot.fields.stated(),
                    "id": slot.sid,
                    "url": slot.url,
                    "aliases": slot.aliases,
                    "owner": registrable_domain(slot.url),
                    "findings": _numbered(slot.sid, slot.findings, 1),
                }
            )
        except ValidationError as exc:
            first_error = exc.errors()[0]
            location = ".".join(str(part) for part in first_error["loc"])
            log.reject(slot.where, f"not a valid source row: {location}: {first_error['msg']}")
            return None


def _numbered(sid: str, findings: Iterable[FindingDraft], first: int) -> list[Finding]:
    return [
        Finding(
            id=f"{sid}.F{number}",
            claim=f.claim,
            quote=f.quote,
            importance=f.importance or DEFAULT_IMPORTANCE,
        )
        for number, f in enumerate(findings, start=first)
    ]


def _merge(
    sources: Iterable[_CanonicalSource],
    *,
    existing: Sequence[SourceRow],
    start_id: int,
    log: _Log,
) -> NormalizeResult:
    """The one merge both entry points end in: dedupe, number, build and validate the rows."""
    merger = _Merger(existing, start_id)
    for source in sources:
        merger.add(source)
    rows, created = merger.rows(log)
    return NormalizeResult(
        rows=rows,
        rejections=log.rejections,
        warnings=log.warnings,
        new_rows=created,
        merged=merger.merged,
    )


# --- typed drafts --------------------------------------------------------------------------


def _from_draft(
    draft: SourceDraft, where: str, log: _Log, options: _RowOptions
) -> _CanonicalSource | None:
    # The value clean-ups of the lenient path (whitespace, marks around a quote, UTC) apply
    # here too, so the same data gives the same row whichever path it takes.
    shown = draft.model_dump(mode="json", exclude_none=True)
    canonical = _canonical_url(draft.url, f"{where}.url", log, shown)
    if canonical is None:
        return None
    given_url, url = canonical
    findings = [
        kept
        for index, finding in enumerate(draft.findings)
        if (kept := _from_finding_draft(finding, f"{where}.findings[{index}]", log)) is not None
    ]
    via = draft.via or Via()
    fields = _SourceFields(
        title=_coerce_title(draft.title, where, log) if draft.title is not None else None,
        published_at=draft.published_at,
        retrieved_at=_as_utc(draft.retrieved_at) if draft.retrieved_at is not None else None,
        source_type=draft.source_type,
        tier=draft.tier,
        content_hash=draft.content_hash,
        status=draft.status,
        via=Via(
            query=_text_or_none(via.query),
            adapter=_text_or_none(via.adapter),
            mcp=_text_or_none(via.mcp),
        ),
    )
    aliases = _unique([given_url], exclude=url)
    return _CanonicalSource(where, given_url, url, aliases, options.apply(fields), findings)


def _from_finding_draft(finding: FindingDraft, where: str, log: _Log) -> FindingDraft | None:
    shown = finding.model_dump(exclude_none=True)
    if not finding.claim.strip():
        log.reject(where, "finding has no claim", shown)
        return None
    if not finding.quote.strip():
        log.reject(f"{where}.quote", "finding has an empty quote", shown)
        return None
    return _trimmed_finding(finding.claim, finding.quote, finding.importance)


# --- entry points --------------------------------------------------------------------------


def merge_sources(
    drafts: Sequence[SourceDraft],
    *,
    existing: Sequence[SourceRow] = (),
    start_id: int = 1,
    sub_question: str | None = None,
    round: int | None = None,
) -> NormalizeResult:
    """Canonical rows from typed drafts: the merge of :func:`normalize_payload`, no parsing.

    Each URL is canonicalized (an invalid one is a rejection); duplicates merge, ids and numbering
    follow the same rules. Draft ``i`` is named ``$[i]`` in rejections, as the ``i``-th element
    of a JSON array would be.
    """
    log = _Log()
    options = _RowOptions(sub_question, round)
    sources = [
        source
        for index, draft in enumerate(drafts)
        if (source := _from_draft(draft, f"$[{index}]", log, options)) is not None
    ]
    return _merge(sources, existing=existing, start_id=start_id, log=log)


def normalize_payload(
    text: str,
    *,
    start_id: int = 1,
    existing: Sequence[SourceRow] = (),
    sub_question: str | None = None,
    round: int | None = None,
) -> NormalizeResult:
    """Canonical rows from raw fetcher output ``text``; pure (no files, no network).

    New rows are numbered from ``max(start_id, highest existing id + 1)``. Raises
    :class:`UnreadableInput` when no JSON can be found and :class:`SchemaViolation` when the JSON
    holds nothing that could be a source.
    """
    log = _Log()
    options = _RowOptions(sub_question, round)
    sources: list[_CanonicalSource] = []

    def accept(candidate: _Candidate) -> None:
        source = _coerce_source(candidate, log, options)
        if source is not None:
            sources.append(source)

    walker = _Walker(log, accept)
    try:
        extracted = _extract(text)
    except _NotJSON as exc:
        raise UnreadableInput(f"input {exc}; {EXPECTED}") from None
    for label, note in extracted.notes:
        log.warn(_root(label), note)
    for label, reason, excerpt in extracted.bad:
        log.rejections.append(Rejection(label, reason, excerpt))
    for label, value in extracted.docs:
        walker.walk(value, _root(label), _Context())
    if not walker.found and not walker.saw_empty_list:
        found = _kind(extracted.docs[0][1]) if extracted.docs else "nothing"
        raise SchemaViolation(
            "no recognizable source: expected a source object with a url, a list of them, or "
            f'{{"sources": [...]}}; found {found}',
            source="input",
        )
    return _merge(sources, existing=existing, start_id=start_id, log=log)


def run_normalize(
    options: NormalizeOptions, *, stdin: BinaryIO, stdout: TextIO | None = None
) -> NormalizeResult:
    """Read, normalize, then write: rows to the brief, --output or stdout; the report if asked.

    Every check happens before the first write, and every file write is atomic, so an input
    error leaves the brief exactly as it was.
    """
    _check_options(options)
    if options.brief is None:
        return _normalize(options, stdin, stdout)
    if not options.brief.is_dir():
        raise MissingArtifact(f"brief directory not found: {options.brief}")
    # The lock spans read-modify-write, so two normalizers cannot lose each other's rows.
    with Brief(options.brief).lock():
        return _normalize(options, stdin, stdout)


def _normalize(
    options: NormalizeOptions, stdin: BinaryIO, stdout: TextIO | None
) -> NormalizeResult:
    existing: list[SourceRow] = []
    existing_lines: list[str] = []
    if options.brief is not None:
        existing, existing_lines = _read_brief_sources(options.brief)
    highest = max((int(row.id[1:]) for row in existing), default=0)
    if options.start_id is not None and options.start_id <= highest:
        raise InputError(
            f"--start-id {options.start_id} would reuse an id: the brief already has S{highest}; "
            f"use {highest + 1} or more, or omit --start-id"
        )
    text = _read_input(options.input, stdin)
    result = normalize_payload(
        text,
        start_id=options.start_id or 1,
        existing=existing,
        sub_question=options.sub_question,
        round=options.round,
    )
    lines = _render_lines(result.rows, existing, existing_lines)
    if options.brief is not None:
        atomic_write_text(options.brief / "sources.jsonl", lines)
    elif options.output is not None:
        atomic_write_text(options.output, lines)
    else:
        (stdout or sys.stdout).write(lines)
    if options.report is not None:
        atomic_write_json(options.report, result.report())
    return result


def _check_options(options: NormalizeOptions) -> None:
    if options.start_id is not None and options.start_id < 1:
        raise InputError(f"--start-id must be 1 or more, got {options.start_id}")
    if options.round is not None and options.round < 1:
        raise InputError(f"--round must be 1 or more, got {options.round}")
    if options.sub_question is not None and not options.sub_question.strip():
        raise InputError("--sub-question must not be empty")


def _read_brief_sources(brief: Path) -> tuple[list[SourceRow], list[str]]:
    if not brief.is_dir():
        raise MissingArtifact(f"brief directory not found: {brief}")
    path = brief / "sources.jsonl"
    if not path.exists():
        return [], []
    rows = load_sources(path)
    lines = [line for line in read_text(path, what="sources.jsonl").splitlines() if line.strip()]
    return rows, lines if len(lines) == len(rows) else []


def _read_input(path: Path | None, stdin: BinaryIO) -> str:
    what = "stdin" if path is None else str(path)
    if path is None:
        data = stdin.read(MAX_INPUT_BYTES + 1)
    else:
        if not path.exists():
            raise MissingArtifact(f"fetcher output not found: {path}")
        if not path.is_file():
            raise UnreadableInput(f"fetcher output is not a regular file: {path}")
        with path.open("rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise UnreadableInput(
            f"{what} is larger than {MAX_INPUT_BYTES} bytes, the limit for fetcher output; "
            "pass one fetcher's output at a time"
        )
    return decode_utf8(data, what=what)


def _render_lines(
    rows: Sequence[SourceRow], existing: Sequence[SourceRow], existing_lines: Sequence[str]
) -> str:
    # Rows this run did not change are written back byte for byte, as they were read.
    out: list[str] = []
    for index, row in enumerate(rows):
        if index < len(existing_lines) and index < len(existing) and row is existing[index]:
            out.append(existing_lines[index])
        else:
            out.append(json.dumps(model_dump(row), ensure_ascii=False))
    return "".join(line + "\n" for line in out)
