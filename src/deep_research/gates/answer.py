"""The answer in prose, held to the trace gate sentence by sentence (docs/contracts.md §12).

claims.json's ``synthesis`` is the brief's answer as a model wrote it. It is split and traced
exactly as dossier mode traces a report (:func:`~deep_research.gates.trace.prose_sentences`,
:func:`~deep_research.gates.trace.cited_sentence`,
:func:`~deep_research.gates.trace.trace_sentence`): every (sentence, cited source) pair runs the
four steps of docs/contracts.md §4.1 against the quotes the source offers. A sentence may be
shown as the answer only when it cites at least one source and every source it cites is
supported for it — a failing citation would present as support what is not — so a figure the
source does not state strips its sentence, whatever the sentence around it says.
"""

from __future__ import annotations

from dataclasses import dataclass

from deep_research.brief import Brief
from deep_research.gates.trace import (
    PairResult,
    SourceIndex,
    cited_sentence,
    prose_sentences,
    trace_sentence,
)

NO_CITATION = "cites no source"


@dataclass(frozen=True)
class CheckedSentence:
    """One sentence of the synthesis as written, and whether it may be shown."""

    text: str
    passed: bool
    reason: str = ""  # why it may not; empty when it passed


def check_answer(brief: Brief, synthesis: str) -> list[CheckedSentence]:
    """Every sentence of ``synthesis`` in order, each traced against the brief's retained text."""
    index = SourceIndex(brief, brief.load_sources(), brief.load_fetch_log())
    checked = []
    for number, written in enumerate(prose_sentences(synthesis), start=1):
        sentence = cited_sentence(number, written)
        if not sentence.sources:
            checked.append(CheckedSentence(written, False, NO_CITATION))
            continue
        failing = [r for r in trace_sentence(index, sentence) if r.outcome != "supported"]
        checked.append(CheckedSentence(written, not failing, "; ".join(map(_why, failing))))
    return checked


def _why(result: PairResult) -> str:
    """``S1 partially_supported (literal_missing: 250 Wh/kg)``: the source, the outcome, and the
    figures or names of the sentence it does not state."""
    missing = sorted({m for item in result.evidence for m in item.checks.literals.missing})
    reasons = ", ".join(result.reasons) or result.outcome
    detail = f": {', '.join(missing)}" if missing else ""
    return f"{result.source} {result.outcome} ({reasons}{detail})"
