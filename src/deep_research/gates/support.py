"""Steps 2–4 of the gate for one claim and the quotes one source offers for it.

The first failing step decides (docs/contracts.md §4.1):

2. every quote is located in the retained text (``locate``); a located span shorter than
   ``MIN_SUPPORT_CHARS`` cannot support alone;
3. every literal of the claim is present in, or derivable from, the located text (``literals``)
   — or, for a year, a season or a name the located text leaves out, stated by the document
   around it: its title, the heading and paragraphs above the span, its lead, a quotation's
   speaker, its publisher for a "we", its publication date for "today"
   (:mod:`deep_research.gates.literals.context`, reported per literal); and the claim does not
   negate what the located text states, nor the reverse (:mod:`deep_research.gates.negation`);
4. the claim and the located text share content tokens (``overlap``).

Literals and overlap are read from the document at the located offsets, never from the quote as
the model wrote it: after a fuzzy match the two differ, and only the retained text is evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from deep_research.gates.literals import (
    Derivation,
    DocumentContext,
    LiteralCheck,
    SourceFacts,
    check,
)
from deep_research.gates.literals.extraction import literals_of
from deep_research.gates.locate import MIN_SUPPORT_CHARS, Document, Located, locate
from deep_research.gates.negation import disagreement
from deep_research.gates.overlap import MIN_SHARED_TOKENS, shared_tokens

Outcome = Literal["supported", "partially_supported", "unsupported"]

QUOTE_NOT_IN_SOURCE = "quote_not_in_source"
SPAN_TOO_SHORT = "span_too_short"
EMPTY_QUOTE = "empty_quote"
LITERAL_MISSING = "literal_missing"
NAME_MISSING = "name_missing"
NEGATION_MISMATCH = "negation_mismatch"
LOW_OVERLAP = "low_overlap"

_RANK: dict[Outcome, int] = {"unsupported": 0, "partially_supported": 1, "supported": 2}


#: What a literal check's answer depends on besides the document: the claim, the located text
#: and the derivation it may use.
LiteralsKey = tuple[str, tuple[str, ...], Derivation | None]


class Steps:
    """Steps 3 and 4 on located text, each answer computed afresh. A run that asks the same
    again keeps answers by overriding :meth:`recall` and :meth:`keep`
    (:class:`deep_research.gates.trace.StepMemo`)."""

    def literals(
        self,
        claim: str,
        quotes: Sequence[str],
        *,
        derived: Derivation | None = None,
        context: DocumentContext | None = None,
    ) -> LiteralCheck:
        key = (claim, tuple(quotes), derived)
        answer = self.recall(key)
        if answer is None:
            answer = check(claim, quotes, derived=derived, context=context)
            # The context is read only for a literal the located text does not establish by
            # itself: an answer where it established every literal is the answer in any document.
            if not answer.missing and not answer.context:
                self.keep(key, answer)
        return answer

    def recall(self, key: LiteralsKey) -> LiteralCheck | None:
        """The kept answer to ``key``: none here."""
        return None

    def keep(self, key: LiteralsKey, answer: LiteralCheck) -> None:
        """Keep ``answer``, true in any document, for ``key``: not here."""

    def overlap(self, claim: str, located: str) -> tuple[str, ...]:
        return tuple(shared_tokens(claim, located))


PLAIN = Steps()


@dataclass(frozen=True)
class QuoteLocation:
    """Where one quote was found (or not) in the document."""

    quote: str
    located: Located | None
    reason: str | None  # why this quote cannot support, or None


@dataclass(frozen=True)
class Support:
    """The gate's finding for one claim against one source's quotes."""

    outcome: Outcome
    reasons: tuple[str, ...]
    quotes: tuple[QuoteLocation, ...]
    literals: LiteralCheck | None = None
    overlap: tuple[str, ...] = field(default=())
    #: The kinds of literal the located text states (``number``, ``date``, …): whether a source
    #: that lacks a claim's figure is silent on it or states another (:mod:`.joint`).
    stated_kinds: frozenset[str] = frozenset()

    @property
    def rank(self) -> int:
        return _RANK[self.outcome]


def place_quote(quote: str, document: Document) -> QuoteLocation:
    if not quote.strip():
        return QuoteLocation(quote, None, EMPTY_QUOTE)
    located = locate(quote, document)
    if located is None:
        return QuoteLocation(quote, None, QUOTE_NOT_IN_SOURCE)
    if located.matched_chars < MIN_SUPPORT_CHARS:
        return QuoteLocation(quote, located, SPAN_TOO_SHORT)
    return QuoteLocation(quote, located, None)


def check_support(
    claim: str,
    quotes: Sequence[str],
    document: Document,
    *,
    derived: Derivation | None = None,
    facts: SourceFacts | None = None,
    steps: Steps = PLAIN,
    alone: bool = False,
) -> Support:
    """Steps 2–4 for ``claim`` against ``quotes`` taken together (one source's cited findings),
    or with ``alone`` the best outcome any single quote gives (no finding was cited explicitly);
    ``steps`` does 3 and 4 once the quotes are located."""
    if alone and len(quotes) > 1:
        results = [
            check_support(claim, [quote], document, derived=derived, facts=facts, steps=steps)
            for quote in quotes
        ]
        return max(results, key=lambda result: result.rank)
    placed = tuple(place_quote(quote, document) for quote in quotes)
    usable = [p.located for p in placed if p.reason is None and p.located is not None]
    if not usable:
        failures = tuple(dict.fromkeys(p.reason for p in placed if p.reason)) or (EMPTY_QUOTE,)
        # A span too short to support alone still gets its literals reported, so a reader sees
        # what the figure check would have said; the outcome stays decided by the span length.
        short = [p.located for p in placed if p.located is not None]
        report = _literals(steps, claim, short, document, derived, facts) if short else None
        return Support("unsupported", failures, placed, report)

    spans = [document.text[found.start : found.end] for found in usable]
    literal_check = _literals(steps, claim, usable, document, derived, facts)
    common = steps.overlap(claim, " ".join(spans))
    on_topic = len(common) >= MIN_SHARED_TOKENS

    reasons: list[str] = []
    if literal_check.numeric_missing:
        reasons.append(LITERAL_MISSING)
    if literal_check.names_missing:
        reasons.append(NAME_MISSING)
    if disagreement(claim, document.text, [(found.start, found.end) for found in usable]):
        reasons.append(NEGATION_MISMATCH)
    if not on_topic:
        reasons.append(LOW_OVERLAP)

    outcome: Outcome
    if not reasons:
        outcome = "supported"
    elif on_topic:
        outcome = "partially_supported"
    else:
        outcome = "unsupported"
    stated = frozenset(token.kind for span in spans for token in literals_of(span))
    return Support(outcome, tuple(reasons), placed, literal_check, common, stated)


def _literals(
    steps: Steps,
    claim: str,
    found: Sequence[Located],
    document: Document,
    derived: Derivation | None,
    facts: SourceFacts | None,
) -> LiteralCheck:
    context = DocumentContext(document.text, [(f.start, f.end) for f in found], facts)
    spans = [document.text[f.start : f.end] for f in found]
    return steps.literals(claim, spans, derived=derived, context=context)
