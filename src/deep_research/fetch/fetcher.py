"""The one fetcher every phase uses: guarded, robots-aware, retaining exactly what it read.

``Fetcher(brief).fetch(url)`` runs, in order, and stops at the first refusal or failure:

1. per hop — the URL and every redirect target alike: the run host allow-list
   (:mod:`deep_research.fetch.hosts`), when the brief keeps one; the SSRF guard
   (:mod:`deep_research.fetch.netguard`), the name resolved and every address checked; then
   robots.txt for its origin;
2. the request, over httpx2 with the guarded network backend (the address connected to is the
   one that was checked), proxies from the environment ignored, no automatic redirects; a
   redirect is followed by hand, at most :data:`MAX_REDIRECTS` hops;
3. the status (2xx only; a 429 is a failure, never a page without claims), the content type
   (:data:`~deep_research.fetch.extract.PAGE_TYPES`) and content encoding (identity, gzip or
   deflate: anything else would be stored undecoded), then the body, streamed and cut off at
   the byte cap (Content-Length is not trusted);
4. extraction — HTML and PDF (a ``%PDF-`` body is a PDF whatever its label) in the bounded
   extractor process; empty text is a failure. The byte cap holds for the text too, in the
   UTF-8 it is stored as: decoding can grow a body (each undecodable byte becomes a
   three-byte U+FFFD, a PDF's streams are compressed), and a text over the cap is refused. The
   text is stored as ``corpus/<hash>.txt`` with its ``.meta.json``;
5. one fetch-log line for the attempt, whatever happened (robots.txt fetches get their own).

One deadline, :data:`TOTAL_TIMEOUT_S`, covers all of it: DNS, robots.txt, every hop, the body
and extraction. Caps (:data:`TOTAL_TIMEOUT_S`, :data:`CONNECT_TIMEOUT_S`,
:data:`MAX_BODY_BYTES`, :data:`MAX_REDIRECTS`) are constants; a :class:`FetchPolicy` may lower
them (tests do), never raise them. Outcomes: ``ok``; ``refused`` (policy: host not allowed,
unsafe target, robots, content type or encoding, size, redirects); ``error`` (``network_error``
— DNS included —, ``timeout``, ``extraction_timeout``, ``extraction_failed``, a non-2xx
status, empty extraction) — an ``error`` is an infrastructure failure, never evidence about a
claim. Every URL in a log line or a message is redacted (:func:`deep_research.urls.redact`).
"""

from __future__ import annotations

import html
import ipaddress
import json
import os
import re
import ssl
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import urljoin

import httpcore2
import httpx2

from deep_research import __version__
from deep_research.brief.layout import Brief, sha256_bytes
from deep_research.errors import InputError, TargetRefused
from deep_research.fetch.corpus import retain
from deep_research.fetch.extract import (
    PAGE_TYPES,
    PDF_TYPE,
    Extracted,
    ExtractionFailed,
    extract_bounded,
    is_pdf,
)
from deep_research.fetch.fetchlog import append
from deep_research.fetch.hosts import HostAllowList
from deep_research.fetch.hosts import load as load_hosts
from deep_research.fetch.netguard import (
    GuardedTransport,
    deadline_scope,
    remaining,
    resolve_checked,
    system_resolver,
)
from deep_research.fetch.netpolicy import (
    CheckedURL,
    NetPolicy,
    Resolver,
    check_url,
    parse_networks,
)
from deep_research.fetch.robots import MAX_ROBOTS_BYTES, RobotsCache, RobotsFile, robots_url
from deep_research.models import CorpusMeta, FetchLogEntry, FetchPurpose, Tier
from deep_research.urls import redact

USER_AGENT = f"deep-research/{__version__} (research brief fetcher; obeys robots.txt)"
TOTAL_TIMEOUT_S = 15.0
CONNECT_TIMEOUT_S = 5.0
MAX_BODY_BYTES = 10 * 1024 * 1024
MAX_REDIRECTS = 5
#: Characters of page text shown to an agent by default (the corpus file holds all of it).
AGENT_TEXT_CHARS = 20_000

#: Content encodings httpx2 decodes; a body in any other would be stored as undecoded bytes.
DECODED_ENCODINGS = frozenset({"identity", "gzip", "x-gzip", "deflate"})

Outcome = Literal["ok", "refused", "error"]


