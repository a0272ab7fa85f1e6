"""Canonical URLs, registrable domains and host matching.

One canonical spelling per web resource lets the normalizer merge the same page found under
different links, and lets the gates match a citation to a fetch-log entry. The canonical form:

* scheme and host lower-case; only ``http`` and ``https`` are accepted, plus the ``file:``
  identities of local-corpus documents (below);
* host IDNA-encoded (stdlib ``idna`` codec, i.e. IDNA 2003) with a trailing dot removed;
  IPv6 literals are written compressed in brackets;
* userinfo dropped (credentials never belong in a brief); default port (80/443) dropped;
* percent-encoding normalized only where meaning cannot change: escapes upper-case, escapes of
  unreserved characters (``A-Z a-z 0-9 - . _ ~``) decoded, reserved characters left encoded
  (``%2F`` stays ``%2F``), characters that may not appear raw (space, non-ASCII, ``"<>``…)
  encoded as UTF-8, and a stray ``%`` encoded as ``%25``;
* ``.``/``..`` segments resolved after that (so ``%2E%2E`` counts as ``..``); the empty path
  becomes ``/``; **a trailing slash is kept as given** — ``/a`` and ``/a/`` may be different
  resources on the server, and guessing would merge pages that differ;
* fragment dropped; tracking parameters (:data:`TRACKING_PARAMS`, plus any ``utm_*``) removed,
  matched case-insensitively on the decoded key; the remaining pairs sorted by key with a stable
  sort, so repeated keys keep their relative order; ``+`` is left as it is; empty pairs
  (``&&``) dropped; an empty query drops the ``?``;
* arXiv ``/pdf/<id>[vN][.pdf]`` becomes ``/abs/<id>[vN]`` (new-style ``2401.01234`` and
  old-style ``hep-th/9901001`` ids) on ``arxiv.org``, ``www.arxiv.org`` and
  ``export.arxiv.org`` — the host itself is not rewritten.

A local-corpus document is named ``file://<corpus>/<path inside the corpus>``: the "host" is
the corpus label, so the identity is stable across machines and checkouts. A machine path
(``file:///etc/passwd``, no corpus label) has no stable identity and is refused. ``file:`` URLs
are identities only: the fetcher refuses every scheme but http(s). Likewise an MCP tool call's
result is named ``mcp://<server>/<tool>?<sorted arguments>`` (:func:`mcp_identity`); its owner
is the page's owner when the tool was given a ``url``, else the server.

:func:`canonicalize` is idempotent; the property tests in ``tests/test_urls.py`` hold it to that.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping
from functools import cache, lru_cache
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

from publicsuffixlist import PublicSuffixList

if TYPE_CHECKING:
    from deep_research.models import SourceRow

#: Query keys that only identify a campaign, a click or a mail recipient — never the resource.
#: Matched case-insensitively; every key starting with ``utm_`` is a tracker too. Keys that may
#: select content on some site (``ref``, ``source``, ``si``, ``id`` …) are deliberately absent.
TRACKING_PARAMS: frozenset[str] = frozenset(
    {
        "fbclid",  # Facebook click id
        "gclid",  # Google Ads click id
        "gclsrc",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",  # Microsoft Ads
        "yclid",  # Yandex
        "twclid",  # X/Twitter
        "ttclid",  # TikTok
        "li_fat_id",  # LinkedIn
        "igshid",  # Instagram share id
        "mc_cid",  # Mailchimp campaign
        "mc_eid",  # Mailchimp recipient
        "_hsenc",  # HubSpot
        "_hsmi",
        "__hstc",
        "__hssc",
        "__hsfp",
        "mkt_tok",  # Marketo
        "ref_src",  # X/Twitter embeds
        "ref_url",
        "_ga",  # Google Analytics cross-domain linker
        "_gl",
        "oly_anon_id",  # Omeda
        "oly_enc_id",
        "vero_id",  # Vero
        "vero_conv",
        "wickedid",
        "s_kwcid",  # Adobe
        "ef_id",
        "rb_clickid",
        "irclickid",  # Impact
        "_openstat",
    }
)
TRACKING_PREFIXES: tuple[str, ...] = ("utm_",)

ALLOWED_SCHEMES = frozenset({"http", "https"})
#: Local-corpus document identities (never fetched over a network).
FILE_SCHEME = "file"
MCP_SCHEME = "mcp"
DEFAULT_PORTS = {"http": 80, "https": 443}
ARXIV_HOSTS = frozenset({"arxiv.org", "www.arxiv.org", "export.arxiv.org"})

_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SUB_DELIMS = frozenset("!$&'()*+,;=")
_PATH_SAFE = _UNRESERVED | _SUB_DELIMS | frozenset(":@/")
_QUERY_SAFE = _PATH_SAFE | frozenset("?")
_HEX = frozenset("0123456789abcdefABCDEF")
_LABEL = re.compile(r"^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$")
_ARXIV_PDF = re.compile(
    r"^/pdf/(?P<id>\d{4}\.\d{4,5}|[a-z][a-z-]*(?:\.[A-Za-z]{2})?/\d{7})(?P<v>v\d+)?(?:\.pdf)?$"
)


class InvalidURL(ValueError):
    """A URL that has no canonical form: no scheme or host, a non-http(s) scheme, a bad port."""


def canonicalize(url: str) -> str:
    """The canonical spelling of ``url`` (see the module docstring), or :class:`InvalidURL`."""
    text = url.strip()
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in text):
        raise InvalidURL(f"control character in URL: {text[:80]!r}")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise InvalidURL(f"{exc}: {text[:80]!r}") from None
    scheme = parts.scheme.lower()
    if not scheme:
        raise InvalidURL(f"no scheme (expected http(s)://host/…): {text[:80]!r}")
    if scheme == FILE_SCHEME:
        return _canonical_file(parts.netloc, parts.path, text)
    if scheme == MCP_SCHEME:
        return _canonical_mcp(parts.netloc, parts.path, parts.query, text)
    if scheme not in ALLOWED_SCHEMES:
        raise InvalidURL(f"scheme {scheme!r} is not http or https: {text[:80]!r}")
    if not parts.netloc:
        raise InvalidURL(f"no host (expected http(s)://host/…): {text[:80]!r}")
    if "\\" in parts.netloc:
        # Browsers read "\" as "/", so the host a person would visit is not the parsed one.
        raise InvalidURL(f"backslash in the host part: {text[:80]!r}")
    host = _normalize_host(parts.hostname or "")
    if host is None:
        raise InvalidURL(f"invalid host in URL: {text[:80]!r}")
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    path = _remove_dot_segments(_normalize_escapes(parts.path or "/", _PATH_SAFE))
    if host in ARXIV_HOSTS and (match := _ARXIV_PDF.match(path)):
        path = f"/abs/{match['id']}{match['v'] or ''}"
    query = _canonical_query(parts.query)
    return f"{scheme}://{netloc}{path}" + (f"?{query}" if query else "")


def _canonical_file(netloc: str, path: str, text: str) -> str:
    label = netloc.lower()
    if not label:
        raise InvalidURL(
            f"a file: identity names its corpus (file://<corpus>/<path>), not a machine path: "
            f"{text[:80]!r}"
        )
    if not _LABEL.match(label):
        raise InvalidURL(f"corpus label {netloc!r} is not [a-z0-9_-]: {text[:80]!r}")
    clean = _remove_dot_segments(_normalize_escapes(path or "/", _PATH_SAFE))
    return f"{FILE_SCHEME}://{label}{clean}"


def _canonical_mcp(netloc: str, path: str, query: str, text: str) -> str:
    server = netloc.lower()
    if not _LABEL.match(server):
        raise InvalidURL(f"MCP server name {netloc!r} is not [a-z0-9_-]: {text[:80]!r}")
    tool = _normalize_escapes(path or "/", _PATH_SAFE)
    canonical_query = _canonical_query(query)
    return f"{MCP_SCHEME}://{server}{tool}" + (f"?{canonical_query}" if canonical_query else "")


def mcp_identity(server: str, tool: str, arguments: Mapping[str, object]) -> str:
    """The stable identity of one MCP tool call's result: server, tool and sorted arguments
    (strings as given, other values as compact JSON)."""
    pairs = [
        (
            key,
            value
            if isinstance(value, str)
            else json.dumps(value, sort_keys=True, separators=(",", ":")),
        )
        for key, value in sorted(arguments.items())
    ]
    query = urlencode(pairs, quote_via=quote)
    called = f"{MCP_SCHEME}://{server}/{quote(tool, safe='')}"
    return canonicalize(called + (f"?{query}" if query else ""))


def is_tracking_param(key: str) -> bool:
    name = unquote(key).lower()
    return name in TRACKING_PARAMS or name.startswith(TRACKING_PREFIXES)


def _canonical_query(query: str) -> str:
    pairs: list[tuple[str, str | None]] = []
    for item in query.split("&"):
        if not item:
            continue
        key, sep, value = item.partition("=")
        key = _normalize_escapes(key, _QUERY_SAFE)
        if is_tracking_param(key):
            continue
        pairs.append((key, _normalize_escapes(value, _QUERY_SAFE) if sep else None))
    pairs.sort(key=lambda pair: pair[0])  # stable: repeated keys keep their order
    return "&".join(key if value is None else f"{key}={value}" for key, value in pairs)


def _normalize_escapes(text: str, safe: frozenset[str]) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "%" and i + 2 < len(text) and text[i + 1] in _HEX and text[i + 2] in _HEX:
            decoded = chr(int(text[i + 1 : i + 3], 16))
            out.append(decoded if decoded in _UNRESERVED else "%" + text[i + 1 : i + 3].upper())
            i += 3
            continue
        if ch in safe:
            out.append(ch)
        else:
            try:
                raw = ch.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidURL(f"unencodable character in URL: {ch!r}") from None
            out.append("".join(f"%{byte:02X}" for byte in raw))
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    segments = path.split("/")[1:]
    out: list[str] = []
    for segment in segments:
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
    if segments and segments[-1] in (".", ".."):
        out.append("")  # "/a/b/.." names the directory "/a/", not the file "/a"
    return "/" + "/".join(out)


def _normalize_host(host: str) -> str | None:
    """Lower-case, IDNA-encoded host without a trailing dot, or None when it is not a host."""
    host = host.strip().lower().removesuffix(".")
    if not host:
        return None
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if ":" in host:
        try:
            return f"[{ipaddress.IPv6Address(host).compressed}]"
        except ValueError:
            return None
    if not host.isascii():
        try:
            host = host.encode("idna").decode("ascii").lower()
        except UnicodeError:
            return None
    labels = host.split(".")
    if len(host) > 253 or not all(_LABEL.match(label) for label in labels):
        return None
    return host


def host_of(url_or_host: str) -> str | None:
    """The normalized host of a URL, ``host:port`` or bare host; ``None`` when there is none."""
    text = url_or_host.strip()
    if "://" in text:
        try:
            text = urlsplit(text).hostname or ""
        except ValueError:
            return None
    elif text.count(":") == 1:
        text = text.partition(":")[0]  # "host:port"; more colons means an IPv6 literal
    return _normalize_host(text)


def _ip_literal(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


@cache
def _public_suffixes() -> PublicSuffixList:
    # The bundled list: owner computation must not depend on the network.
    return PublicSuffixList()


def registrable_domain(url_or_host: str) -> str | None:
    """The registrable domain ("owner") of a URL or host, public-suffix aware.

    ``https://ec.europa.eu/x`` → ``europa.eu``; ``user.github.io`` → ``user.github.io`` (the
    list's private section counts, so two GitHub Pages users are two owners). An IP address is
    its own owner; a bare public suffix or an invalid host has none (``None``).
    """
    if url_or_host.lower().startswith(f"{MCP_SCHEME}://"):
        return _mcp_owner(url_or_host)
    host = host_of(url_or_host)
    if host is None:
        return None
    if (ip := _ip_literal(host)) is not None:
        return ip
    suffix: str | None = _public_suffixes().privatesuffix(host)
    return suffix


def _mcp_owner(identity: str) -> str | None:
    """A tool that read a web page speaks for that page's owner; any other tool result is the
    server's own voice."""
    parts = urlsplit(identity)
    for key, value in parse_qsl(parts.query):
        if key == "url" and value.lower().startswith(("http://", "https://")):
            return registrable_domain(value)
    return f"{MCP_SCHEME}:{parts.netloc.lower()}" if parts.netloc else None


