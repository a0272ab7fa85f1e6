"""What a call costs, from the usage block the API returned and its model's row in
:mod:`deep_research.run.claude.catalog`.

Input, output, cache writes (5-minute caching) and cache reads are each priced at their own
rate, at the tier the request's prompt length selects (a prompt is its input, cache writes and
cache reads); server-side web searches cost :data:`WEB_SEARCH_USD` each. A Message Batches call
is billed at :data:`BATCH_FACTOR` of the token prices (searches are not discounted).

A model missing from the table cannot be priced, so it cannot be budgeted: choosing one is refused
before the run starts, never guessed at.
"""

from __future__ import annotations

from typing import TypedDict

from deep_research.run.claude.catalog import (
    AS_OF,
    BATCH_FACTOR,
    PER_MTOK,
    WEB_SEARCH_USD,
    Rates,
    model,
)

#: The date of the table every ledger entry is priced from (written into the ledger).
PRICES_AS_OF = AS_OF

__all__ = [
    "BATCH_FACTOR",
    "PRICES_AS_OF",
    "WEB_SEARCH_USD",
    "Usage",
    "price_of",
    "usd",
    "worst_usd",
]


def price_of(model_id: str) -> Rates:
    """The short-prompt rates of ``model_id``; an unknown model is refused in one line."""
    return model(model_id).rates


class Usage(TypedDict):
    """One call's usage, by the names :func:`usd` and the ledger entry both take."""

    input_tokens: int
    output_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    web_searches: int
    batch: bool


def usd(
    model_id: str,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_write_tokens: int = 0,
    cache_read_tokens: int = 0,
    web_searches: int = 0,
    batch: bool = False,
) -> float:
    """What one call cost, from its usage (a :class:`Usage` unpacked)."""
    rate = model(model_id).rates_for(input_tokens + cache_write_tokens + cache_read_tokens)
    tokens = (
        input_tokens * rate.input
        + output_tokens * rate.output
        + cache_write_tokens * rate.cache_write
        + cache_read_tokens * rate.cache_read
    ) / PER_MTOK
    return tokens * (BATCH_FACTOR if batch else 1.0) + web_searches * WEB_SEARCH_USD


def worst_usd(model_id: str, input_tokens: int, output_tokens: int, web_searches: int = 0) -> float:
    """The most a call can cost: every input token written to the cache at the dearest tier,
    every output token the call may emit (thinking included), every search it may run."""
    rate = model(model_id).dearest
    return (
        input_tokens * rate.dearest_input + output_tokens * rate.output
    ) / PER_MTOK + web_searches * WEB_SEARCH_USD
