"""Extraction with citations into our own text: the quote is cut from the corpus, never typed.

The retained page goes to the model as a plain-text ``document`` block with citations enabled,
its text the corpus file's text (the first :data:`MAX_DOCUMENT_CHARS` characters of a longer
one: a prefix, so every offset into it is the same offset into the file). The model answers in
paragraphs, one finding each, and cites the passage that states it; each ``char_location``
citation carries ``cited_text`` and ``start_char_index``/``end_char_index`` into that text.

A finding's quote is ``text[start:end]`` — exact by construction — and only when it equals the
``cited_text`` the API returned; a citation that does not (another document, offsets out of
range, text that differs) is dropped and counted, never repaired. Adjacent or overlapping
citations of one paragraph join into one span. A paragraph with no valid citation is no finding.
What the quote is worth is still decided by the gates (trace, literals, overlap, relevance).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from deep_research.models import Importance
from deep_research.run.claude.roles import MAX_OUTPUT_TOKENS, instructions
from deep_research.run.interface import FindingDraft, Retained, SubQuestionPlan

#: The longest prefix of a page sent for extraction (15k tokens at two characters a token, the
#: ratio the budget assumes; English runs about four).
MAX_DOCUMENT_CHARS = 30_000
#: Known claims shown to a reader so that the same fact gets the same words across pages.
MAX_KNOWN_CLAIMS = 30
MAX_FINDINGS_PER_DOCUMENT = 5
MIN_CLAIM_CHARS = 12
MAX_CLAIM_CHARS = 400

_TAG = re.compile(r"^\s*[\[(](central|supporting|tangential)[\])]\s*[:\-–]?\s*", re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
#: A paragraph break: a blank line, whatever whitespace it holds.
_BREAK = re.compile(r"\n[^\S\n]*\n")


@dataclass
class CitationCount:
    """What one reply's citations came to."""

    kept: int = 0
    dropped: int = 0
    uncited: int = 0
    reasons: list[str] = field(default_factory=list)


def extraction_request(
    question: str,
    sub_question: SubQuestionPlan,
    document: Retained,
    known: Sequence[str],
) -> dict[str, Any]:
    """The Messages request that reads ``document`` for ``sub_question``."""
    lines = [
        f"Research question: {question}",
        f"Sub-question {sub_question.id}: {sub_question.question}",
    ]
    if sub_question.scope:
        lines.append(f"Scope: {sub_question.scope}")
    if known:  # what the contract's headless extraction section says to do with them
        lines.append("Known claims:")
        lines += [f"- {claim}" for claim in known[-MAX_KNOWN_CLAIMS:]]
    return {
        "max_tokens": MAX_OUTPUT_TOKENS["extract"],
        "system": [
            {
                "type": "text",
                "text": instructions("extract"),
                "cache_control": {"type": "ephemeral"},
            }
        ],
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "document",
                        "source": {
                            "type": "text",
                            "media_type": "text/plain",
                            "data": document.text[:MAX_DOCUMENT_CHARS],
                        },
                        "title": (document.title or document.url)[:200],
                        "citations": {"enabled": True},
                    },
                    {"type": "text", "text": "\n".join(lines)},
                ],
            }
        ],
    }


def _importance(claim: str) -> tuple[str, Importance]:
    match = _TAG.match(claim)
    if match is None:
        return claim, "supporting"
    tag = match.group(1).lower()
    importance: Importance = (
        "central" if tag == "central" else "tangential" if tag == "tangential" else "supporting"
    )
    return claim[match.end() :], importance


def _clean(claim: str) -> str:
    return " ".join(_BULLET.sub("", claim).split())


def _spans(citations: Sequence[Any], text: str, count: CitationCount) -> list[tuple[int, int]]:
    """The valid char_location citations as (start, end), merged where they touch."""
    spans: list[tuple[int, int]] = []
    for citation in citations:
        kind = getattr(citation, "type", None)
        if kind != "char_location":
            count.dropped += 1
            count.reasons.append(f"a {kind} citation is not a span of the text")
            continue
        start = int(citation.start_char_index)
        end = int(citation.end_char_index)
        if citation.document_index != 0 or not 0 <= start < end <= len(text):
            count.dropped += 1
            count.reasons.append(f"offsets {start}:{end} are outside the document")
            continue
        if text[start:end] != citation.cited_text:
            count.dropped += 1
            count.reasons.append(f"text[{start}:{end}] differs from the cited text")
            continue
        spans.append((start, end))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def findings_from(content: Sequence[Any], text: str) -> tuple[list[FindingDraft], CitationCount]:
    """Findings from a reply's text blocks: one per paragraph, the quote cut from ``text``."""
    count = CitationCount()
    paragraphs: list[tuple[str, list[Any]]] = [("", [])]
    for block in content:
        if getattr(block, "type", None) != "text":
            continue
        # A block's citations belong to the last paragraph it writes words in: a cited block
        # that ends in a blank line has not started the next finding.
        owner = len(paragraphs) - 1
        for index, piece in enumerate(_BREAK.split(block.text)):
            if index > 0:
                paragraphs.append(("", []))
            claim, cites = paragraphs[-1]
            paragraphs[-1] = (claim + piece, cites)
            if piece.strip():
                owner = len(paragraphs) - 1
        if block.citations:
            paragraphs[owner][1].extend(block.citations)
    found: list[FindingDraft] = []
    for raw, citations in paragraphs:
        claim, importance = _importance(_clean(raw))
        if len(claim) < MIN_CLAIM_CHARS:
            count.dropped += len(citations)
            continue
        spans = _spans(citations, text, count)
        if not spans:
            count.uncited += 1
            continue
        for start, end in spans:
            if len(found) >= MAX_FINDINGS_PER_DOCUMENT:
                count.dropped += 1
                continue
            found.append(
                FindingDraft(
                    claim=claim[:MAX_CLAIM_CHARS], quote=text[start:end], importance=importance
                )
            )
            count.kept += 1
    return found, count