def host_matches(host: str, allowed: str) -> bool:
    """True when ``host`` is ``allowed`` or a subdomain of it — label-wise, never a substring.

    ``ec.europa.eu.attacker.example`` and ``notec.europa.eu`` do not match ``ec.europa.eu``.
    Both sides are compared in canonical form (case, trailing dot, IDNA); an IP address
    matches only itself.
    """
    candidate, anchor = host_of(host), host_of(allowed)
    if candidate is None or anchor is None:
        return False
    if candidate == anchor:
        return True
    if _ip_literal(anchor) is not None or _ip_literal(candidate) is not None:
        return False  # addresses have no subdomains: 10.0.0.1 is not "under" 0.0.1
    return candidate.endswith("." + anchor)


@lru_cache(maxsize=65536)
def canonical_or_none(url: str | None) -> str | None:
    """``canonicalize(url)``, or ``None`` for an empty URL or one with no canonical form.

    For comparing URLs from artifacts, where a malformed one simply matches nothing.
    """
    if not url:
        return None
    try:
        return canonicalize(url)
    except InvalidURL:
        return None


def source_urls(source: SourceRow) -> set[str]:
    """Every canonical URL a source is known by: its URL, its final URL and its aliases."""
    found = (canonical_or_none(url) for url in (source.url, source.final_url, *source.aliases))
    return {url for url in found if url is not None}


