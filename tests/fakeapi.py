"""A fake Anthropic Messages API on 127.0.0.1, for running real clients (Claude Code) offline.

``FakeAnthropic`` answers ``POST /v1/messages`` with replies chosen by a *script*: a function of
the request body that returns the reply's content blocks (raw dicts; see :func:`text`,
:func:`tool_use` and :func:`web_search`), or ``None`` for a request the script does not care
about (a side request — a title, a summary — gets a short text reply). The stop reason follows
from the blocks: ``tool_use`` when the reply calls a client tool, ``end_turn`` otherwise (a
server tool's use and result are part of the reply). A request with ``"stream": true`` is
answered as server-sent events (message_start; per block content_block_start, one delta —
input_json_delta for a block with an ``input``, text_delta for text, none for any other block,
which arrives whole — and content_block_stop; message_delta with the stop reason;
message_stop), any other as one JSON message. ``/v1/messages/count_tokens`` gets a rough
count; every other request gets a JSON 404. ``CONNECT`` (a proxied HTTPS request to another
host) is refused with 403.

Every request is recorded (method, path, headers, parsed body), so a test asserts on exactly what
the client sent. Scripts should pick replies from what a request contains (which tools it offers,
which tool results it carries, its system prompt), not from the call order, since clients add side
requests. A client running subagents (Claude Code's Agent tool) sends each subagent's conversation
here too, concurrently: its system prompt is the agent definition's body and its user message the
dispatch's prompt, so :func:`first_of` a script for those (matched by :func:`system_text`) and one
for the main loop answers both. A model that works through many turns is a :class:`Conversation`:
a generator that yields each message's tool calls and is sent their results
(:func:`last_results`), answered by the results a request carries, so a retry gets the same reply.

For the SDK-driven runner a script may also return a :class:`Reply`: its blocks with an explicit
stop reason (``pause_turn``, ``refusal``, ``max_tokens``), usage, or an HTTP error (429, 529,
500 — :func:`error`), a delay (a client timeout), or a body that is not JSON. With
``usage="measured"`` every reply's usage is computed from the request as the real API bills it:
input tokens from the request's size, output tokens from the reply's, prompt caching simulated
(the request up to its last ``cache_control`` block is a prefix; the first request with a prefix
of at least :data:`MIN_CACHEABLE` tokens writes it, every later one reads it), and one web search
counted per ``server_tool_use`` block. ``api.billed`` lists the usage of every reply sent, so a
test compares a ledger with what the API reported, call by call. Message Batches
(``/v1/messages/batches``) are answered by the same script, each request's usage marked as batch.

``strict=True`` makes the fake as strict as the API, for the headless runner's tests (Claude
Code's own requests, in the plugin's tests, are not ours to police). Before the script is asked,
a request is refused with the API's error bodies when it names a model the API does not serve
(the installed SDK's model list, less ``retired``: 404 ``not_found_error``), a web search tool
version its model does not support, a ``thinking`` type its model refuses, or citations together
with structured output (400 ``invalid_request_error``). A reply of a model that thinks (by
default, or asked to) starts with a thinking block whose ``thinking_tokens`` count toward
``max_tokens``: a reply that does not fit is cut there (``max_tokens``, the answer lost). The
simulated cache applies each model's own minimum prefix (:data:`MIN_CACHEABLE_BY_MODEL`). A
batch goes in_progress → (canceling →) ended over ``batch_polls`` polls; requests the script
errors or expires (``Reply(batch_result="expired")``) are counted as such, and a cancel leaves
all but the first ``finished_before_cancel`` requests canceled. Every reply, errors included,
carries a ``request-id``, and :func:`error` asks retry-after times of the API's order (seconds,
not milliseconds): a test shortens the client's waits with its own knob, not the fake's.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Block = dict[str, Any]
Script = Callable[[dict[str, Any]], "list[Block] | Reply | None"]


def text(value: str) -> Block:
    return {"type": "text", "text": value}


def tool_use(name: str, tool_input: dict[str, Any], use_id: str | None = None) -> Block:
    return {
        "type": "tool_use",
        "id": use_id or f"toolu_{uuid.uuid4().hex[:24]}",
        "name": name,
        "input": tool_input,
    }


def web_search(query: str, *urls: str, use_id: str = "srvtoolu_01") -> list[Block]:
    """The server tool ``web_search`` used once and its result: one search hit per URL."""
    hits = [
        {
            "type": "web_search_result",
            "url": url,
            "title": f"Result {n}",
            "encrypted_content": "ZmFrZQ==",
            "page_age": "March 1, 2025",
        }
        for n, url in enumerate(urls, 1)
    ]
    return [
        {"type": "server_tool_use", "id": use_id, "name": "web_search", "input": {"query": query}},
        {"type": "web_search_tool_result", "tool_use_id": use_id, "content": hits},
    ]


def cited(value: str, document: str, *quotes: str, index: int = 0) -> Block:
    """A text block citing ``quotes`` of a plain-text ``document`` (char_location offsets)."""
    citations = []
    for quote in quotes:
        start = document.find(quote)
        if start < 0:
            raise ValueError(f"{quote[:40]!r} is not in the document")
        citations.append(
            {
                "type": "char_location",
                "cited_text": quote,
                "document_index": index,
                "document_title": None,
                "start_char_index": start,
                "end_char_index": start + len(quote),
            }
        )
    return {"type": "text", "text": value, "citations": citations}


@dataclass
class Reply:
    """A scripted reply beyond plain blocks: a stop reason, usage, an error, a delay."""

    blocks: list[Block] = field(default_factory=list)
    stop_reason: str | None = None
    usage: dict[str, Any] | None = None
    status: int = 200
    error_type: str = "api_error"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    raw: bytes | None = None  # sent as the body as it is (not JSON)
    message: str = "scripted"
    #: In a batch: "expired" for a request the batch did not reach within its 24 hours.
    batch_result: str | None = None


#: The seconds a retryable error asks the client to wait (``retry-after``): the API's order of
#: magnitude for a rate limit and an overload, not milliseconds.
RETRY_AFTER_S = {429: 20, 529: 10}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error(
    status: int,
    kind: str | None = None,
    message: str = "scripted",
    retry_after_s: int | None = None,
) -> Reply:
    """An API error reply (429 rate_limit_error, 529 overloaded_error, 404 not_found_error, …),
    with the retry-after a retryable one asks (:data:`RETRY_AFTER_S` unless given)."""
    wait = retry_after_s if retry_after_s is not None else RETRY_AFTER_S.get(status)
    headers = {"retry-after": str(wait)} if wait is not None else {}
    return Reply(
        status=status,
        error_type=kind or ERROR_TYPES.get(status, "api_error"),
        headers=headers,
        message=message,
    )


def document_text(body: Any) -> str:
    """The text of the first plain-text document block a request carries ("" when none)."""
    for message in body.get("messages") or [] if isinstance(body, dict) else []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "document":
                source = block.get("source") or {}
                if source.get("type") == "text":
                    return str(source.get("data", ""))
    return ""


def output_schema(body: Any) -> dict[str, Any] | None:
    """The JSON schema a structured-output request asks for, or None."""
    config = body.get("output_config") if isinstance(body, dict) else None
    fmt = config.get("format") if isinstance(config, dict) else None
    return fmt.get("schema") if isinstance(fmt, dict) else None


#: The fewest prefix tokens the simulated cache stores when the fake is not strict.
MIN_CACHEABLE = 1024

# --- what the API accepts, model by model (strict mode) -------------------------------------
# Read from the platform documentation (model pages, "Web search tool", "Thinking", "Prompt
# caching"), independently of the runner's own model table: the double checks the runner.


def served_models() -> frozenset[str]:
    """The models the API serves: the installed SDK's own list of model ids."""
    import typing

    from anthropic.types import ModelParam

    literal = typing.get_args(ModelParam)[0]
    return frozenset(typing.get_args(literal))


