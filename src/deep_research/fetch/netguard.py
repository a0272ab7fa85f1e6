"""The fetcher's connection guard: the target rules of :mod:`deep_research.fetch.netpolicy`,
enforced
where the socket is opened.

Checks run twice on the same rules: before a request is built
(:func:`~deep_research.fetch.netpolicy.
check_url`, for a clear refusal reason) and inside the HTTP stack's network backend
(:class:`GuardedBackend`), which resolves the host once, refuses unless *every* address is
public, then connects to the address it checked — so a DNS answer that changes between check and
connect (rebinding) cannot slip in. Every lookup, read and write of one fetch ends by one
deadline (:func:`deadline_scope`), which the fetcher's extraction shares.
"""

from __future__ import annotations

import contextlib
import contextvars
import socket
import ssl
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpcore2
import httpx2

from deep_research.errors import TargetRefused
from deep_research.fetch.netpolicy import (
    RESOLVE_TIMEOUT_S,
    IPAddress,
    NetPolicy,
    check_address,
    check_host,
    literal_address,
)


def system_resolver(host: str, port: int) -> list[str]:
    """getaddrinfo in a daemon thread, abandoned after :data:`RESOLVE_TIMEOUT_S` or at the
    fetch's deadline, whichever comes first."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            box["addresses"] = [str(info[4][0]) for info in infos]
        except OSError as exc:
            box["error"] = exc

    worker = threading.Thread(target=run, name="resolve", daemon=True)
    worker.start()
    worker.join(_clamp(RESOLVE_TIMEOUT_S, httpcore2.ConnectTimeout))
    if worker.is_alive():
        raise httpcore2.ConnectTimeout(f"DNS lookup of {host} timed out")
    if "error" in box:
        raise httpcore2.ConnectError(f"DNS lookup of {host} failed: {box['error']}")
    addresses: list[str] = box["addresses"]
    return addresses


def resolve_checked(host: str, port: int, policy: NetPolicy) -> IPAddress:
    """The one address to connect to: every resolved address must pass, or none is used."""
    literal = check_host(host, policy)
    if literal is not None:
        return literal
    resolver = policy.resolver or system_resolver
    try:
        answers = resolver(host, port)
    except OSError as exc:  # a resolver other than the system's may raise socket.gaierror
        raise httpcore2.ConnectError(f"DNS lookup of {host} failed: {exc}") from None
    found = [literal_address(address) for address in answers]
    addresses = [address for address in found if address is not None]
    if not addresses:
        raise httpcore2.ConnectError(f"{host} has no address")
    for address in addresses:
        check_address(address, policy)
    return addresses[0]


# The whole fetch (robots.txt, every hop, extraction) must end by this monotonic time; every
# lookup and socket operation is clamped to it, so no server can hold a fetch open by trickling
# bytes, and no robots.txt gets a budget of its own.
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)


@contextlib.contextmanager
def deadline_scope(seconds: float) -> Iterator[float]:
    """Everything inside ends within ``seconds``, or sooner when an enclosing scope's deadline
    comes first (a robots.txt fetched for a page shares the page's); yields the deadline."""
    outer = _deadline.get()
    deadline = time.monotonic() + seconds
    if outer is not None:
        deadline = min(deadline, outer)
    token = _deadline.set(deadline)
    try:
        yield deadline
    finally:
        _deadline.reset(token)


def remaining() -> float | None:
    """Seconds left before the current deadline (0 once it has passed); None outside a scope."""
    deadline = _deadline.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def _clamp(timeout: float | None, error: type[Exception]) -> float | None:
    deadline = _deadline.get()
    if deadline is None:
        return timeout
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise error("total fetch time exceeded")
    return remaining if timeout is None else min(timeout, remaining)


class DeadlineStream(httpcore2.NetworkStream):
    """A network stream whose every read and write ends by the request's deadline."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clamp(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.NetworkStream:
        clamped = _clamp(timeout, httpcore2.ConnectTimeout)
        return DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, clamped))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


#: Opens the TCP connection to an already-checked address. Module-level so tests can prove
#: that a refused target never reaches it.
def open_connection(
    address: IPAddress, port: int, timeout: float | None, options: Sequence[Any]
) -> httpcore2.NetworkStream:
    return httpcore2.SyncBackend().connect_tcp(
        str(address), port, timeout=timeout, socket_options=options
    )


@dataclass
class GuardedBackend(httpcore2.NetworkBackend):
    """httpcore2 network backend that connects only to addresses the policy accepts."""

    policy: NetPolicy
    connected: list[str] = field(default_factory=list)  # addresses actually dialled

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        if port not in self.policy.ports:
            raise TargetRefused("port", f"port {port} is not allowed")
        address = resolve_checked(host, port, self.policy)
        clamped = _clamp(timeout, httpcore2.ConnectTimeout)
        self.connected.append(str(address))
        return DeadlineStream(open_connection(address, port, clamped, list(socket_options or ())))

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        raise TargetRefused("scheme", "unix sockets are never fetched")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class GuardedTransport(httpx2.HTTPTransport):
    """httpx2's transport over :class:`GuardedBackend`; no proxies, no connection reuse."""

    def __init__(self, policy: NetPolicy) -> None:
        super().__init__(trust_env=False)
        # Verification stays on: the handshake checks the certificate against the URL's host
        # name, while the socket goes to the address the guard checked.
        ssl_context = policy.trust or httpx2.create_ssl_context(trust_env=False)
        self.backend = GuardedBackend(policy)
        # The parent builds its own pool; swap in one whose every connection goes through the
        # guard. Keep-alive is off so each request (hop) connects, and is checked, afresh.
        self._pool = httpcore2.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=4,
            max_keepalive_connections=0,
            network_backend=self.backend,
        )
