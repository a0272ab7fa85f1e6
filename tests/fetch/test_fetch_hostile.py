"""The fetcher against hostile loopback servers: redirects off the run's allow-list, names that do
not resolve, pages built to make extraction loop or balloon, declared charsets and content
encodings that cannot be decoded, and credentials in URLs."""

from __future__ import annotations

import gzip
import json
import random
import socket
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.fetch.fetcher import MAX_BODY_BYTES, Fetcher, FetchPolicy, agent_view
from deep_research.fetch.hosts import add_hosts
from localhttp import HANG_S, LocalServer, Route, article, loopback_policy, nxdomain, words
from pdfs import text_pdf

PAGE = article("The harbor handled 1,234 ships in 2023, a record. " + words(200))
pytestmark = pytest.mark.usefixtures("tripwire")


@pytest.fixture
def brief(tmp_path: Path) -> Brief:
    return Brief(tmp_path / "brief")


@pytest.fixture
def other() -> Any:
    with LocalServer() as running:
        yield running


def fetch(server: LocalServer, brief: Brief, path: str, **limits: Any) -> Any:
    with Fetcher(brief, loopback_policy(server.port, **limits)) as fetcher:
        return fetcher.fetch(server.url(path))


def page_entries(brief: Brief) -> list[Any]:
    return [entry for entry in brief.load_fetch_log() if entry.purpose == "page"]


def kept(brief: Brief) -> list[Path]:
    return list(brief.corpus_dir.glob("*.txt"))


# --- the run's allow-list, on every hop ----------------------------------------------------


def two_hosts(server: LocalServer, other: LocalServer) -> FetchPolicy:
    """Two loopback servers under two names, so the allow-list can tell them apart."""
    policy = loopback_policy(
        server.port, resolver={"listed.example": ["127.0.0.1"], "offlist.example": ["127.0.0.1"]}
    )
    return replace(policy, net=replace(policy.net, extra_ports={server.port, other.port}))


def test_a_redirect_off_the_allow_list_is_refused_before_the_hop(
    server: LocalServer, other: LocalServer, brief: Brief
) -> None:
    other.routes["/robots.txt"] = Route(status=404)
    other.routes["/secret"] = Route(body=PAGE)
    server.routes["/robots.txt"] = Route(status=404)
    target = f"http://offlist.example:{other.port}/secret?token=leaked-value"
    server.routes["/go"] = Route(status=302, headers={"Location": target})
    add_hosts(brief, ["listed.example"], static=True)
    with Fetcher(brief, two_hosts(server, other)) as fetcher:
        result = fetcher.fetch(f"http://listed.example:{server.port}/go")
    assert result.entry.outcome == "refused"
    assert (result.entry.reason or "").startswith("host_not_allowed")
    assert other.hits == []  # not the page, not even its robots.txt
    assert result.entry.redirects == [f"http://offlist.example:{other.port}/secret?token=***"]
    assert [entry.outcome for entry in page_entries(brief)] == ["refused"] and kept(brief) == []


def test_a_redirect_to_a_listed_host_is_followed(
    server: LocalServer, other: LocalServer, brief: Brief
) -> None:
    other.routes["/robots.txt"] = Route(status=404)
    other.routes["/page"] = Route(body=PAGE)
    server.routes["/robots.txt"] = Route(status=404)
    target = f"http://offlist.example:{other.port}/page"
    server.routes["/go"] = Route(status=302, headers={"Location": target})
    add_hosts(brief, ["listed.example", "offlist.example"], static=True)
    with Fetcher(brief, two_hosts(server, other)) as fetcher:
        result = fetcher.fetch(f"http://listed.example:{server.port}/go")
    assert result.ok and "1,234 ships" in (result.text or "")
    assert result.entry.final_url == target and "/page" in other.hits


# --- names that do not resolve --------------------------------------------------------------


def test_a_name_that_does_not_resolve_is_a_logged_network_error(
    server: LocalServer, brief: Brief
) -> None:
    server.routes["/robots.txt"] = Route(status=404)
    server.routes["/moved"] = Route(status=302, headers={"Location": "http://moved.invalid/"})
    policy = nxdomain(loopback_policy(server.port), "nowhere.invalid", "moved.invalid")
    with Fetcher(brief, policy) as fetcher:
        direct = fetcher.fetch("http://nowhere.invalid/page")
        hop = fetcher.fetch(server.url("/moved"))
    for result in (direct, hop):
        assert result.entry.outcome == "error"
        assert result.entry.reason == "network_error: name does not resolve"
    assert hop.entry.redirects == ["http://moved.invalid/"]
    assert [entry.url for entry in page_entries(brief)] == [
        "http://nowhere.invalid/page",
        server.url("/moved"),
    ]


