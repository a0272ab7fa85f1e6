"""``deep-research mcp-gate``: the three MCP security gates, run as code before any MCP tool call.

An MCP server is launched from its spec in ``<state>/mcp-config.json``::

    {"servers": {"docs": {"command": "uvx", "args": ["docs-mcp==1.2.3"],
                          "env": ["DOCS_TOKEN"], "credentials": ["DOCS_TOKEN"],
                          "version": "1.2.3"}}}

``env`` names the variables passed through from our environment (names only: a value in the
config file would be a secret at rest); ``credentials`` declares which of them are the server's
least-privilege credentials; ``version`` (optional) is the version the server must report.

The gates, cheapest and most protective first:

* ``least-privilege`` — checked before the server starts, so a failing spec never receives a
  secret: every variable the child would get that looks like a secret must be declared.
* ``version-pin`` — the spec pins an exact version (``pkg==1.2.3``, ``pkg@1.2.3``, or a
  ``version`` field, which must then equal the version the server reports at initialize).
* ``manifest-audit`` — the tool names and input schemas hash to the fingerprint a human
  reviewed (``<state>/mcp-manifests/<name>.fingerprint.json``). ``--record`` writes it.

A gate that cannot decide (the server hangs, crashes, or speaks no MCP) fails: closed, never open.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from deep_research.brief.readers import parse_json, read_text
from deep_research.brief.writers import atomic_write_json
from deep_research.errors import InputError, Stopped

if TYPE_CHECKING:
    from mcp import ClientSession

    from deep_research.brief.trace_phases import McpGatePhase
    from deep_research.models import TraceEntryName

#: A server that has not listed its tools by then fails the manifest audit instead of hanging us.
DEFAULT_TIMEOUT_S = 30.0
#: Server names become file names; this keeps them from naming a path outside mcp-manifests/.
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
#: An exact version: digits and dots, optionally a pre/post/local tag. No ranges, no "latest".
EXACT_VERSION = r"v?\d+(?:\.\d+)+(?:[-+._]?[A-Za-z0-9]+)*"
VERSION_FIELD = re.compile(rf"^{EXACT_VERSION}$")
#: A pinned package argument: ``pkg==1.2.3``, ``pkg[extra]==1.2.3``, ``pkg@1.2.3``,
#: ``@scope/pkg@1.2.3``. ``>=``, ``~=``, ``^`` and ``@latest`` do not match.
PINNED_ARG = re.compile(
    rf"^(?:@[\w.-]+/)?[A-Za-z0-9][\w.-]*(?:\[[\w,.-]+\])?(?:==|@){EXACT_VERSION}$"
)
#: Names that carry a secret by convention. A false positive only asks for a declaration.
SECRET_NAME = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE|CREDENTIAL|AUTH|"
    r"COOKIE|SESSION|_PAT$|_KEY$|^KEY$|DSN|CONN(?:ECTION)?_?STR",
    re.IGNORECASE,
)


class GateFailed(Stopped):
    """One gate said no: ``name`` is the gate's, ``detail`` why."""


@dataclass(frozen=True)
class LaunchSpec:
    name: str
    command: str
    args: tuple[str, ...]
    env: tuple[str, ...]
    credentials: frozenset[str]
    version: str | None


@dataclass(frozen=True)
class Manifest:
    """What the server said about itself: its reported version and its tools."""

    server_version: str | None
    tools: tuple[dict[str, Any], ...] = field(default=())


@dataclass(frozen=True)
class GateResult:
    name: str
    fingerprint: str | None = None
    gate: str | None = None
    reason: str = ""
    tools: tuple[dict[str, Any], ...] = ()
    recorded: Path | None = None

    @property
    def ok(self) -> bool:
        return self.gate is None

    def record(self) -> McpGatePhase:
        """The result as trace.json ``phases.mcp_gate`` holds it (and the command prints it)."""
        from deep_research.brief.trace_phases import McpGatePhase

        if not self.ok:
            return McpGatePhase(error=f"{self.gate}-failed", reason=self.reason)
        passed = McpGatePhase(
            ok=True,
            name=self.name,
            fingerprint=self.fingerprint,
            tools=[tool["name"] for tool in self.tools],
        )
        if self.recorded is None:
            return passed
        return passed.model_copy(update={"recorded": str(self.recorded)})

    def as_dict(self) -> dict[str, Any]:
        return self.record().entry()


