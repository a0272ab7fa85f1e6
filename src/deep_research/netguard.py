"""Which network targets the fetcher may contact, enforced where the socket is opened.

A research run fetches URLs a model chose, so every URL is hostile until checked. Checks run
twice on the same rules: before a request is built (:func:`check_url`, for a clear refusal
reason) and inside the HTTP stack's network backend (:class:`GuardedBackend`), which resolves
the host once, refuses unless *every* address is public, then connects to the address it
checked — so a DNS answer that changes between check and connect (rebinding) cannot slip in.

Refused before any socket is opened:

* schemes other than ``http``/``https``; credentials (userinfo) in the URL; a backslash in the
  authority (parsers disagree on where the host ends); ports outside :data:`DEFAULT_PORTS`
  unless the policy allows them;
* names: ``localhost`` and ``*.localhost``, ``*.internal``, ``*.local``, ``*.localdomain``,
  ``*.home.arpa``, cloud metadata names, and single-label names (resolved through search
  domains, i.e. to the local network); a numeric last label that is not a plain dotted quad
  (``2130706433``, ``0x7f.1``, ``0177.0.0.1`` — the C resolver reads those as addresses);
* addresses that are not globally routable: loopback, RFC 1918, link-local (incl.
  169.254.169.254), CGNAT 100.64/10, 0.0.0.0/8, 198.18/15, multicast, reserved, unspecified,
  and IPv6 forms that embed one of those (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96,
  6to4 2002::/16).

The only exception is an explicit private-CIDR allow-list (default empty), which exists so tests
can fetch from loopback servers; the fetcher writes it into every fetch-log entry when set.
:func:`disable_network` makes every check refuse: offline re-verification cannot reach a socket.
"""

from __future__ import annotations

import contextlib
import contextvars
import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpcore2
import httpx2

from deep_research.errors import TargetRefused
from deep_research.urls import InvalidURL, canonicalize

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
#: host, port → the addresses the name resolves to (strings, as getaddrinfo returns them).
Resolver = Callable[[str, int], list[str]]

DEFAULT_PORTS: frozenset[int] = frozenset({80, 443})
ALLOWED_SCHEMES: frozenset[str] = frozenset({"http", "https"})
BLOCKED_NAMES: frozenset[str] = frozenset(
    {
        "localhost",
        "metadata.google.internal",  # GCP metadata
        "metadata.goog",
        "metadata.azure.com",
        "instance-data.ec2.internal",  # AWS metadata
    }
)
BLOCKED_SUFFIXES: tuple[str, ...] = (
    ".localhost",
    ".internal",
    ".local",
    ".localdomain",
    ".home.arpa",
)
#: A DNS lookup longer than this is abandoned (the C resolver's own retries can take 30 s).
RESOLVE_TIMEOUT_S = 5.0

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SIXTOFOUR = ipaddress.IPv6Network("2002::/16")
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")
_AUTHORITY_END = re.compile(r"[/?#]")

# The offline switch is process-wide on purpose: offline verification must not be able to
# reach the network through any fetcher, however it was built.
_network_disabled = threading.Event()


def disable_network() -> None:
    """From now on, in this process, every fetch is refused before any socket is opened."""
    _network_disabled.set()


def enable_network() -> None:
    _network_disabled.clear()


def network_disabled() -> bool:
    return _network_disabled.is_set()


@contextlib.contextmanager
def offline() -> Iterator[None]:
    """No network inside the block; the previous state is restored after it."""
    was_disabled = network_disabled()
    disable_network()
    try:
        yield
    finally:
        if not was_disabled:
            enable_network()


@dataclass(frozen=True)
class NetPolicy:
    """Which targets are reachable. The defaults are the production rules."""

    private_allowlist: tuple[IPNetwork, ...] = ()
    extra_ports: frozenset[int] = frozenset()
    resolver: Resolver | None = None  # None: the system resolver, bounded by a timeout
    # None: the default trust store. Only a library caller can set it (tests trust their own
    # CA); no command-line flag or environment variable reaches it.
    trust: ssl.SSLContext | None = None

    @property
    def ports(self) -> frozenset[int]:
        return DEFAULT_PORTS | self.extra_ports

    def allowlist_labels(self) -> list[str]:
        return [str(network) for network in self.private_allowlist]


def parse_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """``["127.0.0.1/32"]`` → networks; a malformed entry is a ValueError naming it."""
    return tuple(ipaddress.ip_network(value.strip(), strict=False) for value in values)


# --- addresses ------------------------------------------------------------------------------


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address stands for (mapped, compatible, NAT64, 6to4), if any."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return address.sixtofour
    if int(address) >> 32 == 0 and int(address) > 1:
        return ipaddress.IPv4Address(int(address))  # deprecated IPv4-compatible ::a.b.c.d
    return None


def address_problem(address: IPAddress) -> str | None:
    """Why ``address`` is not a public unicast address, or None when it is."""
    # A translated form (mapped, NAT64, 6to4) reaches the IPv4 address it embeds, so that
    # address decides; NAT64 itself sits in the reserved ::/8 range and would always be refused.
    embedded = embedded_ipv4(address)
    translated = isinstance(address, ipaddress.IPv6Address) and (
        address.ipv4_mapped is not None or address in _NAT64 or address.sixtofour is not None
    )
    for candidate in (embedded,) if translated and embedded is not None else (address, embedded):
        if candidate is None:
            continue
        for flag in ("loopback", "unspecified", "link_local", "multicast", "reserved", "private"):
            if getattr(candidate, f"is_{flag}"):
                return f"{flag} address {candidate}"
        if not candidate.is_global:
            return f"non-global address {candidate}"
    return None


