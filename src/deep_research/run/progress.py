"""The run's progress on stderr: a plain line per event, and on a terminal a live status line.

Plain lines are safe for logs, pipes and CI; the live line (phase, workers, fetches, claims,
spend, elapsed) is drawn only on a terminal that can rewrite a line.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO

from deep_research.brief.writers import printable_text
from deep_research.run.governor import Budget

CLEAR_LINE = "\r\x1b[K"  # carriage return, then erase to the end of the line
TICK_S = 0.5


def live_capable(stream: TextIO) -> bool:
    """A terminal that can rewrite a line: a TTY whose TERM is not ``dumb``.

    The live line uses no colour, only ``\\r`` and erase-to-end-of-line, so ``NO_COLOR`` has
    nothing to switch off; a pipe, a file or a dumb terminal gets the plain lines.
    """
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or non-file stream
        return False
    return tty and os.environ.get("TERM", "") != "dumb"


class Progress:
    """Progress on stderr: one plain line per event (safe for logs, pipes and CI), and on a
    terminal also a live status line under them (phase, workers, fetches, claims, spend,
    elapsed) rewritten in place.

    Thread-safe: cast workers report from their own threads and a ticker redraws the line, so
    every write and every counter change holds one lock. Use it as a context manager so the
    ticker stops and the status line is finished with a newline, even on Ctrl-C.
    """

    def __init__(
        self, stream: TextIO | None = None, quiet: bool = False, live: bool | None = None
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.live = not quiet and (live_capable(self.stream) if live is None else live)
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._phase = ""
        self._step = (0, 0)
        self._workers = (0, 0)
        self._claims: int | None = None
        self._budget: Budget | None = None
        self._drawn = False
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, phase: str, message: str) -> None:
        if self.quiet:
            return
        elapsed = time.monotonic() - self.started
        # A heading or title from the corpus reaches the terminal here: no control sequence
        # or direction override of it is obeyed.
        line = f"[{elapsed:6.1f}s] {phase:<11} {printable_text(message)}\n"
        with self._lock:
            if self.live:
                # The event becomes a permanent line above the status line, then it is redrawn.
                self.stream.write(CLEAR_LINE + line)
                self._draw()
            else:
                self.stream.write(line)
            self.stream.flush()

    # --- the live status line (no-ops unless live) ---

    def watch(self, budget: Budget) -> None:
        with self._lock:
            self._budget = budget

    def begin(self, phase: str, index: int, total: int) -> None:
        with self._lock:
            self._phase, self._step = phase, (index, total)
            self._refresh()

    def workers(self, total: int) -> None:
        with self._lock:
            self._workers = (0, total)
            self._refresh()

    def worker_done(self) -> None:
        with self._lock:
            done, total = self._workers
            self._workers = (done + 1, total)
            self._refresh()

    def claims(self, count: int) -> None:
        with self._lock:
            self._claims = count
            self._refresh()

    def status(self) -> str:
        """The status line's text (without control codes)."""
        elapsed = time.monotonic() - self.started
        index, total = self._step
        done, workers = self._workers
        spend = self._budget.as_record() if self._budget is not None else {}
        claims = "-" if self._claims is None else str(self._claims)
        return (
            f"[{elapsed:6.1f}s] {self._phase} {index}/{total} · workers {done}/{workers} · "
            f"fetches {int(spend.get('fetches', 0))} · claims {claims} · "
            f"{int(spend.get('searches', 0))} searches, {int(spend.get('model_calls', 0))} "
            f"model calls, ${spend.get('usd', 0.0):.2f}"
        )

    def _refresh(self) -> None:
        if self.live and self._phase:
            self._draw()
            self.stream.flush()

    def _draw(self) -> None:
        if not self._phase:
            return
        # Cut to the terminal's width: a wrapped line could not be rewritten with one \r.
        self.stream.write(CLEAR_LINE + self.status()[: self._columns() - 1])
        self._drawn = True

    def _columns(self) -> int:
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
        return columns if columns > 1 else 80  # a fresh pty reports 0 columns

    def _tick(self) -> None:
        # Between events the elapsed time and the budget's counters still move.
        while not self._stop.wait(TICK_S):
            with self._lock:
                self._refresh()

    def __enter__(self) -> Progress:
        if self.live:
            self._ticker = threading.Thread(target=self._tick, daemon=True)
            self._ticker.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            if self.live and self._drawn:
                # The last state stays on screen as a permanent line; the next output starts
                # on a clean line.
                self._draw()
                self.stream.write("\n")
                self.stream.flush()
                self._drawn = False
            # A worker wedged past the deadline may still report later: from now on, plain
            # lines only, so nothing is drawn under the summary.
            self.live = False
