"""The pipeline definition: the one phase order both drivers read, checked as a contract."""

from __future__ import annotations

import pytest

from deep_research.run.phases import PHASE_FUNCTIONS
from deep_research.run.pipeline import BY_NAME, PIPELINE, Phase, phase_names


def unmet_needs(pipeline: tuple[Phase, ...]) -> list[str]:
    """Needs that no earlier phase writes (``file#part`` written also means ``file`` exists)."""
    written: set[str] = set()
    unmet = []
    for phase in pipeline:
        unmet += [f"{phase.name} needs {need}" for need in phase.needs if need not in written]
        for artifact in phase.writes:
            written |= {artifact, artifact.split("#", 1)[0]}
    return unmet


def test_every_phase_has_a_function_and_every_function_a_phase() -> None:
    from deep_research.plugin.next import HANDLERS

    names = [phase.name for phase in PIPELINE]
    assert list(PHASE_FUNCTIONS) == names  # the headless driver
    assert list(HANDLERS) == names  # the plugin's next


def test_each_phase_needs_only_what_an_earlier_phase_wrote() -> None:
    assert unmet_needs(PIPELINE) == []
    # Teeth: the same table with claims before normalize is refused.
    swapped = list(PIPELINE)
    at = [phase.name for phase in swapped].index("normalize")
    swapped[at], swapped[at + 2] = swapped[at + 2], swapped[at]
    assert "claims needs sources.jsonl" in unmet_needs(tuple(swapped))


def test_quick_depth_is_the_same_order_without_round_two_entailment_and_the_refetch() -> None:
    full, quick = phase_names("full"), phase_names("quick")
    assert [n for n in full if n not in ("round2", "entail", "refetch")] == list(quick)
    assert full.index("round2") == full.index("normalize") + 1


def test_a_skip_reason_is_looked_up_never_invented() -> None:
    assert BY_NAME["refetch"].skip_reason("local-corpus").startswith("local corpus")
    with pytest.raises(KeyError, match="no skip rule"):
        BY_NAME["plan"].skip_reason("depth-quick")
