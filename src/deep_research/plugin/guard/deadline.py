"""A decision not reached in time is a deny.

Claude Code gives a hook 30 s and lets the call through when it times out, so a guard that can
be made slow is a guard that can be skipped. Every decision therefore runs under an alarm well
inside that limit; when it rings, the check under way is abandoned and the call denied.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: Far above any decision's real time (milliseconds), far below the hook's 30 s timeout.
DECISION_DEADLINE_S = 10.0
#: A workflow's launch and its agents' answers, which may compute the run's next step (its
#: commands, re-fetches included): below the 600 s hooks.json gives their hook.
STEP_DEADLINE_S = 540.0


class DecisionTimeout(BaseException):
    """The deadline passed. A BaseException, so no ``except Exception`` on the way can turn it
    into an answer; only the hook protocol catches it, and denies."""


@contextmanager
def deadline(seconds: float | None = None) -> Iterator[None]:
    """Raise :class:`DecisionTimeout` in the block once ``seconds`` (default
    :data:`DECISION_DEADLINE_S`) have passed.

    An alarm signal interrupts even a blocked system call (a lock wait, a hung file system).
    Signals reach only the main thread, so elsewhere (tests calling the guard from threads) the
    block runs without a deadline.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise DecisionTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, DECISION_DEADLINE_S if seconds is None else seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextmanager
def uninterrupted() -> Iterator[None]:
    """Hold the alarm back while one ledger row is written, so a row is never torn (a torn
    ledger would deny every later call). An alarm that rings meanwhile rings right after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})
