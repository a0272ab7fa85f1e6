"""Fuzz what users and models feed in: `gate` lines, `normalize` payloads and hook events.

Every generated input goes through the commands' own entry points (``run_gate_file``,
``run_normalize`` with a brief to merge into, output written, and ``run_guard`` — the hook's
decision, with a research run active and without one), and anything but a result or a
documented input error (:class:`~deep_research.errors.InputError`, exit 2) is a traceback.

    DEEP_RESEARCH_FUZZ_SECONDS=600 python benchmarks/fuzz_ingest.py

prints the examples tried and the tracebacks found, and exits 1 when there is any.
"""

from __future__ import annotations

import io
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deep_research.errors import InputError
from deep_research.gates.batch import run_gate_file
from deep_research.normalize import normalize_payload
from deep_research.normalize_io import NormalizeOptions, run_normalize
from deep_research.plugin.guard import run_guard

#: Every code point, lone surrogates and line boundaries included.
ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
TEXT = st.one_of(
    st.text(ANY_CHAR, max_size=60),
    st.sampled_from(["https://a.example/x", "http://b.example/", "2023-05-01", "S1", "central"]),
    st.text(st.sampled_from("0123456789 .,%$€-abc\u2028\x85\ud800"), max_size=40),
)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), TEXT)
KEYS = st.one_of(
    st.sampled_from(
        [
            "id",
            "claim",
            "quote",
            "source_text",
            "source_path",
            "url",
            "title",
            "findings",
            "sources",
            "results",
            "published_at",
            "source_type",
            "tier",
            "cites",
            "round",
        ]
    ),
    st.text(ANY_CHAR, max_size=8),
)
JSON = st.recursive(
    SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=5)),
    max_leaves=20,
)


@st.composite
def line(draw: st.DrawFn, paths: list[str]) -> str:
    """One input line: a pair-shaped object, any JSON, or text that is not JSON at all."""
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(st.text(ANY_CHAR, max_size=80)).replace("\n", " ")
    if kind == 1:
        return '{"id": 1, "n": ' + "9" * draw(st.sampled_from([4300, 4301, 6000])) + "}"
    value: Any
    if kind == 2:
        value = draw(JSON)
    else:
        value = draw(st.dictionaries(KEYS, JSON, max_size=6))
        value.setdefault("claim", draw(TEXT))
        value.setdefault("quote", draw(TEXT))
        if draw(st.booleans()):
            value["source_path"] = draw(st.sampled_from(paths))
        else:
            value.setdefault("source_text", draw(TEXT))
    try:
        return json.dumps(value, ensure_ascii=draw(st.booleans()))
    except ValueError:
        return "{}"


TOOLS = st.sampled_from(
    ["Bash", "WebFetch", "Agent", "Task", "Write", "Edit", "MultiEdit", "WebSearch", "Read"]
)
SHELL = st.one_of(
    st.text(ANY_CHAR, max_size=80),
    st.builds(
        lambda command, rest: f"deep-research {command} {rest}",
        st.sampled_from(["fetch", "hosts", "start", "finish", "next", "ingest", "verdict", "run"]),
        st.text(st.sampled_from("ab -=/.$;|&><'\"`*?~\n\u2028"), max_size=40),
    ),
)
TOOL_INPUT = st.fixed_dictionaries(
    {},
    optional={
        "command": st.one_of(SHELL, JSON),
        "url": st.one_of(TEXT, JSON),
        "file_path": st.one_of(TEXT, st.sampled_from(["state/briefs/b/trace.json", "/etc/x"])),
        "subagent_type": st.one_of(TEXT, st.sampled_from(["deep-research:fetcher"])),
        "prompt": TEXT,
        "query": TEXT,
    },
)


