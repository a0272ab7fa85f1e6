"""Offline re-verification: same verdicts from the retained corpus, with the network off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from briefs import PageSpec, write_brief
from deep_research.brief import Brief
from deep_research.cli import main
from deep_research.decide.verify import run_verify
from deep_research.fetch import netguard, netpolicy
from deep_research.fetch.fetcher import Fetcher
from deep_research.gates.trace import TraceOptions, run_trace

TEXT = (
    "The port authority said the harbor handled 1,234 ships in 2023, a record for the port. "
    "Officials expect similar traffic next year as trade routes shift toward the north."
)


def traced_brief(root: Path) -> Path:
    supported = "the harbor handled 1,234 ships in 2023, a record for the port"
    pages = [
        PageSpec("https://port.example/report", TEXT, [("Ships in 2023.", supported)]),
        PageSpec("https://news.example/a", TEXT, [("Doubled.", "harbor handled 9,999 ships")]),
        PageSpec("https://down.example/", None, fetch="error"),
    ]
    claims = [
        {"claim": "The harbor handled 1,234 ships in 2023.", "supporting": ["S1"]},
        {"claim": "The harbor handled 9,999 ships in 2023.", "supporting": ["S2"]},
        {"claim": "Traffic will grow.", "supporting": ["S3"]},
    ]
    write_brief(root, pages, claims)
    run_trace(TraceOptions(brief=root))
    return root


@pytest.fixture
def no_sockets(monkeypatch: pytest.MonkeyPatch, tripwire: list[Any]) -> list[Any]:
    calls: list[Any] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        raise AssertionError("offline verification opened a connection")

    monkeypatch.setattr(netguard, "open_connection", refuse)
    return calls


def test_offline_verification_reproduces_the_stored_verdicts(
    tmp_path: Path, no_sockets: list[Any], tripwire: list[Any]
) -> None:
    root = traced_brief(tmp_path)
    stored = json.loads((root / "claims.json").read_text())
    classes = [claim["support_class"] for claim in stored["claims"]]
    assert classes == ["Supported", "Unsupported", "Uncertain"]
    before = sorted((path.name, path.stat().st_mtime_ns) for path in root.rglob("*"))
    report = run_verify(root, offline=True)
    assert report.identical, report.as_dict()
    assert report.claims == 3 and report.offline
    assert sorted((p.name, p.stat().st_mtime_ns) for p in root.rglob("*")) == before  # no writes
    assert no_sockets == [] and tripwire == []
    assert not netpolicy.network_disabled()  # restored after the library call


def test_the_fetcher_refuses_while_offline(tmp_path: Path, no_sockets: list[Any]) -> None:
    with netpolicy.offline(), Fetcher(Brief(tmp_path / "b")) as fetcher:
        result = fetcher.fetch("https://port.example/report")
    assert result.entry.outcome == "refused"
    assert (result.entry.reason or "").startswith("network_disabled")
    assert no_sockets == []


def test_an_edited_corpus_or_verdict_is_reported(tmp_path: Path) -> None:
    root = traced_brief(tmp_path)
    document = json.loads((root / "claims.json").read_text())
    document["claims"][1]["support_class"] = "Supported"  # a verdict nobody can reproduce
    (root / "claims.json").write_text(json.dumps(document))
    report = run_verify(root)
    assert not report.identical
    assert any(line.startswith("C2: support_class") for line in report.mismatches)


def test_verify_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = traced_brief(tmp_path)
    assert main(["verify", str(root), "--offline"]) == 0
    assert json.loads(capsys.readouterr().out)["identical"] is True


def test_verify_needs_stored_verdicts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_brief(
        tmp_path, [PageSpec("https://a.example/", TEXT)], [{"claim": "x", "supporting": ["S1"]}]
    )
    assert main(["verify", str(tmp_path), "--offline"]) == 2
    assert "run deep-research trace first" in capsys.readouterr().err


def test_offline_verification_covers_the_verdict(tmp_path: Path, no_sockets: list[Any]) -> None:
    from briefs import (
        ready_claims,
        ready_document,
        ready_pages,
        ready_trace,
        run_gates_before_verdict,
    )
    from deep_research.decide.verdict import run_verdict
    from deep_research.settings import Settings

    root = tmp_path / "brief"
    write_brief(root, ready_pages(), ready_claims(), document=ready_document(), trace=ready_trace())
    settings = Settings(tau_threshold=0.5)  # a non-default setting must be honoured offline too
    run_gates_before_verdict(root, settings)
    assert run_verdict(root, settings).verdict == "READY"
    assert run_verify(root).identical
    claims = json.loads((root / "claims.json").read_text())
    claims["verdict"] = "PARTIAL"
    (root / "claims.json").write_text(json.dumps(claims))
    mismatches = run_verify(root).mismatches
    assert mismatches == ["verdict: stored PARTIAL, recomputed READY"]
    assert no_sockets == []
