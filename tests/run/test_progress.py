"""Run progress on stderr: a live status line on a real terminal, plain lines everywhere else.

The terminal is a real pseudo-terminal (``os.openpty``), put in raw mode so the bytes read back
are the bytes written (no ``\\n`` → ``\\r\\n`` translation hiding or adding carriage returns).
"""

from __future__ import annotations

import fcntl
import io
import os
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
import tty
from collections.abc import Iterator
from pathlib import Path

import pytest

from deep_research.run import progress as progress_module
from deep_research.run.crashpoint import TEST_PAUSE_ENV
from deep_research.run.governor import Budget, default_limits
from deep_research.run.progress import CLEAR_LINE, Progress

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")

PLAIN_LINE = re.compile(r"^\[ *\d+\.\ds\] \S+ +\S.*$")
ESCAPE = "\x1b"


class Pty:
    """A pseudo-terminal whose master side is drained by a thread (a full pty blocks writers)."""

    def __init__(self, columns: int = 200) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        # A fresh pty reports 0 x 0; give it a size, as a terminal emulator would.
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
        self.chunks: list[bytes] = []
        self._closed = False
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        while True:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the slave side closed (EIO on Linux)
                return
            if not chunk:
                return
            self.chunks.append(chunk)

    def output(self) -> str:
        """Everything written, once the writers are done (closes the pty; idempotent)."""
        if not self._closed:
            self._closed = True
            os.close(self.slave)
            self._reader.join(timeout=5.0)
            os.close(self.master)
        return b"".join(self.chunks).decode("utf-8")


@pytest.fixture
def pty_() -> Iterator[Pty]:
    terminal = Pty()
    yield terminal
    terminal.output()  # close both ends even when the test failed early


def _exercise(progress: Progress) -> None:
    """A run's shape: phases, an event per phase, workers finishing on their own threads."""
    progress.watch(Budget(default_limits("quick"), time.monotonic() + 60.0))
    with progress:
        progress.begin("plan", 1, 3)
        progress("plan", "2 sub-question(s)")
        progress.begin("cast", 2, 3)
        progress.workers(2)
        threads = [threading.Thread(target=progress.worker_done) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        progress("cast", "q1: 1 search(es)")
        progress.begin("claims", 3, 3)
        progress.claims(4)
        progress("claims", "4 candidate claim(s)")


def test_tty_rewrites_the_status_line_in_place_and_ends_with_a_newline(
    pty_: Pty, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.setattr(progress_module, "TICK_S", 0.01)  # let the ticker redraw at least once
    with open(pty_.slave, "w", encoding="utf-8", closefd=False) as stream:
        progress = Progress(stream)
        assert progress.live
        _exercise(progress)
    out = pty_.output()
    assert out.endswith("\n") and not out.endswith("\r\n")
    assert out.count(CLEAR_LINE) > 3  # the status line was redrawn, not appended
    # What the terminal shows: each line as its last rewrite left it.
    screen = [line.split(CLEAR_LINE)[-1] for line in out.split("\n")]
    assert screen[-1] == ""  # the cursor ends at the start of a clean line
    events = screen[:-2]
    assert [line.split("] ", 1)[1].split()[0] for line in events] == ["plan", "cast", "claims"]
    assert all(PLAIN_LINE.match(line) for line in events), events
    final = screen[-2]
    assert "claims 3/3" in final and "workers 2/2" in final and "claims 4" in final
    assert "fetches 0" in final and "0 searches, 0 model calls, $0.00" in final
    # Before any event line, the status line was shown and then erased in place.
    assert "workers 0/2" in out and "workers 1/2" in out


@pytest.mark.parametrize("where", ["stringio", "pipe", "dumb-terminal"])
def test_not_a_live_terminal_gets_plain_lines_only(
    where: str, pty_: Pty, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "dumb")
    if where == "stringio":
        buffer = io.StringIO()
        _exercise(Progress(buffer))
        out = buffer.getvalue()
    elif where == "pipe":
        read, write = os.pipe()
        with open(write, "w", encoding="utf-8") as stream:
            _exercise(Progress(stream))
        with open(read, encoding="utf-8") as source:
            out = source.read()
    else:
        with open(pty_.slave, "w", encoding="utf-8", closefd=False) as stream:
            _exercise(Progress(stream))
    if where == "dumb-terminal":
        out = pty_.output()
    assert "\r" not in out and ESCAPE not in out
    lines = out.splitlines()
    assert len(lines) == 3 and out.endswith("\n")
    assert all(PLAIN_LINE.match(line) for line in lines), lines


def test_status_line_is_cut_to_the_terminal_width(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line wider than the terminal would wrap, and \r could not rewrite it in place."""
    monkeypatch.setenv("TERM", "xterm")
    narrow = Pty(columns=40)
    with open(narrow.slave, "w", encoding="utf-8", closefd=False) as stream:
        _exercise(Progress(stream))
    screen = [line.split(CLEAR_LINE)[-1] for line in narrow.output().split("\n")]
    assert len(screen[-2]) == 39 and screen[-2].startswith("[")


def test_quiet_writes_nothing_even_on_a_terminal(
    pty_: Pty, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TERM", "xterm")
    with open(pty_.slave, "w", encoding="utf-8", closefd=False) as stream:
        progress = Progress(stream, quiet=True)
        assert not progress.live
        _exercise(progress)
    assert pty_.output() == ""


DOCS = {
    "alpha/comparisons.md": (
        "# Comparisons\n\n"
        "Comparisons can be chained arbitrarily, so x < y <= z is equivalent to x < y and "
        "y <= z, except that y is evaluated only once.\n"
    ),
    "beta/operators.md": (
        "# Operators\n\n"
        "A chained comparison such as a < b < c evaluates each operand at most once and stops "
        "at the first comparison that is false.\n"
    ),
}


def test_cli_run_on_a_terminal_shows_the_live_line_then_a_clean_newline(
    tmp_path: Path, pty_: Pty
) -> None:
    """The real CLI process with its stderr on a pty: the same event lines, plus the status."""
    corpus = tmp_path / "corpus"
    for name, text in DOCS.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(text, encoding="utf-8")
    env = {**os.environ, "TERM": "xterm"}
    env.pop(TEST_PAUSE_ENV, None)
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "deep_research.cli",
            "run",
            "How are chained comparisons evaluated?",
            "--corpus",
            str(corpus),
            "--depth",
            "quick",
            "--state",
            str(tmp_path / "state"),
        ],
        stdout=subprocess.PIPE,
        stderr=pty_.slave,
        text=True,
        env=env,
        timeout=60,
    )
    err = pty_.output()
    assert process.returncode == 0, err
    assert "verdict:" in process.stdout and "\r" not in process.stdout  # stdout is not a TTY
    assert err.endswith("\n") and CLEAR_LINE in err
    screen = [line.split(CLEAR_LINE)[-1] for line in err.split("\n")]
    assert screen[-1] == ""
    assert all(PLAIN_LINE.match(line) for line in screen[:-1]), screen
    final = screen[-2]
    assert re.search(r"\] render \d+/\d+ · workers (\d+)/\1 · fetches [1-9]", final), final
    assert any(" render " in line and "report.md" in line for line in screen[:-2])
