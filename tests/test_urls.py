"""URL canonicalization, registrable domains and host matching."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deep_research.urls import (
    TRACKING_PARAMS,
    InvalidURL,
    canonicalize,
    host_matches,
    is_tracking_param,
    registrable_domain,
)

CANONICAL_CASES = [
    # case and default port
    ("HTTP://Example.COM:80/Path", "http://example.com/Path"),
    ("https://example.com:443/", "https://example.com/"),
    ("https://example.com:8443/", "https://example.com:8443/"),
    ("https://example.com:/x", "https://example.com/x"),
    # empty path, trailing slash kept as given, trailing dot in host
    ("https://example.com", "https://example.com/"),
    ("https://example.com/a/", "https://example.com/a/"),
    ("https://example.com/a", "https://example.com/a"),
    ("https://example.com./a", "https://example.com/a"),
    # dot segments, including percent-encoded ones
    ("https://example.com/a/./b/../c", "https://example.com/a/c"),
    ("https://example.com/a/b/..", "https://example.com/a/"),
    ("https://example.com/../../x", "https://example.com/x"),
    ("https://example.com/a/%2E%2E/b", "https://example.com/b"),
    # fragment dropped
    ("https://example.com/a#section-2", "https://example.com/a"),
    ("https://example.com/a?b=1#x", "https://example.com/a?b=1"),
    # percent-encoding: upper-case escapes, unreserved decoded, reserved kept, raw encoded
    ("https://example.com/%7euser/%2f/%3a", "https://example.com/~user/%2F/%3A"),
    ("https://example.com/a b", "https://example.com/a%20b"),
    ("https://example.com/caf\u00e9", "https://example.com/caf%C3%A9"),
    ("https://example.com/caf%c3%a9", "https://example.com/caf%C3%A9"),
    ("https://example.com/100%", "https://example.com/100%25"),
    ("https://example.com/?q=a%2Bb+c", "https://example.com/?q=a%2Bb+c"),
    # IDNA host, IPv6 literal, userinfo dropped
    ("https://B\u00fccher.Example/x", "https://xn--bcher-kva.example/x"),
    ("https://xn--bcher-kva.example/x", "https://xn--bcher-kva.example/x"),
    ("http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080/"),
    ("https://user:secret@example.com/x", "https://example.com/x"),
    # query: sorted by key, stable for repeated keys, empty pairs and empty query dropped
    ("https://example.com/?b=2&a=1", "https://example.com/?a=1&b=2"),
    ("https://example.com/?b=2&a=3&a=1", "https://example.com/?a=3&a=1&b=2"),
    ("https://example.com/?a=1&&b=", "https://example.com/?a=1&b="),
    ("https://example.com/?flag&a=1", "https://example.com/?a=1&flag"),
    ("https://example.com/x?", "https://example.com/x"),
    # surrounding whitespace
    ("  https://example.com/x \n", "https://example.com/x"),
]


@pytest.mark.parametrize(("raw", "expected"), CANONICAL_CASES)
def test_canonical_form(raw: str, expected: str) -> None:
    assert canonicalize(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "example.com/no-scheme",
        "//example.com/scheme-relative",
        "/just/a/path",
        "ftp://example.com/file",
        "mailto:someone@example.com",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "https://",
        "http:/example.com",
        "https://exa mple.com/",
        "https://a..b/",
        "https://example.com:99999/",
        "https://example.com:port/",
        "https://[::1/",
        "https://evil.example\\@good.example/",
        "https://example.com/\x00",
    ],
)
def test_invalid_urls_raise_a_value_error_subclass(raw: str) -> None:
    with pytest.raises(InvalidURL):
        canonicalize(raw)
    assert issubclass(InvalidURL, ValueError)


# --- tracking parameters ---------------------------------------------------------------------


@pytest.mark.parametrize("param", [*sorted(TRACKING_PARAMS), "utm_source", "utm_whatever"])
def test_every_documented_tracking_param_is_stripped(param: str) -> None:
    assert canonicalize(f"https://example.com/a?{param}=x&id=7") == "https://example.com/a?id=7"


def test_tracking_params_match_case_insensitively_and_when_percent_encoded() -> None:
    url = "https://example.com/?UTM_Source=a&FBCLID=b&utm%5Fmedium=c&page=3"
    assert canonicalize(url) == "https://example.com/?page=3"


@pytest.mark.parametrize(
    "meaningful",
    ["id=42", "page=2", "q=battery", "ref=main", "v=dQw4w9WgXcQ", "source=report", "s=1", "p=7"],
)
def test_meaningful_params_are_kept(meaningful: str) -> None:
    url = f"https://example.com/a?utm_source=x&{meaningful}&gclid=y"
    assert canonicalize(url) == f"https://example.com/a?{meaningful}"


def test_tracking_detection_is_by_whole_key_not_substring() -> None:
    assert is_tracking_param("fbclid")
    assert not is_tracking_param("fbclid_archive")
    assert not is_tracking_param("my_utm_source")


def test_only_tracking_params_means_no_query_at_all() -> None:
    assert canonicalize("https://example.com/a?utm_source=x&fbclid=y") == "https://example.com/a"


# --- arXiv -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("https://arxiv.org/pdf/2401.01234", "https://arxiv.org/abs/2401.01234"),
        ("https://arxiv.org/pdf/2401.01234v2", "https://arxiv.org/abs/2401.01234v2"),
        ("https://arxiv.org/pdf/2401.01234v2.pdf", "https://arxiv.org/abs/2401.01234v2"),
        ("https://arxiv.org/pdf/0704.0001.pdf", "https://arxiv.org/abs/0704.0001"),
        ("https://arxiv.org/pdf/hep-th/9901001", "https://arxiv.org/abs/hep-th/9901001"),
        ("https://arxiv.org/pdf/hep-th/9901001v3.pdf", "https://arxiv.org/abs/hep-th/9901001v3"),
        ("https://arxiv.org/pdf/math.GT/0309136", "https://arxiv.org/abs/math.GT/0309136"),
        ("https://www.arxiv.org/pdf/2401.01234", "https://www.arxiv.org/abs/2401.01234"),
        ("https://export.arxiv.org/pdf/2401.01234", "https://export.arxiv.org/abs/2401.01234"),
        ("HTTPS://ARXIV.ORG/pdf/2401.01234v1.pdf#page=3", "https://arxiv.org/abs/2401.01234v1"),
        # not arXiv ids, or not arXiv: left alone
        ("https://arxiv.org/pdf/not-an-id", "https://arxiv.org/pdf/not-an-id"),
        ("https://arxiv.org/abs/2401.01234", "https://arxiv.org/abs/2401.01234"),
        ("https://example.com/pdf/2401.01234.pdf", "https://example.com/pdf/2401.01234.pdf"),
        (
            "https://arxiv.org.evil.example/pdf/2401.01234",
            "https://arxiv.org.evil.example/pdf/2401.01234",
        ),
    ],
)
def test_arxiv_pdf_links_become_abs_pages(raw: str, expected: str) -> None:
    assert canonicalize(raw) == expected


# --- registrable domain and host matching ------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://ec.europa.eu/commission/x", "europa.eu"),
        ("https://www.bbc.co.uk/news", "bbc.co.uk"),
        ("www.BBC.co.uk", "bbc.co.uk"),
        ("www.bbc.co.uk:443", "bbc.co.uk"),
        ("example.com.", "example.com"),
        ("https://alice.github.io/post", "alice.github.io"),
        ("https://b\u00fccher.example/", "xn--bcher-kva.example"),
        ("https://127.0.0.1:8080/x", "127.0.0.1"),
        ("https://[::1]/x", "::1"),
        ("co.uk", None),
        ("localhost", None),
        ("", None),
        ("not a host", None),
        ("https://[broken/", None),
    ],
)
def test_registrable_domain(value: str, expected: str | None) -> None:
    assert registrable_domain(value) == expected


def test_two_pages_users_are_two_owners() -> None:
    assert registrable_domain("alice.github.io") != registrable_domain("bob.github.io")


@pytest.mark.parametrize(
    ("host", "allowed", "expected"),
    [
        ("ec.europa.eu", "ec.europa.eu", True),
        ("press.ec.europa.eu", "ec.europa.eu", True),
        ("EC.Europa.EU.", "ec.europa.eu", True),
        ("https://a.b.ec.europa.eu/path", "ec.europa.eu", True),
        # adversarial: the allowed name as a prefix, a substring, or a label suffix without a dot
        ("ec.europa.eu.attacker.example", "ec.europa.eu", False),
        ("notec.europa.eu", "ec.europa.eu", False),
        ("attacker-ec.europa.eu", "ec.europa.eu", False),
        ("europa.eu", "ec.europa.eu", False),
        ("ec.europa.eu.", "europa.eu", True),
        ("xn--bcher-kva.example", "b\u00fccher.example", True),
        ("10.0.0.1", "0.0.1", False),
        ("127.0.0.1", "127.0.0.1", True),
        ("", "ec.europa.eu", False),
        ("ec.europa.eu", "", False),
    ],
)
def test_host_matches_subdomains_never_substrings(host: str, allowed: str, expected: bool) -> None:
    assert host_matches(host, allowed) is expected


# --- properties ------------------------------------------------------------------------------

_label = st.from_regex(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,8}[A-Za-z0-9])?", fullmatch=True)
_hosts = st.lists(_label, min_size=1, max_size=4).map(".".join)
_segment = st.sampled_from([".", "..", "", "a", "B", "%2e", "%7E", "%zz", "%", "a b", "\u00e9"]) | (
    st.text(
        # "?" and "#" would end the path; whitespace would be stripped at the end of a URL.
        alphabet=st.characters(
            codec="utf-8",
            exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"),
            exclude_characters="?#",
        ),
        max_size=6,
    )
)
_paths = st.lists(_segment, max_size=6).map(lambda parts: "/" + "/".join(parts))
_keys = st.sampled_from(["a", "b", "id", "Q", "utm_source", "fbclid", "x%20y", "k+", "%41"]) | (
    st.text(alphabet="abcxyz_-.~%+", min_size=1, max_size=5)
)
# A blank only inside a value: a URL's surrounding whitespace is stripped, not encoded.
_values = st.text(alphabet="abc123=+%/?:@\u00e9", max_size=6) | st.just("a b")
_fragments = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=10
)


@st.composite
def _urls(draw: st.DrawFn) -> str:
    scheme = draw(st.sampled_from(["http", "https", "HTTP", "Https"]))
    host = draw(_hosts)
    port = draw(st.sampled_from(["", ":80", ":443", ":8080"]))
    path = draw(_paths)
    pairs = draw(st.lists(st.tuples(_keys, _values), max_size=5))
    query = "&".join(f"{key}={value}" for key, value in pairs)
    return f"{scheme}://{host}{port}{path}" + (f"?{query}" if pairs else "")


@settings(max_examples=400, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(_urls())
def test_canonicalize_is_idempotent(url: str) -> None:
    once = canonicalize(url)
    assert canonicalize(once) == once


@settings(max_examples=400, database=None)
@given(st.text(max_size=60))
def test_arbitrary_text_is_canonical_or_invalid_never_a_crash(text: str) -> None:
    _canonical_or_invalid(text)


@settings(max_examples=300, database=None)
@given(st.text(alphabet="htps:/[]@%.?#&=a1\u00e9 ", max_size=30).map(lambda t: "https://" + t))
def test_url_shaped_text_is_canonical_or_invalid(text: str) -> None:
    _canonical_or_invalid(text)


def _canonical_or_invalid(text: str) -> None:
    try:
        once = canonicalize(text)
    except InvalidURL:
        return
    assert canonicalize(once) == once


@settings(max_examples=300, database=None)
@given(
    _hosts,
    _paths,
    st.dictionaries(_keys, _values, min_size=2, max_size=6),
    st.randoms(use_true_random=False),
)
def test_query_order_does_not_matter(
    host: str, path: str, params: dict[str, str], rng: random.Random
) -> None:
    # Distinct keys only: for a repeated key the order of its values is meaningful.
    pairs = list(params.items())
    shuffled = pairs[:]
    rng.shuffle(shuffled)

    def build(items: list[tuple[str, str]]) -> str:
        return f"https://{host}{path}?" + "&".join(f"{k}={v}" for k, v in items)

    try:
        expected = canonicalize(build(pairs))
    except InvalidURL:
        return
    if len({canonicalize(f"https://h/?{k}=").split("?")[-1] for k, _ in pairs}) < len(pairs):
        return  # two spellings of one key ("%41" and "A") are a repeated key after all
    assert canonicalize(build(shuffled)) == expected


@settings(max_examples=300, database=None)
@given(_urls(), _fragments, _fragments)
def test_fragment_does_not_matter(url: str, first: str, second: str) -> None:
    base = url.split("#")[0]
    assert canonicalize(f"{base}#{first}") == canonicalize(base) == canonicalize(f"{base}#{second}")


def test_local_corpus_identities_canonicalize_and_machine_paths_do_not() -> None:
    assert canonicalize("FILE://Notes/a/../b%7e.md#part") == "file://notes/b~.md"
    assert canonicalize("file://python-docs/comparisons") == "file://python-docs/comparisons"
    assert canonicalize(canonicalize("file://n/x%2fy")) == canonicalize("file://n/x%2fy")
    for bad in ("file:///etc/passwd", "file://bad label/x", "file:relative"):
        with pytest.raises(InvalidURL):
            canonicalize(bad)
    assert registrable_domain("file://python-docs/comparisons") is None  # owner is declared
