"""The entailment judge's verdicts, admitted only on a span code finds (docs/contracts.md §4.1).

The verifier agent judges one (claim, source) pair and copies the span that decides it before
its verdict. The verdict is a model's; the span is checked here, the same way for ``entails``
and ``contradicts``: it must be located (``gates.locate``) inside the text the trace gate
located for that claim and source — the claim's ``evidence`` — and be at least
``MIN_SUPPORT_CHARS`` long. A verdict whose span fails is ignored and reported with the reason;
``not_addressed`` needs no span.

What a checked verdict does:

* every one is recorded on its claim as ``entailment`` (one per source, with the span's place
  in the retained text) and in trace.json ``phases.entail``;
* ``contradicts`` strips the claim: its own evidence, read by the judge at a span code found,
  says otherwise, and a claim is dropped, never softened;
* ``entails`` changes nothing else — support rests on the mechanical steps.

Stripping changes what triangulation counts, so the command refuses a brief that was already
triangulated: judge entailment after ``trace`` and before ``triangulate``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import JsonValue, ValidationError

from deep_research.brief.layout import Brief
from deep_research.brief.readers import parse_json, read_text
from deep_research.brief.record import load_trace_or_empty, open_brief, save, writes_brief
from deep_research.brief.trace_phases import EntailPhase, IgnoredVerdict, JudgedPair
from deep_research.errors import InputError, SchemaViolation
from deep_research.gates.locate import MIN_SUPPORT_CHARS, locate
from deep_research.models import (
    Claim,
    ClaimsFile,
    Entailment,
    Span,
    StrippedClaim,
    TraceFile,
    VerifierVerdict,
)

NOT_A_VERDICT = "not_a_verdict"
NO_LOCATED_EVIDENCE = "no_located_evidence"
SPAN_TOO_SHORT = "span_too_short"
SPAN_OUTSIDE_EVIDENCE = "span_outside_evidence"
SPAN_NOT_ON_PAGE = "span_not_on_page"


@dataclass(frozen=True)
class Ignored:
    """A verdict that was not admitted, and why (``item`` counts from 1 in input order)."""

    item: int
    claim: str | None
    source: str | None
    reason: str
    detail: str

    def line(self) -> str:
        pair = f"{self.claim}/{self.source}" if self.claim else f"item {self.item}"
        return f"{pair}: {self.reason} — {self.detail}"

    def record(self) -> IgnoredVerdict:
        """Its trace.json record: the same fields."""
        return IgnoredVerdict(**vars(self))


@dataclass
class EntailReport:
    checked: list[JudgedPair] = field(default_factory=list)
    ignored: list[Ignored] = field(default_factory=list)
    stripped: list[str] = field(default_factory=list)

    def record(self, raw: Sequence[Any]) -> EntailPhase:
        """The phase's trace.json record: the verdicts as given, and what was made of them."""
        return EntailPhase(
            raw=list(raw),
            checked=self.checked,
            ignored=[item.record() for item in self.ignored],
            stripped=self.stripped,
        )

    def as_dict(self) -> dict[str, JsonValue]:
        summary = self.record(()).entry()
        del summary["raw"]
        return summary


def read_verdicts(path: Path) -> list[Any]:
    """The verdicts in ``path``: one object, or a list of them."""
    value = parse_json(read_text(path, what="verdicts file"), what=str(path))
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(item, dict) for item in items):
        raise SchemaViolation(
            'expected one verifier verdict {"claim_id", "source_id", "quoted_span", "verdict", '
            '"rationale"} or a list of them',
            source=str(path),
        )
    return items


def _cited(claim: Claim) -> set[str]:
    return {*claim.supporting, *(finding.split(".", 1)[0] for finding in claim.findings)}


class _Corpus:
    """Retained texts read once each, refused unless they hash to their names."""

    def __init__(self, brief: Brief) -> None:
        self.brief = brief
        self.texts: dict[str, str] = {}

    def text(self, content_hash: str) -> str:
        if content_hash not in self.texts:
            self.texts[content_hash] = self.brief.read_corpus(content_hash)
        return self.texts[content_hash]


def check_span(verdict: VerifierVerdict, claim: Claim, corpus: _Corpus) -> Span | str:
    """Where the verdict's span lies inside the claim's located evidence for its source, or the
    reason it does not count."""
    located = [
        item.span for item in claim.evidence if item.source == verdict.source_id and item.span
    ]
    if not located:
        return NO_LOCATED_EVIDENCE
    if len(verdict.quoted_span.strip()) < MIN_SUPPORT_CHARS:
        return SPAN_TOO_SHORT
    for span in located:
        segment = corpus.text(span.hash)[span.start : span.end]
        found = locate(verdict.quoted_span, segment)
        if found is None:
            continue
        if found.matched_chars < MIN_SUPPORT_CHARS:
            return SPAN_TOO_SHORT
        return Span(hash=span.hash, start=span.start + found.start, end=span.start + found.end)
    on_page = any(locate(verdict.quoted_span, corpus.text(h)) for h in {s.hash for s in located})
    return SPAN_OUTSIDE_EVIDENCE if on_page else SPAN_NOT_ON_PAGE