def check_address(address: IPAddress, policy: NetPolicy) -> None:
    """Refuse a non-public address unless the explicit private allow-list names it."""
    if network_disabled():
        raise TargetRefused("network_disabled", "offline mode: no network access")
    if any(address in network for network in policy.private_allowlist):
        return
    problem = address_problem(address)
    if problem is not None:
        raise TargetRefused("private_address", problem)


def _loose_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address the C library's inet_aton reads from ``host`` (``127.1``, ``0x7f000001``)."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4:
        return None
    values: list[int] = []
    for part in parts:
        if not part:
            return None
        try:
            if part.startswith("0x"):
                values.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                values.append(int(part, 8))
            else:
                values.append(int(part, 10))
        except ValueError:
            return None
    *head, last = values
    if any(value > 255 for value in head) or last >= 256 ** (4 - len(head)):
        return None
    number = 0
    for value in head:
        number = number << 8 | value
    return ipaddress.IPv4Address(number << 8 * (4 - len(head)) | last)


def literal_address(host: str) -> IPAddress | None:
    """The IP address ``host`` spells in any form a resolver accepts, or None for a name."""
    bare = host.strip("[]").lower()
    try:
        return ipaddress.ip_address(bare.split("%", 1)[0])
    except ValueError:
        return _loose_ipv4(bare)


# --- names ----------------------------------------------------------------------------------


def check_host(host: str, policy: NetPolicy) -> IPAddress | None:
    """Refuse a blocked host name or address; return the address when ``host`` is a literal."""
    if network_disabled():
        raise TargetRefused("network_disabled", "offline mode: no network access")
    name = host.strip().lower().rstrip(".")
    if not name:
        raise TargetRefused("bad_url", "no host")
    address = literal_address(name)
    if address is not None:
        check_address(address, policy)
        return address
    labels = name.split(".")
    if all(_NUMERIC_LABEL.match(label) for label in labels) or _NUMERIC_LABEL.match(labels[-1]):
        # Numeric but not an address we could parse: resolvers disagree on such forms.
        raise TargetRefused("ambiguous_numeric_host", name)
    if name in BLOCKED_NAMES or name.endswith(BLOCKED_SUFFIXES):
        raise TargetRefused("blocked_name", name)
    if len(labels) == 1:
        raise TargetRefused("blocked_name", f"single-label host {name} resolves locally")
    return None


@dataclass(frozen=True)
class CheckedURL:
    url: str  # as httpx2 will send it
    scheme: str
    host: str
    port: int


def check_url(url: str, policy: NetPolicy) -> CheckedURL:
    """Pre-flight: every rule that needs no DNS. Raises :class:`TargetRefused`."""
    if network_disabled():
        raise TargetRefused("network_disabled", "offline mode: no network access")
    try:
        canonical = canonicalize(url)
    except InvalidURL as exc:
        reason = "scheme" if "scheme" in str(exc) else "bad_url"
        raise TargetRefused(reason, str(exc)) from None
    try:
        parsed = httpx2.URL(url.strip())
    except (httpx2.InvalidURL, ValueError) as exc:
        raise TargetRefused("bad_url", str(exc)[:200]) from None
    if parsed.scheme not in ALLOWED_SCHEMES:
        raise TargetRefused("scheme", f"scheme {parsed.scheme!r} is not http or https")
    authority = _AUTHORITY_END.split(url.strip().split("//", 1)[-1], maxsplit=1)[0]
    if parsed.userinfo or "@" in authority:
        # Never echo the credentials themselves into the log.
        raise TargetRefused("credentials_in_url", "URLs with user:password@ are refused")
    host = parsed.host
    # Both parsers must agree on the host, or one of them is being fooled.
    canonical_host = httpx2.URL(canonical).host
    if host.strip("[]").lower() != canonical_host.strip("[]").lower():
        raise TargetRefused("bad_url", f"ambiguous host ({host!r} vs {canonical_host!r})")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    if port not in policy.ports:
        raise TargetRefused("port", f"port {port} is not allowed (only {sorted(policy.ports)})")
    check_host(host, policy)
    return CheckedURL(str(parsed), parsed.scheme, host, port)


# --- resolution and connection ---------------------------------------------------------------


def system_resolver(host: str, port: int) -> list[str]:
    """getaddrinfo in a daemon thread, abandoned after :data:`RESOLVE_TIMEOUT_S`."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            box["addresses"] = [str(info[4][0]) for info in infos]
        except OSError as exc:
            box["error"] = exc

    worker = threading.Thread(target=run, name="resolve", daemon=True)
    worker.start()
    worker.join(RESOLVE_TIMEOUT_S)
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
    found = [literal_address(address) for address in resolver(host, port)]
    addresses = [address for address in found if address is not None]
    if not addresses:
        raise httpcore2.ConnectError(f"{host} has no address")
    for address in addresses:
        check_address(address, policy)
    return addresses[0]


# The whole request (all hops) must end by this monotonic time; every socket operation is
# clamped to it, so no server can hold a fetch open by trickling bytes.
_deadline: contextvars.ContextVar[float | None] = contextvars.ContextVar("deadline", default=None)


def set_deadline(deadline: float | None) -> contextvars.Token[float | None]:
    return _deadline.set(deadline)


def reset_deadline(token: contextvars.Token[float | None]) -> None:
    _deadline.reset(token)


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
