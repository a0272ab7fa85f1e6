"""Findings that state the same fact: one claim, however many documents word it.

Two publishers rarely write a fact in the same words. If each wording became its own claim, every
claim would have one source and independence, τ and confidence would say nothing about a local
corpus. So the headless runner's claims phase groups findings by fact (docs/contracts.md §6.6):
a finding joins the first earlier group whose first finding (its *representative*, whose
wording the claim keeps) states the same fact — all of these hold:

* **the same literals, both ways**: the literal check of the trace gate
  (:func:`deep_research.gates.literals.check`) finds every figure, date and name of the
  representative's claim in the finding's quote, and every one of the finding's claim in the
  representative's quote — so the merged claim is traced against each source's own quote and
  passes or fails there, and no figure of either wording is lost in the merge;
* **high content overlap**: of the content words (:func:`deep_research.gates.overlap.
  content_tokens`) of *each* wording, at least :data:`SAME_FACT_OVERLAP` are in the other, and
  at least :data:`MIN_SHARED` in all — a short sentence inside a long one ("Static method
  objects are also callable.") is not the long one's fact, and one template about two subjects
  ("A class definition is an executable statement." / "A function definition …") shares too
  little;
* **the same polarity**: both negate, or neither does ("is thread-safe" and "is not
  thread-safe" share every content word);
* **the same quoted terms**: what either sets in quotes or backticks (code, a keyword, an
  operator) the other sets in quotes too — ``"__exit__()" is loaded`` and ``"__enter__()" is
  loaded`` are two facts in one template;
* **no swapped subject**: aligned word by word, the two wordings do not differ by a short
  swap (at most :data:`MAX_SWAP` words a side) of content words each lacks — "String literals
  are described by…" and "Integer literals are described by…", "A class definition defines a
  class object" and "A function definition defines a … function object" are one template over
  two subjects;
* **another document**: a document's own sentences are never grouped with one another except
  word for word — a document repeats its own templates, it does not restate its facts.

Or, in other words, **the same figures of one subject**: every figure of either wording (a
year, a measure, an amount, a percentage — never a bare count) agrees with one of the other's
in the same slot, units and number forms normalised ("40 m", "40 metres", "forty metres"), the
two share :data:`MIN_SUBJECT` content words besides, neither negates alone, and the literal
check passes both ways as above.

The trace gate then checks the kept wording against every source's own quotes. Its bar (the
quote's literals, two shared content words) is lower than this one, which is why the grouping
is strict: a wrong merge would cite a source for a sentence it does not state.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from deep_research.decide.figures import figures, same_figures, same_slot
from deep_research.gates.literals import check
from deep_research.gates.overlap import content_tokens

#: Share of each wording's content words the other must hold.
SAME_FACT_OVERLAP = 0.7
#: Content words two wordings must share at the least (short sentences share little by chance).
MIN_SHARED = 4
#: Content words besides their figures two wordings of one figure must share (its subject).
MIN_SUBJECT = 2
#: The widest swap of words, on either side, that reads as one template over two subjects.
MAX_SWAP = 3

_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")

_QUOTED = re.compile(r'"([^"\n]{1,80})"|“([^”\n]{1,80})”|`([^`\n]{1,80})`')
_NEGATION = re.compile(
    r"\b(?:not|no|never|nor|neither|none|cannot|without|nothing|nobody)\b|n't\b", re.IGNORECASE
)


def claim_key(text: str) -> str:
    """Two claims with this key are one claim, whatever else holds (case and spacing aside)."""
    return " ".join(text.casefold().split())


def negates(text: str) -> bool:
    return _NEGATION.search(text) is not None


def quoted(text: str) -> frozenset[str]:
    """What ``text`` sets in double quotes or backticks, case and spacing folded."""
    spans = ("".join(groups) for groups in _QUOTED.findall(text))
    return frozenset(" ".join(span.casefold().split()) for span in spans if span.strip())


def swapped_subject(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one template with a short swap of content words each lacks."""
    left = [w.casefold() for w in _WORDS.findall(a)]
    right = [w.casefold() for w in _WORDS.findall(b)]
    mine, theirs = content_tokens(a), content_tokens(b)
    matcher = SequenceMatcher(None, left, right, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "replace" or i2 - i1 > MAX_SWAP or j2 - j1 > MAX_SWAP:
            continue
        if content_tokens(" ".join(left[i1:i2])) - theirs and (
            content_tokens(" ".join(right[j1:j2])) - mine
        ):
            return True
    return False


@dataclass(frozen=True)
class Wording:
    """One finding as the grouping compares it."""

    claim: str
    quote: str

    @property
    def tokens(self) -> frozenset[str]:
        return content_tokens(self.claim)


def overlap(a: frozenset[str], b: frozenset[str], *, of_larger: bool = False) -> tuple[int, float]:
    """Shared content words and their share of the smaller set (or of the larger)."""
    shared = len(a & b)
    size = max(len(a), len(b)) if of_larger else min(len(a), len(b))
    return shared, (shared / size if a and b else 0.0)


def same_content(a: Wording, b: Wording) -> bool:
    """Whether ``a`` and ``b`` state the same figures of one subject in other words: every
    figure of either agrees with one of the other's, in the same slot ("40 m", "40 metres"
    and "forty metres" tall), they share :data:`MIN_SUBJECT` content words besides, and
    neither negates alone."""
    mine, blank_a = figures(a.claim)
    theirs, blank_b = figures(b.claim)
    if not same_figures(mine, theirs) or negates(a.claim) != negates(b.claim):
        return False
    if not all(any(same_slot(x, y) for y in theirs) for x in mine):
        return False
    return len(content_tokens(blank_a) & content_tokens(blank_b)) >= MIN_SUBJECT


def same_fact(a: Wording, b: Wording) -> bool:
    """Whether ``a`` and ``b`` state the same fact (the rules of the module docstring)."""
    if claim_key(a.claim) == claim_key(b.claim):
        return True
    if same_content(a, b):
        return check(a.claim, [b.quote]).ok and check(b.claim, [a.quote]).ok
    shared, share = overlap(a.tokens, b.tokens, of_larger=True)
    if shared < MIN_SHARED or share < SAME_FACT_OVERLAP:
        return False
    if negates(a.claim) != negates(b.claim) or quoted(a.claim) != quoted(b.claim):
        return False
    if swapped_subject(a.claim, b.claim):
        return False
    return check(a.claim, [b.quote]).ok and check(b.claim, [a.quote]).ok


@dataclass
class FactGroups:
    """Assigns each finding, in order, the key of its fact's group (the first wording's key)."""

    #: Each group's key → its first wording.
    representatives: dict[str, Wording] = field(default_factory=dict)
    #: Each group's key → the sources of its findings.
    sources: dict[str, set[str]] = field(default_factory=dict)
    #: Every claim key seen → its group's key (a wording seen again joins the same group).
    groups: dict[str, str] = field(default_factory=dict)

    #: Content word → the groups whose first wording holds it (only those can be the same fact).
    postings: dict[str, list[str]] = field(default_factory=dict)

    def key(self, claim: str, quote: str, source: str) -> str:
        own = claim_key(claim)
        if own not in self.groups:
            wording = Wording(claim, quote)
            self.groups[own] = next(
                (
                    key
                    for key in self._candidates(wording)
                    if source not in self.sources[key]
                    and same_fact(self.representatives[key], wording)
                ),
                own,
            )
            if self.groups[own] == own:
                self.representatives[own] = wording
                for token in wording.tokens:
                    self.postings.setdefault(token, []).append(own)
        group = self.groups[own]
        self.sources.setdefault(group, set()).add(source)
        return group

    def _candidates(self, wording: Wording) -> list[str]:
        """Groups sharing at least :data:`MIN_SHARED` content words, oldest first."""
        shared = Counter(key for token in wording.tokens for key in self.postings.get(token, ()))
        order = {key: n for n, key in enumerate(self.representatives)}
        return sorted((k for k, n in shared.items() if n >= MIN_SHARED), key=order.__getitem__)
