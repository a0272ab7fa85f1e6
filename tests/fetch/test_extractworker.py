"""The extractor process: its own memory cap, and one JSON answer whatever the input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pdfs import text_pdf

# The worker is started as its own process here: its cap and its answer are what is tested.
pytestmark = pytest.mark.extract_process

WORKER = [sys.executable, "-m", "deep_research.fetch.extractworker"]


def _worker(body: bytes, media: str, charset: str = "") -> dict[str, Any]:
    done = subprocess.run(
        [*WORKER, media, charset], input=body, capture_output=True, timeout=60, check=True
    )
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_the_process_caps_its_own_address_space() -> None:
    pytest.importorskip("resource")
    probe = (
        "import resource; from deep_research.fetch.extractworker import MEMORY_BYTES, "
        "_cap_memory; _cap_memory(); "
        "print(resource.getrlimit(resource.RLIMIT_AS)[0] == MEMORY_BYTES)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "True"


def test_markup_that_needs_more_than_the_cap_stays_under_it() -> None:
    # trafilatura needs about 200 MB per MB of this; at the cap it fails, and the fallback reads
    # what it can in the memory that is left, or nothing.
    pytest.importorskip("resource")
    if not Path("/proc/self/status").exists():
        pytest.skip("reads the peak from /proc")
    cap = 300 * 1024 * 1024
    probe = (
        "import resource, sys; import deep_research.fetch.extractworker as worker; "
        f"worker.MEMORY_BYTES = {cap}; sys.argv = ['worker', 'text/html']; worker.main(); "
        # The peak of this process's own memory: ru_maxrss would also count the parent's at
        # the fork (Linux keeps it across exec), which in a long test run is above the cap.
        "print([l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1],"
        " file=sys.stderr)"
    )
    flood = b"<p>x</p>" * (9 * 1024 * 1024 // 8)
    done = subprocess.run(
        [sys.executable, "-c", probe], input=flood, capture_output=True, timeout=120, check=True
    )
    answer = json.loads(done.stdout)
    assert set(answer) <= {"text", "extractor", "version", "empty", "unreadable"}
    peak_kib = int(done.stderr.decode().split()[-1])
    assert peak_kib * 1024 <= cap


@pytest.mark.parametrize(
    ("body", "media", "charset", "expected"),
    [
        (
            text_pdf("First page.", "Second page."),
            "application/pdf",
            "",
            "First page.\n\nSecond page.",
        ),
        (b"%PDF-1.4\nnot a pdf at all", "application/pdf", "", None),
        (b"", "application/pdf", "", None),
        (
            b"<html><body><p>Caf\xc3\xa9 prices rose.</p></body></html>",
            "text/html",
            "",
            "Café prices rose.",
        ),
        (b"<p>Caf\xc3\xa9 prices rose.</p>", "text/html", "punycode", "Café prices rose."),
        (b"<html><body><script>x()</script></body></html>", "text/html", "", None),
    ],
)
def test_one_json_answer_whatever_the_input(
    body: bytes, media: str, charset: str, expected: str | None
) -> None:
    answer = _worker(body, media, charset)
    if expected is None:
        assert answer.get("empty") is True and "text" not in answer
    else:
        assert answer["text"] == expected and answer["extractor"] and answer["version"]
