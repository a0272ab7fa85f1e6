"""The relevance gate where the headless pipeline builds claims: whatever a reasoner offers, a
finding that does not answer the research question is no claim, and a question nothing
answers ends ``not found``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from briefs import assert_verified
from deep_research.brief.layout import Brief
from deep_research.gates.trace import emitted_claims
from deep_research.gates.vocabulary import sentences
from deep_research.run.driver import RunRequest, RunResult, start
from deep_research.run.governor import default_limits
from deep_research.run.interface import FindingDraft, Retained, SubQuestionPlan
from deep_research.run.localcorpus import open_corpus
from deep_research.run.progress import Progress
from deep_research.settings import load_settings
from fakereasoner import ScriptedReasoner

QUARK = "Measurements at the Tevatron put the top quark mass near 173 GeV per c squared."
TOMATO = "Tomatoes need full sun and a regular supply of water through the summer months."
MASS = "The mass of a ripe tomato grows quickly once the summer nights stay warm enough."


@dataclass
class EagerReasoner(ScriptedReasoner):
    """A reasoner that offers every sentence it reads, as a careless model might."""

    def extract(self, sub_question: SubQuestionPlan, document: Retained) -> list[FindingDraft]:
        return [
            FindingDraft(claim=s.claim, quote=s.text)
            for s in sentences(document.text)
            if len(s.claim) >= 40
        ]


def _run(tmp_path: Path, question: str, docs: dict[str, str], queries: Sequence[str]) -> RunResult:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    state = tmp_path / "state"
    return start(
        RunRequest(question, state),
        open_corpus(str(folder), state),
        EagerReasoner(workers=2, max_searches=2, queries=tuple(queries)),
        load_settings(environ={}),
        default_limits("quick"),
        Progress(quiet=True),
    )


def test_only_findings_that_answer_the_question_become_claims(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        "What is the mass of the top quark?",
        {"physics.md": f"# Quarks\n\n{QUARK}\n", "garden.md": f"# Garden\n\n{TOMATO}\n\n{MASS}\n"},
        ["top quark mass", "mass"],
    )
    claims = [c.claim for c in emitted_claims(Brief(result.brief).load_claims())]
    # The tomato's mass shares a word with the question and answers nothing.
    assert claims == [QUARK]
    assert not result.not_found
    assert_verified(result.brief)


def test_a_question_nothing_answers_is_a_not_found_brief(tmp_path: Path) -> None:
    result = _run(
        tmp_path,
        "What is the GIL and how does it affect threads?",
        {
            "ctypes.md": "Calling the functions releases the Python GIL during the call and "
            "reacquires it afterwards.\n",
            "threads.md": "A thread is started by calling the start() method of its Thread "
            "object once.\n",
        },
        ["GIL threads", "threads"],
    )
    document = Brief(result.brief).load_claims()
    assert result.claims == 0 and not emitted_claims(document)
    assert len(result.not_found) == len(document.sub_questions) >= 2  # each one says so
    assert result.verdict == "HOLD"
    assert_verified(result.brief)
