"""The 25-claim question the call-count benchmark measures (benchmarks/claude_calls.py): the
accounting it rests on — each page read once, a settled panel stops at two votes, a skeptic call
judges several claims, only claims the gates passed are judged, every call billed once — checked
on the quick run."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from briefs import read_phase
from claude_calls import BUNDLED, MISREAD, REFUTED, measure
from deep_research.brief.layout import Brief
from deep_research.run.claude.panel import MAX_CLAIMS_PER_SKEPTIC_CALL


def test_the_25_claim_question_is_counted_as_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = measure(tmp_path, "quick", monkeypatch.setenv)
    roles = found["by_role"]
    judged = 25 - len(MISREAD)  # the gates keep the misread claims from the panel
    assert found["verified"] == judged - len(REFUTED) and found["stripped"] == len(REFUTED)
    assert roles["extract"] == 15  # fifteen pages, each read once
    # Every panel settled by two agreeing votes, each round asking its claims several per call.
    assert roles["skeptic"] == 2 * math.ceil(judged / MAX_CLAIMS_PER_SKEPTIC_CALL)
    assert roles["search"] == 1 + 5 and roles["plan"] == roles["synthesize"] == 1
    assert found["calls"] == found["billed"] == sum(roles.values())
    assert found["calls"] <= BUNDLED // 2
    document = Brief(Path(found["brief"])).load_claims()
    misread = [c for c in document.claims if c.support_class != "Supported"]
    assert len(misread) == len(MISREAD) and all(c.votes is None for c in misread)
    cast = read_phase(Brief(Path(found["brief"])), "votes")["raw"]
    assert len(cast) == judged and all(len(votes) == 2 for votes in cast.values())
