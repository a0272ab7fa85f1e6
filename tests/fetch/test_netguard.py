"""The SSRF guard: every unsafe target form is refused before any socket, and logged."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

import pytest

from deep_research.brief.layout import Brief
from deep_research.errors import TargetRefused
from deep_research.fetch import netguard, netpolicy
from deep_research.fetch.fetcher import Fetcher, FetchPolicy
from deep_research.fetch.netpolicy import NetPolicy, address_problem, check_url, literal_address
from localhttp import LocalServer, Route, loopback_policy

# Names a fake resolver answers for (no test ever asks a real DNS server).
FAKE_DNS = {
    "rebind.example.com": ["10.0.0.5"],
    "mixed.example.com": ["93.184.216.34", "10.0.0.1"],
    "127.0.0.1.nip.example": ["127.0.0.1"],
    "mapped.example.com": ["::ffff:169.254.169.254"],
    "metadata-alias.example.com": ["169.254.169.254"],
}

DIRECT_FORMS = [
    # IPv4 literal encodings of loopback
    "http://127.0.0.1/",
    "http://127.1/",
    "http://127.0.1/",
    "http://0177.0.0.1/",
    "http://0x7f.0.0.1/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://017700000001/",
    "http://127.000.000.001/",
    "http://0x7f.1/",
    "http://127.0.0.1./",
    # unspecified / this network
    "http://0/",
    "http://0.0.0.0/",
    "http://0.1.2.3/",
    # IPv6 loopback, unspecified, mapped, compatible, NAT64, 6to4, link-local, ULA
    "http://[::1]/",
    "http://[::]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::ffff:a9fe:a9fe]/",
    "http://[::127.0.0.1]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:a9fe:a9fe::1]/",
    "http://[fe80::1]/",
    "http://[fc00::1]/",
    # cloud metadata addresses and names
    "http://169.254.169.254/",
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://169.254.170.2/v2/credentials",
    "http://[fd00:ec2::254]/",
    "http://100.100.100.200/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://metadata/",
    "http://instance-data/",
    # private, CGNAT, benchmarking, multicast, reserved, broadcast
    "http://10.0.0.1/",
    "http://0x0a.0x00.0x00.0x01/",
    "http://172.16.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://198.18.0.1/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    # names
    "http://localhost/",
    "http://LOCALHOST./",
    "http://app.localhost/",
    "http://db.internal/",
    "http://fly-app.flycast.internal/",
    "http://printer.local/",
    "http://nas.home.arpa/",
    # userinfo tricks and credentials
    "http://user:s3cr3t@example.com/",
    "http://example.com@127.0.0.1/",
    "http://example.com:80@169.254.169.254/",
    "http://127.0.0.1#@example.com/",
    "http://example.com\\@127.0.0.1/",
    # schemes and ports
    "file:///etc/passwd",
    "gopher://127.0.0.1:70/_stats",
    "ftp://example.com/",
    "dict://127.0.0.1:11211/",
    "http://example.com:22/",
    "http://example.com:6379/",
    "https://example.com:8443/",
    # names that resolve to non-public addresses (refused after the lookup, before connect)
    "http://rebind.example.com/",
    "http://mixed.example.com/",
    "http://127.0.0.1.nip.example/",
    "http://mapped.example.com/",
    "http://metadata-alias.example.com/",
]

REDIRECT_TARGETS = [
    "http://169.254.169.254/latest/meta-data/",
    "http://10.0.0.1/admin",
    "http://localhost/",
    "http://[::1]/",
    "file:///etc/passwd",
    "http://rebind.example.com/",
]


def test_the_table_has_at_least_forty_forms() -> None:
    assert len(DIRECT_FORMS) + len(REDIRECT_TARGETS) + 1 >= 40


@pytest.fixture
def no_dial(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Record every call of the one function that opens a connection."""
    dialled: list[Any] = []
    real = netguard.open_connection

    def spy(address: Any, port: int, timeout: float | None, options: Any) -> Any:
        dialled.append((str(address), port))
        if str(address) != "127.0.0.1":
            raise AssertionError(f"the guard let {address} through to a connect")
        return real(address, port, timeout, options)

    monkeypatch.setattr(netguard, "open_connection", spy)
    return dialled


