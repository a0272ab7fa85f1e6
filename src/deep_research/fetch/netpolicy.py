"""Which network targets are reachable: the rules, checked without opening a socket.

A research run fetches URLs a model chose, so every URL is hostile until checked. These are the
pure checks — no DNS, no sockets — shared by the fetcher's connection guard
(:mod:`deep_research.fetch.netguard`, which applies them again to every resolved address at connect
time) and by the hook guard, which must decide fast.

Refused:

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
import ipaddress
import re
import ssl
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from deep_research.errors import TargetRefused
from deep_research.urls import InvalidURL, canonicalize, has_userinfo, redact

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
    if has_userinfo(url):
        # First, in every spelling (``http:\\user:pw@``, ``HTTP:/user:pw@``): the parsers'
        # messages below quote the URL, and must never quote credentials.
        raise TargetRefused(
            "credentials_in_url", "a URL carrying a user name or password is refused"
        )
    try:
        canonical = canonicalize(url)
    except InvalidURL as exc:
        reason = "scheme" if "scheme" in str(exc) else "bad_url"
        raise TargetRefused(reason, redact(str(exc))) from None
    import httpx2  # the parser the transport uses; imported only when a URL is checked

    try:
        parsed = httpx2.URL(url.strip())
    except (httpx2.InvalidURL, ValueError) as exc:
        raise TargetRefused("bad_url", redact(str(exc)[:200])) from None
    if parsed.scheme not in ALLOWED_SCHEMES:
        raise TargetRefused("scheme", f"scheme {parsed.scheme!r} is not http or https")
    authority = _AUTHORITY_END.split(url.strip().split("//", 1)[-1], maxsplit=1)[0]
    if parsed.userinfo or "@" in authority:
        # Never echo the credentials themselves into the log.
        raise TargetRefused(
            "credentials_in_url", "a URL carrying a user name or password is refused"
        )
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
