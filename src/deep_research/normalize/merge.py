"""The merge: sources deduplicated by canonical URL into rows with stable ids and numbering.

Both entry points end here — :func:`normalize_payload` with the sources it coerced from text,
:func:`merge_sources` with typed :class:`SourceDraft` objects — so the two cannot disagree about
merging. An input source whose canonical URL (or an alias's) is already known folds into that
row: an existing row only gains findings, aliases and sub-questions (a page found again for
another sub-question answered that one too); a new row takes the first statement of each
field. New rows are numbered from ``max(start_id, highest existing id + 1)``, findings after
the row's highest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pydantic import ValidationError

from deep_research.models import Finding, SourceRow, Via
from deep_research.normalize.dates import as_utc
from deep_research.normalize.drafts import (
    CanonicalSource,
    FindingDraft,
    RowOptions,
    SourceDraft,
    SourceFields,
    canonical_url,
)
from deep_research.normalize.enum_synonyms import DEFAULT_IMPORTANCE
from deep_research.normalize.findings import trimmed_finding
from deep_research.normalize.results import Log, NormalizeResult
from deep_research.normalize.values import collapsed, text_or_none, unique
from deep_research.urls import canonical_or_none, registrable_domain


@dataclass
class _Slot:
    """One output row under construction: an existing row or one created from the input."""

    sid: str
    url: str
    row: SourceRow | None  # the existing row this slot extends; None for a new row
    where: str  # where the input first stated a new row (named by its rejection)
    fields: SourceFields  # a new row's fields, merged over every input source of it
    aliases: list[str]
    findings: list[FindingDraft]
    known: set[tuple[str, str]]
    touched: bool = False
    #: Sub-questions an existing row gains: a page found again for another sub-question
    #: answered that one too.
    sub_questions: list[str] = field(default_factory=list)


def _finding_key(claim: str, quote: str) -> tuple[str, str]:
    return " ".join(claim.split()), " ".join(quote.split())


def _existing_slot(row: SourceRow) -> _Slot:
    known = {_finding_key(f.claim, f.quote) for f in row.findings}
    return _Slot(row.id, row.url, row, "", SourceFields(), list(row.aliases), [], known)


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

    def add(self, source: CanonicalSource, log: Log) -> None:
        # Each copy must make a valid row alone: a bad duplicate is its own rejection, never a
        # reason to drop the valid copy it would have merged into.
        alone = _Slot(
            "S1", source.url, None, source.where, source.fields, [*source.aliases], [], set()
        )
        alone.findings = [*source.findings]
        if isinstance(problem := _validated(alone), str):
            log.reject(source.where, problem)
            return
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

    def _find(self, source: CanonicalSource) -> _Slot | None:
        for url in [source.url, *source.aliases]:
            slot = self.index.get(canonical_or_none(url) or url)
            if slot is not None:
                return slot
        return None

    def _merge_fields(self, slot: _Slot, source: CanonicalSource) -> None:
        for url in unique([source.given_url, source.url, *source.aliases], exclude=slot.url):
            if url not in slot.aliases:
                slot.aliases.append(url)
                slot.touched = True
        self._register(slot, [source.url, *source.aliases])
        if slot.row is None:
            slot.fields = slot.fields.merged(source.fields)
            return
        # An existing row keeps its fields; its findings, aliases and sub-questions grow.
        held = [*slot.row.sub_questions, *slot.sub_questions]
        for sq in source.fields.sub_questions:
            if sq not in held:
                held.append(sq)
                slot.sub_questions.append(sq)
                slot.touched = True

    def _add_findings(self, slot: _Slot, findings: Iterable[FindingDraft]) -> None:
        for finding in findings:
            key = _finding_key(finding.claim, finding.quote)
            if key not in slot.known:
                slot.known.add(key)
                slot.findings.append(finding)
                slot.touched = True

    def rows(self, log: Log) -> tuple[list[SourceRow], int]:
        rows: list[SourceRow] = []
        created = 0
        for slot in self.slots:
            row = self._build(slot, log)
            if row is not None:
                rows.append(row)
                created += slot.row is None
        return rows, created

    def _build(self, slot: _Slot, log: Log) -> SourceRow | None:
        if slot.row is not None:
            if not slot.touched:
                return slot.row
            first = 1 + max((int(f.id.rsplit("F", 1)[1]) for f in slot.row.findings), default=0)
            extra = _numbered(slot.sid, slot.findings, first)
            return slot.row.model_copy(
                update={
                    "aliases": slot.aliases,
                    "findings": [*slot.row.findings, *extra],
                    "sub_questions": [*slot.row.sub_questions, *slot.sub_questions],
                }
            )
        row = _validated(slot)
        if isinstance(row, str):
            log.reject(slot.where, row)
            return None
        return row


def _validated(slot: _Slot) -> SourceRow | str:
    """The new row ``slot`` builds, or why it is not a valid source row."""
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
        return f"not a valid source row: {location}: {first_error['msg']}"


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


def merge_canonical(
    sources: Iterable[CanonicalSource],
    *,
    existing: Sequence[SourceRow],
    start_id: int,
    log: Log,
) -> NormalizeResult:
    """The one merge both entry points end in: dedupe, number, build and validate the rows."""
    merger = _Merger(existing, start_id)
    for source in sources:
        merger.add(source, log)
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
    draft: SourceDraft, where: str, log: Log, options: RowOptions
) -> CanonicalSource | None:
    # The value clean-ups of the lenient path (whitespace, marks around a quote, UTC) apply
    # here too, so the same data gives the same row whichever path it takes.
    shown = draft.model_dump(mode="json", exclude_none=True)
    canonical = canonical_url(draft.url, f"{where}.url", log, shown)
    if canonical is None:
        return None
    given_url, url = canonical
    findings = [
        kept
        for index, finding in enumerate(draft.findings)
        if (kept := _from_finding_draft(finding, f"{where}.findings[{index}]", log)) is not None
    ]
    via = draft.via or Via()
    fields = SourceFields(
        title=collapsed(draft.title) if draft.title is not None else None,
        published_at=draft.published_at,
        retrieved_at=as_utc(draft.retrieved_at) if draft.retrieved_at is not None else None,
        source_type=draft.source_type,
        tier=draft.tier,
        content_hash=draft.content_hash,
        status=draft.status,
        via=Via(
            query=text_or_none(via.query),
            adapter=text_or_none(via.adapter),
            mcp=text_or_none(via.mcp),
        ),
    )
    aliases = unique([given_url], exclude=url)
    return CanonicalSource(where, given_url, url, aliases, options.apply(fields), findings)


def _from_finding_draft(finding: FindingDraft, where: str, log: Log) -> FindingDraft | None:
    shown = finding.model_dump(exclude_none=True)
    if not finding.claim.strip():
        log.reject(where, "finding has no claim", shown)
        return None
    if not finding.quote.strip():
        log.reject(f"{where}.quote", "finding has an empty quote", shown)
        return None
    return trimmed_finding(finding.claim, finding.quote, finding.importance)


def merge_sources(
    drafts: Sequence[SourceDraft],
    *,
    existing: Sequence[SourceRow] = (),
    start_id: int = 1,
    sub_question: str | None = None,
    round: int | None = None,
) -> NormalizeResult:
    """Canonical rows from typed drafts: the merge of ``normalize_payload``, without parsing.

    Each URL is canonicalized (an invalid one is a rejection); duplicates merge, ids and numbering
    follow the same rules. Draft ``i`` is named ``$[i]`` in rejections, as the ``i``-th element
    of a JSON array would be.
    """
    log = Log()
    options = RowOptions(sub_question, round)
    sources = [
        source
        for index, draft in enumerate(drafts)
        if (source := _from_draft(draft, f"$[{index}]", log, options)) is not None
    ]
    return merge_canonical(sources, existing=existing, start_id=start_id, log=log)
