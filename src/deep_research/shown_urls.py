"""The URLs a brief may show, and every other one withheld (docs/contracts.md §1, §12).

A brief shows a URL only when it fetched it (an entry of its fetch log, which the audit record
holds whole) or when a quote it keeps states it (text a page says, shown as quoted). Any other
URL in text a model wrote or the tool composed — a claim, the answer, a contradiction note, an
excerpt — is replaced by :data:`WITHHELD` before the text is written: one invented link is
withheld with its reason, and the run still ends with a verdict and a report. The verdict names
where links were withheld (:func:`withheld_places`), from the marks themselves, so it reads the
same when decided again from the files.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from deep_research.models import ClaimsFile, FetchLogEntry, SourceRow
from deep_research.urls import URL_PATTERN, canonical_or_none, is_web, urls_in

#: What stands where a link was withheld; its words are the reason.
WITHHELD = "[link withheld: not a source of this brief]"

Model = TypeVar("Model", bound=BaseModel)


def url_forms(raw: str | None) -> set[str]:
    """A recorded web URL as code compares it (canonical) and as text shows it: prose ends a URL
    at a bracket or a closing full stop (``…/Foo_(bar)`` reads as ``…/Foo_``), and that reading
    is the same page's link, not a new one. A local document (``file:``) is no link: none."""
    canonical = canonical_or_none(raw)
    if raw is None or canonical is None or not is_web(canonical):
        return set()
    return urls_in(raw) | {canonical}


def fetched_urls(log: Sequence[FetchLogEntry]) -> set[str]:
    """Every URL this brief's fetch log names (asked for, or reached by redirect)."""
    return {url for entry in log for raw in (entry.url, entry.final_url) for url in url_forms(raw)}


def quotes_of(document: ClaimsFile, sources: Sequence[SourceRow]) -> Iterator[str]:
    """Every quote the brief holds: its findings' and its claims' evidence."""
    for source in sources:
        yield from (finding.quote for finding in source.findings)
    for claim in document.claims:
        yield from (item.quote for item in claim.evidence)


def quoted_urls(document: ClaimsFile, sources: Sequence[SourceRow]) -> set[str]:
    """URLs a quote states ("see https://…"): text a source says, shown as quoted — never a
    source the brief cites."""
    return {url for quote in quotes_of(document, sources) for url in urls_in(quote)}


def may_show(
    document: ClaimsFile,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    holding_text: Sequence[str] = (),
) -> frozenset[str]:
    """The canonical URLs the brief may show: fetched, or stated by a quote it keeps — but not
    a fetched one that holds page text (``holding_text``: the audit record withholds it)."""
    quoted = quoted_urls(document, sources)
    hidden = {url for raw in holding_text for url in url_forms(raw)} - quoted
    return frozenset((fetched_urls(log) - hidden) | quoted)


def withhold(text: str, allowed: frozenset[str]) -> str:
    """``text`` with each URL whose canonical form is not in ``allowed`` replaced by
    :data:`WITHHELD` (a string that is no URL is left as written: nothing shows it as one)."""
    if "http" not in text:  # what URL_PATTERN needs to match at all
        return text

    def mark(match: re.Match[str]) -> str:
        url = canonical_or_none(match.group())
        return match.group() if url is None or url in allowed else WITHHELD

    return URL_PATTERN.sub(mark, text)


def withhold_all(model: Model, allowed: frozenset[str]) -> Model:
    """``model`` with :func:`withhold` applied to every string it holds, at any depth; the same
    object when nothing changed."""
    return _walk(model, allowed)  # type: ignore[no-any-return]


def _walk(value: Any, allowed: frozenset[str]) -> Any:
    if isinstance(value, str):
        return withhold(value, allowed)
    if isinstance(value, BaseModel):
        changed = {}
        for name in type(value).model_fields:
            old = getattr(value, name)
            new = _walk(old, allowed)
            if new is not old:
                changed[name] = new
        return value.model_copy(update=changed) if changed else value
    if isinstance(value, list):
        items = [_walk(item, allowed) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if isinstance(value, dict):
        pairs = {key: _walk(item, allowed) for key, item in value.items()}
        return pairs if any(pairs[key] is not value[key] for key in value) else value
    return value


def strings_of(value: Any) -> Iterator[str]:
    """Every string ``value`` holds, at any depth (a model's fields, lists, mappings)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            yield from strings_of(getattr(value, name))
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_of(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_of(item)


def withheld_places(document: ClaimsFile) -> list[tuple[str, int]]:
    """Where claims.json holds :data:`WITHHELD`, and how many times: ``the answer``, a claim's
    id (``C3``, ``C5 (stripped)``), ``contradiction 2``, or the field's name."""

    def count(value: Any) -> int:
        return sum(text.count(WITHHELD) for text in strings_of(value))

    places: list[tuple[str, int]] = []
    for name in type(document).model_fields:
        value = getattr(document, name)
        if name == "verdict_reasons":  # the verdict's own words, naming these places
            continue
        if name == "claims":
            found = [(claim.id, count(claim)) for claim in value]
        elif name == "stripped":
            found = [(f"{claim.id} (stripped)", count(claim)) for claim in value]
        elif name == "unresolved_contradictions":
            found = [(f"contradiction {n}", count(item)) for n, item in enumerate(value, 1)]
        elif name in ("synthesis", "synthesis_struck"):
            found = [("the answer", count(value))]
        else:
            found = [(name.replace("_", " "), count(value))]
        places += [(where, times) for where, times in found if times]
    return places


def without_links(text: str) -> str:
    """``text`` with its URLs and withheld marks taken out (what a gate reads of a claim)."""
    if "http" not in text and WITHHELD not in text:
        return text
    return " ".join(URL_PATTERN.sub(" ", text.replace(WITHHELD, " ")).split())
