"""What fetchers call each enum value: synonyms of importance, source type and tier.

Values are compared after :func:`enum_text` (lower-case, ``_`` and ``-`` as spaces).
"""

from __future__ import annotations

import re
from typing import Any

from deep_research.models import Importance, SourceType, Tier

IMPORTANCE_SYNONYMS: dict[str, Importance] = {
    **dict.fromkeys(
        (
            "central",
            "key",
            "high",
            "critical",
            "core",
            "main",
            "primary",
            "major",
            "essential",
            "crucial",
            "very high",
            "highest",
            "top",
        ),
        "central",
    ),
    **dict.fromkeys(
        (
            "supporting",
            "support",
            "medium",
            "moderate",
            "secondary",
            "normal",
            "supplementary",
            "mid",
            "average",
            "standard",
            "relevant",
        ),
        "supporting",
    ),
    **dict.fromkeys(
        (
            "tangential",
            "low",
            "minor",
            "peripheral",
            "background",
            "context",
            "contextual",
            "marginal",
            "lowest",
            "incidental",
            "trivial",
        ),
        "tangential",
    ),
}
SOURCE_TYPE_SYNONYMS: dict[str, SourceType] = {
    **dict.fromkeys(
        (
            "primary",
            "primary source",
            "original",
            "dataset",
            "data",
            "standard",
            "specification",
            "spec",
            "legislation",
            "law",
            "regulation",
            "court",
            "filing",
        ),
        "primary",
    ),
    **dict.fromkeys(
        (
            "academic",
            "paper",
            "journal",
            "journal article",
            "peer reviewed",
            "scholarly",
            "preprint",
            "research",
            "research paper",
            "study",
            "scientific",
            "conference paper",
            "thesis",
        ),
        "academic",
    ),
    **dict.fromkeys(
        (
            "government",
            "gov",
            "governmental",
            "official",
            "agency",
            "public sector",
            "intergovernmental",
            "regulator",
            "ministry",
        ),
        "government",
    ),
    **dict.fromkeys(
        (
            "news",
            "newspaper",
            "news article",
            "press",
            "media",
            "journalism",
            "magazine",
            "wire",
            "news outlet",
        ),
        "news",
    ),
    **dict.fromkeys(
        (
            "secondary",
            "secondary source",
            "encyclopedia",
            "wiki",
            "wikipedia",
            "reference",
            "aggregator",
        ),
        "secondary",
    ),
    **dict.fromkeys(
        (
            "vendor",
            "company",
            "corporate",
            "commercial",
            "manufacturer",
            "product",
            "press release",
            "marketing",
            "industry",
            "business",
        ),
        "vendor",
    ),
    **dict.fromkeys(("blog", "blog post", "personal", "newsletter", "substack"), "blog"),
    **dict.fromkeys(
        (
            "forum",
            "q&a",
            "qa",
            "discussion",
            "reddit",
            "social",
            "social media",
            "community",
            "stack overflow",
            "comments",
        ),
        "forum",
    ),
    **dict.fromkeys(("unknown", "other", "n/a", "na", "none", "unspecified"), "unknown"),
}
TIER_SYNONYMS: dict[str, Tier] = {
    **dict.fromkeys(
        (
            "raw",
            "full",
            "full text",
            "fulltext",
            "html",
            "page",
            "direct",
            "fetched",
            "fetch",
            "live",
            "complete",
        ),
        "raw",
    ),
    **dict.fromkeys(
        (
            "summarizer",
            "summary",
            "summarised",
            "summarized",
            "summarizer model",
            "abridged",
            "condensed",
        ),
        "summarizer",
    ),
    **dict.fromkeys(
        (
            "degraded",
            "archive",
            "archived",
            "wayback",
            "cache",
            "cached",
            "partial",
            "truncated",
            "fallback",
        ),
        "degraded",
    ),
    **dict.fromkeys(
        ("snippet", "search snippet", "serp", "search result", "search", "preview"), "snippet"
    ),
}
#: Tier given to a source whose stated tier is not recognized: the weakest, because nothing
#: vouches that the quote came from the full page.
DEFAULT_TIER: Tier = "snippet"
DEFAULT_IMPORTANCE: Importance = "supporting"


def enum_text(value: Any) -> str:
    """``value`` as the synonym tables spell it: ``"Very_High"`` → ``"very high"``."""
    return " ".join(re.sub(r"[_\-]+", " ", str(value)).lower().split())