@dataclass(frozen=True)
class FetchPolicy:
    """Network rules plus limits; limits above the constants are cut down to them."""

    net: NetPolicy = field(default_factory=NetPolicy)
    timeout_s: float = TOTAL_TIMEOUT_S
    connect_timeout_s: float = CONNECT_TIMEOUT_S
    max_bytes: int = MAX_BODY_BYTES

    def __post_init__(self) -> None:
        object.__setattr__(self, "timeout_s", min(self.timeout_s, TOTAL_TIMEOUT_S))
        object.__setattr__(
            self, "connect_timeout_s", min(self.connect_timeout_s, CONNECT_TIMEOUT_S)
        )
        object.__setattr__(self, "max_bytes", min(self.max_bytes, MAX_BODY_BYTES))


class _Failure(Exception):
    """An attempt that reached the network and failed (status, timeout, empty text)."""

    def __init__(self, reason: str, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.status = status


@dataclass
class _Response:
    final_url: str
    status: int
    media_type: str | None
    charset: str | None
    body: bytes
    redirects: list[str]


@dataclass(frozen=True)
class FetchResult:
    """What one page fetch produced; ``text`` is the retained corpus text when ``ok``."""

    entry: FetchLogEntry
    text: str | None = None
    corpus_path: Path | None = None

    @property
    def ok(self) -> bool:
        return self.entry.outcome == "ok"


def _tls_problem(error: BaseException) -> str | None:
    """The certificate check that failed (OpenSSL's words: names, never page content)."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ssl.SSLCertVerificationError):
            return f"certificate rejected ({current.verify_message})"
        if isinstance(current, ssl.SSLError):
            return f"handshake failed ({current.reason or type(current).__name__})"
        current = current.__cause__ or current.__context__
    return None


def _media_type(header: str | None) -> tuple[str | None, str | None]:
    if not header:
        return None, None
    media, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip("\"'") or None
    return media.strip().lower() or None, charset


def _sniff(body: bytes) -> str:
    # No Content-Type (and no PDF signature): markup as HTML, anything else as plain text.
    head = body[:512].lstrip(b"\xef\xbb\xbf \t\r\n")
    return "text/html" if head.startswith(b"<") else "text/plain"


class Fetcher:
    """A run's fetcher over one brief: shared client, robots cache and host allow-list."""

    def __init__(
        self,
        brief: Brief,
        policy: FetchPolicy | None = None,
        *,
        hosts: HostAllowList | None = None,
        use_brief_hosts: bool = True,
    ) -> None:
        self.brief = brief
        self.policy = policy or FetchPolicy()
        self.hosts = (
            hosts if hosts is not None else (load_hosts(brief) if use_brief_hosts else None)
        )
        self.transport = GuardedTransport(self.policy.net)
        self.client = httpx2.Client(
            transport=self.transport,
            trust_env=False,  # proxy variables would route around the guard
            follow_redirects=False,
            timeout=httpx2.Timeout(self.policy.timeout_s, connect=self.policy.connect_timeout_s),
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": "identity"},
        )
        self.robots = RobotsCache(brief, self._load_robots)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self.client.close()

    # --- public ---------------------------------------------------------------------------

    def fetch(self, url: str, *, tier: Tier = "raw") -> FetchResult:
        """Fetch one page, retain its text, log the attempt. Never raises for a bad target or a
        failing network."""
        started = time.monotonic()
        entry = self._entry(url, "page", tier)
        with deadline_scope(self.policy.timeout_s) as deadline:
            try:
                response = self._get(
                    url, purpose="page", accept=PAGE_TYPES, cap=self.policy.max_bytes, entry=entry
                )
                # A PDF is a PDF by its signature: labelled text/html it would be stored as
                # PDF syntax.
                media = (PDF_TYPE if is_pdf(response.body) else response.media_type) or _sniff(
                    response.body
                )
                extracted = self._extract(response, media, deadline)
                _check_text_size(extracted.text, self.policy.max_bytes)
                meta = CorpusMeta(
                    url=redact(url),
                    final_url=redact(response.final_url),
                    status=response.status,
                    content_type=media,
                    extractor=extracted.extractor,
                    extractor_version=extracted.extractor_version,
                    raw_sha256=sha256_bytes(response.body),
                    retrieved_at=entry.retrieved_at,
                    tier=tier,
                    title=extracted.title,
                    published_at=extracted.published_at,
                )
            except TargetRefused as refusal:
                return self._finish(entry, started, "refused", redact(str(refusal)))
            except _Failure as failure:
                entry.status = failure.status if failure.status is not None else entry.status
                return self._finish(entry, started, "error", failure.reason)

        def fetched(content_hash: str) -> FetchLogEntry:
            entry.content_hash = content_hash
            return self._settle(entry, started, "ok", None)

        stored, logged = retain(self.brief, extracted.text, meta, fetched)
        return FetchResult(logged, extracted.text, stored.path)

    def fetch_json(self, url: str, *, purpose: FetchPurpose = "archive_lookup") -> Any:
        """A small JSON document (an archive lookup), logged but not retained; None on failure."""
        started = time.monotonic()
        entry = self._entry(url, purpose, None)
        with deadline_scope(self.policy.timeout_s):
            try:
                response = self._get(
                    url,
                    purpose=purpose,
                    accept=frozenset({"application/json"}),
                    cap=min(self.policy.max_bytes, 1024 * 1024),
                    entry=entry,
                )
                value = json.loads(response.body.decode("utf-8", errors="replace"))
            except TargetRefused as refusal:
                self._finish(entry, started, "refused", redact(str(refusal)))
                return None
            except (_Failure, ValueError) as failure:
                reason = failure.reason if isinstance(failure, _Failure) else "invalid_json"
                self._finish(entry, started, "error", reason)
                return None
        self._finish(entry, started, "ok", None)
        return value

    # --- internals ------------------------------------------------------------------------

    def _entry(self, url: str, purpose: FetchPurpose, tier: Tier | None) -> FetchLogEntry:
        return FetchLogEntry(
            url=redact(url.strip()) or "(empty)",
            outcome="error",
            purpose=purpose,
            tier=tier,
            retrieved_at=datetime.now(UTC),
            private_allowlist=self.policy.net.allowlist_labels(),
        )

    @staticmethod
    def _settle(
        entry: FetchLogEntry, started: float, outcome: Outcome, reason: str | None
    ) -> FetchLogEntry:
        entry.outcome = outcome
        entry.reason = reason
        entry.duration_ms = int((time.monotonic() - started) * 1000)
        return entry

    def _finish(
        self, entry: FetchLogEntry, started: float, outcome: Outcome, reason: str | None
    ) -> FetchResult:
        append(self.brief, self._settle(entry, started, outcome, reason))
        return FetchResult(entry)

    @staticmethod
    def _extract(response: _Response, media: str, deadline: float) -> Extracted:
        """The page's text within what is left of the fetch's deadline; no text is a failure."""
        left = deadline - time.monotonic()
        try:
            extracted = extract_bounded(response.body, media, response.charset, left)
        except ExtractionFailed as failure:
            raise _Failure(failure.reason, response.status) from None
        if extracted is None:
            raise _Failure("empty_extraction", response.status)
        return extracted

    def _get(
        self,
        url: str,
        *,
        purpose: FetchPurpose,
        accept: frozenset[str],
        cap: int,
        entry: FetchLogEntry,
    ) -> _Response:
        current = url
        redirects: list[str] = []
        for _ in range(MAX_REDIRECTS + 1):
            checked = self._check_hop(current, purpose)
            entry.final_url = redact(checked.url)
            next_url = self._request(checked.url, accept, cap, entry, redirects)
            if isinstance(next_url, _Response):
                return next_url
            redirects.append(redact(next_url))
            entry.redirects = list(redirects)
            current = next_url
        raise TargetRefused("too_many_redirects", f"more than {MAX_REDIRECTS} redirects")

    def _check_hop(self, url: str, purpose: FetchPurpose) -> CheckedURL:
        """Every rule one hop must pass before it is requested — the first URL and each
        redirect target alike."""
        if self.hosts is not None and not self.hosts.allows(url):
            raise TargetRefused("host_not_allowed", "host is not in this run's allow-list")
        checked = check_url(url, self.policy.net)
        # Resolve here too (the backend resolves and checks again when it connects), so a name
        # that points inside is refused with that reason, and a name that does not resolve
        # fails, before robots.txt is asked.
        try:
            resolve_checked(checked.host, checked.port, self.policy.net)
        except httpcore2.TimeoutException:
            raise _Failure("network_error: DNS lookup timed out") from None
        except httpcore2.NetworkError:
            raise _Failure("network_error: name does not resolve") from None
        if purpose == "page" and not self.robots.allows(checked.url):
            raise TargetRefused("robots_disallowed", f"robots.txt disallows {checked.url}")
        return checked

    def _request(
        self,
        url: str,
        accept: frozenset[str],
        cap: int,
        entry: FetchLogEntry,
        redirects: list[str],
    ) -> _Response | str:
        try:
            with self.client.stream("GET", url) as response:
                entry.status = response.status_code
                location = response.headers.get("location")
                if response.is_redirect and location:
                    # Joined as the server wrote it; the next hop is checked like any new URL.
                    return urljoin(url, location.strip())
                if response.status_code == 429:
                    raise _Failure("rate_limited", 429)
                if not 200 <= response.status_code < 300:
                    raise _Failure(f"http_{response.status_code}", response.status_code)
                media, charset = _media_type(response.headers.get("content-type"))
                entry.content_type = media
                if media is not None and media not in accept:
                    raise TargetRefused("content_type", f"{media} is not fetched")
                _check_encoding(response.headers.get_list("content-encoding", split_commas=True))
                body = _read_capped(response, cap)
                entry.bytes = len(body)
                return _Response(url, response.status_code, media, charset, body, redirects)
        except httpx2.TimeoutException:
            raise _Failure("timeout") from None
        except httpx2.InvalidURL as exc:
            raise TargetRefused("bad_url", str(exc)[:200]) from None
        except httpx2.HTTPError as exc:
            tls = _tls_problem(exc)
            if tls is not None:
                raise _Failure(f"tls_error: {tls}") from None
            raise _Failure(f"network_error: {type(exc).__name__}") from None

    def _load_robots(self, origin: str) -> RobotsFile:
        started = time.monotonic()
        url = robots_url(origin)
        entry = self._entry(url, "robots", None)
        # Called from inside a page fetch: the page's deadline covers robots.txt too.
        with deadline_scope(self.policy.timeout_s):
            try:
                response = self._get(
                    url,
                    purpose="robots",
                    accept=frozenset({"text/plain"}),
                    cap=MAX_ROBOTS_BYTES,
                    entry=entry,
                )
            except TargetRefused as refusal:
                self._finish(entry, started, "refused", redact(str(refusal)))
                return RobotsFile(origin, "disallow_all")
            except _Failure as failure:
                self._finish(entry, started, "error", failure.reason)
                if remaining() == 0:
                    # The fetch's time ran out, which says nothing about the origin: nothing is
                    # cached, and the page fetch ends as a timeout.
                    raise _Failure("timeout") from None
                status = failure.status
                if status is not None and 400 <= status < 500 and status != 429:
                    return RobotsFile(origin, "allow_all")  # RFC 9309: unavailable
                return RobotsFile(origin, "disallow_all")  # unreachable: assume full disallow
        self._finish(entry, started, "ok", None)
        return RobotsFile(origin, "rules", response.body.decode("utf-8", errors="replace"))


def _check_encoding(encodings: list[str]) -> None:
    named = [name.strip() for name in encodings if name.strip()]
    undecoded = [name for name in named if name.lower() not in DECODED_ENCODINGS]
    if undecoded:
        raise TargetRefused("content_encoding", f"{', '.join(undecoded)} is not decoded")


def _check_text_size(text: str, cap: int) -> None:
    """Refuse a text over ``cap`` bytes as stored (UTF-8), whatever the body it came from."""
    # UTF-8 spends at most four bytes on a character: only a longer text needs encoding.
    if len(text) * 4 <= cap:
        return
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > cap:
        raise TargetRefused("text_over_cap", f"extracted text is {size} bytes, over {cap}")


def _read_capped(response: httpx2.Response, cap: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    for chunk in response.iter_bytes():
        total += len(chunk)
        if total > cap:
            raise TargetRefused("body_over_cap", f"body exceeds {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


# --- output for an agent --------------------------------------------------------------------


def wrap_untrusted(url: str, text: str, *, content_hash: str | None = None) -> str:
    """Page text as data, never instructions: inside ``<untrusted_source>``, unable to close it."""
    safe = re.sub(r"(?i)<(/?)untrusted_source", r"&lt;\1untrusted_source", text)
    attrs = f'url="{html.escape(url, quote=True)}"'
    if content_hash:
        attrs += f' hash="{content_hash}"'
    return f"<untrusted_source {attrs}>\n{safe}\n</untrusted_source>"


def agent_view(
    result: FetchResult, brief: Brief, max_chars: int = AGENT_TEXT_CHARS
) -> dict[str, Any]:
    """The JSON an agent receives: where the text is kept, and the text wrapped as data."""
    entry = result.entry
    view: dict[str, Any] = {
        "outcome": entry.outcome,
        "url": entry.url,
        "final_url": entry.final_url,
        "status": entry.status,
        "reason": entry.reason,
        "content_hash": entry.content_hash,
        "corpus_path": None,
        "text": None,
        "truncated": False,
    }
    if result.text is not None and result.corpus_path is not None:
        view["corpus_path"] = str(result.corpus_path.relative_to(brief.root))
        shown = result.text[: max(0, max_chars)]
        view["text"] = wrap_untrusted(
            entry.final_url or entry.url, shown, content_hash=entry.content_hash
        )
        view["truncated"] = len(shown) < len(result.text)
    return view


# --- the command ----------------------------------------------------------------------------

#: Test harnesses only: comma-separated private CIDRs / extra ports the fetcher may reach.
#: Deliberately not command-line flags; every fetch-log entry records the CIDRs when set.
TEST_CIDRS_ENV = "DEEP_RESEARCH_TEST_PRIVATE_CIDRS"
TEST_PORTS_ENV = "DEEP_RESEARCH_TEST_PORTS"
#: Test harnesses only: ``host=address,…`` — the listed names resolve to those addresses (a test
#: serves public-looking hosts on loopback); every other name goes to the system resolver. The
#: answer is checked like any resolved address, so a loopback one still needs its CIDR in
#: ``TEST_CIDRS_ENV`` (and a port outside 80/443 in ``TEST_PORTS_ENV``): it widens nothing alone.
TEST_RESOLVE_ENV = "DEEP_RESEARCH_TEST_RESOLVE"


def _listed(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def _test_resolver(entries: list[str]) -> Resolver | None:
    """The resolver ``TEST_RESOLVE_ENV`` asks for, or None (the system's) when it lists none."""
    table: dict[str, list[str]] = {}
    for entry in entries:
        host, sep, address = entry.partition("=")
        name = host.strip().lower().rstrip(".")
        try:
            if not sep or not name:
                raise ValueError(entry)
            canonical = str(ipaddress.ip_address(address.strip()))
        except ValueError:
            raise ValueError(f"{entry!r} is not host=address") from None
        table.setdefault(name, []).append(canonical)
    if not table:
        return None

    def resolve(host: str, port: int) -> list[str]:
        listed = table.get(host.lower().rstrip("."))
        return list(listed) if listed is not None else system_resolver(host, port)

    return resolve


def policy_from_env() -> FetchPolicy:
    cidrs = _listed(os.environ.get(TEST_CIDRS_ENV, ""))
    ports = _listed(os.environ.get(TEST_PORTS_ENV, ""))
    try:
        net = NetPolicy(
            private_allowlist=parse_networks(cidrs),
            extra_ports=frozenset(int(port) for port in ports),
            resolver=_test_resolver(_listed(os.environ.get(TEST_RESOLVE_ENV, ""))),
        )
    except ValueError as exc:
        names = f"{TEST_CIDRS_ENV}/{TEST_PORTS_ENV}/{TEST_RESOLVE_ENV}"
        raise InputError(f"{names}: {exc}; unset them") from None
    return FetchPolicy(net=net)


def run_fetch(
    url: str, root: Path, *, max_chars: int = AGENT_TEXT_CHARS, policy: FetchPolicy | None = None
) -> tuple[FetchResult, dict[str, Any]]:
    """``deep-research fetch``: one guarded fetch into ``root``; the result and the agent view."""
    if root.exists() and not root.is_dir():
        raise InputError(f"--brief {root} is not a directory; give the brief directory")
    brief = Brief(root)
    with Fetcher(brief, policy or policy_from_env()) as fetcher:
        result = fetcher.fetch(url)
    return result, agent_view(result, brief, max_chars)
