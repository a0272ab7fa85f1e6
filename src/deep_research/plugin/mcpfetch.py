"""``deep-research mcp-fetch``: one MCP tool call, gated and retained like a page fetch.

The three gates of :mod:`deep_research.plugin.mcpgate` run as code in the same command, before the
call: least privilege and the version pin before the server starts, then the reported version
and the manifest fingerprint on the very session that will make the call — so a server whose
tool list changed since review is never called, whatever a prompt says. A failed gate is
logged as a refusal and returned as ``{"error": "<gate>-failed", "reason": …}``; there is no
fallback path here (the orchestrator decides what to dispatch instead).

A successful call's text is stored in the brief's corpus (content-addressed, like a page) and
logged in fetch-log.jsonl under the identity ``mcp://<server>/<tool>?<sorted arguments>``
(:func:`deep_research.urls.mcp_identity`), so the trace gate finds a finding's quote in exactly
the text the tool returned. Only text content counts; a result over the page byte cap, a tool
error or a timeout is logged as an error and retains nothing.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deep_research.brief.layout import Brief
from deep_research.errors import InputError
from deep_research.fetch import fetchlog
from deep_research.fetch.corpus import retain_document
from deep_research.fetch.fetcher import MAX_BODY_BYTES, FetchResult
from deep_research.models import FetchLogEntry
from deep_research.plugin.mcpgate import (
    DEFAULT_TIMEOUT_S,
    SECRET_NAME,
    GateFailed,
    LaunchSpec,
    Manifest,
    check_least_privilege,
    check_manifest,
    check_version_pin_spec,
    check_version_reported,
    child_environment,
    load_spec,
    open_session,
    read_manifest,
)
from deep_research.urls import InvalidURL, mcp_identity

if TYPE_CHECKING:
    from mcp import ClientSession


@dataclass(frozen=True)
class Called:
    """What the session produced: a gate failure, or the tool's text (or its error)."""

    gate: GateFailed | None = None
    text: str | None = None
    error: str | None = None
    unknown_tool: str | None = None  # the server's tool names, when the tool is not among them


def parse_arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputError(
            f'--arguments is not JSON ({exc.msg}); give an object, e.g. \'{{"query": "…"}}\''
        ) from None
    if not isinstance(value, dict):
        raise InputError("--arguments must be a JSON object of the tool's arguments")
    return value


def result_text(result: Any) -> str:
    """The text blocks of a tool result (text content and embedded text resources), joined."""
    parts: list[str] = []
    for block in getattr(result, "content", None) or []:
        text = getattr(block, "text", None)
        resource = getattr(block, "resource", None)
        if isinstance(text, str):
            parts.append(text)
        elif resource is not None and isinstance(getattr(resource, "text", None), str):
            parts.append(resource.text)
    return "\n\n".join(part for part in parts if part.strip())


async def _gate_then_call(
    session: ClientSession,
    spec: LaunchSpec,
    state: Path,
    tool: str,
    arguments: dict[str, Any],
) -> Called:
    manifest: Manifest = await read_manifest(session)
    try:
        check_version_reported(spec, manifest)
        check_manifest(state, spec.name, manifest.tools)
    except GateFailed as failed:
        return Called(gate=failed)
    if tool not in {t["name"] for t in manifest.tools}:
        # Returned, not raised: inside the session's task group it would arrive wrapped.
        return Called(unknown_tool=", ".join(sorted(t["name"] for t in manifest.tools)))
    result = await session.call_tool(tool, arguments)
    text = result_text(result)
    if getattr(result, "is_error", False):
        # Its words are not kept or shown: a server's message may quote its environment.
        return Called(error=f"the tool reported an error ({len(text)} characters withheld)")
    if not text.strip():
        return Called(error="the tool returned no text")
    return Called(text=text)


def call_gated(
    spec: LaunchSpec,
    state: Path,
    tool: str,
    arguments: dict[str, Any],
    environ: Mapping[str, str],
    timeout: float,
) -> Called:
    """Start the server, gate it, call the tool once — all within ``timeout`` seconds."""
    import anyio

    async def run() -> Called:
        with anyio.fail_after(timeout):
            env = child_environment(spec, environ)
            async with open_session(spec, env, errlog) as session:
                return await _gate_then_call(session, spec, state, tool, arguments)

    with open(os.devnull, "w", encoding="utf-8") as errlog:
        try:
            return anyio.run(run)
        except TimeoutError:
            return Called(error=f"no answer within {timeout:g}s")
        except Exception as error:
            # Types only: a server's message may quote its environment.
            return Called(error=f"the server failed ({type(error).__name__})")


def run_mcp_fetch(
    name: str,
    tool: str,
    arguments: dict[str, Any],
    root: Path,
    state: Path,
    *,
    timeout: float = DEFAULT_TIMEOUT_S,
    environ: Mapping[str, str] | None = None,
) -> tuple[FetchResult, GateFailed | None]:
    """One gated MCP tool call into the brief at ``root``; the logged result and any gate
    failure. InputError for a bad config, an unknown tool or arguments with no identity."""
    if timeout <= 0:
        raise InputError("--timeout must be a positive number of seconds")
    if root.exists() and not root.is_dir():
        raise InputError(f"--brief {root} is not a directory; give the brief directory")
    spec = load_spec(state, name)
    secret = sorted(key for key in arguments if SECRET_NAME.search(key))
    if secret:
        # The arguments become the result's identity, kept in the brief's logs and sources.
        raise InputError(
            f"argument {secret[0]!r} looks like a credential; credentials reach an "
            "MCP server only through its declared environment (mcp-config.json)"
        )
    try:
        identity = mcp_identity(name, tool, arguments)
    except InvalidURL as exc:
        raise InputError(f"cannot name this call's result: {exc}") from None
    brief = Brief(root)
    started = time.monotonic()
    try:
        check_least_privilege(spec)  # first: a failing spec must never start with a secret
        check_version_pin_spec(spec)
        called = call_gated(
            spec, state, tool, arguments, os.environ if environ is None else environ, timeout
        )
    except GateFailed as failed:
        called = Called(gate=failed)
    if called.unknown_tool is not None:
        raise InputError(
            f"MCP server {name} has no tool {tool!r}; its tools: {called.unknown_tool}"
        )
    now = datetime.now(UTC).replace(microsecond=0)
    elapsed = int((time.monotonic() - started) * 1000)
    adapter = f"mcp:{name}"
    if called.gate is not None:
        reason = f"{called.gate.name}-failed: {called.gate.detail}"
        entry = FetchLogEntry(
            url=identity,
            outcome="refused",
            reason=reason,
            retrieved_at=now,
            duration_ms=elapsed,
            adapter=adapter,
        )
        fetchlog.append(brief, entry)
        return FetchResult(entry), called.gate
    text = called.text or ""
    size = len(text.encode("utf-8"))
    if called.error is None and size > MAX_BODY_BYTES:
        called = Called(error=f"{size} bytes, over the {MAX_BODY_BYTES}-byte cap")
    if called.error is not None:
        entry = FetchLogEntry(
            url=identity,
            outcome="error",
            reason=called.error,
            retrieved_at=now,
            duration_ms=elapsed,
            adapter=adapter,
        )
        fetchlog.append(brief, entry)
        return FetchResult(entry), None
    stored, entry = retain_document(
        brief,
        identity,
        text,
        extractor=adapter,
        adapter=adapter,
        retrieved_at=now,
        duration_ms=elapsed,
    )
    return FetchResult(entry, text, stored.path), None
