"""One metered door to the Messages API: every call budgeted, retried within the deadline,
priced into the ledger, and turned into an answer or a failure — never an exception a phase
did not ask for.

A call goes through four steps:

1. **reserve** its worst case on the run's budget (the request's own size, ``max_tokens`` and its
   searches at the dearest rates): a call that could break ``--max-usd`` or the token cap is not
   sent (:class:`~deep_research.run.governor.CapReached`, which the phases turn into a partial
   brief);
2. **send** it, retrying 429, 529, 5xx, timeouts and dropped connections with exponential backoff
   (the server's ``retry-after`` honoured, up to :data:`MAX_BACKOFF_S`) while the run's shared
   deadline allows, at most :data:`MAX_ATTEMPTS` times; another 4xx is not retried, and a
   refused key stops the run with one line saying what to do;
3. **price** the usage the API returned (:mod:`deep_research.run.claude.prices`) into a ledger
   entry booked to the phase under way;
4. **settle** the reservation with that price (or refund it when no answer came).

Structured outputs use the SDK's own schema transformation (``anthropic.transform_schema``, what
``messages.parse`` sends) and validate the reply with the same pydantic model. ``messages.parse``
itself validates inside the request and raises before its usage is visible, so a malformed reply
would be missing from the ledger: the call is made with ``messages.create`` and validated here.
A refusal, a ``max_tokens`` stop, malformed JSON or a reply the model fails to validate is a
:class:`Failed` call: the caller abstains, skips or marks its work incomplete.

The SDK runs on httpx2, the project's one HTTP stack; its own retries are off (``max_retries=0``)
so that every attempt is counted and none outlives the deadline. Tests point ``base_url`` (or
``ANTHROPIC_BASE_URL``) at a fake Messages API on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from deep_research.errors import InputError
from deep_research.run.claude.prices import (
    BATCH_FACTOR,
    PRICES_AS_OF,
    WEB_SEARCH_USD,
    usd,
    worst_usd,
)
from deep_research.run.claude.roles import SEARCH_RESULT_TOKENS, Models, Role
from deep_research.run.governor import Budget
from deep_research.run.interface import CallFailed, CallPrice
from deep_research.run.ledger import Ledger
from deep_research.trace_phases import LedgerEntry

if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message

KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
#: One request's wall clock at most (the run's remaining deadline cuts it shorter).
CALL_TIMEOUT_S = 120.0
MAX_ATTEMPTS = 4
FIRST_BACKOFF_S = 0.5
MAX_BACKOFF_S = 8.0
#: Characters per token assumed for a request's worst case (English runs about 4).
CHARS_PER_TOKEN = 2
#: A batch is polled this often, and given up (its requests fail) at the run's deadline.
BATCH_POLL_S = 2.0

ModelT = TypeVar("ModelT", bound=BaseModel)
__all__ = ["Answer", "CallFailed", "ClaudeClient", "Failed", "key_problem", "read_structured"]


@dataclass(frozen=True)
class Failed:
    reason: str


@dataclass(frozen=True)
class Answer:
    message: Message
    entry: LedgerEntry

    @property
    def text(self) -> str:
        return "".join(
            getattr(block, "text", "") for block in self.message.content if block.type == "text"
        )


def key_problem(environ: Mapping[str, str] | None = None) -> str | None:
    """Why a Claude run cannot start here (no key), or None."""
    env = os.environ if environ is None else environ
    if not env.get(KEY_ENV, "").strip():
        return f"{KEY_ENV} is not set"
    return None


@dataclass
class ClaudeClient:
    """A run's door to the API, shared by the reasoner and the web search source."""

    models: Models
    api_key: str | None = None
    base_url: str | None = None
    backoff_s: float = FIRST_BACKOFF_S
    budget: Budget | None = None
    #: The ledger used before the client is bound to a run's budget (tests, one-off calls).
    own_ledger: Ledger = field(default_factory=lambda: Ledger(price_table=PRICES_AS_OF))
    _sdk: anthropic.Anthropic | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def bind(self, budget: Budget) -> None:
        self.budget = budget
        budget.ledger.price_table = PRICES_AS_OF

    @property
    def ledger(self) -> Ledger:
        return self.budget.ledger if self.budget is not None else self.own_ledger

    def sdk(self) -> anthropic.Anthropic:
        with self._lock:
            if self._sdk is None:
                import anthropic

                key = self.api_key or os.environ.get(KEY_ENV, "").strip()
                if not key:
                    raise InputError(f"--reasoner claude needs {KEY_ENV}; set it, or use auto")
                self._sdk = anthropic.Anthropic(
                    api_key=key,
                    base_url=self.base_url or os.environ.get(BASE_URL_ENV) or None,
                    max_retries=0,
                    timeout=CALL_TIMEOUT_S,
                )
            return self._sdk

    # --- one call ---------------------------------------------------------------------------

    def worst(self, role: Role, request: Mapping[str, Any], *, batch: bool = False) -> CallPrice:
        """The most this request can cost: its characters as tokens at the dearest input rate,
        its ``max_tokens``, and every search its tools allow with their results."""
        searches = sum(
            int(tool.get("max_uses") or 0)
            for tool in request.get("tools") or []
            if isinstance(tool, Mapping) and str(tool.get("type", "")).startswith("web_search")
        )
        inputs = len(json.dumps(request, default=str)) // CHARS_PER_TOKEN
        inputs += searches * SEARCH_RESULT_TOKENS
        outputs = int(request["max_tokens"])
        tokens = worst_usd(self.models[role], inputs, outputs)
        cost = tokens * (BATCH_FACTOR if batch else 1.0) + searches * WEB_SEARCH_USD
        return CallPrice(tokens=inputs + outputs, usd=cost)

    def _remaining(self) -> float:
        return self.budget.remaining_s() if self.budget is not None else CALL_TIMEOUT_S

    def _phase(self) -> str:
        return self.budget.phase if self.budget is not None and self.budget.phase else "call"

    def _entry(self, role: Role, message: Message, *, batch: bool = False) -> LedgerEntry:
        u = message.usage
        searches = u.server_tool_use.web_search_requests if u.server_tool_use else 0
        entry = LedgerEntry(
            phase=self._phase(),
            role=role,
            model=self.models[role],
            input_tokens=u.input_tokens or 0,
            output_tokens=u.output_tokens or 0,
            cache_write_tokens=u.cache_creation_input_tokens or 0,
            cache_read_tokens=u.cache_read_input_tokens or 0,
            web_searches=searches or 0,
            batch=batch,
            stop_reason=message.stop_reason,
        )
        priced = usd(
            entry.model,
            input_tokens=entry.input_tokens,
            output_tokens=entry.output_tokens,
            cache_write_tokens=entry.cache_write_tokens,
            cache_read_tokens=entry.cache_read_tokens,
            web_searches=entry.web_searches,
            batch=batch,
        )
        return entry.model_copy(update={"usd": priced})

    def call(self, role: Role, request: dict[str, Any]) -> Answer | Failed:
        """One request for ``role`` (``model`` is filled in), budgeted and retried."""
        request = {"model": self.models[role], **request}
        worst = self.worst(role, request)
        if self.budget is not None:
            self.budget.reserve(worst)  # CapReached: not sent
        settled = False
        try:
            outcome = self._send(role, request)
            if isinstance(outcome, Answer):
                self.ledger.add(outcome.entry)
                if self.budget is not None:
                    self.budget.settle(worst, CallPrice(outcome.entry.tokens, outcome.entry.usd))
                settled = True
            return outcome
        finally:
            if not settled and self.budget is not None:
                self.budget.settle(worst, None)

    def _send(self, role: Role, request: dict[str, Any]) -> Answer | Failed:
        import anthropic

        client = self.sdk()
        reason = "no attempt"
        for attempt in range(MAX_ATTEMPTS):
            left = self._remaining()
            if left <= 0:
                return Failed(f"{reason}; the run's deadline passed")
            try:
                message = client.messages.create(**request, timeout=min(CALL_TIMEOUT_S, left))
            except anthropic.AuthenticationError:
                raise InputError(
                    f"the API refused the key in {KEY_ENV} (401); set a valid key"
                ) from None
            except (anthropic.RateLimitError, anthropic.InternalServerError) as exc:
                self.ledger.failed()
                reason = f"HTTP {exc.status_code} after {attempt + 1} attempt(s)"
                wait = _retry_after(exc.response.headers)
            except anthropic.APIConnectionError as exc:  # timeouts included
                self.ledger.failed()
                reason = f"{type(exc).__name__} after {attempt + 1} attempt(s)"
                wait = None
            except anthropic.APIStatusError as exc:
                self.ledger.failed()
                return Failed(f"HTTP {exc.status_code}: {str(exc.message)[:200]}")
            except ValueError as exc:  # a 200 whose body is not a message (JSON, shape)
                self.ledger.failed()
                return Failed(f"the API's answer is not a message: {type(exc).__name__}")
            else:
                return Answer(message, self._entry(role, message))
            if attempt + 1 < MAX_ATTEMPTS:
                pause = self._pause(attempt, wait)
                if pause >= self._remaining():
                    return Failed(f"{reason}; no time left to retry before the deadline")
                time.sleep(pause)
        return Failed(reason)

    def _pause(self, attempt: int, asked: float | None) -> float:
        if asked is not None and asked >= 0:
            return min(asked, MAX_BACKOFF_S)
        backoff = self.backoff_s * 2.0**attempt
        return float(min(backoff, MAX_BACKOFF_S) * (1 - 0.25 * random.random()))

    # --- structured output ------------------------------------------------------------------

    def structured(
        self, role: Role, output: type[ModelT], request: dict[str, Any]
    ) -> ModelT | Failed:
        """A call whose answer must be one ``output``: anything else is a failed call."""
        import anthropic

        schema = anthropic.transform_schema(output.model_json_schema())
        shaped = {**request, "output_config": {"format": {"type": "json_schema", "schema": schema}}}
        answer = self.call(role, shaped)
        if isinstance(answer, Failed):
            return answer
        return read_structured(answer, output)

    # --- batches ----------------------------------------------------------------------------

    def batch(self, role: Role, requests: Sequence[dict[str, Any]]) -> list[Answer | Failed]:
        """Requests sent as one Message Batch (half price), waited for within the deadline."""
        import anthropic

        if not requests:
            return []
        shaped = [{"model": self.models[role], **request} for request in requests]
        worst = [self.worst(role, request, batch=True) for request in shaped]
        reserved: list[CallPrice] = []
        try:
            for price in worst:
                if self.budget is not None:
                    self.budget.reserve(price)
                reserved.append(price)
            results = self._run_batch(anthropic, role, shaped)
        except BaseException:
            if self.budget is not None:
                for price in reserved:
                    self.budget.settle(price, None)
            raise
        for price, outcome in zip(reserved, results, strict=True):
            if isinstance(outcome, Answer):
                self.ledger.add(outcome.entry)
                if self.budget is not None:
                    self.budget.settle(price, CallPrice(outcome.entry.tokens, outcome.entry.usd))
            elif self.budget is not None:
                self.budget.settle(price, None)
        return results

    def _run_batch(
        self, sdk_module: Any, role: Role, requests: Sequence[dict[str, Any]]
    ) -> list[Answer | Failed]:
        client = self.sdk()
        items: list[dict[str, Any]] = [
            {"custom_id": f"r{n}", "params": r} for n, r in enumerate(requests)
        ]
        try:
            created = client.messages.batches.create(
                requests=items,  # type: ignore[arg-type]
                timeout=min(CALL_TIMEOUT_S, max(0.1, self._remaining())),
            )
            while created.processing_status != "ended":
                if self._remaining() <= BATCH_POLL_S:
                    client.messages.batches.cancel(created.id)
                    return [Failed("the batch did not end before the deadline")] * len(items)
                time.sleep(BATCH_POLL_S)
                created = client.messages.batches.retrieve(created.id)
            found: dict[str, Answer | Failed] = {}
            for line in client.messages.batches.results(created.id):
                result = line.result
                if result.type == "succeeded":
                    found[line.custom_id] = Answer(
                        result.message, self._entry(role, result.message, batch=True)
                    )
                else:
                    found[line.custom_id] = Failed(f"batch request {result.type}")
        except sdk_module.APIError as exc:
            self.ledger.failed()
            return [Failed(f"batch failed: {type(exc).__name__}")] * len(items)
        return [found.get(str(item["custom_id"])) or Failed("no batch result") for item in items]


def read_structured(answer: Answer, output: type[ModelT]) -> ModelT | Failed:
    """The answer as ``output``, or why it is not one (refusal, cut short, malformed)."""
    stop = answer.message.stop_reason
    if stop == "refusal":
        return Failed("the model refused")
    if stop == "max_tokens":
        return Failed("the answer was cut at max_tokens")
    try:
        return output.model_validate_json(answer.text)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "answer"
        return Failed(f"malformed answer: {where}: {first['msg']}"[:300])


def _retry_after(headers: Any) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        try:
            return float(str(value)) * scale
        except (TypeError, ValueError):
            continue  # absent, or a date: the exponential backoff decides
    return None
