"""What a judge reads of a claim's evidence: the located quote in its page context.

The span is the one the trace gate located in the retained corpus file; the context is the text
on either side of it in that same file (up to :data:`CONTEXT_CHARS`), so a skeptic reads the
quote as the page says it — never a summary, never text the run did not fetch.
"""

from __future__ import annotations

from deep_research.brief import Brief
from deep_research.errors import DeepResearchError
from deep_research.models import Evidence
from deep_research.run.interface import EvidenceText

CONTEXT_CHARS = 500


def located(brief: Brief, item: Evidence) -> EvidenceText:
    """``item`` with the retained text around its span (the quote alone when there is none)."""
    span = item.span
    if span is None:
        return EvidenceText(item.source, item.quote)
    try:
        text = brief.read_corpus(span.hash)
    except DeepResearchError:
        return EvidenceText(item.source, item.quote)
    before = text[max(0, span.start - CONTEXT_CHARS) : span.start]
    after = text[span.end : span.end + CONTEXT_CHARS]
    return EvidenceText(item.source, text[span.start : span.end], before, after)
