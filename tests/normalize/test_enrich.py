"""normalize --brief: a new row's fetch fields come from the fetch log and corpus metadata."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from briefs import FETCHED_AT, content_hash, page, retain_page
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.fetch import fetchlog
from deep_research.fetch.fetcher import Fetcher
from deep_research.models import FetchLogEntry, SourceRow
from localhttp import LocalServer, Route, loopback_policy

AGENCY = "https://www.northern-energy.example/reports/heat-pumps-2024"
QUOTE = (
    "Sales of heat pumps across the twelve member states rose to 2.9 million units in 2023, "
    "up from 2.4 million units in 2022."
)


def normalized(root: Path, tmp_path: Path, sources: list[dict[str, Any]]) -> list[SourceRow]:
    given = tmp_path / "fetcher.json"
    given.write_text(json.dumps({"sub_question": "sq1", "sources": sources}), encoding="utf-8")
    assert main(["normalize", str(given), "--brief", str(root), "--sub-question", "sq1"]) == 0
    lines = (root / "sources.jsonl").read_text(encoding="utf-8").splitlines()
    return [SourceRow.model_validate_json(line) for line in lines]


def finding() -> dict[str, str]:
    return {"claim": "Sales reached 2.9 million in 2023.", "quote": QUOTE}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    directory = tmp_path / "brief"
    directory.mkdir()
    return directory


def test_fetch_fields_come_from_the_log_and_the_meta_not_the_model(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    digest = retain_page(
        root,
        AGENCY,
        page("heat-pumps-agency.txt"),
        title="Heat Pump Market Review 2024",
        published_at=date(2024, 3, 14),
    )
    claimed = {
        "url": AGENCY,
        "title": "A title the model made up",
        "published_at": "1999-01-01",
        "tier": "summarizer",
        "status": 404,
        "final_url": "https://elsewhere.example/",
        "retrieved_at": "2020-01-01T00:00:00Z",
        "findings": [finding()],
    }
    (row,) = normalized(root, tmp_path, [claimed])
    assert row.content_hash == digest  # the model named none; the URL's one logged text
    assert (row.tier, row.status, row.final_url) == ("raw", 200, AGENCY)
    assert row.retrieved_at == FETCHED_AT
    assert (row.title, row.published_at) == ("Heat Pump Market Review 2024", date(2024, 3, 14))
    assert "warning:" not in capsys.readouterr().err


def test_a_source_nothing_was_fetched_for_stays_a_snippet_with_a_warning(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    retain_page(root, AGENCY, page("heat-pumps-agency.txt"))
    never = "https://never-fetched.example/page"
    claimed = {
        "url": never,
        "tier": "raw",
        "title": "Looks fetched",
        "content_hash": content_hash(page("heat-pumps-agency.txt")),
        # A final URL the model wrote never finds a fetch: only the URL and its aliases do.
        "final_url": AGENCY,
        "findings": [finding()],
    }
    (row,) = normalized(root, tmp_path, [claimed])
    assert (row.tier, row.content_hash, row.title, row.final_url) == ("snippet", None, None, None)
    err = capsys.readouterr().err
    assert f"warning: S1 ({never}): no successful fetch of this URL" in err
    assert "dropped content_hash, tier, final_url, title" in err


def test_failed_and_refused_fetches_stand_behind_nothing(root: Path, tmp_path: Path) -> None:
    attempts = (("error", 503), ("refused", None), ("ok", 404))
    for outcome, status in attempts:
        url = f"https://{outcome}{status}.example/"
        entry = FetchLogEntry(url=url, outcome=outcome, status=status, tier="raw")  # type: ignore[arg-type]
        fetchlog.append(Brief(root), entry)
    rows = normalized(
        root,
        tmp_path,
        [{"url": f"https://{o}{s}.example/", "tier": "raw"} for o, s in attempts],
    )
    assert [row.tier for row in rows] == ["snippet"] * 3
    assert all(row.status is None for row in rows)


def test_the_named_text_is_kept_when_the_url_was_fetched_twice(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    retain_page(root, AGENCY, "Version one of the page, long enough to quote from it.")
    later = datetime(2024, 5, 2, tzinfo=UTC)
    second = retain_page(
        root, AGENCY, "Version two of the page, long enough to quote from it.", at=later
    )
    (row,) = normalized(root, tmp_path, [{"url": AGENCY, "content_hash": second}])
    assert (row.content_hash, row.retrieved_at) == (second, later)
    other = tmp_path / "other"
    other.mkdir()
    retain_page(other, AGENCY, "Version one of the page, long enough to quote from it.")
    retain_page(other, AGENCY, "Version two of the page, long enough to quote from it.", at=later)
    (unnamed,) = normalized(other, tmp_path, [{"url": AGENCY}])
    assert (unnamed.content_hash, unnamed.tier) == (None, "snippet")
    assert "fetched as different texts" in capsys.readouterr().err


def test_a_hash_the_url_never_logged_gives_way_to_the_logged_one(
    root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    digest = retain_page(root, AGENCY, page("heat-pumps-agency.txt"))
    wrong = content_hash("some other page")
    (row,) = normalized(root, tmp_path, [{"url": AGENCY, "content_hash": wrong}])
    assert row.content_hash == digest and row.tier == "raw"
    assert f"content_hash {wrong} is no text fetched from this URL" in capsys.readouterr().err


def test_a_tracked_url_finds_the_fetch_and_existing_rows_keep_their_fields(
    root: Path, tmp_path: Path
) -> None:
    retain_page(root, AGENCY, page("heat-pumps-agency.txt"))
    existing = {"id": "S1", "url": "https://kept.example/", "tier": "summarizer", "title": "Kept"}
    (root / "sources.jsonl").write_text(json.dumps(existing) + "\n", encoding="utf-8")
    kept, new = normalized(root, tmp_path, [{"url": AGENCY + "?utm_source=feed"}])
    assert (kept.tier, kept.title) == ("summarizer", "Kept")
    assert (new.id, new.tier, new.status) == ("S2", "raw", 200)


DECLARED = (
    "<html><head><title>Heat Pump Market Review 2024</title>"
    '<meta property="article:published_time" content="2024-03-14T09:00:00Z"></head><body>'
    "<article><h1>Heat Pump Market Review 2024</h1><p>" + QUOTE + "</p>"
    "<p>Posted in a thread on 1 January 1999, this page is older than its review.</p>"
    "</article></body></html>"
)


def test_a_real_fetch_keeps_what_the_page_declares_and_normalize_takes_it(
    server: LocalServer, root: Path, tmp_path: Path
) -> None:
    server.routes["/review"] = Route(body=DECLARED)
    undated = DECLARED.replace(
        '<meta property="article:published_time" content="2024-03-14T09:00:00Z">', ""
    )
    server.routes["/undated"] = Route(body=undated.replace("Review 2024", "Review"))
    server.routes["/plain"] = Route(body=QUOTE, content_type="text/plain")
    with Fetcher(Brief(root), loopback_policy(server.port)) as fetcher:
        fetches = [fetcher.fetch(server.url(path)) for path in ("/review", "/undated", "/plain")]
    assert all(result.ok for result in fetches)
    given = [
        {"url": server.url("/review"), "title": "Made up", "findings": [finding()]},
        {"url": server.url("/undated"), "published_at": "2020-01-01"},
        {"url": server.url("/plain"), "title": "Made up", "published_at": "2020-01-01"},
    ]
    html, undated_row, text = normalized(root, tmp_path, given)
    assert (html.title, html.published_at) == ("Heat Pump Market Review 2024", date(2024, 3, 14))
    assert (html.tier, html.status) == ("raw", 200)
    assert html.content_hash == fetches[0].entry.content_hash
    # A date in the running text is not a declared publication date, and is never inferred.
    assert (undated_row.title, undated_row.published_at) == ("Heat Pump Market Review", None)
    # A text page declares nothing: the model's title and date are not taken instead.
    assert (text.title, text.published_at, text.tier) == (None, None, "raw")
