"""The governor: hard caps on a headless run that no reasoner output can raise.

The constants below are the harness's. A reasoner never sees them, and every number it returns
is clamped with ``min(value, CONSTANT)`` before it bounds anything — a cap whose bound comes from
the thing being capped is not a cap. A caller (the CLI, a test) may *lower* a limit
(:meth:`Limits.lowered`), never raise one.

Three layers, each catching what the previous cannot:

* **admission** — at most ``workers`` sub-questions; each worker's turns are
  ``min(planned, searches_per_worker)``;
* **preflight** — before any fan-out, the worst case of the admitted plan (every turn, every
  extraction, the panel, CIBER, the digest) is priced; a plan over the dollar, token or call
  budget is cut to the workers that fit (the run is then partial), or refused if none fits;
* **live accounting** — every search, fetch and model call is charged against the budget, and
  after the shared deadline every charge fails, so a worker that outlives the deadline stops at
  its next step.

Workers run concurrently on daemon threads collected against **one** shared deadline: a wedged
worker becomes ``complete: false`` instead of hanging the run, and N slow workers cannot stack
N timeouts of wall clock.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Generic, TypeVar

from deep_research.errors import InputError
from deep_research.run.interface import CallPrice, SubQuestionPlan

MAX_WORKERS = 6
MAX_SEARCHES_PER_WORKER = 12
MAX_HITS_PER_SEARCH = 5
MAX_ROUNDS = 2
MAX_FETCHES = 150
MAX_MODEL_CALLS = 600
MAX_TOKENS = 4_000_000
MAX_USD = 10.0
MAX_CLAIMS = 60
PANEL_VOTES = 3
#: Wall-clock budget of a whole run, by depth, shared by every worker.
QUICK_DEADLINE_S = 120.0
FULL_DEADLINE_S = 1800.0

T = TypeVar("T")
R = TypeVar("R")


class CapReached(Exception):
    """A cap was hit; ``cap`` names which. The runner turns it into a partial, verified brief."""

    def __init__(self, cap: str, detail: str) -> None:
        self.cap = cap
        self.detail = detail
        super().__init__(f"{cap}: {detail}")


@dataclass(frozen=True)
class Limits:
    """The caps in force for one run: the constants, or lower values a caller chose."""

    workers: int = MAX_WORKERS
    searches_per_worker: int = MAX_SEARCHES_PER_WORKER
    hits_per_search: int = MAX_HITS_PER_SEARCH
    rounds: int = MAX_ROUNDS
    fetches: int = MAX_FETCHES
    model_calls: int = MAX_MODEL_CALLS
    tokens: int = MAX_TOKENS
    usd: float = MAX_USD
    claims: int = MAX_CLAIMS
    deadline_s: float = FULL_DEADLINE_S

    def lowered(self, **values: float) -> Limits:
        """A copy with some limits lowered; asking for more than the constant gets the constant."""
        known = {item.name for item in fields(self)}
        changes: dict[str, float] = {}
        for name, value in values.items():
            if name not in known:
                raise InputError(f"unknown limit {name!r}; known: {', '.join(sorted(known))}")
            if not value >= 0:
                raise InputError(f"limit {name} must be 0 or more, got {value}")
            current = getattr(self, name)
            lowered = min(value, current)
            changes[name] = type(current)(lowered)
        return replace(self, **changes)  # type: ignore[arg-type]

    def as_record(self) -> dict[str, float]:
        return {item.name: getattr(self, item.name) for item in fields(self)}


def default_limits(depth: str) -> Limits:
    return Limits(deadline_s=QUICK_DEADLINE_S if depth == "quick" else FULL_DEADLINE_S)


# --- admission and preflight ----------------------------------------------------------------


def turn_cap(sub_question: SubQuestionPlan, limits: Limits) -> int:
    """The worker's searches: the reasoner's number, clamped by the constant."""
    return max(0, min(sub_question.max_searches, limits.searches_per_worker))


def admit(plan: Sequence[SubQuestionPlan], limits: Limits) -> list[SubQuestionPlan]:
    """The reasoner asks for a fan-out; this decides it (first ``limits.workers`` kept)."""
    return list(plan[: limits.workers])


def worker_calls(sub_question: SubQuestionPlan, limits: Limits) -> int:
    """Worst-case model calls of one worker: per turn one follow-up and one read per hit, and
    the last "anything more?" that tells a finished worker from one cut short."""
    return turn_cap(sub_question, limits) * (1 + limits.hits_per_search) + 1


def fixed_calls(limits: Limits) -> int:
    """Worst-case calls outside the workers: decompose, panel, CIBER, digest."""
    return 1 + limits.claims * PANEL_VOTES + 1 + 1


@dataclass(frozen=True)
class Preflight:
    admitted: list[SubQuestionPlan]
    dropped: list[str]
    worst_usd: float
    worst_tokens: int
    worst_calls: int

    def as_record(self) -> dict[str, object]:
        return {
            "admitted": [sq.id for sq in self.admitted],
            "dropped_for_budget": self.dropped,
            "worst_usd": round(self.worst_usd, 4),
            "worst_tokens": self.worst_tokens,
            "worst_calls": self.worst_calls,
        }


def preflight(plan: Sequence[SubQuestionPlan], price: CallPrice, limits: Limits) -> Preflight:
    """Keep the workers whose worst case fits the budget; refuse when not even one does."""
    admitted: list[SubQuestionPlan] = []
    calls = fixed_calls(limits)
    for sub_question in plan:
        more = worker_calls(sub_question, limits)
        if _fits(calls + more, price, limits):
            admitted.append(sub_question)
            calls += more
    if plan and not admitted:
        one = fixed_calls(limits) + worker_calls(plan[0], limits)
        raise InputError(
            f"the budget cannot cover one worker: worst case ${one * price.usd:.2f}, "
            f"{one * price.tokens} tokens, {one} model calls; raise --max-usd "
            f"(at most ${MAX_USD:.2f}) or use --reasoner extractive"
        )
    dropped = [sq.id for sq in plan if sq not in admitted]
    return Preflight(admitted, dropped, calls * price.usd, calls * price.tokens, calls)


def _fits(calls: int, price: CallPrice, limits: Limits) -> bool:
    return (
        (calls <= limits.model_calls or (price.usd == 0 and price.tokens == 0))
        and calls * price.usd <= limits.usd + 1e-9
        and calls * price.tokens <= limits.tokens
    )


# --- live accounting ------------------------------------------------------------------------


@dataclass
class Spend:
    searches: int = 0
    fetches: int = 0
    model_calls: int = 0
    tokens: int = 0
    usd: float = 0.0

    @classmethod
    def from_record(cls, record: Mapping[str, float]) -> Spend:
        """What earlier processes of the same run spent (a resumed run keeps counting)."""
        return cls(
            searches=int(record.get("searches", 0)),
            fetches=int(record.get("fetches", 0)),
            model_calls=int(record.get("model_calls", 0)),
            tokens=int(record.get("tokens", 0)),
            usd=float(record.get("usd", 0.0)),
        )


@dataclass
class Budget:
    """Thread-safe counters charged before each step; a charge over a cap raises CapReached."""

    limits: Limits
    deadline: float  # time.monotonic() value
    spend: Spend = field(default_factory=Spend)
    hit: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def remaining_s(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def _check_deadline(self) -> None:
        if time.monotonic() >= self.deadline:
            self._refuse("deadline", f"the run's {self.limits.deadline_s:g} s deadline passed")

    def _refuse(self, cap: str, detail: str) -> None:
        if cap not in self.hit:
            self.hit.append(cap)
        raise CapReached(cap, detail)

    def charge_search(self) -> None:
        with self._lock:
            self._check_deadline()
            self.spend.searches += 1

    def charge_fetch(self) -> None:
        with self._lock:
            self._check_deadline()
            if self.spend.fetches + 1 > self.limits.fetches:
                self._refuse("fetches", f"{self.limits.fetches} fetches")
            self.spend.fetches += 1

    def charge_call(self, price: CallPrice) -> None:
        with self._lock:
            self._check_deadline()
            if price.usd == 0 and price.tokens == 0:
                return  # no model behind this call: nothing to count
            if self.spend.model_calls + 1 > self.limits.model_calls:
                self._refuse("model_calls", f"{self.limits.model_calls} model calls")
            if self.spend.tokens + price.tokens > self.limits.tokens:
                self._refuse("tokens", f"{self.limits.tokens} tokens")
            if self.spend.usd + price.usd > self.limits.usd + 1e-9:
                self._refuse("usd", f"${self.limits.usd:.2f}")
            self.spend.model_calls += 1
            self.spend.tokens += price.tokens
            self.spend.usd += price.usd

    def as_record(self) -> dict[str, float]:
        with self._lock:
            return {
                "searches": self.spend.searches,
                "fetches": self.spend.fetches,
                "model_calls": self.spend.model_calls,
                "tokens": self.spend.tokens,
                "usd": round(self.spend.usd, 4),
            }


def new_budget(limits: Limits) -> Budget:
    return Budget(limits, time.monotonic() + limits.deadline_s)


# --- fan-out --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """One worker's end: its value, or why it has none (never silently absent)."""

    value: R | None
    error: str | None = None

    @property
    def finished(self) -> bool:
        return self.error is None


