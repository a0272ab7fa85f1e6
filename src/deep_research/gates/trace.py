"""The trace gate: does every citation in a brief lead to text this run fetched and kept?

Two modes over the same per-(claim, source) check:

* **claims** — ``claims[].supporting`` (and ``claims[].findings``) ↔ sources.jsonl ↔ corpus/.
  Writes, per claim, ``evidence``, ``support_class``, ``violations`` and ``verify_passed``.
* **dossier** — a markdown report whose sentences cite ``[S3]`` or URLs; each cited sentence is
  checked against the quotes the cited source offers. Advisory: nothing is written.

Per pair, cheapest first, the first failing step decides (docs/contracts.md §4.1):

1. *resolvable* — the source exists; one of its URLs has a 2xx entry in this brief's fetch log;
   its corpus file exists and hashes to its ``content_hash``. A URL that was never fetched can
   never be Supported, whatever its quote says.
2–4. quote located, literals present, topical overlap (:mod:`deep_research.gates.support`).

A fetch that failed for infrastructure reasons (timeout, 5xx, 429) is not evidence against a
claim: such a pair is ``uncertain``, and a claim whose only failures are of that kind is
``Uncertain`` rather than ``Unsupported``.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from deep_research.brief.layout import Brief
from deep_research.brief.readers import read_text
from deep_research.brief.trace_phases import TracePhase
from deep_research.brief.writers import atomic_write_json, model_dump, write_claims
from deep_research.errors import InputError, MissingArtifact
from deep_research.fetch.fetchlog import succeeded
from deep_research.gates.citations import (
    SOURCE_ID,
    SOURCE_MARKS,
    prose_sentences,
    read_citations,
)
from deep_research.gates.joint import joined
from deep_research.gates.literals import Derivation, LiteralCheck, SourceFacts
from deep_research.gates.locate import Document, Located
from deep_research.gates.pair import PairOutcome, PairResult
from deep_research.gates.support import (
    LiteralsKey,
    Steps,
    Support,
    check_support,
)
from deep_research.models import (
    Checks,
    Claim,
    ClaimsFile,
    Derived,
    Evidence,
    FetchLogEntry,
    LiteralsReport,
    SourceRow,
    Span,
    SupportClass,
    TraceFile,
    Violation,
)
from deep_research.shown_urls import without_links
from deep_research.urls import canonical_or_none, source_urls

Mode = Literal["claims", "dossier"]

UNKNOWN_SOURCE = "unknown_source"
NOT_FETCHED = "not_fetched"
FETCH_REFUSED = "fetch_refused"
FETCH_FAILED = "fetch_failed"
NO_RETAINED_TEXT = "no_retained_text"
HASH_NOT_FROM_FETCH = "hash_not_from_fetch"
CORPUS_MISSING = "corpus_missing"
UNKNOWN_FINDING = "unknown_finding"
NO_FINDINGS = "no_findings"
NO_CITATION = "no_citation"
URL_NOT_A_SOURCE = "url_not_in_sources"


# --- stage 1: resolve a source to its retained text ------------------------------------------


@dataclass(frozen=True)
class Resolution:
    source: SourceRow | None
    document: Document | None
    reason: str | None = None
    infrastructure: bool = False


#: Retained text a :class:`SourceIndex` keeps resolved beyond the document in use, in
#: characters: enough for the few sources one answer or dossier cites, never the corpus.
DOCUMENT_CACHE_CHARS = 8_000_000


class SourceIndex:
    """Sources, fetch log and corpus of one brief, with resolved documents cached.

    A resolution without a document (why the source cannot be read) is kept for the run; ones
    with a document are kept least-recently-used up to :data:`DOCUMENT_CACHE_CHARS` of text (the
    one in use always), and :meth:`release` drops one whose pairs are done, so memory is bounded
    by the largest document rather than the corpus.
    """

    def __init__(self, brief: Brief, sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]):
        self.brief = brief
        self.by_id = {source.id: source for source in sources}
        self.by_url: dict[str, SourceRow] = {}
        for source in sources:
            for url in source_urls(source):
                self.by_url.setdefault(url, source)
        self.attempts: dict[str, list[FetchLogEntry]] = {}
        for entry in log:
            for logged in (entry.url, entry.final_url):
                canonical = canonical_or_none(logged) if logged else None
                if canonical is not None:
                    self.attempts.setdefault(canonical, []).append(entry)
        self.steps = StepMemo()
        self._cache: dict[str, Resolution] = {}
        self._held: OrderedDict[str, int] = OrderedDict()  # source id → characters of text
        self._held_chars = 0

    def resolve(self, source_id: str) -> Resolution:
        if source_id in self._held:
            self._held.move_to_end(source_id)
        elif source_id not in self._cache:
            resolution = self._resolve(source_id)
            self._cache[source_id] = resolution
            if resolution.document is not None:
                self._held[source_id] = len(resolution.document.text)
                self._held_chars += len(resolution.document.text)
                self._evict()
        return self._cache[source_id]

    def release(self, source_id: str) -> None:
        """Drop ``source_id``'s document (it is read again if asked for again)."""
        if source_id in self._held:
            self._held_chars -= self._held.pop(source_id)
            del self._cache[source_id]

    def _evict(self) -> None:
        while len(self._held) > 1 and self._held_chars > DOCUMENT_CACHE_CHARS:
            oldest, chars = self._held.popitem(last=False)
            self._held_chars -= chars
            del self._cache[oldest]

    def _resolve(self, source_id: str) -> Resolution:
        source = self.by_id.get(source_id)
        if source is None:
            return Resolution(None, None, UNKNOWN_SOURCE)
        attempts = [entry for url in source_urls(source) for entry in self.attempts.get(url, [])]
        fetched = [entry for entry in attempts if succeeded(entry)]
        if not fetched:
            return _unfetched(source, attempts)
        if source.content_hash is None:
            return Resolution(source, None, NO_RETAINED_TEXT)
        logged = {entry.content_hash for entry in fetched if entry.content_hash}
        if logged and source.content_hash not in logged:
            return Resolution(source, None, HASH_NOT_FROM_FETCH)
        try:
            text = self.brief.read_corpus(source.content_hash)
        except MissingArtifact:
            return Resolution(source, None, CORPUS_MISSING)
        return Resolution(source, Document(text, source.content_hash))


