"""A thin Internet Archive client on the guarded fetcher: one lookup, one capture, no loops.

Availability lookup ``{base}/wayback/available?url=…&timestamp=YYYYMMDDhhmmss`` names the
capture nearest the original retrieval time; the raw capture ``{base}/web/{timestamp}id_/{url}``
is then fetched like any page (same SSRF guard, robots, caps and total deadline), stored in the
corpus and logged with tier ``degraded``. The capture URL is built from the configured base,
never taken from the lookup's answer, so the archive's reply cannot point the fetcher elsewhere.
A URL that carries credentials (userinfo, a token-like parameter) is never sent to the archive.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from urllib.parse import quote

from deep_research.fetch.fetcher import Fetcher, FetchResult
from deep_research.urls import redact

DEFAULT_ARCHIVE_BASE = "https://web.archive.org"
ARCHIVE_BASE_ENV = "DEEP_RESEARCH_ARCHIVE_BASE"
_TIMESTAMP = re.compile(r"^[0-9]{14}$")


def archive_base(override: str | None = None) -> str:
    return (override or os.environ.get(ARCHIVE_BASE_ENV) or DEFAULT_ARCHIVE_BASE).rstrip("/")


def timestamp(moment: datetime | None) -> str:
    when = moment or datetime.now(UTC)
    if when.tzinfo is not None:
        when = when.astimezone(UTC)
    return when.strftime("%Y%m%d%H%M%S")


def availability_url(base: str, url: str, moment: datetime | None) -> str:
    return f"{base}/wayback/available?url={quote(url, safe='')}&timestamp={timestamp(moment)}"


def capture_url(base: str, stamp: str, url: str) -> str:
    return f"{base}/web/{stamp}id_/{url}"


def closest_timestamp(answer: object) -> str | None:
    """The capture timestamp in an availability answer, if it names a usable 2xx capture."""
    if not isinstance(answer, dict):
        return None
    snapshots = answer.get("archived_snapshots")
    closest = snapshots.get("closest") if isinstance(snapshots, dict) else None
    if not isinstance(closest, dict) or closest.get("available") is False:
        return None
    status = str(closest.get("status", "200"))
    stamp = str(closest.get("timestamp", ""))
    if not status.startswith("2") or not _TIMESTAMP.match(stamp):
        return None
    return stamp


def fetch_archived(
    fetcher: Fetcher, url: str, retrieved_at: datetime | None, base: str
) -> tuple[FetchResult | None, str]:
    """One archive try for ``url``: the capture's fetch result (or None) and what happened."""
    if redact(url) != url:
        return None, "not asked: the URL carries credentials"
    answer = fetcher.fetch_json(availability_url(base, url, retrieved_at))
    if answer is None:
        return None, "archive lookup failed"
    stamp = closest_timestamp(answer)
    if stamp is None:
        return None, "no archived capture"
    result = fetcher.fetch(capture_url(base, stamp, url), tier="degraded")
    return result, f"capture {stamp}: {result.entry.outcome}"