#: Dynamic filtering (web search ``_20260209`` and later) is for 4.6-and-later models.
DYNAMIC_SEARCH = frozenset({"web_search_20260209", "web_search_20260318"})
BASIC_SEARCH = "web_search_20250305"
NO_DYNAMIC_SEARCH = frozenset(
    {"claude-haiku-4-5", "claude-haiku-4-5-20251001", "claude-opus-4-5", "claude-opus-4-5-20251101"}
)
#: How each model thinks: (thinks when ``thinking`` is omitted, the types it accepts).
THINKING_BY_MODEL: dict[str, tuple[bool, frozenset[str]]] = {
    "claude-opus-5-5": (True, frozenset({"adaptive"})),
    "claude-fable-5-1": (True, frozenset({"adaptive"})),
    "claude-sonnet-5-5": (True, frozenset({"adaptive", "between_tools"})),
    "claude-haiku-5-5": (True, frozenset({"adaptive", "disabled"})),
    "claude-opus-5": (True, frozenset({"adaptive", "disabled"})),
    "claude-sonnet-5": (True, frozenset({"adaptive", "disabled"})),
    "claude-haiku-4-5": (False, frozenset({"enabled", "disabled"})),
    "claude-haiku-4-5-20251001": (False, frozenset({"enabled", "disabled"})),
}
#: The shortest prefix each model caches (tokens); 1,024 for a model not listed.
MIN_CACHEABLE_BY_MODEL = {
    "claude-opus-5": 512,
    "claude-sonnet-5": 1024,
    "claude-opus-4-7": 2048,
    "claude-opus-4-6": 4096,
    "claude-opus-4-5": 4096,
    "claude-haiku-4-5": 4096,
    "claude-haiku-4-5-20251001": 4096,
    "claude-opus-5-5": 512,
    "claude-sonnet-5-5": 512,
    "claude-haiku-5-5": 512,
}
#: Output tokens a think takes when the model thinks (adaptive, default effort, on a prompt
#: that asks for judgement): a knob of :class:`FakeAnthropic`.
THINKING_TOKENS = 6000


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON body; None when there was none or it was not JSON

    @property
    def is_messages(self) -> bool:
        return self.method == "POST" and self.path.split("?")[0] == "/v1/messages"


