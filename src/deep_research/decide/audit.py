"""audit.json: the metadata record of a verdict — where every source came from, never its text.

The record holds, per source and per fetch attempt, only URL, final URL, status, tier, content
hash, timestamp and verdict counts. :func:`prove_audit` checks both directions before anything
is written: every URL claims.json shows is in the record, and the record holds no body content —
no quote, and no stretch of any retained text's prose (a URL a page links to is metadata there
too). Both are what code answers for: every string of claims.json has had the links no fetch or
quote has withheld (:mod:`deep_research.shown_urls`) before it is proved, so no text a model
wrote can fail it; report.md is rendered after the verdict and withholds the same way. A fetched
URL that itself holds page text — a search URL whose query quotes a page, a local document named
after its own heading — is found first (:func:`urls_quoting_text`) and stands in the record as
:data:`URL_WITHHELD`, its reason, so no page a run read can fail it either.
"""

from __future__ import annotations

import heapq
import json
from array import array
from bisect import bisect_left
from collections.abc import Collection, Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, TypeVar
from urllib.parse import unquote_plus

from pydantic import BaseModel

from deep_research.brief.layout import Brief
from deep_research.brief.writers import atomic_write_json, model_dump
from deep_research.errors import InconsistentArtifacts
from deep_research.models import (
    AuditFetch,
    AuditFile,
    AuditSource,
    ClaimsFile,
    FetchLogEntry,
    SourceRow,
    VerdictCounts,
)
from deep_research.shown_urls import quoted_urls, quotes_of, strings_of, url_forms
from deep_research.urls import URL_PATTERN, urls_in

#: Length of a retained-text window that may not appear in the record (shorter runs of words are
#: ordinary metadata such as titles in URLs).
LEAK_WINDOW = 40
#: What the record holds in place of a fetched URL that holds page text; its words are the reason.
URL_WITHHELD = "[url withheld: it holds page text]"

AuditRow = TypeVar("AuditRow", AuditSource, AuditFetch)


def build_audit(
    document: ClaimsFile,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    withheld: Collection[str] = (),
) -> AuditFile:
    """The record; each URL of ``withheld`` (:func:`urls_quoting_text`) as :data:`URL_WITHHELD`."""
    assert document.verdict is not None and document.settings_hash is not None

    def shown(url: str | None) -> str | None:
        return URL_WITHHELD if url is not None and url in withheld else url

    counts: dict[str, dict[str, int]] = {}
    # One count per (claim, source) pair: a pair's evidence rows share its outcome.
    units = [(c.id, c.evidence) for c in document.claims]
    units += [(s.id, s.evidence) for s in document.stripped]
    pairs = {
        (unit, item.source): item.checks.outcome for unit, evidence in units for item in evidence
    }
    for (_, source_id), outcome in sorted(pairs.items()):
        per = counts.setdefault(source_id, {})
        per[outcome] = per.get(outcome, 0) + 1

    def kept(model: type[AuditRow], row: BaseModel, **computed: Any) -> AuditRow:
        """``row`` as the record keeps it: the fields ``model`` names, URLs shown or withheld."""
        fields = {name: getattr(row, name) for name in model.model_fields if name not in computed}
        fields.update({name: shown(fields[name]) for name in ("url", "final_url")})
        return model(**fields, **computed)

    records = [
        kept(AuditSource, source, verdicts=VerdictCounts.model_validate(counts.get(source.id, {})))
        for source in sources
    ]
    fetches = [kept(AuditFetch, entry) for entry in log]
    return AuditFile(
        topic=document.topic,
        verdict=document.verdict,
        settings_hash=document.settings_hash,
        sources=records,
        fetches=fetches,
    )


def audit_urls(audit: AuditFile) -> set[str]:
    raw: list[str | None] = []
    for source in audit.sources:
        raw += [source.url, source.final_url]
    for fetch in audit.fetches:
        raw += [fetch.url, fetch.final_url]
    # Read as the links claims.json is withheld against are (``shown_urls.fetched_urls``).
    return {url for item in raw for url in url_forms(item)}


def missing_urls(audit: AuditFile, shown: Iterable[str]) -> list[str]:
    """URLs in the shown texts (claims.json's strings) that the audit record lacks."""
    recorded = audit_urls(audit)
    return sorted({url for text in shown for url in urls_in(text)} - recorded)


def leaks(audit: AuditFile, bodies: Iterable[str]) -> list[str]:
    """Quotes or retained-text windows found in the serialized record (should be none).

    Per body, the windows are its :data:`LEAK_WINDOW`-character stretches every
    ``LEAK_WINDOW // 2`` characters (white space collapsed, case-folded); the one reported is the
    first, in sorted order, that occurs in the record. Linear in the record plus the bodies: each
    window is looked up among the hashes of every stretch of the record (:class:`_Stretches`),
    and only a window that hashes like one is confirmed by searching the record (smallest first,
    so once per leaking body).
    """
    found = _leaking_windows(_folded(json.dumps(model_dump(audit), ensure_ascii=False)), bodies)
    return [windows[0] for windows in found]


