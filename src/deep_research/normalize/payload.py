"""The lenient entry point: raw fetcher text → recover JSON → walk → coerce → merge."""

from __future__ import annotations

from collections.abc import Sequence

from deep_research.brief.readers import lone_surrogate_at
from deep_research.errors import SchemaViolation, UnreadableInput
from deep_research.models import SourceRow
from deep_research.normalize.coerce import coerce_source
from deep_research.normalize.describe import kind
from deep_research.normalize.drafts import CanonicalSource, RowOptions
from deep_research.normalize.json_recovery import NotJSON, extract_json
from deep_research.normalize.merge import merge_canonical
from deep_research.normalize.results import Log, NormalizeResult, Rejection
from deep_research.normalize.walk import Candidate, Context, Walker

EXPECTED = "expected fetcher JSON: an object, an array, JSONL or a ```json block"


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
    log = Log()
    options = RowOptions(sub_question, round)
    sources: list[CanonicalSource] = []

    def accept(candidate: Candidate) -> None:
        if (where := lone_surrogate_at(candidate.item, candidate.where)) is not None:
            log.reject(where, "a lone surrogate: not text (re-encode the fetcher output as UTF-8)")
            return
        source = coerce_source(candidate, log, options)
        if source is not None:
            sources.append(source)

    walker = Walker(log, accept)
    try:
        extracted = extract_json(text)
    except NotJSON as exc:
        raise UnreadableInput(f"input {exc}; {EXPECTED}") from None
    for label, note in extracted.notes:
        log.warn(_root(label), note)
    for label, reason, shown in extracted.bad:
        log.rejections.append(Rejection(label, reason, shown))
    for label, value in extracted.docs:
        walker.walk(value, _root(label), Context())
    if not walker.found and not walker.saw_empty_list:
        found = kind(extracted.docs[0][1]) if extracted.docs else "nothing"
        raise SchemaViolation(
            "no recognizable source: expected a source object with a url, a list of them, or "
            f'{{"sources": [...]}}; found {found}',
            source="input",
        )
    return merge_canonical(sources, existing=existing, start_id=start_id, log=log)


def _root(label: str) -> str:
    return f"{label}: $" if label else "$"