# --- reading a Messages request -------------------------------------------------------------


def tool_names(body: Any) -> list[str]:
    """The names of the tools a request offers the model."""
    if not isinstance(body, dict):
        return []
    return [tool.get("name", "") for tool in body.get("tools") or [] if isinstance(tool, dict)]


#: How Claude Code (2.1.332) introduces the tools it offers by name only: a system message whose
#: lines after this one name each, up to a blank line. Until ToolSearch loads one, the request's
#: ``tools`` lack it and a call to it fails.
DEFERRED_NOTE = "The following deferred tools are now available via ToolSearch."


def deferred_tools(body: Any) -> list[str]:
    """The tools a request defers (named in :data:`DEFERRED_NOTE`), loaded or not."""
    messages = body.get("messages") if isinstance(body, dict) else None
    names: list[str] = []
    for message in messages or []:
        said = block_text(message.get("content")) if isinstance(message, dict) else ""
        _, note, rest = said.partition(DEFERRED_NOTE)
        if note:
            lines = rest.split("\n\n", 1)[0].splitlines()[1:]  # past the note's own line
            names += [line.strip() for line in lines if line.strip()]
    return names


def load_deferred(body: Any, wanted: set[str]) -> Block | None:
    """The ToolSearch call a model makes to load those of ``wanted`` the request defers and does
    not offer yet, as Claude Code tells it to (``select:A,B``); ``None`` when there are none. Its
    id follows from the names, so a retried request gets the same call."""
    missing = sorted((wanted & set(deferred_tools(body))) - set(tool_names(body)))
    if not missing or "ToolSearch" not in tool_names(body):
        return None
    return tool_use(
        "ToolSearch", {"query": "select:" + ",".join(missing)}, "toolu_load_" + "_".join(missing)
    )


def block_text(content: Any) -> str:
    """The text of a message content (string, block list, tool_result content), joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block_text(part) for part in content)
    if isinstance(content, dict):
        if content.get("type") == "text":
            return str(content.get("text", ""))
        if "content" in content:
            return block_text(content["content"])
    return ""


def system_text(body: Any) -> str:
    """The system prompt of a request (a string or text blocks), joined."""
    return block_text(body.get("system")) if isinstance(body, dict) else ""


def user_text(body: Any) -> str:
    """The text blocks of a request's user messages (not their tool results), joined."""
    messages = body.get("messages") if isinstance(body, dict) else None
    parts: list[str] = []
    for message in messages or []:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        for block in [content] if isinstance(content, str) else content or []:
            if isinstance(block, str) or (isinstance(block, dict) and block.get("type") == "text"):
                parts.append(block_text(block))
    return "\n".join(parts)


def tool_results(body: Any) -> dict[str, tuple[str, bool]]:
    """Every tool_result in a request: tool_use_id → (its text, is_error)."""
    found: dict[str, tuple[str, bool]] = {}
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found[str(block.get("tool_use_id"))] = (
                    block_text(block.get("content")),
                    bool(block.get("is_error")),
                )
    return found


