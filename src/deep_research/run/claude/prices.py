"""The price table: dollars per million tokens for each model, dated, in one place.

Every ledger entry is priced here, from the usage block the API returned: input, output, cache
writes (5-minute prompt caching: 1.25 × input) and cache reads (0.1 × input) each at its own
rate, plus the server-side web searches at :data:`WEB_SEARCH_USD` each. A Message Batches call
is billed at :data:`BATCH_FACTOR` of the token prices (searches are not discounted).

A model missing from the table cannot be priced, so it cannot be budgeted: choosing one is refused
before the run starts, never guessed at.
"""

from __future__ import annotations

from dataclasses import dataclass

from deep_research.errors import InputError

#: When these prices were read from the published price list. A price change is a new table
#: with a new date, never an edit that silently re-prices old ledgers.
PRICES_AS_OF = "2026-10-10"
PER_MTOK = 1_000_000
#: $10 per 1,000 searches, on top of the tokens.
WEB_SEARCH_USD = 0.01
BATCH_FACTOR = 0.5


@dataclass(frozen=True)
class ModelPrice:
    """Dollars per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float


def _rates(input_: float, output: float) -> ModelPrice:
    return ModelPrice(input_, output, input_ * 1.25, input_ * 0.1)


PRICES: dict[str, ModelPrice] = {
    "claude-opus-5": _rates(5.0, 25.0),
    "claude-opus-4-8": _rates(5.0, 25.0),
    "claude-opus-4-7": _rates(5.0, 25.0),
    "claude-opus-4-6": _rates(5.0, 25.0),
    "claude-opus-4-5": _rates(5.0, 25.0),
    # Sonnet 5's introductory $2/$10 ended on 2026-08-31; the standard rate applies.
    "claude-sonnet-5": _rates(3.0, 15.0),
    "claude-sonnet-4-6": _rates(3.0, 15.0),
    "claude-haiku-4-5": _rates(1.0, 5.0),
    "claude-haiku-4-5-20251001": _rates(1.0, 5.0),
}


def price_of(model: str) -> ModelPrice:
    found = PRICES.get(model)
    if found is None:
        known = ", ".join(sorted(PRICES))
        raise InputError(
            f"model {model!r} is not in the price table of {PRICES_AS_OF}, so its calls cannot "
            f"be budgeted; choose one of: {known}"
        )
    return found


def usd(
    model: str,
    *,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cache_write_tokens: int = 0,
    cache_read_tokens: int = 0,
    web_searches: int = 0,
    batch: bool = False,
) -> float:
    """What one call cost, from its usage."""
    rate = price_of(model)
    tokens = (
        input_tokens * rate.input
        + output_tokens * rate.output
        + cache_write_tokens * rate.cache_write
        + cache_read_tokens * rate.cache_read
    ) / PER_MTOK
    return tokens * (BATCH_FACTOR if batch else 1.0) + web_searches * WEB_SEARCH_USD


def worst_usd(model: str, input_tokens: int, output_tokens: int, web_searches: int = 0) -> float:
    """The most a call can cost: every input token written to the cache (the dearest input
    rate), every output token the call may emit, every search it may run."""
    rate = price_of(model)
    dearest = max(rate.input, rate.cache_write)
    return (
        input_tokens * dearest + output_tokens * rate.output
    ) / PER_MTOK + web_searches * WEB_SEARCH_USD