def urls_quoting_text(
    bodies: Iterable[str], sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]
) -> list[str]:
    """The recorded URLs (as sources.jsonl and the fetch log spell them) that hold a window of a
    body, read as :func:`leaks` reads the record: a search URL whose query quotes a page, a local
    document named after its own heading. Page text, not metadata: the record withholds them."""
    raw = {url for source in sources for url in (source.url, source.final_url) if url}
    raw |= {url for entry in log for url in (entry.url, entry.final_url) if url}
    # Each URL as the serialized record spells it; a NUL between two ends every window there.
    spelled = {url: _folded(json.dumps(url, ensure_ascii=False)[1:-1]) for url in sorted(raw)}
    windows = {
        window
        for found in _leaking_windows("\0".join(spelled.values()), bodies, every=True)
        for window in found
    }
    return [url for url, text in spelled.items() if any(window in text for window in windows)]


def _folded(serialized: str) -> str:
    """Text as the leak check compares it: URL escapes undone (page text smuggled into a query
    string is still recognised), white space collapsed, case folded."""
    return " ".join(unquote_plus(serialized).split()).casefold()


def _leaking_windows(
    record: str, bodies: Iterable[str], *, every: bool = False
) -> Iterator[list[str]]:
    """Per leaking body, its windows found in ``record``, in sorted order: the first only, or
    ``every`` one."""
    stretches = _Stretches(record)
    bitmap, mask, holds = stretches.bitmap, stretches.mask, stretches.holds
    step = LEAK_WINDOW // 2
    for body in bodies:
        # A URL a page writes (a link to another page the run fetched) is metadata in its
        # text, not prose of it: only the words around it are page text.
        folded = " ".join(URL_PATTERN.sub(" ", body).split()).casefold()
        candidates = set()
        for i in range(0, len(folded) - LEAK_WINDOW + 1, step):
            window = folded[i : i + LEAK_WINDOW]
            value = hash(window)
            # The bitmap rules out most windows before the sorted hashes are searched.
            if bitmap[(value & mask) >> 3] >> (value & 7) & 1 and holds(value):
                candidates.add(window)
        hits = (window for window in sorted(candidates) if window in record)
        found = list(hits) if every else [hit for hit in [next(hits, None)] if hit is not None]
        if found:
            yield found


#: Record positions hashed per sorted run before the runs are merged (bounds the ints alive).
_RUN = 1 << 16
#: Bitmap bits per record stretch: about 3% of the windows that miss reach the sorted hashes.
_BITS_PER_STRETCH = 32


class _Stretches:
    """The hashes of every :data:`LEAK_WINDOW`-character stretch of ``record``, compactly.

    A set of them costs ~70 bytes a stretch (an int and its slot): 1 GB for the record of a
    20,000-source brief. Here they are a sorted array of 8-byte hashes behind a bitmap of
    :data:`_BITS_PER_STRETCH` bits a stretch, which rules out most misses without a search.
    """

    def __init__(self, record: str) -> None:
        count = max(len(record) - LEAK_WINDOW + 1, 0)
        bits = 1 << max(16, (count * _BITS_PER_STRETCH).bit_length())
        self.mask = bits - 1
        self.bitmap = bytearray(bits >> 3)
        runs = []
        for begin in range(0, count, _RUN):
            run = sorted(
                {hash(record[i : i + LEAK_WINDOW]) for i in range(begin, min(begin + _RUN, count))}
            )
            for value in run:
                self.bitmap[(value & self.mask) >> 3] |= 1 << (value & 7)
            runs.append(array("q", run))
        self.hashes = runs[0] if len(runs) == 1 else array("q", heapq.merge(*runs))

    def holds(self, value: int) -> bool:
        at = bisect_left(self.hashes, value)
        return at < len(self.hashes) and self.hashes[at] == value


def bodies_of(brief: Brief, document: ClaimsFile, sources: Sequence[SourceRow]) -> Iterator[str]:
    """Every quote and retained text the brief holds, one at a time (a corpus file is read when
    its turn comes, so the check holds one document, not the corpus)."""
    yield from quotes_of(document, sources)
    for source in sources:
        if source.content_hash and brief.corpus_path(source.content_hash).is_file():
            yield brief.read_corpus(source.content_hash)


def prove_audit(
    brief: Brief,
    audit: AuditFile,
    document: ClaimsFile,
    sources: Sequence[SourceRow],
    shown: Sequence[str] = (),
) -> None:
    """Both directions, or an error before anything is written (a defect of code: see the
    module's docstring)."""
    # claims.json's strings as a reader gets them (JSON escapes undone: ``\\n`` after a URL
    # is no part of it), a claim at a time.
    texts = chain(strings_of(document), shown)
    # A URL inside a quote is text a source states ("see https://…"), located in what was
    # fetched: it is shown as quoted, never as a source the brief cites.
    quoted = quoted_urls(document, sources)
    missing = [url for url in missing_urls(audit, texts) if url not in quoted]
    if missing:
        raise InconsistentArtifacts(
            f"{missing[0]} is shown in claims.json but is no source or fetch of it, though "
            "links no source has are withheld before this check: a defect, please report it"
        )
    leaked = leaks(audit, bodies_of(brief, document, sources))
    if leaked:
        raise InconsistentArtifacts(
            f"the audit record would contain body text ({leaked[0]!r}), though URLs holding "
            "page text are withheld before this check: a defect, please report it"
        )


def write_audit(brief: Brief, audit: AuditFile) -> None:
    atomic_write_json(brief.root / "audit.json", model_dump(audit))