# --- config ---------------------------------------------------------------------------------


def config_path(state: Path) -> Path:
    return state / "mcp-config.json"


def fingerprint_path(state: Path, name: str) -> Path:
    return state / "mcp-manifests" / f"{name}.fingerprint.json"


def _names(value: Any, what: str) -> tuple[str, ...]:
    # Names only: an object of values here would keep a secret in the config file.
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise InputError(f"{what} must be a list of environment variable names")
    return tuple(value)


def parse_spec(name: str, config: Any) -> LaunchSpec:
    """The launch spec of ``name``, or an InputError naming the field that is wrong."""
    servers = config.get("servers") if isinstance(config, dict) else None
    if not isinstance(servers, dict):
        raise InputError('mcp-config.json needs a "servers" object')
    raw = servers.get(name)
    if not isinstance(raw, dict):
        raise InputError(f"no MCP server {name!r} in mcp-config.json")
    command, args = raw.get("command"), raw.get("args", [])
    if not isinstance(command, str) or not command:
        raise InputError(f"servers.{name}.command must be a non-empty string")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise InputError(f"servers.{name}.args must be a list of strings")
    version = raw.get("version")
    if version is not None and not isinstance(version, str):
        raise InputError(f"servers.{name}.version must be a string")
    return LaunchSpec(
        name=name,
        command=command,
        args=tuple(args),
        env=_names(raw.get("env", []), f"servers.{name}.env"),
        credentials=frozenset(_names(raw.get("credentials", []), f"servers.{name}.credentials")),
        version=version,
    )


def load_spec(state: Path, name: str) -> LaunchSpec:
    if not NAME.match(name):
        raise InputError(f"MCP server name {name!r} must be letters, digits, '.', '_' or '-'")
    path = config_path(state)
    return parse_spec(name, parse_json(read_text(path, what="MCP config"), what=str(path)))


# --- gate: least privilege ------------------------------------------------------------------


def inherited_names() -> tuple[str, ...]:
    """Variables the SDK itself passes to every stdio server (PATH, HOME, …), for the check."""
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

    return tuple(DEFAULT_INHERITED_ENV_VARS)


def child_environment(spec: LaunchSpec, environ: Mapping[str, str]) -> dict[str, str]:
    """The server's environment, built from an allow-list: never a copy of ours."""
    allowed = (*inherited_names(), *spec.env)
    return {key: environ[key] for key in allowed if key in environ}


def check_least_privilege(spec: LaunchSpec) -> None:
    passed = (*inherited_names(), *spec.env)
    undeclared = sorted({n for n in passed if SECRET_NAME.search(n) and n not in spec.credentials})
    if undeclared:
        raise GateFailed(
            "least-privilege",
            f"would pass undeclared secret(s) {', '.join(undeclared)}; declare them in "
            "credentials after review, or drop them from env",
        )


# --- gate: version pin ----------------------------------------------------------------------


def check_version_pin_spec(spec: LaunchSpec) -> None:
    """Before starting: the spec pins an exact version somewhere."""
    if spec.version is not None:
        if not VERSION_FIELD.match(spec.version):
            raise GateFailed("version-pin", f"version {spec.version!r} is not an exact version")
        return
    if not any(PINNED_ARG.match(arg) for arg in spec.args):
        raise GateFailed(
            "version-pin",
            "launch spec pins no exact version (pkg==X.Y.Z, pkg@X.Y.Z, or a version field)",
        )


