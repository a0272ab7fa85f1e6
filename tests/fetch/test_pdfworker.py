"""The PDF extractor process: its own memory cap, and one JSON answer whatever the input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pdfs import text_pdf


def _worker(body: bytes) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "deep_research.fetch.pdfworker"],
        input=body,
        capture_output=True,
        timeout=60,
        check=True,
    )
    answer: dict[str, str] = json.loads(done.stdout)
    return answer


def test_the_process_caps_its_own_address_space() -> None:
    pytest.importorskip("resource")
    probe = (
        "import resource; from deep_research.fetch.pdfworker import MEMORY_BYTES, _cap_memory; "
        "_cap_memory(); print(resource.getrlimit(resource.RLIMIT_AS)[0] == MEMORY_BYTES)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "True"


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (text_pdf("First page.", "Second page."), {"text": "First page.\n\nSecond page."}),
        (b"%PDF-1.4\nnot a pdf at all", {"error"}),
        (b"", {"error"}),
    ],
)
def test_one_json_answer_whatever_the_input(body: bytes, expected: object) -> None:
    answer = _worker(body)
    if isinstance(expected, dict):
        assert answer["text"] == expected["text"] and answer["version"]
    else:
        assert set(answer) == expected