def _unfetched(source: SourceRow, attempts: Sequence[FetchLogEntry]) -> Resolution:
    if any(entry.outcome == "refused" for entry in attempts):
        return Resolution(source, None, FETCH_REFUSED)
    if attempts:
        # Every attempt errored (timeout, 5xx, 429): no evidence either way.
        return Resolution(source, None, FETCH_FAILED, infrastructure=True)
    return Resolution(source, None, NOT_FETCHED)


class StepMemo(Steps):
    """Steps 3 and 4 (literals, overlap) memoized for one run: a claim's sentence is often
    located, word for word, in each page that carries it.

    Overlap reads only the claim and the located text, so each answer is kept; of the literal
    checks, those :class:`~deep_research.gates.support.Steps` offers as true in any document.
    Claims-sized."""

    def __init__(self) -> None:
        self._literals: dict[LiteralsKey, LiteralCheck] = {}
        self._overlap: dict[tuple[str, str], tuple[str, ...]] = {}
        # What the evidence items of a kept answer report, built once for every pair it serves:
        # by the answer's identity (kept answers live for the run, so no other object takes it).
        self._reports: dict[int, tuple[LiteralCheck, LiteralsReport]] = {}
        self._checks: dict[tuple[object, ...], Checks] = {}

    def recall(self, key: LiteralsKey) -> LiteralCheck | None:
        return self._literals.get(key)

    def keep(self, key: LiteralsKey, answer: LiteralCheck) -> None:
        self._literals[key] = answer
        self._reports[id(answer)] = (answer, _report_of(answer))

    def overlap(self, claim: str, located: str) -> tuple[str, ...]:
        key = (claim, located)
        answer = self._overlap.get(key)
        if answer is None:
            answer = self._overlap[key] = super().overlap(claim, located)
        return answer

    def report(self, support: Support) -> tuple[LiteralsReport, bool]:
        """The literals report of ``support``, and whether it is the one report every pair
        answered by the same kept answer shares (only then may its checks be shared too)."""
        kept = self._reports.get(id(support.literals))
        if kept is not None and kept[0] is support.literals:
            return kept[1], True
        return _literals_report(support), False

    def checks(self, support: Support, located: Located | None, report: LiteralsReport) -> Checks:
        """:func:`_checks` for an evidence item whose report is shared: one instance for every
        item whose checks read the same (a claim's quote placed alike in each page carrying it)."""
        key = (
            support.outcome,
            support.reasons,
            support.overlap,
            None if located is None else (located.method, located.score, located.matched_chars),
            id(report),
        )
        found = self._checks.get(key)
        if found is None:
            found = self._checks[key] = _checks(
                support.outcome, support.reasons, support, located, report
            )
        return found