def check_version_reported(spec: LaunchSpec, manifest: Manifest) -> None:
    """After initialize: a ``version`` field must be what the running server says it is."""
    if spec.version is not None and manifest.server_version != spec.version:
        raise GateFailed(
            "version-pin",
            f"server reports version {manifest.server_version!r}, the spec pins {spec.version!r}",
        )


# --- gate: manifest audit -------------------------------------------------------------------


def canonical_tools(tools: Sequence[tuple[str, str, Any]]) -> list[dict[str, Any]]:
    """Name, description and input schema of each tool, sorted by name: the reviewed surface.

    The description is part of it because it reaches the model verbatim: a server that changes a
    description can slip instructions in without touching a schema.
    """
    return [
        {"name": name, "description": description, "input_schema": schema}
        for name, description, schema in sorted(tools, key=lambda t: t[0])
    ]


def fingerprint(tools: Sequence[dict[str, Any]]) -> str:
    # Sorted keys and fixed separators: the same tools hash the same whatever order they came in.
    text = json.dumps(list(tools), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_recorded(state: Path, name: str) -> dict[str, Any] | None:
    path = fingerprint_path(state, name)
    if not path.exists():
        return None
    recorded = parse_json(read_text(path, what="MCP fingerprint"), what=str(path))
    if not isinstance(recorded, dict) or not isinstance(recorded.get("fingerprint"), str):
        raise InputError(f"{path} has no fingerprint string; record it again with --record")
    return recorded


def describe_drift(recorded: dict[str, Any], tools: Sequence[dict[str, Any]]) -> str:
    """Which tools were added, removed or changed — names only, so the reason stays one line."""
    before = {t.get("name"): t for t in recorded.get("tools", []) if isinstance(t, dict)}
    now = {t["name"]: t for t in tools}
    parts = [
        f"{label}: {', '.join(sorted(str(n) for n in names))}"
        for label, names in (
            ("added", now.keys() - before.keys()),
            ("removed", before.keys() - now.keys()),
            ("changed", {n for n in now.keys() & before.keys() if now[n] != before[n]}),
        )
        if names
    ]
    return "; ".join(parts) or "the tool list differs from the reviewed one"


def check_manifest(state: Path, name: str, tools: Sequence[dict[str, Any]]) -> str:
    current = fingerprint(tools)
    recorded = read_recorded(state, name)
    if recorded is None:
        raise GateFailed(
            "manifest-audit",
            f"no reviewed fingerprint for {name}; review the tool list, then run "
            f"deep-research mcp-gate {name} --record",
        )
    if recorded["fingerprint"] != current:
        raise GateFailed(
            "manifest-audit",
            "tool list changed since review (" + describe_drift(recorded, tools) + ")",
        )
    return current


def record_manifest(state: Path, name: str, manifest: Manifest) -> Path:
    path = fingerprint_path(state, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(
        path,
        {
            "name": name,
            "fingerprint": fingerprint(manifest.tools),
            "server_version": manifest.server_version,
            "recorded_at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tools": list(manifest.tools),  # kept so a later mismatch can say which tool changed
        },
    )
    return path


# --- the server -----------------------------------------------------------------------------


async def read_manifest(session: ClientSession) -> Manifest:
    """Initialize an open session and list every tool (the manifest the gates judge)."""
    from mcp import types

    init = await session.initialize()
    tools: list[tuple[str, str, Any]] = []
    cursor: str | None = None
    for _ in range(100):  # pages; a server that paginates forever is not waited on either
        page = await session.list_tools(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
        )
        tools += [(t.name, t.description or "", t.input_schema) for t in page.tools]
        cursor = page.next_cursor
        if not cursor:
            break
    return Manifest(init.server_info.version or None, tuple(canonical_tools(tools)))


@asynccontextmanager
async def open_session(
    spec: LaunchSpec, env: dict[str, str], errlog: TextIO
) -> AsyncIterator[ClientSession]:
    """The server started with exactly ``env``, as one client session."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=spec.command, args=list(spec.args), env=env)
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write) as session,
    ):
        yield session


async def _list_manifest(spec: LaunchSpec, env: dict[str, str], errlog: TextIO) -> Manifest:
    async with open_session(spec, env, errlog) as session:
        return await read_manifest(session)


def _leaf_names(error: BaseException) -> str:
    # Exception types only: a server's message may quote its environment, so it is not shown.
    if isinstance(error, BaseExceptionGroup):
        return ", ".join(_leaf_names(e) for e in error.exceptions)
    return type(error).__name__


def _spawn_error(error: BaseException) -> OSError | None:
    if isinstance(error, OSError):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            if (found := _spawn_error(inner)) is not None:
                return found
    return None


def fetch_manifest(spec: LaunchSpec, environ: Mapping[str, str], timeout: float) -> Manifest:
    """Start the server, initialize, list its tools, stop it — all within ``timeout`` seconds."""
    import anyio

    async def run() -> Manifest:
        with anyio.fail_after(timeout):
            return await _list_manifest(spec, child_environment(spec, environ), errlog)

    # The server's stderr is discarded: it may echo its credentials, and we never print those.
    with open(os.devnull, "w", encoding="utf-8") as errlog:
        try:
            return anyio.run(run)
        except TimeoutError:
            raise GateFailed(
                "manifest-audit", f"server did not list its tools within {timeout:g}s"
            ) from None
        except Exception as error:
            if (spawn := _spawn_error(error)) is not None:
                raise InputError(
                    f"cannot start MCP server {spec.name}: {spec.command}: "
                    f"{spawn.strerror or type(spawn).__name__}"
                ) from None
            raise GateFailed(
                "manifest-audit", f"server failed before listing its tools ({_leaf_names(error)})"
            ) from None


# --- the command ----------------------------------------------------------------------------


def run_mcp_gate(
    name: str,
    state: Path,
    *,
    record: bool = False,
    timeout: float = DEFAULT_TIMEOUT_S,
    environ: Mapping[str, str] | None = None,
) -> GateResult:
    """All three gates; the first that fails is the result. InputError for a bad config."""
    if timeout <= 0:
        raise InputError("--timeout must be a positive number of seconds")
    spec = load_spec(state, name)
    manifest: Manifest | None = None
    try:
        check_least_privilege(spec)  # first: a failing spec must never start with a secret
        check_version_pin_spec(spec)
        manifest = fetch_manifest(spec, os.environ if environ is None else environ, timeout)
        check_version_reported(spec, manifest)
        if record:
            path = record_manifest(state, name, manifest)
            return GateResult(
                name, fingerprint(manifest.tools), tools=manifest.tools, recorded=path
            )
        return GateResult(name, check_manifest(state, name, manifest.tools), tools=manifest.tools)
    except GateFailed as failed:
        tools = manifest.tools if manifest is not None else ()
        return GateResult(name, gate=failed.name, reason=failed.detail, tools=tools)


def tool_lines(tools: Sequence[dict[str, Any]]) -> list[str]:
    """The list a human reviews before ``--record``: each tool, its description, its schema."""
    return [
        f"tool {t['name']}: {t['description']!r} {json.dumps(t['input_schema'], sort_keys=True)}"
        for t in tools
    ]


def print_review(result: GateResult) -> None:
    # stderr, looked up at call time: stdout carries only the one JSON object.
    for line in tool_lines(result.tools):
        print(line, file=sys.stderr)


#: Where a run's gate result is recorded (trace.json phases): code writes it, never a model.
GATE_PHASE: TraceEntryName = "mcp_gate"


def record_gate(root: Path, result: GateResult) -> None:
    """Put the gate's result into the run's trace.json, so ``next`` decides from it."""
    from deep_research.brief.record import load_trace_or_empty, open_brief
    from deep_research.brief.writers import model_dump

    brief = open_brief(root)
    with brief.lock():
        trace = load_trace_or_empty(brief).with_phase(GATE_PHASE, result.record())
        atomic_write_json(brief.trace_path, model_dump(trace))