def _fake_resolver(host: str, port: int) -> list[str]:
    if host not in FAKE_DNS:
        raise AssertionError(f"unexpected DNS lookup of {host!r}")
    return FAKE_DNS[host]


@pytest.mark.parametrize("url", DIRECT_FORMS)
def test_unsafe_target_is_refused_before_any_socket_and_logged(
    url: str, tmp_path: Path, tripwire: list[Any], no_dial: list[Any]
) -> None:
    policy = FetchPolicy(net=NetPolicy(resolver=_fake_resolver))
    with Fetcher(Brief(tmp_path), policy) as fetcher:
        result = fetcher.fetch(url)
    assert result.entry.outcome == "refused", result.entry
    assert no_dial == [] and tripwire == []
    lines = Brief(tmp_path).load_fetch_log()
    assert [line.outcome for line in lines] == ["refused"]
    assert lines[0].reason
    assert "s3cr3t" not in Brief(tmp_path).fetch_log_path.read_text(encoding="utf-8")


@pytest.mark.parametrize("target", REDIRECT_TARGETS)
def test_redirect_from_public_to_private_is_refused_at_the_hop(
    target: str,
    tmp_path: Path,
    server: LocalServer,
    tripwire: list[Any],
    no_dial: list[Any],
) -> None:
    server.routes["/go"] = Route(status=302, headers={"Location": target})
    server.routes["/robots.txt"] = Route(status=404)
    policy = loopback_policy(server.port, resolver=FAKE_DNS)
    with Fetcher(Brief(tmp_path), policy) as fetcher:
        result = fetcher.fetch(server.url("/go"))
    assert result.entry.outcome == "refused"
    assert result.entry.redirects == [target]
    assert {address for address, _ in no_dial} == {"127.0.0.1"} and tripwire == []


def test_redirect_chain_longer_than_five_hops_is_refused(
    tmp_path: Path, server: LocalServer, tripwire: list[Any]
) -> None:
    for hop in range(8):
        server.routes[f"/hop{hop}"] = Route(status=302, headers={"Location": f"/hop{hop + 1}"})
    server.routes["/hop8"] = Route(body="<p>end</p>")
    with Fetcher(Brief(tmp_path), loopback_policy(server.port)) as fetcher:
        result = fetcher.fetch(server.url("/hop0"))
    assert result.entry.outcome == "refused"
    assert (result.entry.reason or "").startswith("too_many_redirects")
    assert "/hop6" not in server.hits


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.216.34", True),
        ("2606:4700::1111", True),
        ("127.0.0.1", False),
        ("100.64.0.1", False),
        ("198.19.255.255", False),
        ("224.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("64:ff9b::808:808", True),  # NAT64 of a public address
        ("64:ff9b::a00:1", False),  # NAT64 of 10.0.0.1
    ],
)
def test_address_classification(address: str, public: bool) -> None:
    assert (address_problem(ipaddress.ip_address(address)) is None) is public


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.1", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("example.com", None),
        ("256.1.1.1", None),
    ],
)
def test_inet_aton_forms_are_read_as_the_resolver_reads_them(
    host: str, expected: str | None
) -> None:
    found = literal_address(host)
    assert (str(found) if found else None) == expected


def test_private_allowlist_is_the_only_way_to_loopback() -> None:
    with pytest.raises(TargetRefused):
        check_url("http://127.0.0.1/", NetPolicy())
    allowed = NetPolicy(private_allowlist=netpolicy.parse_networks(["127.0.0.1/32"]))
    assert check_url("http://127.0.0.1/", allowed).host == "127.0.0.1"
    with pytest.raises(TargetRefused):  # names stay refused even when the address is allowed
        check_url("http://localhost/", allowed)


def test_a_query_with_an_at_sign_is_not_userinfo() -> None:
    assert check_url("https://example.com/search?q=@user", NetPolicy()).host == "example.com"


def test_offline_mode_refuses_everything(tmp_path: Path, tripwire: list[Any]) -> None:
    netpolicy.disable_network()
    try:
        with Fetcher(Brief(tmp_path)) as fetcher:
            result = fetcher.fetch("https://example.com/")
    finally:
        netpolicy.enable_network()
    assert result.entry.outcome == "refused"
    assert (result.entry.reason or "").startswith("network_disabled")
    assert tripwire == []
