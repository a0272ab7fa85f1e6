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

Each contradicting pair becomes one ``unresolved_contradictions`` entry ``{ids, topic,
description}`` naming every kind on which they disagree. The decision is code's; the report
shows both sides and which is better supported, never an average (docs/contracts.md §12).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import combinations
from pathlib import Path

from deep_research.decide.samefact import claim_key, overlap
from deep_research.gates.literals import LiteralToken
from deep_research.gates.literals.extraction import literals_of
from deep_research.gates.literals.matching import as_year
from deep_research.gates.literals.units import quantity, unit_after
from deep_research.gates.overlap import content_tokens
from deep_research.models import Claim, ClaimsFile, Contradiction, SourceRow
from deep_research.record import load_trace_or_empty, open_brief, record_phase, save, writes_brief
from deep_research.settings import Settings, require_run_settings
from deep_research.trace_phases import ContradictionsPhase, FoundContradiction

MIN_SUBJECT_TERMS = 2
#: ... and at least this share of the smaller claim's subject words.
SUBJECT_SHARE = 0.5
#: Two figures of one kind closer than this (relative to the larger) are the same figure rounded.
TOLERANCE = Decimal("0.05")

#: Words that name a dimension: the same measure, however a sentence phrases it.
DIMENSION_WORDS: dict[str, str] = {
    "long": "length",
    "length": "length",
    "tall": "height",
    "height": "height",
    "high": "height",
    "wide": "width",
    "width": "width",
    "deep": "depth",
    "depth": "depth",
    "heavy": "mass",
    "weigh": "mass",
    "weight": "mass",
}
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

_NEXT_WORD = re.compile(r"\s*[^\W\d_]")
_COUNTED = re.compile(r"\s*[^\W\d_]+")
#: A capitalized word or "version" right before a figure: the figure is part of a name.
_NAMED = re.compile(r"(?:\b[A-Z][\w-]*|\b[Vv]ersion|\bv)[ \u00a0]?$")


@dataclass(frozen=True)
class Figure:
    """One flatly stated literal of a claim: its kind and a value comparable within the kind."""

    kind: str  # "year", "percent", "money:USD", a dimension ("length"…), or "number"
    value: Decimal | tuple[int, int | None, int | None]
    text: str


def names(text: str) -> frozenset[str]:
    return frozenset(
        " ".join(t.text.casefold().split()) for t in literals_of(text) if not t.numeric
    )


def figures(text: str) -> tuple[list[Figure], str]:
    """The claim's figures, and its text with every figure (and its unit) blanked out."""
    found = []
    blank = list(text)
    for token in literals_of(text):
        if not token.numeric or token.qualifier != "eq":
            continue
        unit = unit_after(text, token)
        end = unit[1] if unit is not None else token.end
        figure = _figure(text, token, text[token.start : end])
        if figure is not None:
            found.append(figure)
        elif (counted := _COUNTED.match(text, end)) is not None:
            end = counted.end()  # "six years": what a count counts belongs to the count
        blank[token.start : end] = " " * (end - token.start)
    return found, "".join(blank)


def _figure(text: str, token: LiteralToken, shown: str) -> Figure | None:
    if token.kind in ("date", "year") and token.date is not None and token.date[0]:
        return Figure("year", token.date, shown)
    if token.kind == "percent" and token.value is not None:
        return Figure("percent", token.value, shown)
    if token.kind == "money" and token.value is not None:
        return Figure(f"money:{token.unit or '?'}", token.value, shown)
    if token.kind != "number" or token.value is None:
        return None
    if (measured := quantity(text, token)) is not None:
        return Figure(measured.dimension, measured.value, shown)
    year = as_year(token)
    if year is not None and year.date is not None and not _NEXT_WORD.match(text, token.end):
        # "completed 1927." is a year the extractor had no temporal word for; "1500 workers"
        # counts workers.
        return Figure("year", year.date, shown)
    if _NAMED.search(text, 0, token.start):
        # "Python 3.0", "PEP 8", "version 2": a figure that names which thing is meant.
        return Figure("number", token.value, shown)
    return None  # a count ("six years", "1500 workers"): what it counts is not read here


def subject(blanked: str) -> frozenset[str]:
    return frozenset(DIMENSION_WORDS.get(word, word) for word in content_tokens(blanked))


def agree(kind: str, a: Figure, b: Figure) -> bool:
    """Whether two figures of one kind can be the same figure."""
    if kind == "year":
        assert isinstance(a.value, tuple) and isinstance(b.value, tuple)
        # Compare on the precision both state: "March 1923" and "1923" agree.
        return all(x == y for x, y in zip(a.value, b.value, strict=True) if x and y)
    assert isinstance(a.value, Decimal) and isinstance(b.value, Decimal)
    larger = max(abs(a.value), abs(b.value))
    return larger == 0 or abs(a.value - b.value) <= TOLERANCE * larger


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
    if not a.found_by & b.found_by or shared < MIN_SUBJECT_TERMS or share < SUBJECT_SHARE:
        return []
    if a.names and b.names and not a.names & b.names:
        return []  # "Python 2.0" and "Python 3.0": each names another thing
    mine, theirs = a.by_kind(), b.by_kind()
    clashing = []
    for kind in sorted(mine.keys() & theirs.keys()):
        if any(agree(kind, x, y) for x in mine[kind] for y in theirs[kind]):
            continue
        if kind == "number":
            return []  # an unnamed figure that differs: two things, not one thing disputed
        clashing.append((kind, mine[kind], theirs[kind]))
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
    return claim.support_class == "Supported" and not (
        claim.votes is not None and claim.votes.outcome == "killed"
    )


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
