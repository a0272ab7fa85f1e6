"""Coerce raw fetcher output — or typed drafts — into canonical ``sources.jsonl`` rows.

Fetcher agents are small models and their JSON drifts: other key names, extra wrappers, findings
as maps or pairs, dates in prose, JSON inside a string inside a code fence. The lenient path,
:func:`normalize_payload`, accepts every shape listed in ``docs/drift-shapes.md`` and turns it
into :class:`~deep_research.models.SourceRow` objects, stage by stage:

1. **recover** (:mod:`.json_recovery`) — find the JSON in the text: a document, JSONL,
   concatenated values, fenced blocks, JSON embedded in prose, trailing commas;
2. **walk** (:mod:`.walk`) — find the source objects inside whatever wrappers surround them;
3. **coerce** (:mod:`.coerce`, :mod:`.findings`, :mod:`.dates`) — map the aliases of
   :mod:`.key_aliases` and :mod:`.enum_synonyms` to fields, validate enums and dates, and make
   each source a typed draft with a canonical URL (:mod:`.drafts`);
4. **merge** (:mod:`.merge`) — merge duplicates by canonical URL and assign stable ids.

Typed code skips the first three: :func:`merge_sources` takes :class:`SourceDraft` objects
straight to the same merge, so both paths give the same rows for the same data.

Nothing is dropped silently: a finding without a quote, a source without a usable URL or an
element that is not a source becomes a :class:`Rejection` naming its place in the input and the
reason; a value that had to be discarded or defaulted (an unparseable date, an unknown enum) is a
warning. Input that holds no recognizable source at all raises an
:class:`~deep_research.errors.InputError`. Model output is data only: it is never evaluated, and
no string from it is ever used as a path. Nothing here reads or writes a file: the
``normalize`` command does that (:mod:`deep_research.normalize_io`).
"""

from __future__ import annotations

from deep_research.normalize.dates import parse_date, parse_datetime
from deep_research.normalize.drafts import FindingDraft, SourceDraft
from deep_research.normalize.merge import merge_sources
from deep_research.normalize.payload import normalize_payload
from deep_research.normalize.results import NormalizeResult, Rejection

__all__ = [
    "FindingDraft",
    "NormalizeResult",
    "Rejection",
    "SourceDraft",
    "merge_sources",
    "normalize_payload",
    "parse_date",
    "parse_datetime",
]
