"""JSON Lines artifacts survive every Unicode line boundary a user or a model can put in them.

``str.splitlines()`` breaks at \\r, \\x0b, \\x0c, \\x1c–\\x1e, U+0085, U+2028 and U+2029 besides
\\n. JSON escapes the control characters but leaves the last three raw inside strings, so every
``.jsonl`` artifact is written with them escaped and read by splitting at \\n only. Each case
writes the character through the real command, then reads the artifact back with the commands
that read it.
"""

from __future__ import annotations

import io
import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.plugin import runstate
from deep_research.plugin.tasks import FetchTask
from localhttp import LocalServer, Route, article

#: Every character ``str.splitlines()`` ends a line at.
LINE_BREAKS = ["\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
#: The ones JSON encoders leave raw inside a string.
RAW_IN_JSON = ["\x85", "\u2028", "\u2029"]


def _name(char: str) -> str:
    return f"U+{ord(char):04X}"


breaks = pytest.mark.parametrize("char", LINE_BREAKS, ids=_name)
raw_breaks = pytest.mark.parametrize("char", RAW_IN_JSON, ids=_name)

QUOTE = "Sales of heat pumps across the twelve member states rose to 2.9 million units in 2023"
PAGE = f"<p>Annual report.</p><p>{QUOTE}, up from 2.4 million units in 2022.</p>"


def one_record_per_line(path: Path, count: int) -> list[Any]:
    """The artifact's records, asserting that Python's own line splitting finds exactly them."""
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == count, lines
    return [json.loads(line) for line in lines]


def fetcher_output(path: Path, url: str, char: str) -> Path:
    row = {
        "url": url,
        "title": f"Heat pumps{char}2024",
        "findings": [
            {"claim": f"Heat pump sales{char}rose to 2.9 million in 2023", "quote": QUOTE}
        ],
    }
    path.write_text(json.dumps([row], ensure_ascii=False), encoding="utf-8")
    return path


def claims_citing(root: Path, claim: str) -> None:
    document = {
        "topic": "heat pumps",
        "claims": [{"id": "C1", "sq": "sq1", "claim": claim, "supporting": ["S1"]}],
    }
    (root / "claims.json").write_text(json.dumps(document), encoding="utf-8")


@breaks
def test_sources_jsonl_written_by_normalize_stays_readable(tmp_path: Path, char: str) -> None:
    root = tmp_path / "brief"
    root.mkdir()
    first = fetcher_output(tmp_path / "one.json", "https://a.example/report", char)
    assert main(["normalize", str(first), "--brief", str(root)]) == 0
    one_record_per_line(root / "sources.jsonl", 1)
    assert main(["validate", str(root)]) == 0
    second = fetcher_output(tmp_path / "two.json", "https://b.example/report", char)
    assert main(["normalize", str(second), "--brief", str(root)]) == 0
    one_record_per_line(root / "sources.jsonl", 2)
    claims_citing(root, "Heat pump sales rose to 2.9 million units in 2023.")
    assert main(["trace", str(root)]) == 1  # read fine; S1 was never fetched, so it fails


@raw_breaks
def test_a_raw_line_break_from_another_tool_is_read_and_written_back_escaped(
    tmp_path: Path, char: str
) -> None:
    root = tmp_path / "brief"
    root.mkdir()
    row = {"id": "S1", "url": "https://a.example/report", "title": f"Heat{char}pumps"}
    (root / "sources.jsonl").write_text(json.dumps(row, ensure_ascii=False) + "\n", "utf-8")
    assert main(["validate", str(root)]) == 0
    second = fetcher_output(tmp_path / "two.json", "https://b.example/report", char)
    assert main(["normalize", str(second), "--brief", str(root)]) == 0
    rows = one_record_per_line(root / "sources.jsonl", 2)
    assert rows[0]["title"] == f"Heat{char}pumps"  # the same value, escaped on disk


@breaks
def test_fetch_log_written_by_fetch_stays_readable(
    tmp_path: Path, char: str, server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_TEST_PRIVATE_CIDRS", "127.0.0.1/32")
    monkeypatch.setenv("DEEP_RESEARCH_TEST_PORTS", str(server.port))
    server.routes["/report"] = Route(body=article(PAGE, "Heat pumps"))
    root = tmp_path / "brief"
    url = server.url(f"/report?q=a{char}b")
    assert main(["fetch", url, "--brief", str(root)]) in (0, 1)  # control characters are refused
    assert main(["fetch", url + "&again=1", "--brief", str(root)]) in (0, 1)
    entries = one_record_per_line(root / "fetch-log.jsonl", len(Brief(root).load_fetch_log()))
    assert sum(1 for entry in entries if entry["url"].startswith(server.url("/report"))) == 2
    fetcher_output(tmp_path / "rows.json", url, char)
    assert main(["normalize", str(tmp_path / "rows.json"), "--brief", str(root)]) == 0
    assert main(["validate", str(root)]) == 0
    claims_citing(root, "Heat pump sales rose to 2.9 million units in 2023.")
    assert main(["trace", str(root)]) in (0, 1)


@raw_breaks
def test_a_fetch_log_line_with_a_raw_line_break_is_one_entry(tmp_path: Path, char: str) -> None:
    brief = Brief(tmp_path)
    entry = {"url": f"https://a.example/{char}", "outcome": "refused", "reason": f"bad{char}url"}
    brief.fetch_log_path.write_text(json.dumps(entry, ensure_ascii=False) + "\n", "utf-8")
    assert [logged.url for logged in brief.load_fetch_log()] == [entry["url"]]
    assert main(["validate", str(tmp_path)]) == 0


@breaks
def test_guard_ledger_written_by_the_hook_stays_readable(
    tmp_path: Path, char: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEEP_RESEARCH_STATE", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    state = tmp_path / "state"
    started = runstate.start_run(
        "Heat pump sales in 2023",
        depth="full",
        state=state,
        requested={"max_fetches": 3, "max_fanout": 4, "max_rounds": 2},
        static_hosts=[],
    )
    root = Path(started["brief"])
    task = FetchTask(str(root), "sq1", 1, (f"heat pump{char}sales",), f"no{char}forecasts")

    def dispatch(use_id: str) -> int:
        hook = {
            "session_id": "s1",
            "cwd": str(tmp_path),
            "hook_event_name": "PreToolUse",
            "tool_name": "Agent",
            "tool_input": {
                "subagent_type": task.agent_type(),
                "prompt": task.prompt(),
                "run_in_background": False,
            },
            "tool_use_id": use_id,
        }
        monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(hook, ensure_ascii=False)))
        return main(["guard", "--phase", "pre", "--state", str(state)])

    assert dispatch(f"toolu_{char}1") == 0
    assert dispatch("toolu_2") == 0  # the ledger the first dispatch wrote is still readable
    rows = one_record_per_line(root / "guard-log.jsonl", 2)
    assert [row["id"] for row in rows] == [f"toolu_{char}1", "toolu_2"]
    assert runstate.fetcher_rounds(Brief(root)) == [1, 1]


@breaks
def test_gate_output_has_one_line_per_pair(tmp_path: Path, char: str) -> None:
    pairs = [
        {"id": f"p{char}1", "claim": f"Sales{char}rose to 2.9 million", "quote": QUOTE},
        {"id": "p2", "claim": "Sales rose to 2.9 million", "quote": QUOTE},
    ]
    source = f"Annual report.{char} {QUOTE}, up from 2.4 million units in 2022."
    (tmp_path / "pairs.jsonl").write_text(
        "".join(
            json.dumps({**pair, "source_text": source}, ensure_ascii=False) + "\n" for pair in pairs
        ),
        "utf-8",
    )
    out = tmp_path / "results.jsonl"
    assert main(["gate", "--input", str(tmp_path / "pairs.jsonl"), "--output", str(out)]) == 0
    assert [row["id"] for row in one_record_per_line(out, 2)] == [f"p{char}1", "p2"]


@breaks
def test_normalize_output_has_one_line_per_row(tmp_path: Path, char: str) -> None:
    raw = fetcher_output(tmp_path / "raw.json", "https://a.example/report", char)
    out = tmp_path / "rows.jsonl"
    assert main(["normalize", str(raw), "--output", str(out)]) == 0
    assert len(one_record_per_line(out, 1)) == 1


def test_the_table_is_every_line_boundary_python_knows() -> None:
    boundaries = [chr(code) for code in range(0x110000) if len(f"a{chr(code)}b".splitlines()) > 1]
    assert sorted(boundaries) == sorted(LINE_BREAKS)
    assert all(unicodedata.category(char) in ("Cc", "Zl", "Zp") for char in LINE_BREAKS)
