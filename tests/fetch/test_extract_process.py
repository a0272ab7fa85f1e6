"""Where extraction runs: in its own bounded process, always, outside the test suite; the suite's
in-process stand-in (tests/conftest.py) answers exactly as that process does."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from conftest import extract_in_process
from deep_research.fetch import extract
from deep_research.fetch.extract import ExtractionFailed, extract_bounded
from pdfs import text_pdf

PAGE = (
    b"<html><head><title>Harbour report</title>"
    b'<meta property="article:published_time" content="2024-03-14"></head>'
    b"<body><article><p>The harbour handled 1,234 ships in 2023, a record for the port "
    b"and the most since the quay was rebuilt.</p></article></body></html>"
)
BODIES = [
    (PAGE, "text/html", None),
    (b"<p>Caf\xe9 prices rose.</p>", "text/html", "windows-1252"),
    (b"<html><body><script>x()</script></body></html>", "text/html", None),
    (text_pdf("First page.", "Second page."), "application/pdf", None),
    (b"%PDF-1.4\nnot a pdf at all", "application/pdf", None),
]


@pytest.mark.extract_process
def test_outside_the_suite_every_page_is_extracted_in_its_own_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    started: list[list[str]] = []
    real_run = subprocess.run

    def recording_run(command: list[str], *args: Any, **kwargs: Any) -> Any:
        started.append(list(command))
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", recording_run)
    extracted = extract_bounded(PAGE, "text/html", None, 60.0)
    assert extracted is not None and "1,234 ships" in extracted.text
    assert [c[:3] for c in started] == [[sys.executable, "-m", "deep_research.fetch.extractworker"]]


@pytest.mark.extract_process
def test_outside_the_suite_the_deadline_is_enforced() -> None:
    # No interpreter starts and reads a page in a millisecond: only a process that is killed
    # at the deadline gives this answer; an in-process extraction would return the text.
    with pytest.raises(ExtractionFailed, match="extraction_timeout"):
        extract_bounded(PAGE, "text/html", None, 0.001)


def test_a_fresh_interpreter_extracts_through_the_process() -> None:
    """The default, read where no test fixture has run: nothing but this module decides it."""
    probe = (
        "from deep_research.fetch import extract; "
        "print(extract.run_extractor is extract.run_extractor_process)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "True"


def test_the_suite_extracts_in_process_unless_a_test_is_marked() -> None:
    assert extract.run_extractor is extract_in_process


@pytest.mark.extract_process
@pytest.mark.parametrize(
    ("body", "media", "charset"), BODIES, ids=["html", "cp1252", "script-only", "pdf", "not-pdf"]
)
def test_the_in_process_stand_in_answers_as_the_process_does(
    monkeypatch: pytest.MonkeyPatch, body: bytes, media: str, charset: str | None
) -> None:
    by_process = extract_bounded(body, media, charset, 60.0)
    monkeypatch.setattr(extract, "run_extractor", extract_in_process)
    assert extract_bounded(body, media, charset, 60.0) == by_process
