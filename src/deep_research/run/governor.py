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
from typing import Generic, Protocol, TypeVar, runtime_checkable

from deep_research.errors import InputError, Stopped
from deep_research.run.interface import CallPrice, SubQuestionPlan
from deep_research.run.ledger import Ledger
from deep_research.settings import Settings

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


class CapReached(Stopped):
    """A cap was hit; ``name`` says which. The runner turns it into a partial, verified brief."""


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


@dataclass(frozen=True)
class CallCosts:
    """The worst case of one call of each kind. A reasoner that prices every call alike (or
    costs nothing) is :meth:`uniform`; one whose roles run on different models prices each kind
    on its own model, and a search adapter that calls a model prices ``search``."""

    plan: CallPrice
    follow_up: CallPrice
    extract: CallPrice
    vote: CallPrice
    ciber: CallPrice
    synthesize: CallPrice
    search: CallPrice = field(default_factory=CallPrice)
    #: The most follow-up calls a worker of this reasoner makes (None: one per turn and one
    #: more, the most :func:`~deep_research.run.phases.research` can ask).
    follow_ups: int | None = None

    @classmethod
    def uniform(cls, price: CallPrice) -> CallCosts:
        return cls(price, price, price, price, price, price)

    def is_free(self) -> bool:
        return all(
            p.usd == 0 and p.tokens == 0
            for p in (
                self.plan,
                self.follow_up,
                self.extract,
                self.vote,
                self.ciber,
                self.synthesize,
                self.search,
            )
        )


@dataclass(frozen=True)
class Worst:
    """A worst case: model calls, tokens, dollars."""

    calls: int = 0
    tokens: int = 0
    usd: float = 0.0

    def __add__(self, other: Worst) -> Worst:
        return Worst(self.calls + other.calls, self.tokens + other.tokens, self.usd + other.usd)


def _times(count: int, price: CallPrice, *, model: bool = True) -> Worst:
    return Worst(count if model else 0, count * price.tokens, count * price.usd)


def worker_worst(sub_question: SubQuestionPlan, costs: CallCosts, limits: Limits) -> Worst:
    """One worker at its clamped turn cap: per turn a search, a follow-up and a read per hit,
    then the last "anything more?"."""
    turns = turn_cap(sub_question, limits)
    searched = costs.search.usd > 0 or costs.search.tokens > 0
    follow_ups = turns + 1 if costs.follow_ups is None else min(turns + 1, costs.follow_ups)
    return (
        _times(turns, costs.search, model=searched)
        + _times(follow_ups, costs.follow_up)
        + _times(turns * limits.hits_per_search, costs.extract)
    )


def fixed_worst(costs: CallCosts, limits: Limits) -> Worst:
    """Everything outside the workers: decompose, the panel, CIBER, the digest."""
    return (
        _times(1, costs.plan)
        + _times(limits.claims * PANEL_VOTES, costs.vote)
        + _times(1, costs.ciber)
        + _times(1, costs.synthesize)
    )


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


def _admit(
    plan: Sequence[SubQuestionPlan], costs: CallCosts, limits: Limits, start: Worst
) -> Preflight:
    free = costs.is_free()
    admitted: list[SubQuestionPlan] = []
    total = start
    for sub_question in plan:
        more = worker_worst(sub_question, costs, limits)
        if _fits(total + more, free, limits):
            admitted.append(sub_question)
            total = total + more
    dropped = [sq.id for sq in plan if sq not in admitted]
    return Preflight(admitted, dropped, total.usd, total.tokens, total.calls)


def preflight(
    plan: Sequence[SubQuestionPlan], price: CallPrice | CallCosts, limits: Limits
) -> Preflight:
    """Keep the workers whose worst case fits the budget; refuse when not even one does."""
    costs = price if isinstance(price, CallCosts) else CallCosts.uniform(price)
    check = _admit(plan, costs, limits, fixed_worst(costs, limits))
    if plan and not check.admitted:
        one = fixed_worst(costs, limits) + worker_worst(plan[0], costs, limits)
        raise InputError(
            f"the budget cannot cover one worker: worst case ${one.usd:.2f}, "
            f"{one.tokens} tokens, {one.calls} model calls; raise --max-usd "
            f"(at most ${MAX_USD:.2f}) or use --reasoner extractive"
        )
    return check