def turn_text(body: Any, use_id: str) -> str:
    """The text the client sent alongside one tool's result (in the same user turn)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        blocks = content if isinstance(content, list) else []
        if any(isinstance(b, dict) and b.get("tool_use_id") == use_id for b in blocks):
            return "\n".join(
                block_text(b) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
            )
    return ""


#: What a tool call's result looks like to the model: its text and whether it is an error.
Results = dict[str, tuple[str, bool]]


def last_results(body: dict[str, Any]) -> Results:
    """The tool results the request carries after the model's last message (the CLI may add
    messages of its own after them, such as a reminder)."""
    found: Results = {}
    for message in reversed(body.get("messages") or []):
        if not isinstance(message, dict) or message.get("role") == "assistant":
            break
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found[str(block.get("tool_use_id"))] = (
                    _first_text(block.get("content")),
                    bool(block.get("is_error")),
                )
    return found


def _first_text(content: Any) -> str:
    """A tool result's own text: its first text block (the CLI may append notes of its own, such
    as a subagent's id, as further blocks)."""
    if isinstance(content, list):
        texts = [block_text(part) for part in content if isinstance(part, dict)]
        return next((t for t in texts if t), "")
    return block_text(content)


# --- scripts --------------------------------------------------------------------------------


def first_of(*scripts: Script) -> Script:
    """A script answering with the first of ``scripts`` that cares about the request."""

    def script(body: dict[str, Any]) -> list[Block] | Reply | None:
        for each in scripts:
            blocks = each(body)
            if blocks is not None:
                return blocks
        return None

    return script


#: A model's side of one conversation, as a generator: it yields each message's tool calls, is
#: sent their results (tool_use id → text, is_error), and returns its final answer.
Program = Generator[list[Block], Results, str]


class Conversation:
    """One model's program, answered request by request. A request is placed by the results it
    carries, so a client's retry of the same request gets the same reply."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.replies: dict[tuple[str, ...], list[Block]] = {}
        self.started = False
        self.final: str | None = None
        self.lock = threading.Lock()

    def answer(self, results: Results) -> list[Block]:
        key = tuple(sorted(results))
        with self.lock:
            if key not in self.replies:
                self.replies[key] = self._step(results)
            return self.replies[key]

    def _step(self, results: Results) -> list[Block]:
        if self.final is not None:
            return [text(self.final)]
        try:
            blocks = self.program.send(results) if self.started else next(self.program)
        except StopIteration as done:
            self.final = str(done.value)
            return [text(self.final)]
        self.started = True
        return blocks


# --- the replies ----------------------------------------------------------------------------


def _message(
    blocks: list[Block],
    model: str,
    stop: str | None = None,
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    if stop is None:
        stop = "tool_use" if any(block["type"] == "tool_use" for block in blocks) else "end_turn"
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 5},
    }


def _tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, sort_keys=True)) // 4)


def _prefix(body: dict[str, Any]) -> Any:
    """The request up to and including its last cache_control block (None when it has none):
    what the API caches. Tools, then system, then messages, in the API's order."""
    parts: list[Any] = [body.get("model"), body.get("tools") or []]
    last = 1 if any(isinstance(t, dict) and "cache_control" in t for t in parts[1]) else None
    system = body.get("system")
    for block in system if isinstance(system, list) else [system]:
        parts.append(block)
        if isinstance(block, dict) and "cache_control" in block:
            last = len(parts) - 1
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else [content]:
            parts.append(block)
            if isinstance(block, dict) and "cache_control" in block:
                last = len(parts) - 1
    return None if last is None else parts[: last + 1]


