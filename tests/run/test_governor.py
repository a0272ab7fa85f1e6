"""The governor: caps a reasoner cannot raise, preflight, live accounting, fan-out."""

from __future__ import annotations

import threading
import time

import pytest

from deep_research.errors import InputError
from deep_research.run.governor import (
    MAX_SEARCHES_PER_WORKER,
    MAX_USD,
    CapReached,
    Limits,
    admit,
    fan_out,
    new_budget,
    preflight,
    turn_cap,
)
from deep_research.run.interface import CallPrice, SubQuestionPlan

#: How long the wedged worker would hold the fan-out were the deadline not kept.
WEDGED_S = 20.0


def _sq(n: int, searches: int) -> SubQuestionPlan:
    return SubQuestionPlan(f"sq{n}", "q", ("a",), searches)


def test_model_numbers_are_clamped() -> None:
    limits = Limits()
    assert turn_cap(_sq(1, 10_000_000), limits) == MAX_SEARCHES_PER_WORKER
    assert turn_cap(_sq(1, 8), limits) == 8  # an honest plan is unaffected
    assert turn_cap(_sq(1, -5), limits) == 0
    assert len(admit([_sq(n, 1) for n in range(50)], limits)) == limits.workers


def test_limits_can_be_lowered_never_raised() -> None:
    assert Limits().lowered(usd=1e9).usd == MAX_USD
    assert Limits().lowered(usd=1.5, workers=2).workers == 2
    with pytest.raises(InputError):
        Limits().lowered(usd=-1)
    with pytest.raises(InputError):
        Limits().lowered(power=3)


def test_preflight_keeps_what_fits_and_refuses_what_cannot_start() -> None:
    price = CallPrice(tokens=100, usd=0.01)
    plan = [_sq(n, 2) for n in range(1, 4)]
    check = preflight(plan, price, Limits(usd=2.0))
    assert [sq.id for sq in check.admitted] == ["sq1"] and check.dropped == ["sq2", "sq3"]
    assert check.worst_usd <= 2.0
    assert preflight(plan, CallPrice(), Limits(usd=0.0)).dropped == []  # no model, no cost
    with pytest.raises(InputError, match="cannot cover one worker"):
        preflight(plan, price, Limits(usd=0.5))


def test_budget_charges_raise_at_the_cap_and_after_the_deadline() -> None:
    budget = new_budget(Limits(fetches=2, usd=0.02))
    budget.charge_fetch()
    budget.charge_fetch()
    with pytest.raises(CapReached, match="fetches"):
        budget.charge_fetch()
    price = CallPrice(tokens=1, usd=0.01)
    budget.charge_call(price)
    budget.charge_call(price)
    with pytest.raises(CapReached, match="usd"):
        budget.charge_call(price)
    late = new_budget(Limits(deadline_s=0.0))
    with pytest.raises(CapReached, match="deadline"):
        late.charge_search()


def test_fan_out_is_concurrent_and_survives_a_wedged_or_failing_worker() -> None:
    release = threading.Event()

    def work(n: int) -> int:
        if n == 1:
            release.wait(WEDGED_S)
        if n == 2:
            raise RuntimeError("boom")
        time.sleep(0.2)
        return n

    began = time.monotonic()
    outcomes = fan_out([0, 1, 2, 3], work, new_budget(Limits(deadline_s=0.6)), 6)
    elapsed = time.monotonic() - began
    release.set()
    # The deadline, not the wedged worker, ended the fan-out.
    assert outcomes[0].value == 0 and outcomes[3].value == 3  # ran side by side
    assert "deadline" in (outcomes[1].error or "")
    assert "RuntimeError" in (outcomes[2].error or "")
    assert elapsed < WEDGED_S / 2


def test_a_later_fan_out_is_preflighted_against_what_is_left() -> None:
    from deep_research.run.governor import preflight_round

    price = CallPrice(tokens=100, usd=0.01)
    plan = [_sq(n, 2) for n in range(1, 4)]
    # Fixed part $1.83, each worker $0.13: all three fit $2.30 when nothing is spent yet …
    budget = new_budget(Limits(usd=2.3))
    assert preflight_round(plan, price, budget).dropped == []
    # … and only one once $0.30 has gone; with nothing left for the phases after, none.
    budget.charge_call(CallPrice(tokens=0, usd=0.3))
    assert preflight_round(plan, price, budget).dropped == ["sq2", "sq3"]
    budget.charge_call(CallPrice(tokens=0, usd=0.1))
    assert [sq.id for sq in preflight_round(plan, price, budget).admitted] == []
