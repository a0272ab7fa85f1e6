"""The answer in prose, held to the trace gate claim by claim (docs/contracts.md §12.1).

A model's answer (stored in claims.json as this check lets it be shown) is split into
sentences as dossier mode splits a report (:func:`~deep_research.gates.citations.prose_sentences`),
and each sentence into the claims it states: a citation marker closes the clause before it, so
"the beekeepers' association counts 214 colonies on the island [S4], the council's survey gives
168 [S6]" states two claims, each checked against its own sources only — a sentence giving two
positions is the way a contradiction is written, and checking each source against both would
strip it.
Every (clause, cited source) pair runs the four steps of docs/contracts.md §4.1
(:func:`~deep_research.gates.trace.trace_sentence`) — except that a clause stating an emitted
claim in that claim's words reads the gate's recorded result for the claim and the source (what
the report's verification table shows), so the two never disagree on one citation. A citation
that does not state its clause is dropped from the sentence shown; a clause no citation states
is struck, not the sentence's verified clauses; a sentence citing by URL is kept or struck
whole. What was struck is listed after the sentence, with why.

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
from dataclasses import dataclass, field, replace

from deep_research.brief.layout import Brief
from deep_research.gates.citations import SOURCE_ID, SOURCE_MARKS, prose_sentences
from deep_research.gates.joint import JOINED, joined
from deep_research.gates.literals import check
from deep_research.gates.overtaken import overtaken
from deep_research.gates.pair import PairResult
from deep_research.gates.trace import (
    CitedSentence,
    SourceIndex,
    cited_sentence,
    emitted_claims,
    trace_sentence,
)
from deep_research.models import Claim, ClaimsFile, Contradiction, StruckSentence

NO_CITATION = "cites no source"

#: A run of citation markers (``[S1][S4]``, ``[S1, S4]``) that closes a clause.
_CITE_RUN = re.compile(rf"(?:\s*{SOURCE_MARKS.pattern})+")
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
    #: Its citations must all hold (a sentence citing by URL is checked whole, as written).
    whole: bool = False

    @property
    def kept(self) -> tuple[str, ...]:
        """The cited sources that state the clause: the citations shown with it."""
        held = {r.source for r in self.results if r.outcome == "supported"}
        if self.whole and len(held) < len(self.results):
            return ()
        return tuple(source for source in self.sources if source in held)

    @property
    def passed(self) -> bool:
        return bool(self.kept)


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

    def stored(self) -> dict[str, object]:
        """claims.json's answer fields: the sentences that may be shown, as shown, and what was
        struck with why — so claims.json never holds a clause the report strikes."""
        shown = " ".join(sentence.text for sentence in self.sentences if sentence.passed)
        return {
            "synthesis": shown,
            "synthesis_struck": [
                StruckSentence(text=sentence.text, reason=sentence.reason)
                for sentence in self.sentences
                if not sentence.passed
            ],
        }

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
    return [piece.written for piece in _pieces(sentence)]


@dataclass(frozen=True)
class _Piece:
    """One clause where the sentence has it: from ``start`` (its leading separator included) to
    ``end`` (its markers included; the last clause runs to the sentence's end), its marker runs,
    and its text as :func:`clauses` gives it."""

    start: int
    end: int
    runs: tuple[tuple[int, int], ...]
    written: str


def _pieces(sentence: str) -> list[_Piece]:
    runs = list(_CITE_RUN.finditer(sentence))
    if len(runs) < 2 or _LINK.search(sentence):
        return [_Piece(0, len(sentence), tuple(run.span() for run in runs), sentence)]
    raw: list[tuple[int, int, str, list[str], list[tuple[int, int]]]] = []
    start = 0
    for run in runs:
        ids = SOURCE_ID.findall(run.group())
        raw.append((start, run.end(), sentence[start : run.start()], ids, [run.span()]))
        start = run.end()
    first, _, last_text, last_ids, last_runs = raw[-1]
    raw[-1] = (first, len(sentence), last_text + sentence[start:], last_ids, last_runs)
    out: list[_Piece] = []
    carry: tuple[int, str, list[str], list[tuple[int, int]]] | None = None
    for number, (begin, end, text, sources, spans) in enumerate(raw, start=1):
        if carry is not None:
            begin, text = carry[0], carry[1] + text
            sources, spans = carry[2] + sources, carry[3] + spans
        if len(text.strip(_LEAD).split()) < MIN_CLAUSE_WORDS and number < len(raw):
            carry = (begin, text, sources, spans)
            continue
        carry = None
        marks = "".join(f"[{source}]" for source in dict.fromkeys(sources))
        out.append(_Piece(begin, end, tuple(spans), f"{text.strip(_LEAD)} {marks}"))
    return out


#: Words that join a clause to the one before it ("…[S4], while the contractor …"): not part of
#: the claim the clause states.
_CONNECTIVES = frozenset({"and", "but", "while", "whereas", "although", "though", "yet", "so"})
_TOKEN = re.compile(r"\w+(?:[.,'’]\w+)*%?")


def _words(text: str) -> tuple[str, ...]:
    """``text`` as the words a clause and a claim are compared by: case, punctuation and a
    leading connective aside."""
    words = tuple(_TOKEN.findall(text.casefold().replace("’", "'")))
    return words[1:] if words and words[0] in _CONNECTIVES else words


class _Recorded:
    """The per-citation results the trace gate recorded for the emitted claims — what the
    report's verification table shows — by the words of each claim."""

    def __init__(self, document: ClaimsFile) -> None:
        self.by_words: dict[tuple[str, ...], list[Claim]] = {}
        for claim in emitted_claims(document):
            self.by_words.setdefault(_words(claim.claim), []).append(claim)

    def result(self, unit: str, text: str, source: str, cited: Sequence[str]) -> PairResult | None:
        """The recorded result of ``source`` for the claim ``text`` states word for word, when
        that claim cites it and the gate passed the pair — and, for a pair that holds only
        joined with others (:data:`~deep_research.gates.joint.JOINED`), when the clause cites
        those too (``cited``); None otherwise."""
        for claim in self.by_words.get(_words(text), []):
            if source not in claim.supporting:
                continue
            joined_with = {item.source for item in claim.evidence if JOINED in item.checks.reasons}
            if source in joined_with and not joined_with <= set(cited):
                continue  # it states the claim only beside sources this clause does not cite
            evidence = tuple(item for item in claim.evidence if item.source == source)
            return PairResult(unit, source, "supported", (), evidence)
        return None


def _clause(index: SourceIndex, recorded: _Recorded, number: int, piece: _Piece) -> CheckedClause:
    found = cited_sentence(number, piece.written)
    whole = bool(_LINK.search(piece.written))
    if not found.sources:
        return CheckedClause(found.text, found.sources, (), whole)
    # A clause stating an emitted claim in its words reads the gate's result for that claim
    # and source — the one the verification table shows — instead of tracing it afresh.
    known = {s: recorded.result(found.unit(), found.text, s, found.sources) for s in found.sources}
    rest = CitedSentence(found.number, found.text, tuple(s for s, r in known.items() if r is None))
    traced = iter(trace_sentence(index, rest))
    results = [known[s] or next(traced) for s in found.sources]
    # A clause is a claim: its cites may state it together, as a merged claim's do.
    return CheckedClause(found.text, found.sources, tuple(joined(results)), whole)


#: A sentence's closing punctuation, kept when the clause that held it is struck.
_ENDING = re.compile(r"[.!?]+[\"'”’)]*\s*$")


def _shown(sentence: str, pieces: Sequence[_Piece], checked: Sequence[CheckedClause]) -> str:
    """``sentence`` with only its passing clauses, each with only the citations that state it."""
    parts = []
    for piece, clause in zip(pieces, checked, strict=True):
        if not clause.passed:
            continue
        out, position = [], piece.start
        for start, end in piece.runs:
            ids = dict.fromkeys(SOURCE_ID.findall(sentence[start:end]))
            marks = "".join(f"[{s}]" for s in ids if s in clause.kept)
            out += [sentence[position:start], f" {marks}" if marks else ""]
            position = end
        out.append(sentence[position : piece.end])
        parts.append("".join(out))
    shown = "".join(parts).strip().lstrip(_LEAD)
    head, _, rest = shown.partition(" ")
    if head.casefold() in _CONNECTIVES and rest:  # "…, while B [S2]." with its first clause struck
        shown = rest
    ending = _ENDING.search(sentence)
    if ending and not shown.endswith(ending.group().strip()):
        shown = shown.rstrip(_LEAD) + ending.group().strip()
    return shown[:1].upper() + shown[1:]


def _struck(clause: CheckedClause) -> str:
    failing = [r for r in clause.results if r.outcome != "supported"]
    return NO_CITATION if not clause.sources else "; ".join(map(_why, failing))


def _sentence(
    index: SourceIndex, recorded: _Recorded, number: int, written: str
) -> list[CheckedSentence]:
    """The sentence as it may be shown — its passing clauses, each with the citations that
    state it — then, when anything was struck from it, what and why (not shown)."""
    pieces = _pieces(written)
    checked = [_clause(index, recorded, number, piece) for piece in pieces]
    several = len(checked) > 1
    # A clause whose marker run loses every source it names is struck whole: "According to
    # [S1], …" cannot stand without S1.
    checked = [
        clause
        if all(set(SOURCE_ID.findall(written[a:b])) & set(clause.kept) for a, b in piece.runs)
        else replace(clause, results=tuple(r for r in clause.results if r.outcome != "supported"))
        for piece, clause in zip(pieces, checked, strict=True)
    ]
    kept = tuple(clause for clause in checked if clause.passed)
    struck = []
    for clause in checked:
        dropped = [s for s in clause.sources if s not in clause.kept]
        if clause.passed and not dropped:
            continue
        why = _struck(clause)
        if clause.passed:  # the clause stays, without the citations that do not state it
            cites = "".join(f"[{s}]" for s in dropped)
            where = f' from "{clause.text}"' if several else ""
            struck.append(f"{cites} dropped{where}: {why}")
        else:
            struck.append(f'"{clause.text}": {why}' if several else why)
    if not kept:
        return [CheckedSentence(written, False, "; ".join(struck), tuple(checked))]
    shown = CheckedSentence(_shown(written, pieces, checked), True, "", kept)
    if not struck:
        return [shown]
    return [shown, CheckedSentence(written, False, "struck from it: " + "; ".join(struck))]


def check_answer(
    brief: Brief,
    synthesis: str,
    document: ClaimsFile | None = None,
    struck: Sequence[StruckSentence] = (),
) -> CheckedAnswer:
    """Every sentence of ``synthesis`` in order, each clause traced against the brief's
    retained text, the positions of the brief's open contradictions it leaves out, and the
    claims whose future date the brief's date has overtaken (``document``: claims.json as the
    caller read it; read from the brief otherwise). An empty ``synthesis`` checks no sentence.
    ``struck``: what an earlier check of this answer struck (claims.json keeps it), listed as
    not passing, after the sentences."""
    if document is None:
        document = brief.load_claims()
    sources = brief.load_sources()
    index = SourceIndex(brief, sources, brief.load_fetch_log())
    recorded = _Recorded(document)
    sentences = tuple(
        checked
        for number, written in enumerate(prose_sentences(synthesis), start=1)
        for checked in _sentence(index, recorded, number, written)
    ) + tuple(CheckedSentence(item.text, False, item.reason) for item in struck)
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
    if not clause.passed or not set(clause.kept) & set(side.supporting):
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
