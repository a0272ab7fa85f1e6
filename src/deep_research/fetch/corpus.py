"""The retained corpus: ``corpus/<sha256>.txt`` plus ``corpus/<sha256>.meta.json``.

Quotes are located in these files and nowhere else, so a corpus file is written once, atomically,
under the hash of its exact bytes, and never changed. Identical text fetched twice (two URLs,
or a re-fetch of an unchanged page) is stored once: the first writer's metadata stays, and the
fetch log records every URL that produced it. The metadata is written before the text, so a
text file under its final name always has its metadata beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from deep_research.brief import Brief, atomic_write_bytes, atomic_write_text, sha256_bytes
from deep_research.models import CorpusMeta


@dataclass(frozen=True)
class Stored:
    content_hash: str
    path: Path
    created: bool  # False when identical text was already in the corpus


def meta_path(brief: Brief, content_hash: str) -> Path:
    return brief.corpus_dir / f"{content_hash.removeprefix('sha256:')}.meta.json"


def store_text(brief: Brief, text: str, meta: CorpusMeta) -> Stored:
    """Retain ``text`` under the hash of its UTF-8 bytes (the hash :meth:`Brief.read_corpus`
    checks), with ``meta`` beside it; a second copy of the same text is not written."""
    data = text.encode("utf-8")
    content_hash = sha256_bytes(data)
    path = brief.corpus_path(content_hash)
    meta_file = meta_path(brief, content_hash)
    if not meta_file.exists():
        atomic_write_text(meta_file, meta.model_dump_json(indent=2, exclude_none=True) + "\n")
    if path.is_file():
        return Stored(content_hash, path, created=False)
    atomic_write_bytes(path, data)
    return Stored(content_hash, path, created=True)