_DETAIL = {
    NO_LOCATED_EVIDENCE: "the trace gate located no text for this claim and source",
    SPAN_TOO_SHORT: f"the span is under {MIN_SUPPORT_CHARS} characters",
    SPAN_OUTSIDE_EVIDENCE: "the span is on the page but outside the claim's located evidence",
    SPAN_NOT_ON_PAGE: "the span is not in the retained text",
}


def _validated(
    items: Sequence[Any], document: ClaimsFile, report: EntailReport
) -> list[tuple[int, VerifierVerdict]]:
    """The well-formed verdicts, each naming a traced claim and a source it cites; a malformed
    one is ignored, a wrong claim or source is the caller's error."""
    by_id = {claim.id: claim for claim in document.claims}
    verdicts: list[tuple[int, VerifierVerdict]] = []
    seen: set[tuple[str, str]] = set()
    for number, item in enumerate(items, start=1):
        try:
            verdict = VerifierVerdict.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "verdict"
            claim_id, source_id = item.get("claim_id"), item.get("source_id")
            report.ignored.append(
                Ignored(
                    number,
                    claim_id if isinstance(claim_id, str) else None,
                    source_id if isinstance(source_id, str) else None,
                    NOT_A_VERDICT,
                    f"{where}: {first['msg']}",
                )
            )
            continue
        claim = by_id.get(verdict.claim_id)
        pair = f"{verdict.claim_id}/{verdict.source_id}"
        if claim is None:
            raise InputError(f"a verdict names {verdict.claim_id}, which is not in claims.json")
        if verdict.source_id not in _cited(claim):
            raise InputError(
                f"{verdict.claim_id} does not cite {verdict.source_id}: the verifier judges a "
                "claim against the sources it cites"
            )
        if claim.verify_passed is None:
            raise InputError(f"{verdict.claim_id} was never traced; run deep-research trace first")
        if (verdict.claim_id, verdict.source_id) in seen:
            raise InputError(f"{pair} is judged twice; give one verdict per (claim, source)")
        seen.add((verdict.claim_id, verdict.source_id))
        verdicts.append((number, verdict))
    return verdicts


def apply_verdicts(
    document: ClaimsFile, items: Sequence[Any], corpus: _Corpus
) -> tuple[ClaimsFile, EntailReport]:
    """claims.json with every checked verdict recorded and each contradicted claim stripped."""
    if document.triangulation_score is not None:
        raise InputError(
            "the brief is triangulated already; judge entailment after trace and before "
            "triangulate, since a contradiction strips its claim"
        )
    report = EntailReport()
    verdicts = _validated(items, document, report)
    by_id = {claim.id: claim for claim in document.claims}
    recorded: dict[str, dict[str, Entailment]] = {}
    for number, verdict in verdicts:
        claim = by_id[verdict.claim_id]
        span: Span | None = None
        if verdict.verdict != "not_addressed":
            checked = check_span(verdict, claim, corpus)
            if isinstance(checked, str):
                report.ignored.append(
                    Ignored(number, claim.id, verdict.source_id, checked, _DETAIL[checked])
                )
                continue
            span = checked
        entry = Entailment(source=verdict.source_id, verdict=verdict.verdict, span=span)
        recorded.setdefault(claim.id, {})[verdict.source_id] = entry
        report.checked.append(
            JudgedPair(claim=claim.id, source=verdict.source_id, verdict=verdict.verdict, span=span)
        )
    claims: list[Claim] = []
    stripped = list(document.stripped)
    for claim in document.claims:
        new = recorded.get(claim.id, {})
        kept = [item for item in claim.entailment if item.source not in new]
        judged = claim.model_copy(update={"entailment": [*kept, *new.values()]})
        against = [item.source for item in judged.entailment if item.verdict == "contradicts"]
        if against:
            reason = (
                f"contradicted by its own evidence in {', '.join(against)} "
                "(entailment judge; span checked)"
            )
            stripped.append(
                StrippedClaim(
                    id=claim.id, claim=claim.claim, reason=reason, evidence=claim.evidence
                )
            )
            report.stripped.append(claim.id)
            continue
        claims.append(judged)
    return document.model_copy(update={"claims": claims, "stripped": stripped}), report


def _recorded(trace: TraceFile, raw: Sequence[Any], report: EntailReport) -> TraceFile:
    # Only this phase's record changes: the settings in force are the ones the gates recorded.
    return trace.with_phase("entail", report.record(raw))


def run_entail(root: Path, input_path: Path) -> EntailReport:
    """``deep-research entail``: check, record and apply a batch of verifier verdicts."""
    return entail_items(root, read_verdicts(input_path))


@writes_brief
def entail_items(root: Path, items: Sequence[Any]) -> EntailReport:
    """Check, record and apply ``items`` (verifier verdicts as parsed JSON) in one write."""
    brief = open_brief(root)
    document = brief.load_claims()
    trace = load_trace_or_empty(brief)
    updated, report = apply_verdicts(document, items, _Corpus(brief))
    save(brief, updated, _recorded(trace, items, report))
    return report