# --- per-pair results -----------------------------------------------------------------------


def _literals_report(support: Support | None) -> LiteralsReport:
    if support is None or support.literals is None:
        return LiteralsReport()
    return _report_of(support.literals)


def _report_of(literals: LiteralCheck) -> LiteralsReport:
    return LiteralsReport(
        claim=[token.text for token in literals.claim_literals],
        missing=[token.text for token in literals.missing],
        missing_kinds=sorted({token.kind for token in literals.missing}),
        context=[use.record() for use in literals.context],
    )


def _checks(
    outcome: PairOutcome,
    reasons: Sequence[str],
    support: Support | None,
    located: Located | None = None,
    literals: LiteralsReport | None = None,
) -> Checks:
    """What each step found; with ``located``, also how the quote was placed."""
    return Checks(
        outcome=outcome,
        reasons=list(reasons),
        method=located.method if located is not None else None,
        score=round(located.score, 2) if located is not None else None,
        matched_chars=located.matched_chars if located is not None else None,
        literals=literals if literals is not None else _literals_report(support),
        overlap=list(support.overlap) if support is not None else [],
    )


def _evidence_from(
    source: SourceRow,
    findings: Sequence[tuple[str | None, str]],
    support: Support,
    steps: StepMemo,
) -> tuple[Evidence, ...]:
    items = []
    by_quote = {placed.quote: placed for placed in support.quotes}
    # One report, shared by the pair's evidence items (and, for a kept answer, by every pair it
    # answers, with their checks when those read the same).
    literals, shared = steps.report(support)
    for finding_id, quote in findings:
        placed = by_quote.get(quote)
        located = placed.located if placed is not None else None
        if shared:
            checks = steps.checks(support, located, literals)
        else:
            checks = _checks(support.outcome, support.reasons, support, located, literals)
        span = None
        if located is not None:
            span = Span(hash=located.hash, start=located.start, end=located.end)
        items.append(
            Evidence(source=source.id, finding=finding_id, quote=quote, span=span, checks=checks)
        )
    return tuple(items)


def trace_pair(
    index: SourceIndex,
    unit: str,
    claim_text: str,
    source_id: str,
    finding_ids: Sequence[str] = (),
    derived: Derivation | None = None,
) -> PairResult:
    """Stage 1, then steps 2–4, for one (claim, source) pair."""
    # A link in the claim's words cites or points; it states no figure, name or topic word.
    # Read without its links, a claim whose stray link was later withheld traces the same.
    claim_text = without_links(claim_text)
    resolution = index.resolve(source_id)
    if resolution.document is None or resolution.source is None:
        reason = resolution.reason or UNKNOWN_SOURCE
        outcome: PairOutcome = "uncertain" if resolution.infrastructure else "unresolvable"
        evidence = Evidence(source=source_id, quote="", checks=_checks(outcome, [reason], None))
        return PairResult(unit, source_id, outcome, (reason,), (evidence,))
    source = resolution.source
    facts = SourceFacts(title=source.title, published=source.published_at, publisher=source.owner)
    known = {finding.id: finding for finding in source.findings}
    unknown = [fid for fid in finding_ids if fid not in known]
    if unknown:
        return PairResult(unit, source_id, "unsupported", (UNKNOWN_FINDING,))
    if finding_ids:  # the cited findings are judged together
        candidates = [(fid, known[fid].quote) for fid in finding_ids]
    elif source.findings:  # none cited: the best single finding decides
        candidates = [(f.id, f.quote) for f in source.findings]
    else:
        return PairResult(unit, source_id, "unsupported", (NO_FINDINGS,))
    support = check_support(
        claim_text,
        [q for _, q in candidates],
        resolution.document,
        derived=derived,
        facts=facts,
        steps=index.steps,
        alone=not finding_ids,
    )
    used = {p.quote for p in support.quotes}
    chosen = candidates if finding_ids else [pair for pair in candidates if pair[1] in used]
    found = _evidence_from(source, chosen, support, index.steps)
    return PairResult(
        unit, source_id, support.outcome, support.reasons, found, support.stated_kinds
    )


