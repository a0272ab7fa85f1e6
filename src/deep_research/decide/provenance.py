"""Where a source came from, as the brief records it, checked against what fixed it.

Two records hold provenance that code derived from another record, so an edit to them is found
by deriving again (``deep-research verify``):

* a web or MCP source's ``owner`` is its URL's registrable domain, computed by ``normalize``
  (docs/contracts.md §2) — a local-corpus document's owner is declared by its adapter instead
  (an author, a folder), which the brief does not hold, so it is left to the verdict's seal
  (:mod:`deep_research.decide.seal`);
* ``corpus/<hex>.meta.json`` is written by the fetch that first stored the text, the same
  moment it logs the attempt (:func:`deep_research.fetch.corpus.retain`), so its URL, final
  URL, status, content type, tier and retrieval time are those of a logged successful fetch of
  that very text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import ValidationError

from deep_research.brief.layout import Brief
from deep_research.brief.readers import parse_json, read_text
from deep_research.errors import InputError
from deep_research.fetch.fetchlog import succeeded
from deep_research.models import CorpusMeta, FetchLogEntry, SourceRow
from deep_research.urls import MCP_SCHEME, canonical_or_none, registrable_domain

#: URL schemes whose owner ``normalize`` computes from the URL itself.
_COMPUTED_OWNER_SCHEMES = frozenset({"http", "https", MCP_SCHEME})
#: Fields a corpus metadata file shares with the fetch-log line of the fetch that wrote it.
_SHARED_WITH_THE_LOG = ("url", "final_url", "status", "content_type", "tier", "retrieved_at")


def owner_mismatches(sources: Sequence[SourceRow]) -> list[str]:
    """Each web or MCP source whose recorded owner is not its URL's registrable domain.

    A row without an owner (written by hand, or by a version that did not record one) passes:
    triangulation then links its sources by their domains, which the owner of such a row
    repeats, and what it decides from them is compared on its own.
    """
    found = []
    for source in sources:
        if source.owner is None or source.url.split(":", 1)[0].lower() not in (
            _COMPUTED_OWNER_SCHEMES
        ):
            continue
        computed = registrable_domain(source.url)
        if source.owner != computed:
            found.append(
                f"{source.id}: owner: stored {_shown(source.owner)}, computed {_shown(computed)} "
                "from its URL"
            )
    return found


def corpus_meta_mismatches(brief: Brief, log: Sequence[FetchLogEntry]) -> list[str]:
    """Each corpus metadata file that no logged successful fetch of its text agrees with.

    A text no line logs is left alone: a fetch killed between storing its text and logging it
    leaves exactly that (validate reports a log that is missing altogether).
    """
    fetches: dict[str, list[FetchLogEntry]] = {}
    for entry in log:
        if entry.content_hash is not None and succeeded(entry):
            fetches.setdefault(entry.content_hash, []).append(entry)
    found = []
    for name, meta in _metas(brief):
        logged = fetches.get("sha256:" + name.removesuffix(".meta.json"))
        if not logged:
            continue
        differences = [_differing(meta, entry) for entry in logged]
        if all(differences):
            # Named against the first fetch of the text: the one that wrote the file.
            found += [f"corpus/{name}: {line}" for line in differences[0]]
    return found


def _metas(brief: Brief) -> Iterator[tuple[str, CorpusMeta]]:
    """Every readable metadata file, by name; one validate rejects is not read here."""
    if not brief.corpus_dir.is_dir():
        return
    for path in sorted(brief.corpus_dir.glob("*.meta.json")):
        try:
            value = parse_json(read_text(path, what=path.name), what=str(path))
            yield path.name, CorpusMeta.model_validate(value)
        except (InputError, ValidationError):
            continue


def _differing(meta: CorpusMeta, entry: FetchLogEntry) -> list[str]:
    """The fields where ``meta`` and the fetch ``entry`` disagree; a field either leaves out
    is not compared (older files hold fewer)."""
    lines = []
    for name in _SHARED_WITH_THE_LOG:
        stored, logged = getattr(meta, name), getattr(entry, name)
        if stored is None or logged is None or _same(name, stored, logged):
            continue
        lines.append(f"{name}: stored {_shown(stored)}, logged {_shown(logged)}")
    return lines


def _same(name: str, stored: Any, logged: Any) -> bool:
    if name in ("url", "final_url"):  # one address however it is spelled (docs/contracts.md §2.1)
        return (canonical_or_none(stored) or stored) == (canonical_or_none(logged) or logged)
    return bool(stored == logged)


def _shown(value: Any) -> str:
    return json.dumps(value if isinstance(value, str | int | None) else str(value))
