"""The models a Claude run may use, each with what its requests must say and what it costs.

One row per model: its generation, the web search tool version we send it, how it thinks
(on by default or not, and how thinking is turned off where it can be), the shortest prefix
the API caches for it, and its prices. Every request a role sends is shaped from its model's
row (:func:`thinking_for`, :func:`cacheable`); a model that is not here is refused before
the first call, so nothing is ever sent to a model whose behaviour or price we would guess.

Read on :data:`AS_OF` from the platform documentation — the model pages ("Claude Opus 5.5",
"Claude Sonnet 5.5", "Claude Haiku 5.5", "Claude Opus 5", "Claude Sonnet 5"), "Pricing",
"Prompt caching", "Thinking", "Prompting Claude Haiku 5.5" and the "Web search tool" page
(its supported-models list) — and from the installed ``anthropic`` SDK's types (2.15.0:
``ModelParam``, ``ThinkingConfigParam``, ``WebSearchTool20250305Param``). Where the pages
read disagreed or were silent, the list below says so and which value was taken:

* **web search**: every model here is in the tool's supported list for the basic
  ``web_search_20250305``; the dynamic-filtering versions (``_20260209`` and later) are given
  to 4.6-and-later models only, and run code over the results — we read only the results'
  URLs and fetch the pages ourselves, so the basic version is all a search needs, on any model;
* **thinking** ("Thinking", "Troubleshooting thinking", the 5.5 "What's new" pages): Opus 5.5
  thinks always (``disabled`` and ``enabled`` are a 400); Sonnet 5.5 replaces ``disabled`` with
  ``between_tools`` (no up-front thinking); Opus 5, Sonnet 5 and Haiku 5.5 think adaptively when
  ``thinking`` is omitted and accept ``disabled`` at their default effort; Haiku 4.5 thinks only
  when asked (manual ``enabled`` with ``budget_tokens``). Thinking tokens count toward
  ``max_tokens`` everywhere;
* **minimum cacheable prefix**: 512 tokens for Opus 5, 1,024 for Sonnet 5, 4,096 for
  Haiku 4.5 ("Prompt caching"); 512 for all three 5.5 models, as the 5.5 migration notes give
  it (the caching page read did not list them yet). A marker is placed only on a prefix that
  surely reaches the floor (:func:`cacheable`);
* **prices** (dollars per million tokens): Opus 5.5 reads its cache at 0.05 × input; Sonnet
  5.5's cache reads were cut to $0.10 (0.05 ×) on 2026-10-07 (its model page still showed
  $0.20 when read; the cut is taken from the dated price notes); Haiku 5.5 is priced by prompt
  length — a request whose prompt (input + cache writes + cache reads) is over 100,000 tokens
  pays the higher rates on every token, output included. Batches are half price on tokens;
  web searches cost $10 per 1,000 and are not discounted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from deep_research.errors import InputError

#: When the rows were read. A change is a new table with a new date, never an edit that
#: silently re-prices old ledgers.
AS_OF = "2026-12-02"
PER_MTOK = 1_000_000
WEB_SEARCH_USD = 0.01
BATCH_FACTOR = 0.5
#: The basic web search tool: supported by every model in the table (see the module doc).
WEB_SEARCH_BASIC = "web_search_20250305"
#: Output tokens added to ``max_tokens`` when a call thinks, so that thinking does not cut the
#: answer short (an adaptive think at default effort on a planning prompt runs to thousands).
THINKING_HEADROOM = 16_000

#: How a model thinks: ``always`` (adaptive, cannot be turned off), ``adaptive`` (on when
#: omitted, turned off by the model's ``off`` value), ``manual`` (off unless asked with a budget).
Thinking = Literal["always", "adaptive", "manual"]


@dataclass(frozen=True)
class Rates:
    """Dollars per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    @property
    def dearest_input(self) -> float:
        return max(self.input, self.cache_write)


