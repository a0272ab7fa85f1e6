"""Real HTTP servers on 127.0.0.1, run in threads of the test process, and a socket tripwire.

``LocalServer`` serves a route table (path → :class:`Route`); routes can redirect, stall, trickle
or stream without end, so the fetcher is tested against real sockets, not mocks of our code.
``tripwire`` makes any connection to an address other than the test servers' loopback ports —
and any DNS lookup — fail the test: nothing a test does can leave the machine.
"""

from __future__ import annotations

import random
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from deep_research.fetch.fetcher import FetchPolicy
from deep_research.fetch.netpolicy import NetPolicy, parse_networks


@dataclass
class Route:
    status: int = 200
    body: bytes | str = b""
    content_type: str | None = "text/html; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # before the status line
    endless: bool = False  # stream body chunks until the client goes away
    trickle_s: float = 0.0  # pause between body chunks


#: How long a stalled or endless route goes on: far beyond every deadline a test sets, so a test
#: can bound its wait at a fraction of it and a busy machine's noise never meets the bound.
HANG_S = 20.0


def on_port_80(draws: int = 20) -> tuple[LocalServer, str] | None:
    """A server on port 80 of a 127/8 address drawn at random, and that address: URLs that name
    no port pass the hook's port rule as production URLs do, and parallel runs do not collide.
    None when every address drawn was taken; PermissionError where port 80 needs root."""
    rng = random.Random()
    for _ in range(draws):
        address = f"127.{rng.randint(1, 254)}.{rng.randint(1, 254)}.{rng.randint(2, 254)}"
        try:
            return LocalServer(address=(address, 80)), address
        except PermissionError:
            raise
        except OSError:
            continue  # that address is taken: draw another
    return None


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # clients that time out or get killed mid-request are what these tests do


class LocalServer:
    """A loopback HTTP server; with ``tls`` (a server-side context) it speaks HTTPS. It listens
    on ``address`` (another loopback address and port 80 serve URLs that name no port)."""

    def __init__(
        self, tls: ssl.SSLContext | None = None, address: tuple[str, int] = ("127.0.0.1", 0)
    ) -> None:
        self.scheme = "https" if tls is not None else "http"
        self.routes: dict[str, Route | Callable[[], Route]] = {}
        self.hits: list[str] = []
        self.user_agents: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                server.hits.append(self.path)
                server.user_agents.append(self.headers.get("User-Agent", ""))
                found = server.routes.get(self.path) or server.routes.get(self.path.split("?")[0])
                route = found() if callable(found) else found
                if route is None:
                    route = Route(status=404, body=b"not found", content_type="text/plain")
                try:
                    server.serve(self, route)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    return

        self.httpd = _QuietServer(address, Handler)
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        # A short poll interval: shutdown() waits for it, once per test.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def url(self, path: str = "/", host: str = "127.0.0.1") -> str:
        return f"{self.scheme}://{host}:{self.port}{path}"

    @staticmethod
    def serve(handler: BaseHTTPRequestHandler, route: Route) -> None:
        if route.delay_s:
            time.sleep(route.delay_s)
        body = route.body.encode("utf-8") if isinstance(route.body, str) else route.body
        handler.send_response(route.status)
        if route.content_type is not None:
            handler.send_header("Content-Type", route.content_type)
        for key, value in route.headers.items():
            handler.send_header(key, value)
        if route.endless or route.trickle_s:
            handler.send_header("Connection", "close")
            handler.end_headers()
            chunk = body or b"x" * 65536
            deadline = time.monotonic() + HANG_S
            while time.monotonic() < deadline:
                handler.wfile.write(chunk)
                handler.wfile.flush()
                if route.trickle_s:
                    time.sleep(route.trickle_s)
                if not route.endless and not route.trickle_s:
                    break
            return
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def __enter__(self) -> LocalServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[LocalServer]:
    with LocalServer() as running:
        yield running


@pytest.fixture
def tripwire(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Fail on any DNS lookup, and on any connect except to 127.0.0.1 (the test servers)."""
    reached: list[Any] = []
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else address
        if host != "127.0.0.1":
            reached.append(address)
            raise AssertionError(f"a test tried to connect to {address!r}")
        real_connect(self, address)

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "127.0.0.1":  # a numeric literal: no lookup leaves the process
            return real_getaddrinfo(host, *args, **kwargs)
        reached.append(("dns", host))
        raise AssertionError(f"a test tried to resolve {host!r}")

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return reached


def loopback_policy(
    port: int,
    *,
    resolver: dict[str, list[str]] | None = None,
    trust: ssl.SSLContext | None = None,
    address: str = "127.0.0.1",
    **limits: Any,
) -> FetchPolicy:
    """The only way a test reaches its loopback server (127.0.0.1 unless ``address`` names another
    127/8 address): the explicit private allow-list of that one address, and its port."""
    table = resolver or {}

    def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise AssertionError(f"unexpected DNS lookup of {host!r} in a test")
        return table[host]

    net = NetPolicy(
        private_allowlist=parse_networks([f"{address}/32"]),
        extra_ports=frozenset({port}),
        resolver=resolve,
        trust=trust,
    )
    return FetchPolicy(net=net, **limits)


def words(count: int, seed: str = "alpha") -> str:
    vocabulary = [
        "river",
        "stone",
        "market",
        "policy",
        "growth",
        "harbor",
        "signal",
        "record",
        "winter",
        "garden",
        "ledger",
        "bridge",
        "forest",
        "engine",
        "census",
        seed,
    ]
    return " ".join(vocabulary[(i * 7) % len(vocabulary)] for i in range(count))


def article(body: str, title: str = "Report") -> str:
    return (
        f"<html><head><title>{title}</title></head><body><nav>Home | About</nav>"
        f"<article><h1>{title}</h1><p>{body}</p></article><footer>(c) site</footer></body></html>"
    )


def nxdomain(policy: FetchPolicy, *names: str) -> FetchPolicy:
    """``policy`` with a resolver that answers for ``names`` as DNS does for a name that does
    not exist (socket.gaierror), and as before for every other name: no lookup leaves."""
    inner = policy.net.resolver

    def resolve(host: str, port: int) -> list[str]:
        if host in names:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        if inner is None:
            raise AssertionError(f"unexpected DNS lookup of {host!r} in a test")
        return inner(host, port)

    return replace(policy, net=replace(policy.net, resolver=resolve))
