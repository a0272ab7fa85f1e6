"""urls.redact, the one redaction every logged or printed URL goes through: userinfo in every
spelling, credential-like parameters, and nothing that merely looks like them."""

from __future__ import annotations

import pytest

from deep_research.urls import has_userinfo, is_credential_param, redact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://user:pw@host/x", "http://***@host/x"),
        ("http://user:pa ss@host/x", "http://***@host/x"),
        ("http:\\\\user:pw@host/", "http:\\\\***@host/"),
        ("HTTP:/user:pw@host/", "HTTP:/***@host/"),
        ("http:user:pw@host/", "http:***@host/"),
        ("http://a@b@host/x", "http://***@host/x"),
        # A reason that quotes a URL through repr(), backslashes doubled.
        (
            "bad_url: no host: 'http:\\\\\\\\user:pw@host'",
            "bad_url: no host: 'http:\\\\\\\\***@host'",
        ),
        ("https://h/?next=http://u:p@other/", "https://h/?next=http://***@other/"),
        ("https://h/p?token=t1&q=1#access_token=t2", "https://h/p?token=***&q=1#access_token=***"),
        (
            "https://h/?X-Amz-Signature=s&X-Amz-Credential=c",
            "https://h/?X-Amz-Signature=***&X-Amz-Credential=***",
        ),
        ("https://h/?apiKey=k&sig=s;jsessionid=j", "https://h/?apiKey=***&sig=***;jsessionid=***"),
        (
            "robots.txt disallows https://h/a?password=p now",
            "robots.txt disallows https://h/a?password=*** now",
        ),
        # A URL inside a parameter, percent-encoded (an archive lookup's url=).
        (
            "https://a/?url=http%3A%2F%2Fu%3Ap%40h%2F",
            "https://a/?url=http%3A%2F%2F%2A%2A%2A%40h%2F",
        ),
    ],
)
def test_credentials_are_redacted_in_every_spelling(text: str, expected: str) -> None:
    assert redact(text) == expected
    assert redact(expected) == expected  # idempotent


@pytest.mark.parametrize(
    "text",
    [
        "https://en.wikipedia.org/wiki/User:Ann@home",
        "https://medium.com/@writer/post",
        "https://example.com/search?q=@user&author=ann&keyword=key&monkey=1",
        "https://example.com/?code=FR&id=7&passage=3",
        "timeout",
    ],
)
def test_what_only_looks_like_a_credential_is_left_alone(text: str) -> None:
    assert redact(text) == text and not has_userinfo(text)


@pytest.mark.parametrize(
    ("name", "credential"),
    [
        ("token", True),
        ("access_token", True),
        ("accessToken", True),
        ("clientsecret", True),
        ("X-Amz-Security-Token", True),
        ("Key-Pair-Id", True),
        ("PHPSESSID", True),
        ("auth", True),
        ("author", False),
        ("keyword", False),
        ("passage", False),
        ("code", False),
    ],
)
def test_credential_parameter_names(name: str, credential: bool) -> None:
    assert is_credential_param(name) is credential