def _no_such_name(host: Any, *args: Any, **kwargs: Any) -> Any:
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


def test_fetch_command_logs_an_unresolvable_name_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The system resolver's own path, answered as DNS answers a name that does not exist.
    monkeypatch.setattr(socket, "getaddrinfo", _no_such_name)
    root = tmp_path / "new-brief"
    assert main(["fetch", "http://nowhere.invalid/", "--brief", str(root)]) == 1
    err = capsys.readouterr().err
    failure, then = err.strip().splitlines()
    assert failure == "fetch error: network_error: name does not resolve"
    assert then.startswith("next: ")  # what the fetcher does after it
    (line,) = Brief(root).load_fetch_log()
    assert (line.outcome, line.reason) == ("error", "network_error: name does not resolve")


def test_a_dns_lookup_ends_at_the_fetch_deadline(
    brief: Brief, monkeypatch: pytest.MonkeyPatch
) -> None:
    answered = threading.Event()

    def slow_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        answered.wait(HANG_S)  # a resolver that hangs far past the deadline
        return _no_such_name(host)

    monkeypatch.setattr(socket, "getaddrinfo", slow_lookup)
    started = time.monotonic()
    with Fetcher(brief, FetchPolicy(timeout_s=0.5)) as fetcher:
        result = fetcher.fetch("http://slow.invalid/")
    took = time.monotonic() - started
    answered.set()
    assert took < HANG_S / 2
    assert (result.entry.outcome, result.entry.reason) == (
        "error",
        "network_error: DNS lookup timed out",
    )


# --- one deadline: robots.txt, network and extraction together ------------------------------

