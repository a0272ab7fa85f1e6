"""The cited pages: fetched once each into the check folder, then read back from it alone.

Fetching goes through the project's one fetcher (:class:`~deep_research.fetch.fetcher.Fetcher`)
with the policy a run uses (:func:`~deep_research.fetch.fetcher.policy_from_env`): the SSRF
guard, robots.txt, the byte and time caps, the retained text under ``corpus/`` and every attempt
in ``fetch-log.jsonl``. A URL the folder already holds a good fetch of is not fetched again.

Reading never touches the network: a URL's page is its last page attempt in the fetch log —
its retained text when it succeeded (checked against its hash), else the attempt's own reason
(``http_404``, ``robots_disallowed``, ``private_address``, ``timeout``…). The live check and
``verify --offline`` both judge from what this returns, so they cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from functools import cached_property

from deep_research.brief.layout import Brief
from deep_research.brief.readers import parse_json, read_text
from deep_research.errors import InputError
from deep_research.fetch.corpus import meta_path
from deep_research.fetch.fetcher import Fetcher, FetchPolicy, policy_from_env
from deep_research.fetch.fetchlog import succeeded
from deep_research.gates.locate import Document
from deep_research.models import CorpusMeta, FetchLogEntry
from deep_research.urls import redact

#: Why a URL that was never fetched has no page.
NOT_FETCHED = "not_fetched"
#: Why a link to a file has no page: nothing on someone's disk is fetched.
LOCAL_FILE = "local_file"


@dataclass(frozen=True)
class Page:
    """A cited page as retained: its text, and what it states about itself."""

    url: str
    text: str
    title: str | None = None
    published: date | None = None

    @cached_property
    def document(self) -> Document:
        return Document(self.text)


@dataclass(frozen=True)
class Unreachable:
    """A cited URL with no page, and the fetch's own reason (its code, before any detail)."""

    url: str
    reason: str


Fetched = Page | Unreachable


def log_key(url: str) -> str:
    """A URL as the fetch log writes it (stripped, credentials redacted)."""
    return redact(url.strip()) or "(empty)"


def reason_code(entry: FetchLogEntry) -> str:
    """The short stable code of a failed attempt: ``http_404``, ``robots_disallowed``…"""
    return (entry.reason or entry.outcome).split(":", 1)[0].strip() or entry.outcome


def fetch_missing(
    folder: Brief,
    urls: Iterable[str],
    *,
    policy: FetchPolicy | None = None,
    progress: Callable[[str], None] | None = None,
) -> int:
    """Fetch each URL of ``urls`` the folder holds no good fetch of; how many were fetched."""
    held = {log_key(entry.url) for entry in _pages(folder.load_fetch_log()) if succeeded(entry)}
    wanted = [url for url in dict.fromkeys(urls) if log_key(url) not in held]
    if not wanted:
        return 0
    with Fetcher(folder, policy or policy_from_env(), use_brief_hosts=False) as fetcher:
        for number, url in enumerate(wanted, start=1):
            result = fetcher.fetch(url)
            if progress is not None:
                outcome = "ok" if result.ok else f"{result.entry.outcome}: {result.entry.reason}"
                progress(f"fetched {number}/{len(wanted)} {redact(url)} ({outcome})")
    return len(wanted)


def _pages(log: Iterable[FetchLogEntry]) -> list[FetchLogEntry]:
    return [entry for entry in log if entry.purpose == "page"]


def read_pages(folder: Brief, urls: Iterable[str]) -> dict[str, Fetched]:
    """Each URL's page as the folder holds it (see the module docstring), keyed by the URL as
    the report wrote it."""
    last: dict[str, FetchLogEntry] = {}
    for entry in _pages(folder.load_fetch_log()):
        last[entry.url] = entry
    found: dict[str, Fetched] = {}
    texts: dict[str, Page] = {}
    for url in dict.fromkeys(urls):
        attempt = last.get(log_key(url))
        if attempt is None:
            found[url] = Unreachable(url, NOT_FETCHED)
        elif not succeeded(attempt) or attempt.content_hash is None:
            found[url] = Unreachable(url, reason_code(attempt))
        else:
            page = texts.get(attempt.content_hash)
            if page is None:
                page = _page(folder, url, attempt.content_hash)
                texts[attempt.content_hash] = page
            found[url] = (
                page if page.url == url else Page(url, page.text, page.title, page.published)
            )
    return found


def _page(folder: Brief, url: str, content_hash: str) -> Page:
    text = folder.read_corpus(content_hash)
    meta = _meta(folder, content_hash)
    return Page(
        url,
        text,
        title=meta.title if meta is not None else None,
        published=meta.published_at if meta is not None else None,
    )


def _meta(folder: Brief, content_hash: str) -> CorpusMeta | None:
    path = meta_path(folder, content_hash)
    if not path.is_file():
        return None
    try:
        return CorpusMeta.model_validate(
            parse_json(read_text(path, what="corpus metadata"), what=str(path))
        )
    except (InputError, ValueError):
        return None