#: A URL as it appears in prose or markdown: up to whitespace, a quote, a bracket, a backtick or
#: a table pipe, and not ending in punctuation or emphasis that belongs to the sentence.
URL_PATTERN = re.compile(r"https?://[^\s<>\"'()\[\]`|]+[^\s<>\"'()\[\]`|.,;:!?*_]")


def urls_in(text: str) -> set[str]:
    """The canonical form of every http(s) URL written in ``text``."""
    return {url for raw in URL_PATTERN.findall(text) if (url := canonical_or_none(raw)) is not None}


def excerpt(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters and "…", never inside a URL: a URL the cut
    would reach is left out whole (cut in two, it would be a new, unknown URL)."""
    if len(text) <= limit:
        return text
    head = text[:limit].rstrip()
    for match in URL_PATTERN.finditer(text):
        if match.start() >= len(head):
            break
        # A URL that runs to the cut, or ends right at it, would take the "…" into itself.
        if match.end() >= len(head):
            head = text[: match.start()].rstrip()
            break
    return head + "…"


def is_web(url: str | None) -> bool:
    """An http(s) address: something a re-fetch can reach again (``file:`` documents are local)."""
    return bool(url) and str(url).split(":", 1)[0].lower() in ("http", "https")


# --- redaction ------------------------------------------------------------------------------

#: Words that make a query or fragment parameter a credential: its value is never logged.
#: A name is split into words at punctuation and camelCase (``X-Amz-Signature``, ``apiKey``);
#: one of these words, or a word ending in one of :data:`CREDENTIAL_SUFFIXES`, marks it.
CREDENTIAL_WORDS: frozenset[str] = frozenset(
    {
        "token",
        "key",
        "apikey",
        "secret",
        "password",
        "passwd",
        "pwd",
        "pass",
        "sig",
        "signature",
        "auth",
        "authorization",
        "bearer",
        "credential",
        "credentials",
        "jwt",
        "sessionid",
        "phpsessid",
        "jsessionid",
    }
)
#: Run-together spellings: ``accesstoken``, ``clientsecret``, ``xapikey``.
CREDENTIAL_SUFFIXES: tuple[str, ...] = ("token", "secret", "password", "signature", "apikey")
REDACTED = "***"

# Userinfo in every spelling a parser or a person uses: ``//user:pw@``, ``\\user:pw@``,
# ``:/user:pw@``, ``:user:pw@``, a space inside the password, a repr's doubled backslashes. It
# runs from the scheme's colon to the last "@" before the authority ends (/ \ ? # or a line end).
# A scheme starts a word that no path came before: ``/wiki/User:Ann@home`` is a path.
_USERINFO = re.compile(r"(?i)(?<![\w/\\.+%-])([a-z][a-z0-9+.-]*:[/\\]*)[^/\\?#@\s][^/\\?#\r\n]*@")
# A parameter after "?", "&", ";" or "#": its name and value, up to the next separator.
_PARAM = re.compile(r"([?&;#])([^=&;#?\s\"'<>]+)=([^&;#\s\"'<>]*)")
_NAME_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def is_credential_param(name: str) -> bool:
    """True when a parameter named ``name`` carries a credential (``access_token``, ``sig``,
    ``X-Amz-Credential``) — never for names that merely contain the letters (``author``)."""
    words = [word.lower() for word in _NAME_WORDS.findall(unquote(name))]
    return any(word in CREDENTIAL_WORDS or word.endswith(CREDENTIAL_SUFFIXES) for word in words)


def _redact_param(match: re.Match[str]) -> str:
    separator, name, value = match.groups()
    if is_credential_param(name):
        return f"{separator}{name}={REDACTED}"
    inner = unquote(value)
    if inner != value and (cleaned := redact(inner)) != inner:
        # A URL carried inside a parameter (an archive lookup's ``url=``), percent-encoded.
        return f"{separator}{name}={quote(cleaned, safe='')}"
    return match.group(0)


def has_userinfo(url: str) -> bool:
    """True when ``url`` carries ``user[:password]@`` in any spelling :func:`redact` knows."""
    return _USERINFO.search(url) is not None


def redact(text: str) -> str:
    """``text`` (a URL, or a message that holds URLs) with every credential in it replaced by
    ``***``: userinfo in any spelling and credential-like parameter values. The one redaction
    every log line and printed message about a URL goes through; idempotent."""
    without_userinfo = _USERINFO.sub(rf"\1{REDACTED}@", text)
    return _PARAM.sub(_redact_param, without_userinfo)