def fan_out(
    items: Sequence[T], work: Callable[[T], R], budget: Budget, concurrency: int
) -> list[Outcome[R]]:
    """Run ``work`` on every item concurrently, collected against the budget's one deadline.

    Daemon threads: a wedged worker cannot keep the process alive after the run returns. At
    most ``concurrency`` run at once (``min`` with :data:`MAX_WORKERS`).
    """
    slots: list[Outcome[R] | None] = [None] * len(items)
    done = threading.Condition()
    gate = threading.Semaphore(max(1, min(concurrency, MAX_WORKERS)))

    def run(index: int, item: T) -> None:
        with gate:
            try:
                outcome: Outcome[R] = Outcome(work(item))
            except CapReached as exc:
                outcome = Outcome(None, f"stopped by cap {exc.cap}")
            except Exception as exc:  # a worker's failure is infrastructure, not evidence
                outcome = Outcome(None, f"worker failed: {type(exc).__name__}: {exc}"[:300])
        with done:
            slots[index] = outcome
            done.notify_all()

    for index, item in enumerate(items):
        threading.Thread(target=run, args=(index, item), daemon=True).start()
    with done:
        while any(slot is None for slot in slots):
            remaining = budget.remaining_s()
            if remaining <= 0:
                break
            done.wait(timeout=min(remaining, 0.5))
        final = list(slots)
    return [
        slot if slot is not None else Outcome(None, "did not finish by the shared deadline")
        for slot in final
    ]
