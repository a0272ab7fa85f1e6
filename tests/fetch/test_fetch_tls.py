"""HTTPS through the guard: the socket goes to the address the guard checked, and the TLS
handshake still verifies the certificate against the URL's host name.

A test CA (trustme) signs the loopback server's certificate; the fetcher trusts that CA only
through ``NetPolicy.trust``, which no command line or environment variable can set.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path

import pytest
import trustme

from deep_research.brief.layout import Brief
from deep_research.fetch.fetcher import Fetcher, FetchResult
from localhttp import LocalServer, Route, loopback_policy, words

pytestmark = pytest.mark.usefixtures("tripwire")

HOST = "pages.test"
TEXT = f"{words(120, 'tls')}. The harbour handled 1,234 ships in 2023."


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def _serve(ca: trustme.CA, *names: str) -> LocalServer:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert(*names).configure_cert(context)
    server = LocalServer(tls=context)
    server.routes["/page"] = Route(body=TEXT, content_type="text/plain; charset=utf-8")
    return server


@pytest.fixture
def https(ca: trustme.CA) -> Iterator[LocalServer]:
    with _serve(ca, HOST) as running:
        yield running


def _trusting(ca: trustme.CA | None) -> ssl.SSLContext | None:
    if ca is None:
        return None
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


def _fetch(server: LocalServer, tmp_path: Path, trust: ssl.SSLContext | None) -> FetchResult:
    policy = loopback_policy(server.port, resolver={HOST: ["127.0.0.1"]}, trust=trust)
    with Fetcher(Brief(tmp_path / "brief"), policy) as fetcher:
        result = fetcher.fetch(server.url("/page", host=HOST))
        # robots.txt, then the page: every dial went to the address the guard checked.
        assert set(fetcher.transport.backend.connected) == {"127.0.0.1"}
    return result


def test_https_page_is_fetched_from_the_checked_address(
    https: LocalServer, ca: trustme.CA, tmp_path: Path
) -> None:
    result = _fetch(https, tmp_path, _trusting(ca))
    assert result.ok, result.entry.reason
    assert "1,234 ships" in (result.text or "")
    assert https.hits == ["/robots.txt", "/page"]


def _refused_at_the_handshake(
    server: LocalServer, result: FetchResult, tmp_path: Path, why: str
) -> None:
    assert server.hits == []  # no request left the handshake, not even robots.txt
    assert not result.ok  # robots.txt unreachable: the page is not fetched either
    robots = [e for e in Brief(tmp_path / "brief").load_fetch_log() if e.purpose == "robots"]
    reason = robots[0].reason or ""
    assert reason.startswith("tls_error: certificate rejected") and why in reason, reason


def test_a_certificate_for_another_name_is_refused(ca: trustme.CA, tmp_path: Path) -> None:
    with _serve(ca, "other.test") as server:
        result = _fetch(server, tmp_path, _trusting(ca))
        _refused_at_the_handshake(server, result, tmp_path, "Hostname mismatch")


def test_an_untrusted_certificate_is_refused(https: LocalServer, tmp_path: Path) -> None:
    # The default store does not know the test CA.
    result = _fetch(https, tmp_path, None)
    _refused_at_the_handshake(https, result, tmp_path, "unable to get local issuer")
