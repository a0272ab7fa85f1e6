"""The fetcher's test-only environment knobs: a name override that widens nothing by itself.

``DEEP_RESEARCH_TEST_RESOLVE`` lets a test serve public-looking hosts on loopback (the plugin's
live run inside Claude Code, where the fetcher runs as our CLI in another process). A listed name
resolves to its address; every other name still goes to the system resolver; and the address is
checked like any resolved one, so loopback stays refused unless its CIDR is allow-listed too.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.fetch.fetcher import Fetcher, policy_from_env
from localhttp import LocalServer, Route, article, words

HOST = "www.publisher.example"
PAGE = article("The harbour handled 1,234 ships in 2023, a record. " + words(200))


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every name the system resolver is asked for; each resolves to TEST-NET-1 (never
    connected to: the address is refused or the test stops at the lookup)."""
    asked: list[str] = []
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "127.0.0.1":  # the connect to a checked address: no lookup
            return real(host, port, *args, **kwargs)
        asked.append(str(host))
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("192.0.2.1", port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def _env(monkeypatch: pytest.MonkeyPatch, server: LocalServer, *, cidrs: str | None) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_TEST_RESOLVE", f"{HOST}=127.0.0.1")
    monkeypatch.setenv("DEEP_RESEARCH_TEST_PORTS", str(server.port))
    if cidrs is None:
        monkeypatch.delenv("DEEP_RESEARCH_TEST_PRIVATE_CIDRS", raising=False)
    else:
        monkeypatch.setenv("DEEP_RESEARCH_TEST_PRIVATE_CIDRS", cidrs)


def test_a_listed_name_reaches_its_allow_listed_address(
    server: LocalServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    lookups: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.routes["/p"] = Route(body=PAGE)
    _env(monkeypatch, server, cidrs="127.0.0.1/32")
    url = server.url("/p", HOST)
    assert main(["fetch", url, "--brief", str(tmp_path / "b"), "--json"]) == 0
    assert '"outcome": "ok"' in capsys.readouterr().out
    assert "/p" in server.hits and lookups == []  # the system resolver was never asked


def test_an_unlisted_name_still_goes_to_the_system_resolver(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch, lookups: list[str]
) -> None:
    _env(monkeypatch, server, cidrs="127.0.0.1/32")
    resolve = policy_from_env().net.resolver
    assert resolve is not None
    assert resolve(HOST.upper() + ".", 80) == ["127.0.0.1"] and lookups == []
    assert resolve("www.elsewhere.example", 80) == ["192.0.2.1"]
    assert lookups == ["www.elsewhere.example"]


def test_a_listed_name_to_an_address_off_the_allow_list_is_refused(
    server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lookups: list[str]
) -> None:
    """The override only names an address; loopback still needs its CIDR allow-listed."""
    server.routes["/p"] = Route(body=PAGE)
    for cidrs in (None, "127.0.0.2/32"):
        _env(monkeypatch, server, cidrs=cidrs)
        with Fetcher(Brief(tmp_path / "b"), policy_from_env()) as fetcher:
            result = fetcher.fetch(server.url("/p", HOST))
        assert result.entry.outcome == "refused", result.entry
        assert (result.entry.reason or "").startswith("private_address"), result.entry
    assert server.hits == [] and lookups == []


@pytest.mark.parametrize(
    "value", ["www.publisher.example", "=127.0.0.1", "www.publisher.example=localhost"]
)
def test_a_malformed_override_is_an_input_error(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_TEST_RESOLVE", value)
    url = f"https://{HOST}/p"
    assert main(["fetch", url, "--brief", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert "DEEP_RESEARCH_TEST_RESOLVE" in err and "is not host=address" in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "b").exists()
