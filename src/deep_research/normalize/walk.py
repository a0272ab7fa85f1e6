"""The walk: the source objects inside whatever a fetcher wrapped them in.

Wrappers (``{"results": …}``, ``{"data": {"sources": …}}``, chat-API content blocks), lists,
URL-keyed maps and JSON encoded in strings are followed; each source object found is handed on
at once as a :class:`Candidate`, so rejections come out in input order. What a wrapper says
about its sources (query, adapter, sub-question, round) travels down as a :class:`Context`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from deep_research.normalize.describe import excerpt, kind
from deep_research.normalize.json_recovery import NotJSON, extract_json
from deep_research.normalize.key_aliases import (
    ADAPTER_KEYS,
    FINDINGS_KEYS,
    MCP_KEYS,
    QUERY_KEYS,
    ROUND_KEYS,
    SOURCE_INLINE_KEYS,
    SOURCE_LIST_KEYS,
    SQ_KEYS,
    TITLE_KEYS,
    URL_KEYS,
    WRAPPER_KEYS,
    first_of,
    keymap,
)
from deep_research.normalize.results import Log, Rejection
from deep_research.normalize.values import round_or_none, string_list, text_or_none

#: Deepest wrapper nesting followed; deeper structures are reported, not recursed into.
MAX_DEPTH = 40


@dataclass(frozen=True)
class Context:
    """What a wrapper says about every source inside it."""

    query: str | None = None
    adapter: str | None = None
    mcp: str | None = None
    sub_questions: tuple[str, ...] = ()
    round: int | None = None


@dataclass(frozen=True)
class Candidate:
    """An object that looks like a source, where it is in the input, and what wraps it."""

    where: str
    item: dict[str, Any]
    context: Context


def is_http_url(value: object) -> bool:
    return isinstance(value, str) and value.strip().lower().startswith(("http://", "https://"))


class Walker:
    """Finds source candidates inside wrappers, lists, URL-keyed maps and encoded strings."""

    def __init__(self, log: Log, accept: Callable[[Candidate], None]) -> None:
        self.log = log
        self.accept = accept  # called at once, so rejections come out in input order
        self.found = 0
        self.saw_empty_list = False

    def _candidate(self, where: str, item: dict[str, Any], context: Context) -> None:
        self.found += 1
        self.accept(Candidate(where, item, context))

    def walk(self, value: Any, where: str, context: Context, depth: int = 0) -> None:
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
            self.log.reject(where, f"expected a source object, got {kind(value)}", value)

    def _walk_string(self, value: str, where: str, context: Context, depth: int) -> None:
        if is_http_url(value):
            self._candidate(where, {"url": value}, context)
            return
        try:
            found = extract_json(value)
        except NotJSON:
            self.log.reject(where, "expected a source object, got text", value)
            return
        for label, note in found.notes:
            self.log.warn(_suffix(where, label), note)
        for label, reason, shown in found.bad:
            self.log.rejections.append(Rejection(_suffix(where, label), reason, shown))
        for label, doc in found.docs:
            self.walk(doc, _suffix(where, label), context, depth + 1)

    def _walk_object(self, item: dict[str, Any], where: str, context: Context, depth: int) -> None:
        keys = keymap(item)
        if _is_content_block(item, keys):
            key = keys["text"] if "text" in keys else keys["input"]
            self.walk(item[key], f"{where}.{key}", context, depth + 1)
            return
        if any(k in keys for k in URL_KEYS) or source_url_key(item, keys):
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
        if item and all(is_http_url(key) for key in item):
            self._walk_url_map(item, where, context)
            return
        self.log.reject(
            where, "not a source: no url, title or findings, and no sources list inside", item
        )

    def _walk_url_map(self, item: dict[str, Any], where: str, context: Context) -> None:
        for url, details in item.items():
            here = f"{where}[{json.dumps(url)}]"
            if isinstance(details, dict):
                self._candidate(here, {**details, "url": url}, context)
            elif isinstance(details, list):
                self._candidate(here, {"url": url, "findings": details}, context)
            else:
                self.log.warn(here, f"ignored a {kind(details)} given as this URL's details")
                self._candidate(here, {"url": url}, context)


def source_url_key(item: dict[str, Any], keys: dict[str, str]) -> str | None:
    """The key of a ``"source"`` that holds a URL (elsewhere "source" may be a wrapper)."""
    key = keys.get("source")
    return key if key is not None and is_http_url(item[key]) else None


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
    block_type = item[keys["type"]] if "type" in keys else None
    if block_type == "text" and "text" in keys:
        return keys.keys() <= {"type", "text", "citations", "annotations"}
    return block_type == "tool_use" and "input" in keys


def _wrapper_context(
    item: dict[str, Any], keys: dict[str, str], context: Context, where: str, log: Log
) -> Context:
    if (error := first_of(item, keys, ("error", "errors"))) not in (None, "", [], {}):
        log.warn(where, f"the fetcher reported an error: {excerpt(error)}")
    query = text_or_none(first_of(item, keys, QUERY_KEYS))
    adapter = text_or_none(first_of(item, keys, ADAPTER_KEYS))
    mcp = text_or_none(first_of(item, keys, MCP_KEYS))
    sub_questions = string_list(first_of(item, keys, SQ_KEYS))
    round_value = first_of(item, keys, ROUND_KEYS)
    return replace(
        context,
        query=query or context.query,
        adapter=adapter or context.adapter,
        mcp=mcp or context.mcp,
        sub_questions=tuple(sub_questions) or context.sub_questions,
        round=round_or_none(round_value) or context.round,
    )


def _suffix(where: str, label: str) -> str:
    return f"{where} ({label})" if label else where