def support_class(results: Sequence[PairResult]) -> SupportClass:
    """A claim's class from its pairs (docs/contracts.md §4.2)."""
    outcomes = {result.outcome for result in results}
    if "supported" in outcomes:
        return "Supported"
    if "partially_supported" in outcomes:
        return "Partially Supported"
    if outcomes and outcomes == {"uncertain"}:
        return "Uncertain"
    return "Unsupported"


# --- claims mode ----------------------------------------------------------------------------


def _derivation(derived: Derived | None) -> Derivation | None:
    if derived is None:
        return None
    return Derivation(
        operation=derived.operation,
        inputs=tuple(Decimal(str(value)) for value in derived.inputs),
        result=Decimal(str(derived.result)),
    )


def _cited(claim: Claim) -> dict[str, list[str]]:
    """The sources ``claim`` cites, each with the findings it names there (in citation order)."""
    by_source: dict[str, list[str]] = {source: [] for source in claim.supporting}
    for finding_id in claim.findings:
        by_source.setdefault(finding_id.split(".", 1)[0], []).append(finding_id)
    return by_source


def trace_claims(
    index: SourceIndex, claims: Sequence[Claim]
) -> list[tuple[Claim, list[PairResult]]]:
    """Check every cited source of every claim; each claim updated, with its pair results.

    Pairs run grouped by source, in the order sources are first cited, and a source's document
    is released once its pairs are done: one document is held at a time, not the corpus. A
    pair's result depends on its claim and its source only, so the order changes nothing.
    """
    cited = [list(_cited(claim).items()) for claim in claims]
    derived = [_derivation(claim.derived) for claim in claims]
    by_source: dict[str, list[tuple[int, int]]] = {}
    for number, pairs in enumerate(cited):
        for slot, (source, _) in enumerate(pairs):
            by_source.setdefault(source, []).append((number, slot))
    results: list[list[PairResult | None]] = [[None] * len(pairs) for pairs in cited]
    for source, slots in by_source.items():
        for number, slot in slots:
            claim = claims[number]
            findings = cited[number][slot][1]
            results[number][slot] = trace_pair(
                index, claim.id, claim.claim, source, findings, derived[number]
            )
        index.release(source)
    return [
        _traced(claim, [result for result in found if result is not None])
        for claim, found in zip(claims, results, strict=True)
    ]


def _traced(claim: Claim, results: list[PairResult]) -> tuple[Claim, list[PairResult]]:
    if not results:
        results = [PairResult(claim.id, "", "unresolvable", (NO_CITATION,))]
    results = joined(results)
    violations = [v for result in results if (v := result.violation) is not None]
    klass = support_class(results)
    updated = claim.model_copy(
        update={
            "evidence": [item for result in results for item in result.evidence],
            "support_class": klass,
            "violations": violations,
            "verify_passed": klass == "Supported",
        }
    )
    return updated, results


