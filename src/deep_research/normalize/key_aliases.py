"""What fetchers call each field: the key aliases, and how a key is looked up among them.

Keys are compared after :func:`norm_key` (snake_case, lower-case), so ``sourceURL``,
``Source-URL`` and ``source_url`` are one key. The first alias of a group is the canonical name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

URL_KEYS = (
    "url",
    "source_url",
    "link",
    "href",
    "uri",
    "page_url",
    "web_url",
    "permalink",
    "source_link",
    "address",
)
TITLE_KEYS = ("title", "source_title", "name", "headline", "page_title")
PUBLISHED_KEYS = (
    "published_at",
    "date",
    "published",
    "publication_date",
    "pub_date",
    "published_date",
    "date_published",
    "publish_date",
    "pubdate",
    "published_on",
    "release_date",
)
RETRIEVED_KEYS = (
    "retrieved_at",
    "retrieved",
    "accessed",
    "accessed_at",
    "access_date",
    "date_accessed",
    "fetched_at",
    "retrieval_date",
)
SOURCE_TYPE_KEYS = ("source_type", "type", "kind", "category", "type_of_source")
TIER_KEYS = ("tier", "fetch_tier", "retrieval_tier", "fetch_method", "retrieval_method")
HASH_KEYS = ("content_hash", "hash", "sha256", "corpus_hash", "text_hash")
STATUS_KEYS = ("status", "status_code", "http_status", "http_code")
FINAL_URL_KEYS = ("final_url", "resolved_url", "redirected_url", "redirect_url", "landing_url")
CITES_KEYS = ("cites", "citations", "cited_urls", "outbound_links", "links")
ALIAS_KEYS = ("aliases", "alternate_urls", "alt_urls", "other_urls", "mirrors")
FINDINGS_KEYS = (
    "findings",
    "claims",
    "facts",
    "key_findings",
    "key_facts",
    "extracted_findings",
    "extractions",
    "key_points",
    "points",
    "quotes",
    "evidence",
    "excerpts",
)
SQ_KEYS = ("sub_questions", "sub_question", "sq", "sqs", "subquestion", "subquestions")
ROUND_KEYS = ("round", "research_round")
QUERY_KEYS = ("query", "search_query", "search_term", "q")
ADAPTER_KEYS = ("adapter", "tool", "search_engine", "engine", "provider", "backend")
MCP_KEYS = ("mcp", "mcp_server")
VIA_KEYS = ("via",)

CLAIM_KEYS = (
    "claim",
    "statement",
    "fact",
    "finding",
    "assertion",
    "claim_text",
    "text",
    "point",
    "summary",
)
QUOTE_KEYS = (
    "quote",
    "quotes",
    "evidence",
    "excerpt",
    "excerpts",
    "verbatim",
    "quotation",
    "verbatim_quote",
    "supporting_quote",
    "source_quote",
    "exact_quote",
    "quote_text",
    "passage",
    "snippet",
)
IMPORTANCE_KEYS = (
    "importance",
    "weight",
    "priority",
    "significance",
    "relevance",
    "centrality",
    "importance_level",
    "level",
)
CENTRAL_FLAG_KEYS = ("is_key", "key_finding", "is_central", "central", "key")
#: Keys that are ours to compute (ids, owner, spans), so a fetcher's value is ignored quietly.
COMPUTED_KEYS = ("id", "source_id", "finding_id", "owner", "span", "index", "rank")

SOURCE_LIST_KEYS = (
    "sources",
    "results",
    "items",
    "documents",
    "docs",
    "pages",
    "articles",
    "hits",
    "entries",
    "records",
    "search_results",
    "fetched",
    "fetched_sources",
    "source_list",
)
WRAPPER_KEYS = (
    "result",
    "data",
    "fetcher_output",
    "fetcher_result",
    "output",
    "response",
    "payload",
    "body",
    "content",
    "choices",
    "message",
    "source",
)

SOURCE_KEY_GROUPS: dict[str, tuple[str, ...]] = {
    "url": URL_KEYS,
    "title": TITLE_KEYS,
    "published_at": PUBLISHED_KEYS,
    "retrieved_at": RETRIEVED_KEYS,
    "source_type": SOURCE_TYPE_KEYS,
    "tier": TIER_KEYS,
    "content_hash": HASH_KEYS,
    "status": STATUS_KEYS,
    "final_url": FINAL_URL_KEYS,
    "cites": CITES_KEYS,
    "aliases": ALIAS_KEYS,
    "sub_questions": SQ_KEYS,
    "round": ROUND_KEYS,
    "query": QUERY_KEYS,
    "adapter": ADAPTER_KEYS,
    "mcp": MCP_KEYS,
    "via": VIA_KEYS,
}
INLINE_FINDING_KEYS = frozenset(CLAIM_KEYS + QUOTE_KEYS + IMPORTANCE_KEYS + CENTRAL_FLAG_KEYS)
#: On a source object only unmistakable claim/quote keys make it carry a finding inline:
#: "text", "summary" or "snippet" there describe the page, not a finding.
SOURCE_CLAIM_KEYS = ("claim", "statement", "fact", "finding", "assertion", "claim_text")
SOURCE_QUOTE_KEYS = tuple(key for key in QUOTE_KEYS if key not in ("passage", "snippet"))
SOURCE_INLINE_KEYS = frozenset(SOURCE_CLAIM_KEYS + SOURCE_QUOTE_KEYS)


def norm_key(key: object) -> str:
    """``key`` in snake_case, lower-case: ``sourceURL`` → ``source_url``."""
    text = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", str(key).strip())
    return re.sub(r"[^a-z0-9&]+", "_", text.lower()).strip("_")


def keymap(item: dict[str, Any]) -> dict[str, str]:
    """Normalized key → original key (the first spelling wins)."""
    out: dict[str, str] = {}
    for key in item:
        out.setdefault(norm_key(key), key)
    return out


def first_of(item: dict[str, Any], keys: dict[str, str], aliases: Iterable[str]) -> Any:
    """The value under the first of ``aliases`` that ``item`` has (``keys`` from :func:`keymap`)."""
    for alias in aliases:
        if alias in keys:
            return item[keys[alias]]
    return None
