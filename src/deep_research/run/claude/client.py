"""One metered door to the Messages API: every call budgeted, retried within the deadline,
priced into the ledger, and turned into an answer or a failure — never an exception a phase
did not ask for, except the ones that must end the run.

A call goes through five steps:

1. **shape** it for its model (:mod:`deep_research.run.claude.catalog`): ``model``, an explicit
   ``thinking`` (the role's wish where the model allows it), ``max_tokens`` with headroom when
   the call thinks, and no cache marker on a prefix too short for the model to cache;
2. **reserve** its worst case on the run's budget (the request's own size, ``max_tokens`` and its
   searches at the dearest rates): a call that could break ``--max-usd`` or the token cap is not
   sent (:class:`~deep_research.run.governor.CapReached`, which the phases turn into a partial
   brief);
3. **send** it, retrying 429, 529, 5xx, timeouts and dropped connections with exponential backoff
   (the server's ``retry-after`` honoured, up to :data:`MAX_BACKOFF_S`) while the run's shared
   deadline allows, at most :data:`MAX_ATTEMPTS` times; another 4xx is not retried;
4. **price** the usage the API returned (:mod:`deep_research.run.claude.prices`) into a ledger
   entry booked to the phase under way;
5. **settle** the reservation with that price (or refund it when no answer came).

Some failures end the run with one line (an :class:`~deep_research.errors.InputError`, exit 2),
because no later call could succeed and a brief built on them would only record a verdict on
nothing: a refused key (401) at any time, and — until a model has answered once — a 400, 402,
403 or 404 on a call to it (an unknown or retired model, billing, permission, a request the API
will not take) or a Messages API that cannot be reached at all. Once a model has answered, the
same errors are one call's failure, recorded with their cause.

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

import contextlib
import json
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from deep_research.brief.trace_phases import LedgerEntry
from deep_research.errors import InputError
from deep_research.run.claude.catalog import cacheable, thinking_for
from deep_research.run.claude.prices import (
    BATCH_FACTOR,
    PRICES_AS_OF,
    WEB_SEARCH_USD,
    Usage,
    usd,
    worst_usd,
)
from deep_research.run.claude.roles import SEARCH_RESULT_TOKENS, THINKS, Models, Role
from deep_research.run.governor import Budget
from deep_research.run.interface import CallFailed, CallPrice
from deep_research.run.ledger import Ledger

if TYPE_CHECKING:
    import anthropic
    from anthropic.types import Message

KEY_ENV = "ANTHROPIC_API_KEY"
BASE_URL_ENV = "ANTHROPIC_BASE_URL"
#: One request's wall clock at most (the run's remaining deadline cuts it shorter).
CALL_TIMEOUT_S = 120.0
#: A connection that is not made in this long is not going to be: a dead network fails fast.
CONNECT_TIMEOUT_S = 10.0
MAX_ATTEMPTS = 4
FIRST_BACKOFF_S = 0.5
#: The longest wait between attempts, whatever ``retry-after`` asks (the deadline cuts it).
MAX_BACKOFF_S = 60.0
#: Characters per token assumed for a request's worst case (English runs about 4).
CHARS_PER_TOKEN = 2
#: A batch is polled this often; at the run's deadline it is cancelled, then polled until it
#: ends (at most :data:`BATCH_CANCEL_WAIT_S` more) so that what it completed is read and booked.
BATCH_POLL_S = 2.0
BATCH_CANCEL_WAIT_S = 300.0
#: Test-only: scales every wait (retry-after, backoff, batch polls) so that a suite need not
#: sleep as the API asks. Never set in use.
RETRY_SCALE_ENV = "DEEP_RESEARCH_TEST_RETRY_SCALE"
#: The errors that, before a model has answered once, mean no call to it will succeed.
FATAL_FIRST = {
    400: "the API refused the request as invalid",
    402: "check the account's billing",
    403: "check the key's permissions",
    404: "check the model id (--model ROLE=ID)",
}

ModelT = TypeVar("ModelT", bound=BaseModel)
T = TypeVar("T")
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


def _retry_scale() -> float:
    try:
        return max(0.0, float(os.environ.get(RETRY_SCALE_ENV, "") or 1.0))
    except ValueError:
        return 1.0


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
    retry_scale: float = field(default_factory=_retry_scale)
    budget: Budget | None = None
    #: The ledger used before the client is bound to a run's budget (tests, one-off calls).
    own_ledger: Ledger = field(default_factory=lambda: Ledger(price_table=PRICES_AS_OF))
    _sdk: anthropic.Anthropic | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    #: The models that have answered at least once in this run.
    _answered: set[str] = field(default_factory=set)

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
                import httpx2

                key = self.api_key or os.environ.get(KEY_ENV, "").strip()
                if not key:
                    raise InputError(f"--reasoner claude needs {KEY_ENV}; set it, or use auto")
                self._sdk = anthropic.Anthropic(
                    api_key=key,
                    base_url=self.base_url or os.environ.get(BASE_URL_ENV) or None,
                    max_retries=0,
                    timeout=httpx2.Timeout(CALL_TIMEOUT_S, connect=CONNECT_TIMEOUT_S),
                )
            return self._sdk

    # --- one call ---------------------------------------------------------------------------

    def shape(self, role: Role, request: Mapping[str, Any]) -> dict[str, Any]:
        """``request`` as ``role``'s model must receive it: the model, thinking set explicitly,
        ``max_tokens`` (the answer's own, plus headroom when the call thinks), and cache
        markers only where the prefix before them is long enough for the model to cache."""
        model_id = self.models[role]
        thinking, max_tokens = thinking_for(model_id, THINKS[role], int(request["max_tokens"]))
        shaped = {**request, "model": model_id, "thinking": thinking, "max_tokens": max_tokens}
        return _drop_short_markers(shaped, model_id)

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
        usage = Usage(
            input_tokens=u.input_tokens or 0,
            output_tokens=u.output_tokens or 0,
            cache_write_tokens=u.cache_creation_input_tokens or 0,
            cache_read_tokens=u.cache_read_input_tokens or 0,
            web_searches=searches or 0,
            batch=batch,
        )
        model = self.models[role]
        return LedgerEntry(
            phase=self._phase(),
            role=role,
            model=model,
            **usage,
            usd=usd(model, **usage),
            stop_reason=message.stop_reason,
        )

    def call(self, role: Role, request: dict[str, Any]) -> Answer | Failed:
        """One request for ``role`` (shaped for its model), budgeted and retried."""
        request = self.shape(role, request)
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
        model_id = str(request["model"])
        reason = "no attempt"
        reached = False
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
                reached = True
                reason = f"HTTP {exc.status_code} after {attempt + 1} attempt(s)"
                wait = _retry_after(exc.response.headers)
            except anthropic.APIConnectionError as exc:  # timeouts included
                self.ledger.failed()
                reached = reached or _was_reached(exc)
                reason = f"{type(exc).__name__} after {attempt + 1} attempt(s)"
                wait = None
            except anthropic.APIStatusError as exc:
                self.ledger.failed()
                refused = _refusal(exc, model_id)
                if exc.status_code in FATAL_FIRST and model_id not in self._answered:
                    raise InputError(
                        f"the Messages API refused the first call: {refused}; "
                        f"{FATAL_FIRST[exc.status_code]}"
                    ) from None
                return Failed(refused)
            except ValueError as exc:  # a 200 whose body is not a message (JSON, shape)
                self.ledger.failed()
                return Failed(f"the API's answer is not a message: {type(exc).__name__}")
            else:
                with self._lock:
                    self._answered.add(model_id)
                return Answer(message, self._entry(role, message))
            if attempt + 1 < MAX_ATTEMPTS:
                pause = self._pause(attempt, wait)
                if pause >= self._remaining():
                    return Failed(f"{reason}; no time left to retry before the deadline")
                time.sleep(pause)
        if not reached and not self._answered:
            raise InputError(
                f"cannot reach the Messages API at {client.base_url} ({reason}); check the "
                f"network, or {BASE_URL_ENV} if it is set"
            )
        return Failed(reason)

    def _pause(self, attempt: int, asked: float | None) -> float:
        if asked is not None and asked >= 0:
            return min(asked, MAX_BACKOFF_S) * self.retry_scale
        backoff = self.backoff_s * 2.0**attempt
        jitter = 1 - 0.25 * random.random()
        return float(min(backoff, MAX_BACKOFF_S) * jitter * self.retry_scale)

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
        shaped = [self.shape(role, request) for request in requests]
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

    def _retrying(self, sdk_module: Any, step: Callable[[], T]) -> T:
        """``step`` (a batch request), retried on the errors a message call is retried on."""
        for attempt in range(MAX_ATTEMPTS):
            try:
                return step()
            except (sdk_module.RateLimitError, sdk_module.InternalServerError) as exc:
                self.ledger.failed()
                if attempt + 1 == MAX_ATTEMPTS:
                    raise
                time.sleep(self._pause(attempt, _retry_after(exc.response.headers)))
            except sdk_module.APIConnectionError:
                self.ledger.failed()
                if attempt + 1 == MAX_ATTEMPTS:
                    raise
                time.sleep(self._pause(attempt, None))
        raise AssertionError("unreachable")  # the loop returns or raises

    def _run_batch(
        self, sdk_module: Any, role: Role, requests: Sequence[dict[str, Any]]
    ) -> list[Answer | Failed]:
        """Create, poll, and read one batch. At the deadline it is cancelled and still polled
        until it ends, so that the requests it completed (and bills) are read and booked."""
        client = self.sdk()
        batches = client.messages.batches
        items: list[dict[str, Any]] = [
            {"custom_id": f"r{n}", "params": r} for n, r in enumerate(requests)
        ]
        timeout = min(CALL_TIMEOUT_S, max(0.1, self._remaining()))
        try:
            created = self._retrying(
                sdk_module,
                lambda: batches.create(requests=items, timeout=timeout),  # type: ignore[arg-type]
            )
        except sdk_module.APIError as exc:
            self.ledger.failed()
            return [Failed(f"the batch was not created: {_cause(exc)}")] * len(items)
        current = created
        canceled_at: float | None = None
        poll = BATCH_POLL_S * self.retry_scale
        try:
            while current.processing_status != "ended":
                if canceled_at is None and self._remaining() <= BATCH_POLL_S:
                    current = self._retrying(sdk_module, lambda: batches.cancel(created.id))
                    canceled_at = time.monotonic()
                    continue
                if canceled_at is not None:
                    waited = time.monotonic() - canceled_at
                    if waited > BATCH_CANCEL_WAIT_S * self.retry_scale:
                        return [
                            Failed(
                                f"batch {created.id} was still {current.processing_status} "
                                f"{waited:.0f} s after it was cancelled; what it completes is "
                                "billed but not read"
                            )
                        ] * len(items)
                time.sleep(poll)
                current = self._retrying(sdk_module, lambda: batches.retrieve(created.id))
            lines = self._retrying(sdk_module, lambda: list(batches.results(created.id)))
        except sdk_module.APIError as exc:
            self.ledger.failed()
            # A batch we can no longer follow is not left to run up a bill.
            with contextlib.suppress(sdk_module.APIError):
                batches.cancel(created.id)
            return [Failed(f"batch {created.id} was lost: {_cause(exc)}")] * len(items)
        found: dict[str, Answer | Failed] = {}
        for line in lines:
            result = line.result
            if result.type == "succeeded":
                found[line.custom_id] = Answer(
                    result.message, self._entry(role, result.message, batch=True)
                )
            elif result.type == "errored":
                error = getattr(result.error, "error", None)
                kind = getattr(error, "type", "error")
                found[line.custom_id] = Failed(f"batch request errored: {kind}")
            else:  # canceled (the deadline's cancel) or expired (24 h without a turn)
                found[line.custom_id] = Failed(f"batch request {result.type}")
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


def _was_reached(exc: Exception) -> bool:
    """Whether a connection error came after the server was reached (a read timeout), not
    before (refused, unresolvable, or a connect that timed out)."""
    import anthropic
    import httpx2

    return isinstance(exc, anthropic.APITimeoutError) and not isinstance(
        exc.__cause__, httpx2.ConnectTimeout
    )


def _request_id(exc: Any) -> str:
    found = getattr(exc, "request_id", None)
    if not found and getattr(exc, "response", None) is not None:
        found = exc.response.headers.get("request-id")
    return str(found) if found else "none"


def _cause(exc: Any) -> str:
    status = getattr(exc, "status_code", None)
    return f"HTTP {status}" if status else type(exc).__name__


def _refusal(exc: Any, model_id: str) -> str:
    """An API error in one line: its type, its message, the model and the request id."""
    body = getattr(exc, "body", None)
    error: dict[str, Any] = {}
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
    kind = str(error.get("type") or "error")
    said = " ".join(str(error.get("message") or exc.message).split())[:200]
    return f"HTTP {exc.status_code} {kind}: {said} (model {model_id}, request {_request_id(exc)})"


def _drop_short_markers(request: dict[str, Any], model_id: str) -> dict[str, Any]:
    """``request`` without the cache markers whose prefix (tools, system, messages, in the
    API's order, up to and including the marked block) is too short for ``model_id`` to cache:
    such a marker caches nothing and would only make a cost estimate count on a cache hit."""
    seen = len(json.dumps(request.get("tools") or []))

    def walk(blocks: Any) -> Any:
        nonlocal seen
        if not isinstance(blocks, list):
            seen += len(json.dumps(blocks))
            return blocks
        kept = []
        for block in blocks:
            seen += len(json.dumps(block))
            if (
                isinstance(block, dict)
                and "cache_control" in block
                and not cacheable(model_id, seen)
            ):
                block = {k: v for k, v in block.items() if k != "cache_control"}
            kept.append(block)
        return kept

    shaped = dict(request)
    if "system" in shaped:
        shaped["system"] = walk(shaped["system"])
    messages = []
    for message in shaped.get("messages") or []:
        if isinstance(message, dict) and "content" in message:
            message = {**message, "content": walk(message["content"])}
        messages.append(message)
    shaped["messages"] = messages
    return shaped