def preflight_round(
    plan: Sequence[SubQuestionPlan], price: CallPrice | CallCosts, budget: Budget
) -> Preflight:
    """Before a later fan-out (round 2): the workers whose worst case fits what the run has
    left once the phases after it (panel, CIBER, digest) are covered; none fitting is an
    answer here (the round is cut), not an error."""
    costs = price if isinstance(price, CallCosts) else CallCosts.uniform(price)
    spent = budget.as_record()
    already = Worst(int(spent["model_calls"]), int(spent["tokens"]), float(spent["usd"]))
    return _admit(plan, costs, budget.limits, already + fixed_worst(costs, budget.limits))


def _fits(worst: Worst, free: bool, limits: Limits) -> bool:
    return (
        (worst.calls <= limits.model_calls or free)
        and worst.usd <= limits.usd + 1e-9
        and worst.tokens <= limits.tokens
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
    #: Every metered call, priced (the driver saves it with the checkpoints).
    ledger: Ledger = field(default_factory=Ledger)
    #: The phase under way, so a metered call is booked to it (phases run one at a time).
    phase: str = ""
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
            self._count_call(price)

    def reserve(self, worst: CallPrice) -> None:
        """Before a metered model call: count it at its worst case (refused over a cap). The
        caller settles it with what the call really cost, or with nothing if it failed."""
        with self._lock:
            self._check_deadline()
            self._count_call(worst)

    def _count_call(self, price: CallPrice) -> None:
        """One model call at ``price`` on the spend, refused where it would pass a cap (called
        with the lock held)."""
        if self.spend.model_calls + 1 > self.limits.model_calls:
            self._refuse("model_calls", f"{self.limits.model_calls} model calls")
        if self.spend.tokens + price.tokens > self.limits.tokens:
            self._refuse("tokens", f"{self.limits.tokens} tokens")
        if self.spend.usd + price.usd > self.limits.usd + 1e-9:
            self._refuse("usd", f"${self.limits.usd:.2f}")
        self.spend.model_calls += 1
        self.spend.tokens += price.tokens
        self.spend.usd += price.usd

    def settle(self, worst: CallPrice, actual: CallPrice | None) -> None:
        """Replace a reservation by the call's real cost; ``None`` (no answer) refunds it."""
        with self._lock:
            if actual is None:
                self.spend.model_calls -= 1
                actual = CallPrice()
            self.spend.tokens += actual.tokens - worst.tokens
            self.spend.usd += actual.usd - worst.usd

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


@runtime_checkable
class Metered(Protocol):
    """A reasoner or source that calls a model itself and books every call on the budget
    (:meth:`Budget.reserve` before, :meth:`Budget.settle` after, an entry in its ledger). Its
    ``price`` is zero, so the phases' per-step charge counts only the deadline, and
    :meth:`costs` is what preflight prices."""

    def bind(self, budget: Budget, settings: Settings, depth: str) -> None:
        """Join a run: its budget, its settings and the depth asked (``auto`` included)."""
        ...

    def costs(self) -> CallCosts: ...


def bind_budget(budget: Budget, settings: Settings, depth: str, *parts: object) -> None:
    for part in parts:
        if isinstance(part, Metered):
            part.bind(budget, settings, depth)


def run_costs(reasoner: object, price: CallPrice, adapter: object) -> CallCosts:
    """What preflight prices: a metered reasoner's per-kind costs, else its flat ``price`` for
    every call; a metered source adds what its searches cost."""
    costs = reasoner.costs() if isinstance(reasoner, Metered) else CallCosts.uniform(price)
    if isinstance(adapter, Metered):
        costs = replace(costs, search=adapter.costs().search)
    return costs


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
                outcome = Outcome(None, f"stopped by cap {exc.name}")
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
