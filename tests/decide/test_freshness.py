"""Freshness: the reuse-or-regenerate decision, and how old a brief's evidence is."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from deep_research.cli import main
from deep_research.decide.freshness import decide, evidence_freshness
from deep_research.errors import InconsistentArtifacts
from deep_research.models import ClaimsFile, FetchLogEntry, SourceRow
from deep_research.settings import Settings

SETTINGS = Settings()
TODAY = date(2024, 6, 1)


def _doc(**fields: Any) -> ClaimsFile:
    return ClaimsFile.model_validate({"topic": "t", "depth": "full", **fields})


@pytest.mark.parametrize(
    ("fields", "decision", "reason"),
    [
        ({"verdict": "READY", "freshness": "2024-05-10"}, "reuse", "22 days old"),
        ({"verdict": "PARTIAL", "freshness": "2024-05-03"}, "reuse", "29 days old"),
        ({"verdict": "READY", "freshness": "2024-05-02"}, "regenerate", "30 days old"),
        ({"verdict": "PARTIAL_QUICK", "freshness": "2024-05-30"}, "regenerate", "never reused"),
        (
            {"verdict": "PARTIAL", "depth": "quick", "freshness": "2024-05-30"},
            "regenerate",
            "never reused",
        ),
        ({"verdict": "HOLD", "freshness": "2024-05-30"}, "regenerate", "not reusable"),
        ({"verdict": "FAIL", "freshness": "2024-05-30"}, "regenerate", "not reusable"),
        ({"freshness": "2024-05-30"}, "regenerate", "no verdict"),
        ({"verdict": "READY"}, "regenerate", "unknown"),
    ],
)
def test_decision_table(fields: dict[str, Any], decision: str, reason: str) -> None:
    result = decide(_doc(**fields), TODAY, SETTINGS)
    assert result.decision == decision and reason in result.reason


def test_freshness_from_the_future_is_an_error() -> None:
    with pytest.raises(InconsistentArtifacts, match="after today"):
        decide(_doc(verdict="READY", freshness="2024-07-01"), TODAY, SETTINGS)


def test_evidence_freshness_is_the_oldest_latest_success() -> None:
    rows = [
        SourceRow(id="S1", url="https://a.example/x", retrieved_at="2024-04-01T00:00:00Z"),
        SourceRow(id="S2", url="https://b.example/y", retrieved_at="2024-04-20T00:00:00Z"),
    ]
    log = [
        FetchLogEntry(
            url="https://a.example/x", outcome="ok", status=200, retrieved_at="2024-04-01T00:00:00Z"
        ),
        # A successful re-fetch renews S1; a failed one would not.
        FetchLogEntry(
            url="https://a.example/x", outcome="ok", status=200, retrieved_at="2024-05-15T00:00:00Z"
        ),
        FetchLogEntry(
            url="https://b.example/y",
            outcome="error",
            status=None,
            retrieved_at="2024-05-20T00:00:00Z",
        ),
    ]
    assert evidence_freshness(["S1", "S2"], rows, log) == date(2024, 4, 20)
    assert evidence_freshness(["S1"], rows, log) == date(2024, 5, 15)
    assert evidence_freshness([], rows, log) is None


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"verdict": "READY", "freshness": "2024-05-20"}, 0),
        ({"verdict": "PARTIAL_QUICK", "freshness": "2024-05-20"}, 1),
    ],
)
def test_cli_exit_codes_and_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fields: dict[str, Any], code: int
) -> None:
    (tmp_path / "claims.json").write_text(json.dumps({"topic": "t", **fields}))
    assert main(["fresh", str(tmp_path), "--today", "2024-06-01"]) == code
    captured = capsys.readouterr()
    assert json.loads(captured.out)["decision"] == ("reuse" if code == 0 else "regenerate")
    assert captured.err.startswith(("reuse: ", "regenerate: "))


@pytest.mark.parametrize(
    ("setup", "args"),
    [("missing", []), ("bad-json", []), ("ok", ["--today", "June 1"])],
)
def test_cli_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], setup: str, args: list[str]
) -> None:
    if setup == "bad-json":
        (tmp_path / "claims.json").write_text("{")
    elif setup == "ok":
        (tmp_path / "claims.json").write_text('{"topic": "t"}')
    assert main(["fresh", str(tmp_path), *args]) == 2
    assert capsys.readouterr().err.count("\n") == 1
