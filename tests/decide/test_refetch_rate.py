"""Phase 6b against real loopback servers: live re-fetch, changed text, archive fallback."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from briefs import PageSpec, read_claims, write_brief
from deep_research.brief.layout import Brief
from deep_research.decide.refetch_rate import run_refetch
from deep_research.fetch.archive import fetch_archived
from deep_research.fetch.fetcher import Fetcher
from deep_research.fetch.refetch_sample import Cited, choose_sample, cited_sources, sample_size
from deep_research.models import ClaimsFile, SourceRow
from localhttp import HANG_S, LocalServer, Route, loopback_policy, nxdomain, words

QUOTES = [
    "The harbor handled 1,234 ships in 2023, a record for the port.",
    "Regional exports grew by 4.5 percent over the previous year.",
    "The council approved a new budget of 12 million euros in March.",
]
pytestmark = pytest.mark.usefixtures("tripwire")


def long_text(quote: str, seed: str) -> str:
    return f"{words(300, seed)}. {quote} {words(300, seed)}."


def build(root: Path, server: LocalServer, *, central: int | None = None) -> Path:
    pages = [
        PageSpec(
            url=server.url(f"/s{number}"),
            text=long_text(quote, f"seed{number}"),
            findings=[(f"claim {number}", quote)],
            importance=["central" if central == number else "supporting"],
        )
        for number, quote in enumerate(QUOTES, start=1)
    ]
    claims = [{"claim": f"claim {n}", "supporting": [f"S{n}"]} for n in range(1, 4)]
    return write_brief(root, pages, claims)


def serve_unchanged(server: LocalServer, number: int) -> None:
    text = long_text(QUOTES[number - 1], f"seed{number}")
    server.routes[f"/s{number}"] = Route(body=text, content_type="text/plain; charset=utf-8")


def refetch(root: Path, server: LocalServer, archive: LocalServer, **limits: Any) -> Any:
    policy = loopback_policy(server.port, **limits)
    # The fake archive is a second loopback server: allow its port too.
    net = policy.net.__class__(
        private_allowlist=policy.net.private_allowlist,
        extra_ports=policy.net.extra_ports | {archive.port},
        resolver=policy.net.resolver,
    )
    return run_refetch(root, policy=policy.__class__(net=net, **limits), archive=archive.url(""))


@pytest.fixture
def archive() -> Any:
    with LocalServer() as running:
        yield running


def test_pass_changed_text_and_archive_fallback(
    tmp_path: Path, server: LocalServer, archive: LocalServer
) -> None:
    root = build(tmp_path, server)
    serve_unchanged(server, 1)
    server.routes["/s2"] = Route(  # the page changed: the figure is gone
        body=long_text("Regional exports changed little.", "seed2"), content_type="text/plain"
    )
    server.routes["/s3"] = Route(status=404)
    capture = f"/web/20240501093000id_/{server.url('/s3')}"
    archive.routes["/wayback/available"] = Route(
        body=json.dumps(
            {
                "archived_snapshots": {
                    "closest": {
                        "available": True,
                        "status": "200",
                        "timestamp": "20240501093000",
                        "url": "http://elsewhere.example/",
                    }
                }
            }
        ),
        content_type="application/json",
    )
    archive.routes[capture] = Route(body=long_text(QUOTES[2], "seed3"), content_type="text/plain")

    report = refetch(root, server, archive)

    outcomes = {record.source: (record.outcome, record.tier) for record in report.records}
    assert outcomes == {"S1": ("pass", "raw"), "S2": ("fail", "raw"), "S3": ("pass", "degraded")}
    assert report.pass_rate == pytest.approx(2 / 3, abs=1e-4)
    lookups = [hit for hit in archive.hits if hit.startswith("/wayback/available")]
    assert len(lookups) == 1 and "timestamp=20240501100000" in lookups[0]  # nearest retrieved_at
    assert capture in archive.hits
    assert read_claims(root)["refetch_pass_rate"] == pytest.approx(0.6667)
    trace = json.loads((root / "trace.json").read_text())
    assert trace["phases"]["refetch"]["failed"] == 1
    assert trace["counters"]["refetch_sample"] == 3
    s2 = next(r for r in trace["phases"]["refetch"]["records"] if r["source"] == "S2")
    assert s2["missing"] == ["S2.F1"]
    # Archive text is retained and logged with tier degraded, like any fetch.
    degraded = [e for e in Brief(root).load_fetch_log() if e.tier == "degraded"]
    assert len(degraded) == 1 and degraded[0].outcome == "ok"


def test_short_pages_are_checked_and_dead_sources_excluded(
    tmp_path: Path, server: LocalServer, archive: LocalServer
) -> None:
    root = build(tmp_path, server)
    server.routes["/s1"] = Route(body=QUOTES[0], content_type="text/plain")  # a dozen words
    server.routes["/s2"] = Route(body="Regional exports changed.", content_type="text/plain")
    server.routes["/s3"] = Route(status=500)
    archive.routes["/wayback/available"] = Route(
        body='{"archived_snapshots": {}}', content_type="application/json"
    )
    report = refetch(root, server, archive)
    outcomes = {record.source: record.outcome for record in report.records}
    # The quote is on the short page or it is not; only no text at all is unreachable.
    assert outcomes == {"S1": "pass", "S2": "fail", "S3": "unreachable"}
    assert report.excluded == 1 and report.pass_rate == 0.5


def test_refetch_cannot_hang(tmp_path: Path, server: LocalServer, archive: LocalServer) -> None:
    root = build(tmp_path, server)
    for number in (1, 2, 3):
        server.routes[f"/s{number}"] = Route(body="late", delay_s=HANG_S)
    archive.routes["/wayback/available"] = Route(body="{}", delay_s=HANG_S)
    started = time.monotonic()
    report = refetch(root, server, archive, timeout_s=0.2)
    elapsed = time.monotonic() - started
    # 3 sources x (1 live + 1 archive) x 0.2 s when each try keeps its deadline; one try that
    # waited for its server alone would take HANG_S.
    assert elapsed < HANG_S / 2, elapsed
    assert [record.outcome for record in report.records] == ["unreachable"] * 3
    assert report.pass_rate is None and read_claims(root)["refetch_pass_rate"] is None
    # One live try and one archive try per source: no loops.
    assert sorted(hit for hit in server.hits if hit.startswith("/s")) == ["/s1", "/s2", "/s3"]
    assert len([hit for hit in archive.hits if hit.startswith("/wayback")]) == 3


def _cited(number: int, central: bool) -> Cited:
    row = SourceRow(id=f"S{number}", url=f"https://example.com/{number}")
    return Cited(row, {f"S{number}.F1": "quote"}, central)


def test_sample_is_deterministic_sized_and_central_first() -> None:
    cited = [_cited(n, central=n in (7, 33)) for n in range(1, 41)]
    first = choose_sample("brief-a", cited)
    assert len(first) == sample_size(40) == 4
    assert {item.source.id for item in first[:2]} == {"S7", "S33"}
    assert [i.source.id for i in choose_sample("brief-a", list(reversed(cited)))] == [
        i.source.id for i in first
    ]
    assert sample_size(2) == 2 and sample_size(5) == 3 and sample_size(31) == 4
    # Seeded by the brief id: another brief samples other non-central sources.
    assert [i.source.id for i in choose_sample("brief-b", cited)[2:]] != [
        i.source.id for i in first[2:]
    ]


def test_refetch_command(
    tmp_path: Path,
    server: LocalServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from deep_research.cli import main

    root = build(tmp_path, server)
    for number in (1, 2, 3):
        serve_unchanged(server, number)
    monkeypatch.setenv("DEEP_RESEARCH_TEST_PRIVATE_CIDRS", "127.0.0.1/32")
    monkeypatch.setenv("DEEP_RESEARCH_TEST_PORTS", str(server.port))
    assert main(["refetch", str(root), "--archive-base", server.url("")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["refetch_pass_rate"] == 1.0 and summary["sampled"] == 3
    ClaimsFile.model_validate_json((root / "claims.json").read_text())


def test_local_documents_are_never_sampled_for_a_refetch() -> None:
    def row(number: int, url: str) -> SourceRow:
        return SourceRow.model_validate(
            {
                "id": f"S{number}",
                "url": url,
                "content_hash": "sha256:" + "0" * 64,
                "findings": [{"id": f"S{number}.F1", "claim": "c", "quote": "q" * 40}],
            }
        )

    rows = [row(1, "https://example.com/a"), row(2, "file://docs/alpha/b.md")]
    document = ClaimsFile.model_validate(
        {
            "topic": "t",
            "question": "q",
            "generated": "2026-01-01",
            "depth": "full",
            "claims": [
                {
                    "id": "C1",
                    "claim": "c",
                    "supporting": ["S1", "S2"],
                    "findings": ["S1.F1", "S2.F1"],
                }
            ],
        }
    )
    assert [item.source.id for item in cited_sources(document, rows)] == ["S1"]


def test_a_source_whose_name_no_longer_resolves_goes_to_the_archive(
    tmp_path: Path, server: LocalServer, archive: LocalServer
) -> None:
    gone = f"http://gone.invalid:{server.port}/s3"
    pages = [
        PageSpec(
            url=server.url(f"/s{number}") if number < 3 else gone,
            text=long_text(quote, f"seed{number}"),
            findings=[(f"claim {number}", quote)],
        )
        for number, quote in enumerate(QUOTES, start=1)
    ]
    root = write_brief(
        tmp_path, pages, [{"claim": f"claim {n}", "supporting": [f"S{n}"]} for n in (1, 2, 3)]
    )
    serve_unchanged(server, 1)
    serve_unchanged(server, 2)
    stamp = "20240501093000"
    archive.routes["/wayback/available"] = Route(
        body=json.dumps({"archived_snapshots": {"closest": {"status": "200", "timestamp": stamp}}}),
        content_type="application/json",
    )
    archive.routes[f"/web/{stamp}id_/{gone}"] = Route(
        body=long_text(QUOTES[2], "seed3"), content_type="text/plain"
    )
    policy = nxdomain(loopback_policy(server.port), "gone.invalid")
    policy = replace(policy, net=replace(policy.net, extra_ports={server.port, archive.port}))

    report = run_refetch(root, policy=policy, archive=archive.url(""))

    s3 = next(record for record in report.records if record.source == "S3")
    assert s3.live == "error: network_error: name does not resolve"
    assert (s3.outcome, s3.tier) == ("pass", "degraded")
    assert report.pass_rate == 1.0


def test_a_url_that_carries_credentials_is_never_sent_to_the_archive(
    tmp_path: Path, archive: LocalServer
) -> None:
    policy = loopback_policy(archive.port)
    with Fetcher(Brief(tmp_path), policy) as fetcher:
        result, what = fetch_archived(
            fetcher, "https://example.com/report?api_key=k-123", None, archive.url("")
        )
    assert result is None and what == "not asked: the URL carries credentials"
    assert archive.hits == []


def test_a_cited_source_nothing_fetched_is_never_requested(
    tmp_path: Path, server: LocalServer, archive: LocalServer
) -> None:
    """A row naming a URL the run never fetched (a model-written one) cannot make 6b send it."""
    with LocalServer() as outside:
        leak = outside.url("/collect?s=secret-scope")
        pages = [
            PageSpec(
                url=server.url("/s1"),
                text=long_text(QUOTES[0], "seed1"),
                findings=[("claim 1", QUOTES[0])],
            ),
            PageSpec(
                url=leak,
                text=long_text(QUOTES[1], "seed2"),
                findings=[("claim 2", QUOTES[1])],
                fetch="never",
            ),
        ]
        claims = [{"claim": f"claim {n}", "supporting": [f"S{n}"]} for n in (1, 2)]
        root = write_brief(tmp_path, pages, claims)
        serve_unchanged(server, 1)
        report = refetch(root, server, archive)
        assert outside.hits == []
        assert [record.source for record in report.records] == ["S1"]
