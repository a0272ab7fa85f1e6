"""What a judge reads of the evidence: only text the trace gate located in a page the run kept.

Every judge — the verifier, the skeptics, the triangulator, CIBER; in the plugin and headless —
reads evidence through this module, so none of them reads text that is on no page:

* a claim's evidence item is shown only when the trace gate located it (it has a ``span``), and
  what is shown is the retained text at that span with the text on either side of it (up to
  :data:`CONTEXT_CHARS`) — never the quote as the model wrote it, which after a fuzzy match is
  not the page's wording;
* a source's finding (before any claim cites it) is shown only when its source resolves as the
  trace gate resolves it (fetched with a 2xx, its retained file the one the fetch kept) and its
  quote is located there as step 2 of the gate locates it; what is shown is the located span.
  A finding whose source was never fetched, or whose quote is not in its page, is left out and
  named as such.

Anything else a fetcher wrote (a finding's ``claim``) is its own words; callers label it so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from deep_research.brief.layout import Brief
from deep_research.errors import DeepResearchError
from deep_research.gates.locate import Document
from deep_research.gates.support import place_quote
from deep_research.gates.trace import SourceIndex
from deep_research.models import Claim, Evidence, Finding, SourceRow
from deep_research.run.interface import EvidenceText

CONTEXT_CHARS = 500


def located(brief: Brief, item: Evidence) -> EvidenceText | None:
    """``item``'s located span with the retained text around it; None when the trace gate
    located nothing for it, or its retained file cannot be read."""
    span = item.span
    if span is None:
        return None
    try:
        text = brief.read_corpus(span.hash)
    except DeepResearchError:
        return None
    if span.end > len(text) or span.start >= span.end:
        return None
    before = text[max(0, span.start - CONTEXT_CHARS) : span.start]
    after = text[span.end : span.end + CONTEXT_CHARS]
    return EvidenceText(item.source, text[span.start : span.end], before, after)


def located_evidence(brief: Brief, items: Iterable[Evidence]) -> list[EvidenceText]:
    """The located text of each of ``items`` the trace gate located, in order."""
    return [text for text in (located(brief, item) for item in items) if text is not None]


def panel_evidence(brief: Brief, claim: Claim) -> list[EvidenceText]:
    """What a skeptic reads of ``claim``: the located text of each of its supported pairs."""
    return located_evidence(brief, [e for e in claim.evidence if e.checks.outcome == "supported"])


def as_judged(brief: Brief, claim: Claim) -> Claim:
    """``claim`` as a judge reads it: only its located evidence, each quote the retained text
    at its span (for a judge that reads claims, not :class:`EvidenceText`)."""
    kept = []
    for item in claim.evidence:
        text = located(brief, item)
        if text is not None:
            kept.append(item.model_copy(update={"quote": text.quote}))
    return claim.model_copy(update={"evidence": kept})


@dataclass(frozen=True)
class LocatedFinding:
    """A finding whose quote the trace gate's step 2 locates in its source's retained text:
    ``text`` is that text at the located span, ``claim`` the fetcher's own words for it."""

    id: str
    claim: str
    importance: str
    text: str


@dataclass(frozen=True)
class SourceFindings:
    """A source's findings split into what a judge may read and what it may not (and why)."""

    located: dict[str, list[LocatedFinding]]
    left_out: dict[str, str]  # finding id → why no text of it is shown


#: Why a finding is left out: its source resolves to no retained text, or its quote is not in it.
NO_TEXT = "its source has no text the run fetched and kept"
NOT_LOCATED = "its quote is not located in its page"


def source_findings(brief: Brief, rows: Sequence[SourceRow]) -> SourceFindings:
    """Each of ``rows``' findings located as the trace gate locates a cited finding."""
    index = SourceIndex(brief, rows, brief.load_fetch_log())
    found: dict[str, list[LocatedFinding]] = {}
    left_out: dict[str, str] = {}
    for row in rows:
        if not row.findings:
            continue
        document = index.resolve(row.id).document
        for finding in row.findings:
            shown = _locate(finding, document) if document is not None else None
            if shown is None:
                left_out[finding.id] = NO_TEXT if document is None else NOT_LOCATED
            else:
                found.setdefault(row.id, []).append(shown)
        index.release(row.id)
    return SourceFindings(found, left_out)


def _locate(finding: Finding, document: Document) -> LocatedFinding | None:
    placed = place_quote(finding.quote, document)
    if placed.reason is not None or placed.located is None:
        return None
    span = document.text[placed.located.start : placed.located.end]
    return LocatedFinding(finding.id, finding.claim, finding.importance, span)
