"""run.json: written by `start` through its one definition, read back only by Brief.load_run —
field for field, caps re-clamped, every fault one line that says what to do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from deep_research.brief.layout import Brief
from deep_research.brief.start_record import DEFAULT_CAPS, HARD_MAX_FANOUT, StartRecord
from deep_research.errors import MissingArtifact, SchemaViolation, UnreadableInput
from deep_research.plugin import runstate

TOPIC = "Heat pump shipments in Europe, 2023"


@pytest.fixture
def started(tmp_path: Path) -> Path:
    record = runstate.start_run(
        TOPIC, depth="full", state=tmp_path, requested={"max_fanout": 50}, static_hosts=[]
    )
    return Path(record["brief"])


def _rewrite(brief: Path, **fields: Any) -> None:
    record = json.loads((brief / "run.json").read_text(encoding="utf-8"))
    record.update(fields)
    (brief / "run.json").write_text(json.dumps(record), encoding="utf-8")


def test_start_writes_the_fields_in_their_order_and_reading_gives_them_back(started: Path) -> None:
    text = (started / "run.json").read_text(encoding="utf-8")
    written = json.loads(text)
    assert list(written) == ["topic", "slug", "depth", "started_at", "caps", "clamped", "settings"]
    assert written["clamped"] == [f"max_fanout 50 clamped to {HARD_MAX_FANOUT}"]
    record = Brief(started).load_run()
    assert record.topic == TOPIC and record.slug == started.name and record.depth == "full"
    assert record.started_at.utcoffset() is not None and record.mcp is None
    assert record.as_json() == written  # the one definition reads what it wrote, key for key


def test_optional_fields_round_trip(tmp_path: Path) -> None:
    from deep_research.brief.layout import brief_dir, slugify

    runstate.start_run(TOPIC, depth="quick", state=tmp_path, requested={}, static_hosts=[])
    root = brief_dir(tmp_path, slugify(TOPIC))
    # A second start at another depth moves the first brief aside and records what it replaced.
    again = runstate.start_run(
        TOPIC, depth="full", state=tmp_path, requested={}, static_hosts=[], mcp="docs"
    )
    written = json.loads((root / "run.json").read_text(encoding="utf-8"))
    assert written["mcp"] == "docs"
    assert written["replaces"] == {"verdict": None, "path": again["superseded"]}
    record = Brief(root).load_run()
    assert record.replaces is not None and record.replaces.path == again["superseded"]
    assert record.as_json() == written


def test_an_edited_cap_is_clamped_again_on_read(started: Path) -> None:
    _rewrite(started, caps={"max_fetches": 10_000, "max_fanout": 0, "max_rounds": 2})
    caps = Brief(started).load_run().caps
    assert caps.max_fetches == 200 and caps.max_fanout == 1 and caps.max_rounds == 2
    # A run started before the search cap existed gets its depth's default for it.
    assert caps.max_searches == DEFAULT_CAPS["full"]["max_searches"]


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        (
            {"caps": {"max_fetches": "10000", "max_fanout": 6, "max_rounds": 2}},
            "$.caps.max_fetches",
        ),
        ({"caps": {"max_fetches": True, "max_fanout": 6, "max_rounds": 2}}, "$.caps.max_fetches"),
        ({"caps": {"max_fetches": 5, "max_fanout": 6}}, "$.caps.max_rounds"),
        ({"caps": [5, 6, 2]}, "$.caps"),
        ({"depth": "deep"}, "$.depth"),
        ({"depth": None}, "$.depth"),
        ({"topic": ""}, "$.topic"),
        ({"started_at": "yesterday"}, "$.started_at"),
        ({"started_at": "2024-05-01T10:00:00"}, "$.started_at"),
        ({"clamped": "none"}, "$.clamped"),
        ({"settings": ["tau_threshold"]}, "$.settings"),
        ({"mcp": 3}, "$.mcp"),
        ({"replaces": {"verdict": "FAIL"}}, "$.replaces"),
    ],
)
def test_a_malformed_record_is_one_line_naming_the_field_and_the_fix(
    started: Path, fields: dict[str, Any], where: str
) -> None:
    _rewrite(started, **fields)
    with pytest.raises(SchemaViolation) as caught:
        Brief(started).load_run()
    message = str(caught.value)
    assert caught.value.json_path == where and "\n" not in message
    assert message.endswith("start the run again")


def test_a_missing_or_unparseable_record_is_an_input_error(started: Path) -> None:
    (started / "run.json").write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(SchemaViolation, match="expected a JSON object"):
        Brief(started).load_run()
    (started / "run.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(UnreadableInput, match="not valid JSON"):
        Brief(started).load_run()
    (started / "run.json").unlink()
    with pytest.raises(MissingArtifact, match="deep-research start"):
        Brief(started).load_run()


def test_reading_the_record_loads_no_models(started: Path) -> None:
    # The hook guard reads run.json on every tool call of a run: no pydantic on that path.
    probe = (
        "import sys; from pathlib import Path; from deep_research.brief.layout import Brief; "
        f"Brief(Path({str(started)!r})).load_run(); "
        "print('pydantic' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "False"


def test_from_json_refuses_what_it_did_not_write() -> None:
    with pytest.raises(SchemaViolation):
        StartRecord.from_json({"topic": "t"}, source="run.json")
