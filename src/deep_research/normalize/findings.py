"""Findings coerced: every way a fetcher writes (claim, quote) pairs, or why one was refused.

Findings come as objects with aliased keys, ``[claim, quote]`` pairs, ``{claim: quote}`` maps,
id-keyed maps, JSON in strings, or inline on the source object itself; a list of quotes is
several findings of one claim. Each becomes a :class:`FindingDraft`, trimmed, with the quotation
marks a model put around the quote removed.
"""

from __future__ import annotations

import json
from typing import Any

from deep_research.models import Importance
from deep_research.normalize.describe import excerpt, kind
from deep_research.normalize.drafts import FindingDraft
from deep_research.normalize.enum_synonyms import DEFAULT_IMPORTANCE, IMPORTANCE_SYNONYMS, enum_text
from deep_research.normalize.json_recovery import NotJSON, extract_json
from deep_research.normalize.key_aliases import (
    CENTRAL_FLAG_KEYS,
    CLAIM_KEYS,
    FINDINGS_KEYS,
    IMPORTANCE_KEYS,
    INLINE_FINDING_KEYS,
    QUOTE_KEYS,
    SOURCE_INLINE_KEYS,
    first_of,
    keymap,
)
from deep_research.normalize.results import Log

_QUOTE_PAIRS = (('"', '"'), ("“", "”"), ("‘", "’"), ("«", "»"), ("„", "“"), ("'", "'"))


def source_findings(
    item: dict[str, Any], keys: dict[str, str], where: str, used: set[str], log: Log
) -> list[FindingDraft]:
    """The findings of source ``item``; the keys they were read from are added to ``used``."""
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
    default = _importance(first_of(item, level_keys, IMPORTANCE_KEYS), where, log)
    if default is None and True in (item[key] for key in level_keys.values()):
        default = "central"
    return [
        finding.model_copy(
            update={"importance": finding.importance or default or DEFAULT_IMPORTANCE}
        )
        for finding in findings
    ]


def _findings_from(value: Any, where: str, log: Log, depth: int = 0) -> list[FindingDraft]:
    if value is None:
        return []
    if isinstance(value, list):
        out: list[FindingDraft] = []
        for index, entry in enumerate(value):
            out += _finding_from_entry(entry, f"{where}[{index}]", log, depth)
        return out
    if isinstance(value, dict):
        keys = keymap(value)
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


def _finding_from_entry(entry: Any, where: str, log: Log, depth: int) -> list[FindingDraft]:
    if isinstance(entry, dict):
        keys = keymap(entry)
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
            found = extract_json(entry)
        except NotJSON:
            pass
        else:
            return [f for _, doc in found.docs for f in _findings_from(doc, where, log, depth + 1)]
    if isinstance(entry, str):
        log.reject(where, "finding has no quote (a bare string; expected {claim, quote})", entry)
        return []
    log.reject(where, f"expected a finding object, got {kind(entry)}", entry)
    return []


def _finding_from_object(
    entry: Any, where: str, log: Log, *, keys: dict[str, str] | None = None
) -> list[FindingDraft]:
    if not isinstance(entry, dict):
        log.reject(where, f"expected a finding object, got {kind(entry)}", entry)
        return []
    keys = keys if keys is not None else keymap(entry)
    claim_key = next((keys[k] for k in CLAIM_KEYS if k in keys), None)
    quote_key = next((keys[k] for k in QUOTE_KEYS if k in keys and keys[k] != claim_key), None)
    importance: Any = first_of(entry, keys, IMPORTANCE_KEYS)
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


def _findings_from_claim_map(value: dict[str, Any], where: str, log: Log) -> list[FindingDraft]:
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
    log: Log,
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
        reason = "finding has no claim" if missing else f"claim is {kind(claim)}, not text"
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
                "finding has no quote" if entry is None else (f"quote is {kind(entry)}, not text")
            )
            log.reject(here, reason, shown)
        elif not text.strip():
            log.reject(here, "finding has an empty quote", shown)
        else:
            out.append(trimmed_finding(claim, text, level))
    if not quotes:
        log.reject(where, "finding has no quote (an empty list)", shown)
    return out


def trimmed_finding(claim: str, quote: str, importance: Importance | None) -> FindingDraft:
    """The finding with its claim and quote trimmed, and the quote's wrapping marks removed."""
    return FindingDraft(
        claim=claim.strip(), quote=_unwrap_quote(quote.strip()), importance=importance
    )


def _quote_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        inner = first_of(value, keymap(value), ("text", *QUOTE_KEYS))
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


def _importance(value: Any, where: str, log: Log) -> Importance | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "central" if value else DEFAULT_IMPORTANCE
    found = IMPORTANCE_SYNONYMS.get(enum_text(value)) if isinstance(value, str) else None
    if found is None:
        log.warn(where, f"unknown importance {excerpt(value)!r}; set to {DEFAULT_IMPORTANCE!r}")
        return DEFAULT_IMPORTANCE
    return found