def _stored_verdict(claim: Claim) -> dict[str, Any]:
    """The parts of a claim the mechanical gates decide."""
    return {
        "support_class": claim.support_class,
        "verify_passed": claim.verify_passed,
        # Each item whole (quote, span, checks: what a consumer reads), as a set, not a list:
        # triangulation reorders a claim's citations, which changes nothing.
        "evidence": sorted(
            json.dumps(item.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
            for item in claim.evidence
        ),
        "violations": sorted((v.source or "", v.reason) for v in claim.violations),
    }


def _compare(stored: Claim, recomputed: Claim) -> list[str]:
    old, new = _stored_verdict(stored), _stored_verdict(recomputed)
    return [
        f"{stored.id}: {key} stored {old[key]!r}, recomputed {new[key]!r}"
        for key in old
        if old[key] != new[key]
    ]


def retrace_mismatches(brief: Brief, document: ClaimsFile) -> list[str]:
    """Where a fresh trace of the retained text disagrees with claims.json's stored trace
    verdicts — an edit after the trace gate ran (a claim's words, a forged evidence item, a
    flipped class). Claims never traced are the verdict's own rule, not a mismatch."""
    index = SourceIndex(brief, brief.load_sources(), brief.load_fetch_log())
    traced = [claim for claim in document.claims if claim.verify_passed is not None]
    return [
        mismatch
        for claim, (again, _) in zip(traced, trace_claims(index, traced), strict=True)
        for mismatch in _compare(claim, again)
    ]


# --- dossier mode ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CitedSentence:
    number: int
    text: str  # the sentence with citation markers removed
    sources: tuple[str, ...]  # S-ids, or URLs as written

    def unit(self) -> str:
        return f"sentence {self.number}"


#: A prose unit shorter than this cannot carry a claim (table headers, labels) and is not
#: counted for coverage.
MIN_SENTENCE_WORDS = 4


def cited_sentence(number: int, sentence: str) -> CitedSentence:
    """What one sentence cites (S-ids, then the URLs its links and bare URLs give, as written)
    and its text without them."""
    ids = [found for block in SOURCE_MARKS.findall(sentence) for found in SOURCE_ID.findall(block)]
    text, cites, _ = read_citations(SOURCE_MARKS.sub("", sentence))
    urls = [cite.target for cite in cites if cite.target.startswith(("http://", "https://"))]
    return CitedSentence(number, text, tuple(dict.fromkeys([*ids, *urls])))


def split_dossier(markdown: str) -> tuple[list[CitedSentence], int]:
    """Cited sentences of a markdown report, and the number of prose sentences in all."""
    sentences = [s for s in prose_sentences(markdown) if len(s.split()) >= MIN_SENTENCE_WORDS]
    cited = [
        found
        for number, sentence in enumerate(sentences, start=1)
        if (found := cited_sentence(number, sentence)).sources
    ]
    return cited, len(sentences)


def trace_sentence(index: SourceIndex, sentence: CitedSentence) -> list[PairResult]:
    results = []
    for cited in sentence.sources:
        source_id = cited
        if cited.startswith(("http://", "https://")):
            canonical = canonical_or_none(cited)
            source = index.by_url.get(canonical) if canonical else None
            if source is None:
                results.append(
                    PairResult(sentence.unit(), cited, "unresolvable", (URL_NOT_A_SOURCE,))
                )
                continue
            source_id = source.id
        results.append(trace_pair(index, sentence.unit(), sentence.text, source_id))
    return results


# --- the command ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TraceOptions:
    brief: Path | None = None
    mode: Mode | None = None
    claims: Path | None = None
    sources: Path | None = None
    dossier: Path | None = None
    corpus_file: Path | None = None
    write: bool = True


@dataclass
class TraceReport:
    mode: Mode
    pairs: list[PairResult]
    units: int  # claims, or prose sentences
    cited_units: int
    violations: list[Violation] = field(default_factory=list)

    @property
    def supported(self) -> int:
        return sum(p.outcome == "supported" for p in self.pairs)

    @property
    def pass_rate(self) -> float | None:
        if not self.pairs:
            return None
        return round(self.supported / len(self.pairs), 4)

    @property
    def coverage(self) -> float | None:
        return round(self.cited_units / self.units, 4) if self.units else None

    def record(self) -> TracePhase:
        """The summary ``phases.trace`` records, the violations counted."""
        return TracePhase(
            mode=self.mode,
            total_cites_checked=len(self.pairs),
            supported=self.supported,
            pass_rate=self.pass_rate,
            coverage=self.coverage,
            violations=len(self.violations),
        )

    def as_dict(self) -> dict[str, Any]:
        """The recorded summary with each violation in full."""
        return {**self.record().entry(), "violations": [model_dump(v) for v in self.violations]}

    def describe_violations(self) -> list[str]:
        return [describe(violation) for violation in self.violations]


def describe(violation: Violation) -> str:
    """One line: which unit cited which source, and why the citation fails."""
    finding = f" [{violation.finding}]" if violation.finding else ""
    return (violation.detail or f"{violation.claim}: {violation.reason}") + finding


def _violations(results: Iterable[PairResult]) -> list[Violation]:
    return [v for result in results if (v := result.violation) is not None]


def _brief_root(options: TraceOptions) -> Path:
    for candidate in (options.brief, options.sources, options.claims, options.dossier):
        if candidate is not None:
            return candidate if candidate == options.brief else candidate.parent
    raise InputError("give a brief directory (or --sources/--claims inside one)")


def run_trace(options: TraceOptions) -> TraceReport:
    root = _brief_root(options)
    if not root.is_dir():
        raise MissingArtifact(f"brief directory not found: {root}")
    brief = Brief(root)
    mode: Mode = options.mode or ("dossier" if options.dossier else "claims")
    writes = mode == "claims" and options.write
    # A trace that writes holds the brief from its first read, so it never re-decides claims a
    # concurrent writer is replacing (docs/contracts.md §1).
    with brief.lock() if writes else contextlib.nullcontext():
        if options.corpus_file is not None:
            # Summary-substitution guard: evidence text must be a retained corpus file, verbatim.
            brief.require_corpus_file(options.corpus_file)
        sources = brief.load_sources(options.sources)
        index = SourceIndex(brief, sources, brief.load_fetch_log())
        if mode == "dossier":
            return _run_dossier(index, options)
        return _run_claims(brief, index, options)


@contextlib.contextmanager
def _long_lived_frozen() -> Iterator[None]:
    """The objects alive before the pairs loop (modules, the loaded brief) kept out of the cyclic
    collector's passes while it runs.

    The loop makes many short-lived objects, which reference counting frees, and each of the
    collector's full passes would walk every long-lived object again for no garbage: measured,
    about a tenth of a cold trace. The objects the loop makes are still collected as usual.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _run_claims(brief: Brief, index: SourceIndex, options: TraceOptions) -> TraceReport:
    claims_path = options.claims or brief.claims_path
    document = brief.load_claims(claims_path)
    # Read everything that will be rewritten before the first write: a bad trace.json must not
    # leave claims.json updated and trace.json stale.
    trace = brief.load_trace() if brief.trace_path.exists() else TraceFile()
    updated: list[Claim] = []
    pairs: list[PairResult] = []
    with _long_lived_frozen():
        for new_claim, results in trace_claims(index, document.claims):
            updated.append(new_claim)
            pairs.extend(results)
    report = TraceReport(
        mode="claims",
        pairs=pairs,
        units=len(document.claims),
        cited_units=sum(1 for claim in document.claims if claim.supporting or claim.findings),
        violations=_violations(pairs),
    )
    if options.write:
        _write_claims(claims_path, document, updated)
        _record_phase(brief, trace, report)
    return report


def _write_claims(path: Path, document: ClaimsFile, claims: list[Claim]) -> None:
    violations = [v for claim in claims for v in claim.violations]
    new = document.model_copy(
        update={"claims": claims, "violations": violations, "verify_passed": not violations}
    )
    write_claims(path, new)


def _record_phase(brief: Brief, trace: TraceFile, report: TraceReport) -> None:
    atomic_write_json(brief.trace_path, model_dump(trace.with_phase("trace", report.record())))


def _run_dossier(index: SourceIndex, options: TraceOptions) -> TraceReport:
    if options.dossier is None:
        raise InputError("dossier mode needs --dossier <report.md>")
    markdown = read_text(options.dossier, what="dossier")
    cited, total = split_dossier(markdown)
    pairs = [result for sentence in cited for result in trace_sentence(index, sentence)]
    return TraceReport(
        mode="dossier",
        pairs=pairs,
        units=total,
        cited_units=len(cited),
        violations=_violations(pairs),
    )


def emitted_claims(document: ClaimsFile) -> list[Claim]:
    """Claims that may be emitted as cited assertions, each citing only sources that passed.

    An untraceable citation is dropped, never softened: a Supported claim keeps the sources whose
    evidence passed every step, and nothing else.
    """
    emitted = []
    for claim in document.claims:
        if claim.support_class != "Supported":
            continue
        passing = [item for item in claim.evidence if item.checks.outcome == "supported"]
        sources = {item.source for item in passing}
        emitted.append(
            claim.model_copy(
                update={
                    "supporting": [s for s in claim.supporting if s in sources],
                    "evidence": passing,
                }
            )
        )
    return emitted
