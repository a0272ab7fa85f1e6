"""The ledger: every model call a run made, with its usage and its price, in ``trace.json``.

One entry per request that reached the model and came back with a usage block (a request that
failed before the model answered — a 429, a 529, a timeout — costs nothing and is counted as a
failed attempt instead). The entry keeps each kind of token apart (input, output, cache writes,
cache reads) and the server-side searches, because each is priced differently; the dollar figure
is computed from the dated price table of the reasoner that made the call, once, when the call
returns, so the ledger's total is the sum of its entries and nothing else.

The ledger is written into ``phases.run.ledger`` with the run's checkpoints, so a resumed run
keeps counting from what the interrupted one spent.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from deep_research.brief.trace_phases import LedgerEntry, LedgerRecord


@dataclass
class Ledger:
    """Thread-safe: workers record their calls concurrently."""

    price_table: str = ""
    entries: list[LedgerEntry] = field(default_factory=list)
    failed_attempts: int = 0
    counters: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_record(cls, record: LedgerRecord | None) -> Ledger:
        if record is None:
            return cls()
        return cls(
            record.price_table, list(record.entries), record.failed_attempts, dict(record.counters)
        )

    def count(self, name: str, amount: int = 1) -> None:
        with self._lock:
            self.counters[name] = self.counters.get(name, 0) + amount

    def add(self, entry: LedgerEntry) -> None:
        with self._lock:
            self.entries.append(entry)

    def failed(self) -> None:
        with self._lock:
            self.failed_attempts += 1

    def snapshot(self) -> list[LedgerEntry]:
        with self._lock:
            return list(self.entries)

    def as_record(self) -> LedgerRecord:
        with self._lock:
            return LedgerRecord(
                price_table=self.price_table,
                entries=list(self.entries),
                failed_attempts=self.failed_attempts,
                counters=dict(self.counters),
            )


@dataclass(frozen=True)
class Totals:
    calls: int = 0
    tokens: int = 0
    usd: float = 0.0


def totals_by(entries: Iterable[LedgerEntry], key: str) -> dict[str, Totals]:
    """Calls, tokens and dollars per value of ``key`` (``phase``, ``model`` or ``role``)."""
    found: dict[str, Totals] = {}
    for entry in entries:
        name = str(getattr(entry, key))
        now = found.get(name, Totals())
        found[name] = Totals(now.calls + 1, now.tokens + entry.tokens, now.usd + entry.usd)
    return found


def spend_lines(record: LedgerRecord) -> list[str]:
    """The summary's spend: per phase, then per model (empty when no model was called)."""
    if not record.entries:
        return []
    total = sum(entry.usd for entry in record.entries)
    lines = [
        f"spend: ${total:.4f} in {len(record.entries)} model call(s)"
        + (f", {record.failed_attempts} failed attempt(s)" if record.failed_attempts else "")
        + (f" (prices of {record.price_table})" if record.price_table else "")
    ]
    for key in ("phase", "model"):
        parts = [
            f"{name} ${t.usd:.4f} ({t.calls})" for name, t in totals_by(record.entries, key).items()
        ]
        lines.append(f"  by {key}: " + ", ".join(parts))
    return lines
