"""Coercion: one source object, aliased and drifted, becomes one typed :class:`CanonicalSource`.

Aliases are mapped to fields (the first alias present wins; the others are warnings), enums and
dates are validated, the URL is canonicalized and unknown keys are reported. A value that cannot
be used is a warning and the field is left unstated; a source without a usable URL is a
rejection.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from deep_research.models import SourceType, Tier, Via
from deep_research.normalize.dates import parse_date, parse_datetime
from deep_research.normalize.describe import excerpt, kind
from deep_research.normalize.drafts import CanonicalSource, RowOptions, SourceFields, canonical_url
from deep_research.normalize.enum_synonyms import (
    DEFAULT_TIER,
    SOURCE_TYPE_SYNONYMS,
    TIER_SYNONYMS,
    enum_text,
)
from deep_research.normalize.findings import source_findings
from deep_research.normalize.key_aliases import (
    ADAPTER_KEYS,
    COMPUTED_KEYS,
    MCP_KEYS,
    QUERY_KEYS,
    SOURCE_KEY_GROUPS,
    URL_KEYS,
    first_of,
    keymap,
)
from deep_research.normalize.results import Log
from deep_research.normalize.values import (
    collapsed,
    round_or_none,
    string_list,
    text_or_none,
    unique,
)
from deep_research.normalize.walk import Candidate, Context, source_url_key
from deep_research.urls import InvalidURL, canonicalize

_HASH = re.compile(r"^(?:sha256:)?([0-9a-f]{64})$")


def coerce_source(candidate: Candidate, log: Log, options: RowOptions) -> CanonicalSource | None:
    """The candidate as a typed source ready to merge, or None after a rejection."""
    item, where = candidate.item, candidate.where
    keys = keymap(item)
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
    if url_entry is None and (source_key := source_url_key(item, keys)):
        used.add(source_key)
        url_entry = (source_key, item[source_key])
    resolved = _resolve_url(url_entry, where, item, log)
    if resolved is None:
        return None  # the rejection carries the whole object, findings included
    findings = source_findings(item, keys, where, used, log)
    given_url, url, extra_aliases = resolved
    fields, stated_aliases = _source_fields(take, where, candidate.context, options, log)
    used.update(keys[k] for k in COMPUTED_KEYS if k in keys)
    ignored = [str(key) for key in item if key not in used]
    if ignored:
        log.warn(where, "ignored unknown key(s): " + ", ".join(ignored))
    aliases = unique([given_url, *extra_aliases, *stated_aliases], exclude=url)
    return CanonicalSource(where, given_url, url, aliases, fields, findings)


def _resolve_url(
    entry: tuple[str, Any] | None, where: str, item: dict[str, Any], log: Log
) -> tuple[str, str, list[str]] | None:
    """(URL as given, canonical URL, further URLs given alongside) or None after a rejection."""
    if entry is None:
        log.reject(where, "source has no url", item)
        return None
    key, value = entry
    extra: list[str] = []
    if isinstance(value, dict):
        value = first_of(value, keymap(value), URL_KEYS)
    if isinstance(value, list):
        urls = [url for url in value if isinstance(url, str) and url.strip()]
        value, extra = (urls[0], [u.strip() for u in urls[1:]]) if urls else (None, [])
    if not isinstance(value, str):
        reason = "source has no url" if value is None else f"url is {kind(value)}, not text"
        log.reject(f"{where}.{key}", reason, item)
        return None
    canonical = canonical_url(value, f"{where}.{key}", log, item)
    if canonical is None:
        return None
    return *canonical, [u for u in extra if _valid_url(u)]


def _valid_url(url: str) -> bool:
    try:
        canonicalize(url)
    except InvalidURL:
        return False
    return True


def _source_fields(
    take: Callable[[tuple[str, ...]], tuple[str, Any] | None],
    where: str,
    context: Context,
    options: RowOptions,
    log: Log,
) -> tuple[SourceFields, list[str]]:
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
    return options.apply(SourceFields(**fields)), aliases


def _coerce_title(value: Any, where: str, log: Log) -> str | None:
    if isinstance(value, str):
        return collapsed(value)
    log.warn(where, f"title is {kind(value)}, not text; set to null")
    return None


def _coerce_published(value: Any, where: str, log: Log) -> date | None:
    parsed, problem = parse_date(value)
    if problem:
        log.warn(where, f"{problem}; published_at set to null")
    return parsed


def _coerce_retrieved(value: Any, where: str, log: Log) -> datetime | None:
    parsed, problem = parse_datetime(value)
    if problem:
        log.warn(where, f"{problem}; retrieved_at set to null")
    return parsed


def _coerce_source_type(value: Any, where: str, log: Log) -> SourceType:
    found = SOURCE_TYPE_SYNONYMS.get(enum_text(value))
    if found is None:
        log.warn(where, f"unknown source_type {excerpt(value)!r}; set to 'unknown'")
        return "unknown"
    return found


def _coerce_tier(value: Any, where: str, log: Log) -> Tier:
    found = TIER_SYNONYMS.get(enum_text(value))
    if found is None:
        log.warn(where, f"unknown tier {excerpt(value)!r}; set to {DEFAULT_TIER!r}")
        return DEFAULT_TIER
    return found


def _coerce_hash(value: Any, where: str, log: Log) -> str | None:
    match = _HASH.match(value.strip().lower()) if isinstance(value, str) else None
    if match is None:
        log.warn(where, f"content_hash {excerpt(value)!r} is not a sha256 digest; set to null")
        return None
    return f"sha256:{match.group(1)}"


def _coerce_status(value: Any, where: str, log: Log) -> int | None:
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and (match := re.match(r"^\s*(\d{3})\b", value)):
        number = int(match.group(1))
    if number is None or not 100 <= number <= 599:
        log.warn(where, f"status {excerpt(value)!r} is not an HTTP status; set to null")
        return None
    return number


def _coerce_final_url(value: Any, where: str, log: Log) -> str | None:
    if isinstance(value, str) and _valid_url(value.strip()):
        return value.strip()  # a record of where the fetch landed, kept as observed
    log.warn(where, f"final_url {excerpt(value)!r} is not an http(s) URL; set to null")
    return None


def _coerce_url_list(value: Any, where: str, log: Log, *, canonical: bool) -> list[str]:
    items = value if isinstance(value, list) else [value]
    out: list[str] = []
    for index, entry in enumerate(items):
        if isinstance(entry, dict):
            entry = first_of(entry, keymap(entry), URL_KEYS)
        here = f"{where}[{index}]" if isinstance(value, list) else where
        if not isinstance(entry, str):
            log.warn(here, f"ignored {kind(entry)}; expected a URL")
            continue
        try:
            out.append(canonicalize(entry) if canonical else _checked_url(entry.strip()))
        except InvalidURL as exc:
            log.warn(here, f"ignored invalid URL: {exc}")
    return unique(out)


def _checked_url(url: str) -> str:
    canonicalize(url)
    return url


def _coerce_cites(value: Any, where: str, log: Log) -> list[str]:
    return _coerce_url_list(value, where, log, canonical=True)


def _coerce_aliases(value: Any, where: str, log: Log) -> list[str]:
    return _coerce_url_list(value, where, log, canonical=False)


def _coerce_sub_questions(value: Any, where: str, log: Log) -> list[str] | None:
    found = string_list(value)
    if not found:
        log.warn(where, f"sub_questions {excerpt(value)!r} holds no ids; ignored")
        return None
    return found


def _coerce_round(value: Any, where: str, log: Log) -> int | None:
    found = round_or_none(value)
    if found is None:
        log.warn(where, f"round {excerpt(value)!r} is not a positive integer; ignored")
    return found


def _coerce_text(value: Any, where: str, log: Log) -> str | None:
    text = text_or_none(value)
    if text is None:
        log.warn(where, f"ignored {kind(value)}; expected text")
    return text


def _coerce_via(value: Any, where: str, log: Log) -> Via | None:
    if not isinstance(value, dict):
        log.warn(where, f"via is {kind(value)}, not an object; ignored")
        return None
    keys = keymap(value)
    return Via(
        query=text_or_none(first_of(value, keys, QUERY_KEYS)),
        adapter=text_or_none(first_of(value, keys, ADAPTER_KEYS)),
        mcp=text_or_none(first_of(value, keys, MCP_KEYS)),
    )


_FIELD_COERCERS: dict[str, Callable[[Any, str, Log], Any]] = {
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