@st.composite
def hook_event(draw: st.DrawFn) -> str:
    """A hook event as Claude Code sends it, bent: wrong types, deep nesting, not JSON at all."""
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(st.text(ANY_CHAR, max_size=80))
    if kind == 1:
        depth = draw(st.sampled_from([100, 5_000, 100_000]))
        return "[" * depth + "]" * depth
    event: dict[str, Any] = {
        "tool_name": draw(st.one_of(TOOLS, TEXT)),
        "tool_input": draw(st.one_of(TOOL_INPUT, JSON)),
    }
    if draw(st.booleans()):
        event["tool_response"] = draw(JSON)
    if draw(st.booleans()):
        event["agent_id"] = draw(TEXT)
    if draw(st.booleans()):
        event["session_id"] = draw(TEXT)
    try:
        return json.dumps(event, ensure_ascii=draw(st.booleans()))
    except ValueError:
        return "{}"


class Tally:
    def __init__(self) -> None:
        self.examples = 0
        self.tracebacks: list[str] = []

    def call(self, run: Any) -> None:
        self.examples += 1
        try:
            run()
        except InputError:
            pass  # exit 2 with a one-line message: documented
        except Exception:
            self.tracebacks.append(traceback.format_exc())


def fuzz(seconds: float, work: Path) -> Tally:
    tally = Tally()
    (work / "page.txt").write_text("Sales rose to 2.9 million units in 2023.", encoding="utf-8")
    os.mkfifo(work / "fifo")
    (work / "dir").mkdir()
    paths = ["page.txt", "fifo", "dir", "/dev/zero", "missing.txt", "a\x00b", "../" * 40, ""]
    brief = work / "brief"
    brief.mkdir()

    @settings(
        max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(st.lists(line(paths), min_size=1, max_size=6))
    def gate(lines: list[str]) -> None:
        data = "\n".join(lines).encode("utf-8", "surrogatepass")
        pairs = work / "pairs.jsonl"
        pairs.write_bytes(data)
        tally.call(lambda: run_gate_file(pairs, work / "out.jsonl", stdin=io.BytesIO()))

    @settings(
        max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(
        st.one_of(JSON, st.lists(st.dictionaries(KEYS, JSON, max_size=6), max_size=4)),
        st.booleans(),
    )
    def normalize(value: Any, as_lines: bool) -> None:
        try:
            if as_lines and isinstance(value, list):
                text = "\n".join(json.dumps(item, ensure_ascii=False) for item in value)
            else:
                text = json.dumps(value, ensure_ascii=False)
        except ValueError:
            return
        raw = work / "raw.json"
        raw.write_bytes(text.encode("utf-8", "surrogatepass"))
        options = NormalizeOptions(input=raw, brief=brief, report=work / "report.json")
        tally.call(lambda: run_normalize(options, normalize_payload, stdin=io.BytesIO()))

    idle, active = work / "idle-state", work / "active-state"
    _start_run(active)

    @settings(
        max_examples=100, deadline=None, database=None, suppress_health_check=list(HealthCheck)
    )
    @given(hook_event(), st.sampled_from(["pre", "post"]), st.booleans())
    def guard(text: str, phase: str, during_run: bool) -> None:
        state = active if during_run else idle
        tally.call(lambda: run_guard(text, phase, state))

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        gate()
        normalize()
        guard()
    return tally


def _start_run(state: Path) -> None:
    from contextlib import redirect_stdout

    from deep_research.cli import main

    with redirect_stdout(io.StringIO()):
        code = main(["start", "fuzzing the hook guard", "--depth", "quick", "--state", str(state)])
    if code != 0:
        raise SystemExit(f"could not start a run to fuzz the guard against (exit {code})")


def main() -> int:
    seconds = float(os.environ.get("DEEP_RESEARCH_FUZZ_SECONDS", "60"))
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        tally = fuzz(seconds, Path(folder))
        took = time.monotonic() - started
    for found in tally.tracebacks[:5]:
        print(found, file=sys.stderr)
    print(f"fuzz: {tally.examples} examples in {took:.0f} s, {len(tally.tracebacks)} tracebacks")
    return 1 if tally.tracebacks else 0


if __name__ == "__main__":
    sys.exit(main())