#: Markup that costs trafilatura tens of seconds and hundreds of megabytes per megabyte.
FLOOD = b"<p>x</p>" * (1024 * 1024 // 8)


@pytest.mark.extract_process
def test_html_extraction_ends_at_the_fetch_deadline(server: LocalServer, brief: Brief) -> None:
    server.routes["/robots.txt"] = Route(status=404)
    server.routes["/flood"] = Route(body=FLOOD)
    started = time.monotonic()
    result = fetch(server, brief, "/flood", timeout_s=2.0)
    assert time.monotonic() - started < HANG_S / 2  # unbounded, it takes tens of seconds
    assert (result.entry.outcome, result.entry.reason) == ("error", "extraction_timeout")
    assert result.entry.status == 200 and kept(brief) == []


@pytest.mark.extract_process
def test_pdf_extraction_ends_at_the_fetch_deadline(server: LocalServer, brief: Brief) -> None:
    server.routes["/robots.txt"] = Route(status=404)
    long_report = text_pdf(*["The harbour handled ships. " * 20] * 2000)
    server.routes["/long.pdf"] = Route(body=long_report, content_type="application/pdf")
    started = time.monotonic()
    result = fetch(server, brief, "/long.pdf", timeout_s=1.5)
    assert time.monotonic() - started < HANG_S / 2
    assert (result.entry.outcome, result.entry.reason) == ("error", "extraction_timeout")
    assert kept(brief) == []


def test_robots_txt_after_a_redirect_gets_no_time_of_its_own(
    server: LocalServer, other: LocalServer, brief: Brief
) -> None:
    # The redirect takes half the time; the second origin's robots.txt would take more than all.
    server.routes["/robots.txt"] = Route(status=404)
    server.routes["/go"] = Route(status=302, headers={"Location": other.url("/p")}, delay_s=1.0)
    other.routes["/robots.txt"] = Route(status=404, delay_s=HANG_S)
    other.routes["/p"] = Route(body=PAGE)
    policy = loopback_policy(server.port, timeout_s=2.0)
    policy = replace(policy, net=replace(policy.net, extra_ports={server.port, other.port}))
    started = time.monotonic()
    with Fetcher(brief, policy) as fetcher:
        result = fetcher.fetch(server.url("/go"))
    assert time.monotonic() - started < HANG_S / 2
    assert (result.entry.outcome, result.entry.reason) == ("error", "timeout")
    assert "/p" not in other.hits


def test_a_robots_txt_cut_off_by_the_deadline_is_not_cached(
    server: LocalServer, brief: Brief
) -> None:
    server.routes["/robots.txt"] = Route(status=404, delay_s=1.5)
    server.routes["/p"] = Route(body=PAGE)
    first = fetch(server, brief, "/p", timeout_s=0.5)
    assert (first.entry.outcome, first.entry.reason) == ("error", "timeout")
    # The run's time ran out, not the origin: the next fetch asks robots.txt again.
    server.routes["/robots.txt"] = Route(status=404)
    assert fetch(server, brief, "/p").ok
    assert server.hits.count("/robots.txt") == 2


# --- charsets and content encodings ---------------------------------------------------------

SENTENCE = "Prices rose by 4.5 percent in 2023, the bureau said."


@pytest.mark.parametrize("charset", ["punycode", "undefined", "utf-7", "base64", "no-such-set"])
@pytest.mark.parametrize("media", ["text/plain", "text/html"])
def test_a_charset_that_is_no_web_encoding_falls_back_to_utf8(
    server: LocalServer, brief: Brief, charset: str, media: str
) -> None:
    server.routes["/robots.txt"] = Route(status=404)
    body = SENTENCE if media == "text/plain" else f"<html><body>{SENTENCE}</body></html>"
    server.routes["/p"] = Route(body=body, content_type=f"{media}; charset={charset}")
    result = fetch(server, brief, "/p")
    assert result.ok, result.entry.reason
    assert SENTENCE in (result.text or "")


def test_a_declared_web_charset_is_honoured(server: LocalServer, brief: Brief) -> None:
    server.routes["/robots.txt"] = Route(status=404)
    sentence = "Café prices rose by 4.5 percent in 2023."
    server.routes["/p"] = Route(
        body=sentence.encode("cp1252"), content_type="text/plain; charset=windows-1252"
    )
    assert fetch(server, brief, "/p").text == sentence


def test_a_punycode_declaration_costs_no_more_than_utf8(server: LocalServer, brief: Brief) -> None:
    # Python's punycode decoder is quadratic: 256 KiB of it took seconds, 1 MiB minutes.
    server.routes["/robots.txt"] = Route(status=404)
    server.routes["/p"] = Route(
        body=b"x" * 1024 * 1024, content_type="text/plain; charset=punycode"
    )
    started = time.monotonic()
    result = fetch(server, brief, "/p")
    assert time.monotonic() - started < HANG_S / 2 and result.ok


# --- the byte cap holds for the text as stored ---------------------------------------------


def _random_bytes(size: int) -> bytes:
    return random.Random(23).randbytes(size)


def test_a_random_body_under_the_cap_is_not_stored_as_a_larger_text(
    server: LocalServer, brief: Brief
) -> None:
    # 10 MB of random bytes, every undecodable one a three-byte U+FFFD: a 15.6 MB text.
    server.routes["/robots.txt"] = Route(status=404)
    server.routes["/noise"] = Route(body=_random_bytes(MAX_BODY_BYTES), content_type="text/plain")
    result = fetch(server, brief, "/noise")
    assert result.entry.outcome == "refused"
    assert (result.entry.reason or "").startswith("text_over_cap: extracted text is 1")
    assert f"over {MAX_BODY_BYTES}" in (result.entry.reason or "")
    assert kept(brief) == [] and result.text is None


GROWING = {
    "random-bytes": (_random_bytes(90_000), "text/plain"),
    "latin-bytes-as-cp1252": (bytes(range(0xA0, 0x100)) * 900, "text/plain; charset=windows-1252"),
    "random-bytes-in-json": (_random_bytes(90_000), "application/json"),
}


@pytest.mark.parametrize(("body", "media"), GROWING.values(), ids=GROWING.keys())
def test_a_text_that_decoding_grows_past_the_cap_is_refused(
    server: LocalServer, brief: Brief, body: bytes, media: str
) -> None:
    server.routes["/robots.txt"] = Route(status=404)
    server.routes["/grows"] = Route(body=body, content_type=media)
    result = fetch(server, brief, "/grows", max_bytes=100_000)
    assert len(body) <= 100_000  # the body itself is within the cap
    assert result.entry.outcome == "refused", result.entry.reason
    assert (result.entry.reason or "").startswith("text_over_cap")
    assert kept(brief) == []


def test_a_text_just_within_the_cap_is_kept(server: LocalServer, brief: Brief) -> None:
    # The twin: a body that decodes to the same size, at the cap exactly.
    server.routes["/robots.txt"] = Route(status=404)
    body = (SENTENCE.encode("utf-8") + b" ") * (100_000 // (len(SENTENCE) + 1))
    body += b"x" * (100_000 - len(body))
    server.routes["/fits"] = Route(body=body, content_type="text/plain")
    result = fetch(server, brief, "/fits", max_bytes=100_000)
    assert result.ok, result.entry.reason
    assert len(kept(brief)) == 1 and kept(brief)[0].stat().st_size == 100_000


@pytest.mark.parametrize("encoding", ["br", "zstd", "compress", "gzip, br"])
def test_an_undecodable_content_encoding_is_refused(
    server: LocalServer, brief: Brief, encoding: str
) -> None:
    server.routes["/robots.txt"] = Route(status=404)
    server.routes["/p"] = Route(
        body=bytes(range(256)) * 40,
        content_type="text/plain",
        headers={"Content-Encoding": encoding},
    )
    result = fetch(server, brief, "/p")
    assert result.entry.outcome == "refused"
    assert (result.entry.reason or "").startswith("content_encoding")
    assert kept(brief) == []


def test_a_gzip_body_is_decoded(server: LocalServer, brief: Brief) -> None:
    server.routes["/robots.txt"] = Route(status=404)
    server.routes["/p"] = Route(
        body=gzip.compress(PAGE.encode()), headers={"Content-Encoding": "gzip"}
    )
    result = fetch(server, brief, "/p")
    assert result.ok and "1,234 ships" in (result.text or "")


def test_a_pdf_labelled_html_is_read_as_a_pdf(server: LocalServer, brief: Brief) -> None:
    server.routes["/robots.txt"] = Route(status=404)
    sentence = "The harbour handled 1,234 ships in 2023, a record for the port."
    server.routes["/report"] = Route(body=text_pdf(sentence), content_type="text/html")
    result = fetch(server, brief, "/report")
    assert result.ok and sentence in (result.text or "")
    assert "%PDF" not in (result.text or "") and "endobj" not in (result.text or "")
    meta = json.loads(next(brief.corpus_dir.glob("*.meta.json")).read_text())
    assert (meta["extractor"], meta["content_type"]) == ("pypdf", "application/pdf")
    assert result.entry.content_type == "text/html"  # what the server said, on record


# --- credentials in URLs --------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://user:pa ss@host.example/",
        "http:\\\\user:pw-secret@host.example/",
        "HTTP:/user:pw-secret@host.example/",
        "http://user:pw-secret@host.example/",
        "https://host.example/?next=http://user:pw-secret@other.example/",
    ],
)
def test_credentials_in_any_spelling_reach_neither_the_log_nor_stderr(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "b"
    assert main(["fetch", url, "--brief", str(root), "--json"]) == 1
    captured = capsys.readouterr()
    written = captured.out + captured.err + Brief(root).fetch_log_path.read_text(encoding="utf-8")
    assert "pw-secret" not in written and "pa ss" not in written
    (line,) = Brief(root).load_fetch_log()
    assert line.outcome == "refused" and line.reason == (
        "credentials_in_url: a URL carrying a user name or password is refused"
    )


def test_credential_parameters_are_logged_redacted(server: LocalServer, brief: Brief) -> None:
    server.routes["/robots.txt"] = Route(status=404)
    server.routes["/r"] = Route(status=302, headers={"Location": "/p?access_token=tok-secret"})
    server.routes["/p"] = Route(body=PAGE)
    with Fetcher(brief, loopback_policy(server.port)) as fetcher:
        result = fetcher.fetch(server.url("/r?sig=sig-secret&page=2"))
    assert result.ok
    assert "/p?access_token=tok-secret" in server.hits  # the server got the URL as written
    assert result.entry.url == server.url("/r?sig=***&page=2")
    assert result.entry.redirects == [server.url("/p?access_token=***")]
    meta = next(brief.corpus_dir.glob("*.meta.json")).read_text()
    view = json.dumps(agent_view(result, brief))
    for written in (brief.fetch_log_path.read_text(encoding="utf-8"), meta, view):
        assert "secret" not in written


def test_the_hook_guard_quotes_a_refused_url_redacted() -> None:
    from deep_research.plugin.guard import check_fetch

    for url in ("http:\\\\user:pw-secret@host.example/", "https://user:pw-secret@host.example/"):
        decision = check_fetch(url, None, tool="WebFetch")
        assert not decision.allow and "pw-secret" not in decision.reason