def _events(message: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    start = {
        **message,
        "content": [],
        "stop_reason": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    yield "message_start", {"type": "message_start", "message": start}
    for index, block in enumerate(message["content"]):
        delta: dict[str, Any] | None = None
        if "input" in block:  # tool_use, server_tool_use: the input streams as JSON
            empty = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        elif block["type"] == "text":
            empty = {**block, "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:  # a result block (web_search_tool_result, …) arrives whole in its start event
            empty = block
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": empty},
        )
        if delta is not None:
            yield (
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def sse(message: dict[str, Any]) -> bytes:
    """A message as the server-sent events of a streamed reply."""
    return "".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in _events(message)
    ).encode()


# --- the server -----------------------------------------------------------------------------


@dataclass
class _Batch:
    lines: list[dict[str, Any]]
    polls_left: int
    status: str = "in_progress"


def _cites(body: Any) -> bool:
    """Whether a request enables citations on any of its documents."""
    for message in body.get("messages") or [] if isinstance(body, dict) else []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            citations = block.get("citations") if isinstance(block, dict) else None
            if isinstance(citations, dict) and citations.get("enabled"):
                return True
    return False


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client killed mid-request is not a test failure by itself


class FakeAnthropic:
    """``with FakeAnthropic(script) as api:`` … ``api.base_url``, ``api.requests``."""

    def __init__(
        self,
        script: Script,
        *,
        usage: str = "fixed",
        strict: bool = False,
        retired: frozenset[str] = frozenset(),
        thinking_tokens: int = THINKING_TOKENS,
        batch_polls: int = 1,
        finished_before_cancel: int | None = None,
        batch_poll_errors: int = 0,
    ) -> None:
        self.script = script
        self.usage_mode = usage
        self.strict = strict
        self.retired = retired
        self.thinking_tokens = thinking_tokens
        self.batch_polls = batch_polls
        self.finished_before_cancel = finished_before_cancel
        self.batch_poll_errors = batch_poll_errors
        self.requests: list[Request] = []
        #: The usage of every reply sent (in order), with ``model`` and ``batch`` added.
        self.billed: list[dict[str, Any]] = []
        self._cached: set[str] = set()
        self._batches: dict[str, _Batch] = {}
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def _record(self) -> Request:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                request = Request(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body
                )
                with fake._lock:
                    fake.requests.append(request)
                return request

            def _send(self, status: int, payload: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("request-id", f"req_{uuid.uuid4().hex[:24]}")
                self.end_headers()
                self.wfile.write(payload)

            def _json(self, status: int, value: Any) -> None:
                self._send(status, json.dumps(value).encode(), "application/json")

            def _not_found(self) -> None:
                self._json(
                    404,
                    {"type": "error", "error": {"type": "not_found_error", "message": "not found"}},
                )

            def do_POST(self) -> None:
                request = self._record()
                path = self.path.split("?")[0]
                body = request.body if isinstance(request.body, dict) else {}
                if path == "/v1/messages/count_tokens":
                    self._json(200, {"input_tokens": len(json.dumps(body)) // 4})
                elif request.is_messages:
                    reply = fake.unauthenticated(request) or fake.refusal(body) or fake.answer(body)
                    if reply.delay_s:
                        time.sleep(reply.delay_s)
                    if reply.status != 200:
                        self._error(reply)
                    elif reply.raw is not None:
                        self._send(200, reply.raw, "application/json")
                    else:
                        message = fake.message(body, reply)
                        if body.get("stream"):
                            self._send(200, sse(message), "text/event-stream")
                        else:
                            self._json(200, message)
                elif path == "/v1/messages/batches":
                    self._json(200, fake.create_batch(body))
                elif path.startswith("/v1/messages/batches/") and path.endswith("/cancel"):
                    self._json(200, fake.cancel_batch(path.split("/")[4]))
                else:
                    self._not_found()

            def _error(self, reply: Reply) -> None:
                payload = json.dumps(
                    {"type": "error", "error": {"type": reply.error_type, "message": reply.message}}
                ).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("request-id", f"req_{uuid.uuid4().hex[:24]}")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                self._record()
                parts = self.path.split("?")[0].strip("/").split("/")
                if parts[:3] == ["v1", "messages", "batches"] and len(parts) == 4:
                    polled = fake.poll_batch(parts[3])
                    if isinstance(polled, Reply):
                        self._error(polled)
                    else:
                        self._json(200, polled)
                elif parts[:3] == ["v1", "messages", "batches"] and parts[4:] == ["results"]:
                    lines = fake.batch_results(parts[3])
                    if lines is None:
                        self._error(error(400, message="the batch has not ended"))
                        return
                    payload = "".join(json.dumps(line) + "\n" for line in lines).encode()
                    self._send(200, payload, "application/binary")
                else:
                    self._not_found()

            def do_HEAD(self) -> None:
                self._record()
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_CONNECT(self) -> None:
                self._record()
                self.send_response(403)
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.port = int(self.httpd.server_address[1])
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    # --- replies ----------------------------------------------------------------------------

    def answer(self, body: dict[str, Any]) -> Reply:
        got = self.script(body)
        if isinstance(got, Reply):
            return got
        return Reply(blocks=got or [text("ok")])

    def unauthenticated(self, request: Request) -> Reply | None:
        """A request without a key (``x-api-key``, or the SDK's ``Authorization: Bearer``), as the
        API answers it (strict mode)."""
        if self.strict and not (
            request.headers.get("x-api-key") or request.headers.get("authorization")
        ):
            return error(401, message="x-api-key header is required")
        return None

    def refusal(self, body: dict[str, Any]) -> Reply | None:
        """The error the API answers ``body`` with before any model reads it (strict mode)."""
        if not self.strict:
            return None
        model = str(body.get("model", ""))
        if model not in served_models() or model in self.retired:
            return error(404, message=f"model: {model}")
        for index, tool in enumerate(body.get("tools") or []):
            kind = str(tool.get("type", "")) if isinstance(tool, dict) else ""
            if kind in DYNAMIC_SEARCH and model in NO_DYNAMIC_SEARCH:
                return error(
                    400, message=f"tools.{index}: '{kind}' is not supported on model '{model}'"
                )
        thinking = body.get("thinking")
        if isinstance(thinking, dict):
            kind = str(thinking.get("type"))
            accepted = THINKING_BY_MODEL.get(model, (False, frozenset({kind})))[1]
            if kind not in accepted:
                return error(400, message=f'"thinking.type.{kind}" is not supported for this model')
            budget = thinking.get("budget_tokens")
            if kind == "enabled" and not (
                isinstance(budget, int) and 1024 <= budget < int(body.get("max_tokens") or 0)
            ):
                return error(400, message="thinking.budget_tokens: must be ≥ 1024 and < max_tokens")
        if output_schema(body) is not None and _cites(body):
            return error(400, message="citations cannot be enabled together with structured output")
        return None

    def _thinks(self, body: dict[str, Any]) -> int:
        """The output tokens the model thinks before answering ``body`` (0: it does not)."""
        if not self.strict:
            return 0
        thinking = body.get("thinking")
        model = str(body.get("model", ""))
        if not isinstance(thinking, dict):
            return self.thinking_tokens if THINKING_BY_MODEL.get(model, (False,))[0] else 0
        kind = thinking.get("type")
        if kind == "adaptive":
            return self.thinking_tokens
        if kind == "enabled":
            return min(self.thinking_tokens, int(thinking.get("budget_tokens") or 0))
        return 0

    def message(self, body: dict[str, Any], reply: Reply, *, batch: bool = False) -> dict[str, Any]:
        blocks = reply.blocks or [text("ok")]
        stop = reply.stop_reason
        thought = self._thinks(body)
        answered = _tokens(blocks)
        limit = int(body.get("max_tokens") or 0)
        if thought:
            think = {"type": "thinking", "thinking": "", "signature": "c2lnbmF0dXJl"}
            if thought + answered > limit:  # the think ate the answer's room: cut at max_tokens
                blocks, stop, answered = [think], "max_tokens", max(0, limit - thought)
                thought = min(thought, limit)
            else:
                blocks = [think, *blocks]
        elif self.strict and limit and answered > limit and stop is None:
            # An answer longer than max_tokens is cut there, mid-text, as the API cuts it.
            said = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
            blocks, stop, answered = [text(said[: limit * 4])], "max_tokens", limit
        usage = reply.usage
        if usage is None and self.usage_mode == "measured":
            usage = self._measure(body, blocks, thought + answered)
        elif usage is None and thought:
            usage = {"input_tokens": 10, "output_tokens": thought + answered}
        message = _message(blocks, str(body.get("model", "claude-fake")), stop, usage)
        with self._lock:
            self.billed.append({**message["usage"], "model": message["model"], "batch": batch})
        return message

    def _min_cacheable(self, body: dict[str, Any]) -> int:
        if not self.strict:
            return MIN_CACHEABLE
        return MIN_CACHEABLE_BY_MODEL.get(str(body.get("model", "")), 1024)

    def _measure(
        self, body: dict[str, Any], blocks: list[Block], output: int | None = None
    ) -> dict[str, Any]:
        total = _tokens({k: v for k, v in body.items() if k not in ("stream", "max_tokens")})
        prefix = _prefix(body)
        write = read = 0
        if prefix is not None and _tokens(prefix) >= self._min_cacheable(body):
            key = json.dumps(prefix, sort_keys=True)
            with self._lock:
                hit = key in self._cached
                self._cached.add(key)
            if hit:
                read = _tokens(prefix)
            else:
                write = _tokens(prefix)
        searches = sum(
            1
            for b in blocks
            if b.get("type") == "server_tool_use" and b.get("name") == "web_search"
        )
        usage: dict[str, Any] = {
            "input_tokens": max(1, total - write - read),
            "output_tokens": _tokens(blocks) if output is None else output,
            "cache_creation_input_tokens": write,
            "cache_read_input_tokens": read,
        }
        if searches:
            usage["server_tool_use"] = {"web_search_requests": searches, "web_fetch_requests": 0}
        return usage

    # --- Message Batches ---------------------------------------------------------------------

    def create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        batch_id = f"msgbatch_{uuid.uuid4().hex[:20]}"
        lines = []
        for item in body.get("requests") or []:
            params = item.get("params") or {}
            reply = self.refusal(params) or self.answer(params)
            if reply.batch_result is not None:
                result: dict[str, Any] = {"type": reply.batch_result}
            elif reply.status != 200:
                result = {
                    "type": "errored",
                    "error": {
                        "type": "error",
                        "error": {"type": reply.error_type, "message": reply.message},
                    },
                }
            else:
                result = {"type": "succeeded", "message": self.message(params, reply, batch=True)}
            lines.append({"custom_id": item.get("custom_id"), "result": result})
        with self._lock:
            self._batches[batch_id] = _Batch(lines, polls_left=self.batch_polls)
        return self.batch_status(batch_id)

    def poll_batch(self, batch_id: str) -> dict[str, Any] | Reply:
        """A retrieve: the batch moves on one step (or the poll fails, ``batch_poll_errors``
        times first)."""
        with self._lock:
            if self.batch_poll_errors > 0:
                self.batch_poll_errors -= 1
                return error(529)
            batch = self._batches.get(batch_id)
            if batch is not None and batch.status != "ended":
                if batch.status == "canceling":
                    batch.status = "ended"
                else:
                    batch.polls_left -= 1
                    if batch.polls_left <= 0:
                        batch.status = "ended"
        return self.batch_status(batch_id)

    def cancel_batch(self, batch_id: str) -> dict[str, Any]:
        with self._lock:
            batch = self._batches.get(batch_id)
            if batch is not None and batch.status == "in_progress":
                batch.status = "canceling"
                finished = self.finished_before_cancel
                for index, line in enumerate(batch.lines):
                    if finished is not None and index >= finished:
                        line["result"] = {"type": "canceled"}
        return self.batch_status(batch_id)

    def batch_results(self, batch_id: str) -> list[dict[str, Any]] | None:
        batch = self._batches.get(batch_id)
        if batch is not None and self.strict and batch.status != "ended":
            return None
        return batch.lines if batch is not None else []

    def batch_status(self, batch_id: str) -> dict[str, Any]:
        batch = self._batches.get(batch_id) or _Batch([], 0)
        if not self.strict:
            batch.status = "ended"  # the lenient fake ends a batch at its creation
        ended = batch.status == "ended"
        counts = {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for line in batch.lines:
            kind = str(line["result"]["type"])
            counts["processing" if not ended else kind] += 1
        return {
            "id": batch_id,
            "type": "message_batch",
            "processing_status": batch.status,
            "request_counts": counts,
            "created_at": "2026-01-01T00:00:00Z",
            "ended_at": "2026-01-01T00:00:01Z" if ended else None,
            "expires_at": "2026-01-02T00:00:00Z",
            "cancel_initiated_at": None,
            "archived_at": None,
            "results_url": (
                f"{self.base_url}/v1/messages/batches/{batch_id}/results" if ended else None
            ),
        }

    @property
    def messages(self) -> list[Request]:
        """The recorded ``POST /v1/messages`` requests, in arrival order."""
        with self._lock:
            return [request for request in self.requests if request.is_messages]

    def __enter__(self) -> FakeAnthropic:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class StrictAnthropic(FakeAnthropic):
    """The fake as strict as the API (``strict=True``): what every runner test talks to."""

    def __init__(self, script: Script, **knobs: Any) -> None:
        super().__init__(script, **{"strict": True, **knobs})