@dataclass(frozen=True)
class Model:
    id: str
    generation: str
    web_search: str
    thinking: Thinking
    #: The ``thinking.type`` that turns thinking off, where the model has one.
    thinking_off: str | None
    min_cache_tokens: int
    rates: Rates
    #: Rates of a request whose prompt is longer than ``long_above`` tokens (None: one tier).
    long_rates: Rates | None = None
    long_above: int = 0

    def rates_for(self, prompt_tokens: int) -> Rates:
        if self.long_rates is not None and prompt_tokens > self.long_above:
            return self.long_rates
        return self.rates

    @property
    def dearest(self) -> Rates:
        """The highest rate of each kind, whatever the prompt's length (for worst cases)."""
        if self.long_rates is None:
            return self.rates
        a, b = self.rates, self.long_rates
        return Rates(
            max(a.input, b.input),
            max(a.output, b.output),
            max(a.cache_write, b.cache_write),
            max(a.cache_read, b.cache_read),
        )


def _standard(input_: float, output: float, read: float | None = None) -> Rates:
    """5-minute cache writes at 1.25 × input; reads at 0.1 × input unless stated."""
    return Rates(input_, output, input_ * 1.25, input_ * 0.1 if read is None else read)


MODELS: dict[str, Model] = {
    m.id: m
    for m in (
        # The current generation: the defaults.
        Model(
            "claude-opus-5-5", "5.5", WEB_SEARCH_BASIC, "always", None, 512,
            _standard(4.0, 20.0, read=0.20),
        ),
        Model(
            "claude-sonnet-5-5", "5.5", WEB_SEARCH_BASIC, "adaptive", "between_tools", 512,
            _standard(2.0, 10.0, read=0.10),
        ),
        Model(
            "claude-haiku-5-5", "5.5", WEB_SEARCH_BASIC, "adaptive", "disabled", 512,
            _standard(0.10, 0.50, read=0.01),
            long_rates=_standard(0.50, 2.50, read=0.05), long_above=100_000,
        ),
        # The previous generation, still served: accepted as overrides.
        Model(
            "claude-opus-5", "5", WEB_SEARCH_BASIC, "adaptive", "disabled", 512,
            _standard(5.0, 25.0),
        ),
        Model(
            "claude-sonnet-5", "5", WEB_SEARCH_BASIC, "adaptive", "disabled", 1_024,
            _standard(2.0, 10.0),
        ),
        Model(
            "claude-haiku-4-5", "4.5", WEB_SEARCH_BASIC, "manual", "disabled", 4_096,
            _standard(1.0, 5.0),
        ),
    )
}  # fmt: skip

STRONGEST = "claude-opus-5-5"
MIDDLE = "claude-sonnet-5-5"
SMALL = "claude-haiku-5-5"


def model(model_id: str) -> Model:
    """The row of ``model_id``; any other id is refused in one line."""
    found = MODELS.get(model_id)
    if found is None:
        raise InputError(
            f"model {model_id!r} is not in the model table of {AS_OF} (its price and request "
            f"shape would be guesses); choose one of: {', '.join(MODELS)}"
        )
    return found


def thinking_for(model_id: str, wanted: bool, answer_tokens: int) -> tuple[dict[str, Any], int]:
    """The ``thinking`` field and ``max_tokens`` of a call that wants (or not) to think and
    needs ``answer_tokens`` for its answer. Always explicit: what a model does when
    ``thinking`` is omitted differs by model. Where thinking cannot be turned off, the call
    thinks and gets the headroom."""
    row = model(model_id)
    if not wanted and row.thinking_off is not None:
        return {"type": row.thinking_off}, answer_tokens
    if row.thinking == "manual":
        budget = THINKING_HEADROOM
        return {"type": "enabled", "budget_tokens": budget}, answer_tokens + budget
    return {"type": "adaptive"}, answer_tokens + THINKING_HEADROOM


#: Characters per token assumed when deciding whether a prefix is long enough to cache: a
#: generous ratio (English runs about 4; newer tokenizers count more tokens), so a prefix
#: judged long enough is.
CACHE_CHARS_PER_TOKEN = 4


def cacheable(model_id: str, prefix_chars: int) -> bool:
    """Whether a prefix of ``prefix_chars`` characters is surely long enough to be cached."""
    return prefix_chars // CACHE_CHARS_PER_TOKEN >= model(model_id).min_cache_tokens
