"""Contradictions found in code: two claims about one thing that give it different values.

Two publishers that date one event 1923 and 1927, or measure one bridge at 1,240 m and 980 m,
are not two facts to list side by side: one of them is wrong, and a reader must see that they
disagree (docs/contracts.md §6.7). Two emitted claims (Supported, not refuted) contradict when
all of these hold:

* **the same sub-question**: a sub-question's worker found both (``found_by``);
* **the same subject**: they share at least :data:`MIN_SUBJECT_TERMS` content words, and
  :data:`SUBJECT_SHARE` of the smaller claim's, once their figures are left out (a word for a
  dimension — ``long``, ``length`` — counts as that dimension, so "the bridge is 980 m long"
  and "its length is 1,240 m" share it);
* **the same kind of literal with incompatible values**: a year against a year (a date by its
  year, then month), a length against a length (by value in metres), a mass against a mass, an
  amount of one currency against another amount of it, a percentage against a percentage —
  values more than :data:`TOLERANCE` apart (``1.2 km`` and ``1,240 m`` agree: rounding);
* **nothing else tells them apart**: when both name something (a proper name, ``Python 3.0``,
  ``PEP 8``), they name one thing in common; a figure that is part of a name (``version 2``)
  does not differ between them — ``Python 2.0 … 2000`` and ``Python 3.0 … 2008`` are two
  releases, not a disputed date. Counts (``six years``, ``1500 workers``) are not compared:
  what they count is not read. Only figures stated flatly count: ``before 1930`` or ``about
  1,200 m`` contradicts neither ``1923`` nor ``1,240 m``.

Or, in any wording, **one slot with two figures** (:func:`slot_clashes`): they share
:data:`MIN_SUBJECT_TERMS` content words, and figures of one kind that fill one slot — a year
after words the two share ("completed in 1891", "was completed in 1893"), a measure of one
dimension — disagree; whichever sub-question found them.

Each contradicting pair becomes one ``unresolved_contradictions`` entry ``{ids, topic,
description}`` naming every kind on which they disagree. The decision is code's; the report
shows both sides and which is better supported, never an average (docs/contracts.md §12).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from deep_research.brief.record import (
    load_trace_or_empty,
    open_brief,
    record_phase,
    save,
    writes_brief,
)
from deep_research.brief.trace_phases import ContradictionsPhase, FoundContradiction
from deep_research.decide.figures import (
    DIMENSION_WORDS,
    Figure,
    agree,
    figures,
    same_slot,
    subject,
)
from deep_research.decide.relevance_votes import is_off_question
from deep_research.decide.samefact import claim_key, overlap
from deep_research.gates.literals.extraction import literals_of
from deep_research.gates.overlap import content_tokens
from deep_research.models import Claim, ClaimsFile, Contradiction, SourceRow
from deep_research.settings import Settings, require_run_settings

MIN_SUBJECT_TERMS = 2
#: ... and at least this share of the smaller claim's subject words.
SUBJECT_SHARE = 0.5
LABELS = {
    "year": "year",
    "percent": "percentage",
    "length": "length",
    "mass": "mass",
    "area": "area",
    "volume": "volume",
    "speed": "speed",
    "power": "power",
}


def names(text: str) -> frozenset[str]:
    return frozenset(
        " ".join(t.text.casefold().split()) for t in literals_of(text) if not t.numeric
    )


@dataclass(frozen=True)
class Candidate:
    """An emitted claim, read for comparison."""

    claim: Claim
    found_by: frozenset[str]
    figures: tuple[Figure, ...]
    subject: frozenset[str]
    names: frozenset[str]
    words: tuple[str, ...]

    @staticmethod
    def of(claim: Claim, found_by: frozenset[str]) -> Candidate:
        found, blanked = figures(claim.claim)
        words = tuple(re.findall(r"[^\W_]+(?:['’][^\W_]+)*", blanked))
        return Candidate(claim, found_by, tuple(found), subject(blanked), names(claim.claim), words)

    def by_kind(self) -> dict[str, list[Figure]]:
        kinds: dict[str, list[Figure]] = {}
        for figure in self.figures:
            kinds.setdefault(figure.kind, []).append(figure)
        return kinds


def disagreements(a: Candidate, b: Candidate) -> list[tuple[str, list[Figure], list[Figure]]]:
    """The kinds on which ``a`` and ``b`` disagree ([] when they do not contradict)."""
    shared, share = overlap(a.subject, b.subject)
    numbered_a, numbered_b = _numbered(a.names), _numbered(b.names)
    if numbered_a and numbered_b and not numbered_a & numbered_b:
        return []  # "Python 2.0" and "Python 3.0": each names another thing
    if a.names and b.names and not a.names & b.names:
        # Other names apart ("Northern Lights Board", "Carrick Point"), one slot still is one.
        return slot_clashes(a, b) if shared >= MIN_SUBJECT_TERMS else []
    if not a.found_by & b.found_by or shared < MIN_SUBJECT_TERMS or share < SUBJECT_SHARE:
        return slot_clashes(a, b) if shared >= MIN_SUBJECT_TERMS else []
    mine, theirs = a.by_kind(), b.by_kind()
    clashing = []
    for kind in sorted(mine.keys() & theirs.keys()):
        if any(agree(kind, x, y) for x in mine[kind] for y in theirs[kind]):
            continue
        if kind == "number":
            return []  # an unnamed figure that differs: two things, not one thing disputed
        clashing.append((kind, mine[kind], theirs[kind]))
    return clashing


def _numbered(names: frozenset[str]) -> frozenset[str]:
    """The names holding a figure ("Python 3.0", "PEP 8"): each is another thing."""
    return frozenset(name for name in names if any(ch.isdigit() for ch in name))


def slot_clashes(a: Candidate, b: Candidate) -> list[tuple[str, list[Figure], list[Figure]]]:
    """The kinds on which ``a`` and ``b`` give one slot different figures, in any wording:
    "the lighthouse was completed in 1891" and "records show the lighthouse was completed in
    1893, after two winters of storms…" (a year whose preceding words share one, a measure of
    one dimension), however little else the two sentences share. Counts are never compared."""
    clashing = []
    for kind in sorted({f.kind for f in a.figures} & {f.kind for f in b.figures} - {"number"}):
        pairs = [(x, y) for x in a.figures for y in b.figures if x.kind == kind and same_slot(x, y)]
        if pairs and not any(agree(kind, x, y) for x, y in pairs):
            mine = list(dict.fromkeys(x for x, _ in pairs))
            theirs = list(dict.fromkeys(y for _, y in pairs))
            clashing.append((kind, mine, theirs))
    return clashing


def _label(kind: str) -> str:
    if kind.startswith("money:"):
        return f"amount ({kind.removeprefix('money:')})"
    return LABELS.get(kind, kind)


def _shown(values: Sequence[Figure]) -> str:
    return " and ".join(dict.fromkeys(figure.text for figure in values))


def _spelled(words: Sequence[str], terms: frozenset[str]) -> str:
    """The words of a claim whose content term is in ``terms``, as the claim spells them."""
    kept = [
        word
        for word in words
        if any(DIMENSION_WORDS.get(term, term) in terms for term in content_tokens(word))
    ]
    return " ".join(dict.fromkeys(kept))


def entry(
    a: Candidate, b: Candidate, clashes: Sequence[tuple[str, list[Figure], list[Figure]]]
) -> Contradiction:
    about = _spelled(a.words, a.subject & b.subject - set(DIMENSION_WORDS.values()))
    about = about or "one subject"
    kinds = ", ".join(_label(kind) for kind, _, _ in clashes)
    sides = "; ".join(
        f"{a.claim.id} gives {_shown(mine)}, {b.claim.id} gives {_shown(theirs)}"
        for _, mine, theirs in clashes
    )
    return Contradiction(
        ids=[a.claim.id, b.claim.id],
        topic=f"{kinds.capitalize()} of {about}",
        description=(
            f"Two claims about {about} disagree on the {kinds}: {sides}. Code found the "
            "disagreement; the figures are not averaged."
        ),
    )


def emitted(claim: Claim) -> bool:
    killed = claim.votes is not None and claim.votes.outcome == "killed"
    return claim.support_class == "Supported" and not killed and not is_off_question(claim)


def find_contradictions(
    claims: Sequence[Claim], found_by: Mapping[str, frozenset[str]] | None = None
) -> list[Contradiction]:
    """Every pair of emitted claims that contradict (the rules of the module docstring).
    ``found_by``: claim id → the sub-questions whose workers found it (default: its ``sq``)."""
    candidates = [
        Candidate.of(claim, (found_by or {}).get(claim.id) or frozenset({claim.sq or ""}))
        for claim in claims
        if emitted(claim)
    ]
    found = []
    for a, b in combinations([c for c in candidates if c.figures], 2):
        clashes = disagreements(a, b)
        if clashes:
            found.append(entry(a, b, clashes))
    return found


def sub_questions_of(
    claims: Sequence[Claim], rows: Sequence[SourceRow], finders: Mapping[str, Sequence[str]]
) -> dict[str, frozenset[str]]:
    """Claim id → its ``sq`` and every sub-question that found one of its findings
    (``finders``: a finding's claim key → sub-question ids)."""
    texts = {finding.id: finding.claim for row in rows for finding in row.findings}
    found: dict[str, frozenset[str]] = {}
    for claim in claims:
        ids = {claim.sq} if claim.sq else set()
        for finding in claim.findings:
            text = texts.get(finding)
            if text is not None:
                ids.update(finders.get(claim_key(text), ()))
        found[claim.id] = frozenset(ids)
    return found


def merged(document: ClaimsFile, found: Sequence[Contradiction]) -> ClaimsFile:
    """``document`` with ``found`` among its contradictions, each once (a re-run adds none)."""
    known = {(tuple(sorted(c.ids)), c.topic) for c in document.unresolved_contradictions}
    new = [c for c in found if (tuple(sorted(c.ids)), c.topic) not in known]
    return document.model_copy(
        update={"unresolved_contradictions": [*document.unresolved_contradictions, *new]}
    )


@writes_brief
def run_contradictions(
    root: Path, settings: Settings, found_by: Mapping[str, frozenset[str]] | None = None
) -> list[Contradiction]:
    """Find the brief's contradictions and record them in claims.json (after the trace gate,
    before triangulate, which demotes every contradicted claim to medium-contested)."""
    brief = open_brief(root)
    require_run_settings(brief.root, settings)
    document = brief.load_claims()
    trace = load_trace_or_empty(brief)
    found = find_contradictions(document.claims, found_by)
    record = ContradictionsPhase(
        found=[FoundContradiction(ids=c.ids, topic=c.topic) for c in found]
    )
    save(brief, merged(document, found), record_phase(trace, "contradictions", record, settings))
    return found
