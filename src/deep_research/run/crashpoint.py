"""Test-only crash points: a run that pauses at a named point so a test can kill it there.

``DEEP_RESEARCH_TEST_PAUSE=after:<phase>`` (or ``within:<phase>``) makes the run write
``test pause: …`` to stderr and sleep once that phase is checkpointed (or once its work is
written but before its checkpoint). It only sleeps — it changes no artifact — and is unset in
normal use, so the crash tests kill a real process at a known point instead of guessing.
"""

from __future__ import annotations

import os
import sys
import time

TEST_PAUSE_ENV = "DEEP_RESEARCH_TEST_PAUSE"
TEST_PAUSE_S = 60.0


def crash_point(when: str, phase: str) -> None:
    """Sleep when ``DEEP_RESEARCH_TEST_PAUSE`` names this point; otherwise return at once."""
    if os.environ.get(TEST_PAUSE_ENV) != f"{when}:{phase}":
        return
    sys.stderr.write(f"test pause: {when} {phase}\n")
    sys.stderr.flush()
    # Long enough for any test to see the line and kill; a stray setting only costs a minute.
    time.sleep(TEST_PAUSE_S)
