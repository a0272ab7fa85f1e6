"""A small live check against the real Messages API — skipped unless ANTHROPIC_API_KEY is set:

    ANTHROPIC_API_KEY=sk-... python -m pytest tests/run/claude/test_live.py -s

Three roles on their default models, a few cents in all: a page read with citations (every
quote must be the cited span of our own text), one early-stopped skeptic panel, one web search
(its hits are listed, not fetched). It prints what it spent, priced from the ledger.
"""

from __future__ import annotations

import os

import pytest

from deep_research.models import Claim
from deep_research.run.claude import open_reasoner
from deep_research.run.claude.search import WebSearchAdapter
from deep_research.run.interface import EvidenceText, Retained, SubQuestionPlan
from deep_research.run.ledger import spend_lines

#: Read when the module loads: the suite's autouse fixture removes the key from every test.
LIVE_KEY = os.environ.get("ANTHROPIC_API_KEY", "").strip()
PAGE = (
    "The Python Software Foundation released Python 3.12.0 on 2 October 2023. The release "
    "added more flexible f-string parsing, as described in PEP 701, and a per-interpreter GIL "
    "(PEP 684). Support for the wstr and wstr_length members of the Unicode object was removed."
)

pytestmark = pytest.mark.skipif(not LIVE_KEY, reason="ANTHROPIC_API_KEY is not set")


def test_live_roles_and_their_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", LIVE_KEY)
    reasoner = open_reasoner()
    reasoner.question = "What did Python 3.12 change?"
    document = Retained("https://example.org/python-312", "Python 3.12", PAGE, "sha256:x", None)
    plan = SubQuestionPlan("sq1", "What changed in Python 3.12?", ("python 3.12",), 1)
    findings = reasoner.extract(plan, document)
    counters = reasoner.client.ledger.counters
    print(f"\nfindings: {len(findings)}; citations {counters}")
    assert all(f.quote in PAGE for f in findings)
    assert findings, "the model cited nothing in a page that answers the question"
    claim = Claim(id="C1", claim="Python 3.12.0 was released on 2 October 2023.")
    votes = reasoner.judge(claim, [EvidenceText("S1", PAGE[:70])])
    print(f"votes: {votes}")
    hits = WebSearchAdapter(reasoner.client).search("Python 3.12 release notes", 5)
    print("hits:", [hit.url for hit in hits])
    print("\n".join(spend_lines(reasoner.client.ledger.as_record())))
    entries = reasoner.client.ledger.entries
    assert entries
    # The table's request shapes hold on the real API: no call was cut short by its own think.
    assert all(entry.stop_reason != "max_tokens" for entry in entries), entries
