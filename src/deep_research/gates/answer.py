"""The answer in prose, held to the trace gate claim by claim (docs/contracts.md §12.1).

claims.json's ``synthesis`` is the brief's answer as a model wrote it. It is split into
sentences as dossier mode splits a report (:func:`~deep_research.gates.trace.prose_sentences`),
and each sentence into the claims it states: a citation marker closes the clause before it, so
"the beekeepers' association counts 214 colonies on the island [S4], the council's survey gives
168 [S6]" states two claims, each checked against its own sources only — a sentence giving two
positions is the way a contradiction is written, and checking each source against both would
strip it.
Every (clause, cited source) pair runs the four steps of docs/contracts.md §4.1
(:func:`~deep_research.gates.trace.trace_sentence`). A sentence may be shown only when every
clause cites at least one source and every source a clause cites is supported for that clause.

Then the answer as a whole: every open contradiction of the brief (claims.json
``unresolved_contradictions`` naming two or more verified claims) must have each of its
positions stated by a passing clause — one citing a source of that position and stating a
figure, date or name that sets it apart from the others (when it has one). An answer that
leaves a position out is refused: a reader who sees one count has not learned that the sources
disagree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from deep_research.brief import Brief
from deep_research.gates.joint import joined
from deep_research.gates.literals import check
from deep_research.gates.overtaken import overtaken
from deep_research.gates.trace import (
    PairResult,
    SourceIndex,
    cited_sentence,
    prose_sentences,
    trace_sentence,
)
from deep_research.models import Claim, ClaimsFile, Contradiction

NO_CITATION = "cites no source"

#: A run of citation markers (``[S1][S4]``, ``[S1, S4]``) that closes a clause.
_CITE_RUN = re.compile(r"(?:\s*\[\^?S\d+(?:\s*[,;]\s*S\d+)*\])+")
_SOURCE_ID = re.compile(r"S\d+")
#: A sentence citing by URL or link is checked whole: its markers do not mark clauses.
_LINK = re.compile(r"https?://")
#: Punctuation and space a clause after the first starts with ("…[S4], the contractor …").
_LEAD = " ,;:\u2013\u2014"  # never "-": it may be a figure's sign
#: A clause of fewer words than this ("According to [S1], …") cannot state a claim alone: its
#: sources join the next clause's, which each of them must then support.
MIN_CLAUSE_WORDS = 3


@dataclass(frozen=True)
class CheckedClause:
    """One claim a sentence states: its text (markers removed) and what its sources say."""

    text: str
    sources: tuple[str, ...]
    results: tuple[PairResult, ...]

    @property
    def passed(self) -> bool:
        return bool(self.sources) and all(r.outcome == "supported" for r in self.results)


@dataclass(frozen=True)
class CheckedSentence:
    """One sentence of the synthesis as written, and whether it may be shown."""

    text: str
    passed: bool
    reason: str = ""  # why it may not; empty when it passed
    clauses: tuple[CheckedClause, ...] = ()


@dataclass(frozen=True)
class DroppedPosition:
    """A position of an open contradiction the answer does not state."""

    topic: str
    claim: str  # the claim id
    text: str
    sources: tuple[str, ...]

    def describe(self) -> str:
        cites = "".join(f"[{s}]" for s in self.sources)
        return f"{self.topic}: {self.claim} ({self.text} {cites}) is not stated"


@dataclass(frozen=True)
class CheckedAnswer:
    """The synthesis checked: each sentence, and the positions it leaves out (refused if any)."""

    sentences: tuple[CheckedSentence, ...]
    dropped: tuple[DroppedPosition, ...] = ()
    #: Claim id → why its date no longer reads as the source wrote it (:mod:`.overtaken`).
    overtaken: dict[str, str] = field(default_factory=dict)

    @property
    def refused(self) -> bool:
        return bool(self.dropped)

    @property
    def accepted(self) -> bool:
        """Not refused, and at least one sentence may be shown."""
        return not self.refused and any(sentence.passed for sentence in self.sentences)

    def next_step(self) -> str:
        """One line for the writer of an answer that is not accepted: what to change."""
        if self.refused:
            return f"rewrite the answer: {self.refusal()}"
        return (
            "rewrite the answer: no sentence passed; state each claim with the [S#] of the "
            "sources that state it, one clause per claim, its figures as the sources give them"
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "accepted": self.accepted,
            "refusal": self.refusal() or None,
            "sentences": [
                {"text": s.text, "passed": s.passed, "reason": s.reason or None}
                for s in self.sentences
            ],
            "dropped_positions": [
                {"topic": d.topic, "claim": d.claim, "text": d.text, "sources": list(d.sources)}
                for d in self.dropped
            ],
        }

    def refusal(self) -> str:
        """One line: why the answer is refused and what to write instead (empty if it is not)."""
        if not self.dropped:
            return ""
        missing = "; ".join(item.describe() for item in self.dropped)
        return (
            f"the answer leaves out a side of an open contradiction — {missing}; state every "
            "position, each attributed to its own sources ([S#] after its clause)"
        )


def clauses(sentence: str) -> list[str]:
    """The clauses of ``sentence``, each as text followed by the markers that cite it.

    A run of markers closes a clause; text after the last run belongs to the last clause (it
    is checked against that clause's sources); a clause too short to state a claim is joined
    to the next, whose sources it adds. A sentence citing by URL, or citing once, is one
    clause, exactly as written.
    """
    runs = list(_CITE_RUN.finditer(sentence))
    if len(runs) < 2 or _LINK.search(sentence):
        return [sentence]
    pieces: list[tuple[str, list[str]]] = []
    start = 0
    for run in runs:
        pieces.append((sentence[start : run.start()], _SOURCE_ID.findall(run.group())))
        start = run.end()
    last_text, last_sources = pieces[-1]
    pieces[-1] = (last_text + sentence[start:], last_sources)
    out: list[str] = []
    carry_text, carry_sources = "", list[str]()
    for number, (text, sources) in enumerate(pieces, start=1):
        text, sources = carry_text + text, carry_sources + sources
        if len(text.strip(_LEAD).split()) < MIN_CLAUSE_WORDS and number < len(pieces):
            carry_text, carry_sources = text, sources
            continue
        carry_text, carry_sources = "", []
        marks = "".join(f"[{source}]" for source in dict.fromkeys(sources))
        out.append(f"{text.strip(_LEAD)} {marks}")
    return out


def _clause(index: SourceIndex, number: int, written: str) -> CheckedClause:
    found = cited_sentence(number, written)
    # A clause is a claim: its cites may state it together, as a merged claim's do.
    results = tuple(joined(trace_sentence(index, found))) if found.sources else ()
    return CheckedClause(found.text, found.sources, results)


def _sentence(index: SourceIndex, number: int, written: str) -> CheckedSentence:
    checked = tuple(_clause(index, number, part) for part in clauses(written))
    several = len(checked) > 1
    reasons = []
    for clause in checked:
        failing = [r for r in clause.results if r.outcome != "supported"]
        why = NO_CITATION if not clause.sources else "; ".join(map(_why, failing))
        if why and not clause.passed:
            reasons.append(f'"{clause.text}": {why}' if several else why)
    passed = all(clause.passed for clause in checked)
    return CheckedSentence(written, passed, "; ".join(reasons), checked)


def check_answer(brief: Brief, synthesis: str, document: ClaimsFile | None = None) -> CheckedAnswer:
    """Every sentence of ``synthesis`` in order, each clause traced against the brief's
    retained text, the positions of the brief's open contradictions it leaves out, and the
    claims whose future date the brief's date has overtaken (``document``: claims.json as the
    caller read it; read from the brief otherwise). An empty ``synthesis`` checks no sentence."""
    if document is None:
        document = brief.load_claims()
    sources = brief.load_sources()
    index = SourceIndex(brief, sources, brief.load_fetch_log())
    sentences = tuple(
        _sentence(index, number, written)
        for number, written in enumerate(prose_sentences(synthesis), start=1)
    )
    stated = [c for s in sentences if s.passed for c in s.clauses]
    # No answer written leaves out nothing: the report's key findings stand as its answer.
    dropped = dropped_positions(document, stated) if sentences else []
    return CheckedAnswer(
        sentences,
        tuple(dropped),
        overtaken(
            document.claims,
            document.generated,
            {s.id: s.published_at for s in sources if s.published_at is not None},
        ),
    )


def open_contradictions(document: ClaimsFile) -> list[tuple[Contradiction, list[Claim]]]:
    """Each open contradiction with the verified claims holding its positions — only those
    with two or more: a CIBER counter-reading (one claim) is shown in the report, not asked of
    the answer, and a position whose claim was stripped is no longer held."""
    claims = {claim.id: claim for claim in document.claims}
    found = []
    for entry in document.unresolved_contradictions:
        sides = [
            claims[cid]
            for cid in dict.fromkeys(entry.ids)
            if cid in claims and claims[cid].support_class == "Supported"
        ]
        if len(sides) >= 2:
            found.append((entry, sides))
    return found


def _distinct(side: Claim, others: Sequence[Claim]) -> set[str]:
    """The literals of ``side`` that no other position states: what sets it apart."""
    own = {token.text for token in check(side.claim, []).claim_literals}
    for other in others:
        own &= {token.text for token in check(side.claim, [other.claim]).missing}
    return own


def _states(clause: CheckedClause, side: Claim, distinct: set[str]) -> bool:
    if not clause.passed or not set(clause.sources) & set(side.supporting):
        return False
    if not distinct:
        return True
    unstated = {token.text for token in check(side.claim, [clause.text]).missing}
    # One figure that sets the position apart is enough: an answer may leave out the year
    # both positions share the context of, never the figure they disagree on.
    return bool(distinct - unstated)


def dropped_positions(
    document: ClaimsFile, stated: Sequence[CheckedClause]
) -> list[DroppedPosition]:
    """The positions of open contradictions no passing clause states (see the module doc)."""
    dropped = []
    for entry, sides in open_contradictions(document):
        for side in sides:
            distinct = _distinct(side, [other for other in sides if other is not side])
            if not any(_states(clause, side, distinct) for clause in stated):
                dropped.append(
                    DroppedPosition(entry.topic, side.id, side.claim, tuple(side.supporting))
                )
    return dropped


def _why(result: PairResult) -> str:
    """``S1 partially_supported (literal_missing: 250 Wh/kg)``: the source, the outcome, and the
    figures or names of the sentence it does not state."""
    missing = sorted({m for item in result.evidence for m in item.checks.literals.missing})
    reasons = ", ".join(result.reasons) or result.outcome
    detail = f": {', '.join(missing)}" if missing else ""
    return f"{result.source} {result.outcome} ({reasons}{detail})"
