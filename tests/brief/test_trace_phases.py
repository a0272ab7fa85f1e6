"""trace.json ``phases``: each entry written and read as its typed record, nothing else."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from briefs import build_example
from deep_research.brief.record import record_phase
from deep_research.brief.trace_phases import (
    CiberPhase,
    CountersPhase,
    IngestPhase,
    McpGatePhase,
    RunRecord,
    TracePhase,
    VotesPhase,
)
from deep_research.cli import main
from deep_research.errors import SchemaViolation
from deep_research.models import TraceFile
from deep_research.settings import Settings, settings_hash

SETTINGS = Settings()
TRACED = TracePhase(
    mode="claims", total_cites_checked=4, supported=3, pass_rate=0.75, coverage=None, violations=1
)


def test_a_record_is_written_in_its_fields_order_and_read_back_as_itself() -> None:
    trace = TraceFile().with_phase("trace", TRACED)
    assert list(trace.phases["trace"]) == [
        "mode",
        "total_cites_checked",
        "supported",
        "pass_rate",
        "coverage",
        "violations",
    ]
    assert trace.phases["trace"]["coverage"] is None  # a field that is always written
    assert trace.phase("trace", TracePhase) == TRACED
    assert trace.phase("verdict", TracePhase) is None  # a phase that left no record


def test_writing_one_phase_keeps_every_other_entry_and_its_place() -> None:
    ingest = IngestPhase(files={"a.json": "sha256:ab"}, gaps=[])
    trace = TraceFile().with_phase("ingest", ingest).with_phase("trace", TRACED)
    again = trace.with_phase("ingest", IngestPhase(files={}, gaps=["x"]))
    assert list(again.phases) == ["ingest", "trace"]
    assert again.phases["trace"] == trace.phases["trace"]
    assert trace.phase("ingest", IngestPhase) == ingest  # the earlier trace is unchanged


def test_a_sparse_record_writes_the_shape_its_writer_gave() -> None:
    skipped = record_phase(TraceFile(), "ciber", CiberPhase(ciber_skipped="depth-quick"), SETTINGS)
    assert skipped.phases["ciber"] == {
        "ciber_skipped": "depth-quick",
        "settings_hash": settings_hash(SETTINGS),
    }
    applied = CiberPhase(raw={}, agent_ciber_passed=True, ciber_passed=True, failures_per_claim={})
    assert list(applied.entry()) == [
        "raw",
        "agent_ciber_passed",
        "ciber_passed",
        "failures_per_claim",
    ]
    # A gate that passed keeps a null fingerprint; one that failed says only why.
    passed = McpGatePhase(ok=True, name="docs", fingerprint=None, tools=["search"])
    assert passed.entry() == {"ok": True, "name": "docs", "fingerprint": None, "tools": ["search"]}
    failed = McpGatePhase(error="version-pin-failed", reason="no pinned version")
    assert failed.entry() == {"error": "version-pin-failed", "reason": "no pinned version"}
    for record in (passed, failed):
        assert McpGatePhase.model_validate(record.entry()).entry() == record.entry()


def test_the_headless_panel_records_its_votes_alone() -> None:
    trace = record_phase(TraceFile(), "votes", VotesPhase(raw={"C1": [{"error": "500"}]}), SETTINGS)
    assert list(trace.phases["votes"]) == ["raw", "settings_hash"]


def test_a_phase_that_does_not_record_its_settings_cannot_be_stamped() -> None:
    with pytest.raises(TypeError, match="no settings_hash"):
        record_phase(TraceFile(), "trace", TRACED, SETTINGS)


def test_the_counters_moment_is_written_to_the_second_as_counted() -> None:
    entry = {"computed_at": "2026-05-01T10:00:00+00:00", "clamped": []}
    assert CountersPhase.model_validate(entry).entry() == entry


@pytest.mark.parametrize(
    ("name", "entry", "where"),
    [
        ("run", {"question": "q", "incomplete": "fetches"}, "$.phases.run.incomplete"),
        ("run", {"depth": "full"}, "$.phases.run.question"),
        ("ingest", {"files": ["a.json"], "gaps": []}, "$.phases.ingest.files"),
        ("counters", {"computed_at": "yesterday", "clamped": []}, "$.phases.counters.computed_at"),
    ],
)
def test_a_malformed_entry_names_its_path(name: Any, entry: dict[str, Any], where: str) -> None:
    trace = TraceFile(phases={name: entry})
    kind = {"run": RunRecord, "ingest": IngestPhase, "counters": CountersPhase}[name]
    with pytest.raises(SchemaViolation) as caught:
        trace.phase(name, kind)
    assert caught.value.json_path.startswith(where)


def test_a_verdict_over_a_malformed_phase_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = build_example(tmp_path)
    trace = json.loads((root / "trace.json").read_text())
    trace["phases"]["triangulate"]["settings_hash"] = ["not", "a", "hash"]
    (root / "trace.json").write_text(json.dumps(trace))
    before = (root / "claims.json").read_bytes()
    capsys.readouterr()
    assert main(["verdict", str(root)]) == 2
    err = capsys.readouterr().err
    assert "$.phases.triangulate.settings_hash" in err and err.count("\n") == 1
    assert (root / "claims.json").read_bytes() == before
