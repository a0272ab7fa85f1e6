"""Each cited sentence against its pages, by the gates a research run uses.

Per sentence, the first step that decides wins:

1. **cited at all**: no citation is ``not_checked`` (``no_citation``), and so is a sentence past
   the caps (``over_citation_cap``);
2. **reachable**: when no cited page could be read the sentence is ``unreachable``, with each
   fetch's own reason (``http_404``, ``robots_disallowed``, ``private_address``, ``timeout``…),
   ``local_file`` for a link to a file, ``reference_not_found`` for a marker no sources list
   resolves;
3. **quoted words**: every quotation of :data:`QUOTE_MIN_WORDS` words or more must be located
   on a cited page by the quote locator (:func:`~deep_research.gates.locate.locate`): not found
   is ``unsupported`` (``quote_not_in_source``); found only fuzzily — some words changed — is
   ``quote_differs``, and the page's own words are shown. A work's title in quotation marks
   (:func:`is_title`) is held by the page's holding its every word and number;
4. **the passage**: the page's passage that best shares the sentence's words (its rarer words
   counting more, a figure it repeats most) — or the passage holding the located quote — is
   checked by the gate's steps 3 and 4 (:func:`~deep_research.gates.support.check_support`):
   every figure, date and name of the sentence in the passage, or for a year or a name in the
   page's title and headings above it (names by document context, figures strict), a date or
   a year also in the page's own date (:func:`page_date`), no negation the passage does not
   make, and more than half the sentence's content words. A sentence no one passage supports
   is supported when each of its clauses (:func:`clauses_of`) is, by a passage of its own. A
   figure missing is ``figure_differs``, a date ``date_differs``, a name ``name_not_in_source``,
   a negation ``negation_differs``, no passage sharing enough words ``no_supporting_passage``.

A sentence citing several pages takes the best verdict any of them gives. A sentence supported
by shared words alone — no quote located, no figure, date or name to hold it — is one the
literal checks cannot decide: ``--reasoner claude`` asks a model about it (:mod:`.votes`).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Literal

from deep_research.check.pages import LOCAL_FILE, Fetched, Page, Unreachable
from deep_research.gates.citations import Sentence
from deep_research.gates.literals import SourceFacts
from deep_research.gates.literals.extraction import literals_of
from deep_research.gates.literals.tokens import LiteralToken
from deep_research.gates.locate import MIN_SUPPORT_CHARS, Located, locate
from deep_research.gates.overlap import content_tokens
from deep_research.gates.support import (
    LITERAL_MISSING,
    LOW_OVERLAP,
    NAME_MISSING,
    NEGATION_MISMATCH,
    QUOTE_NOT_IN_SOURCE,
    SPAN_TOO_SHORT,
    Support,
    check_support,
)
from deep_research.gates.vocabulary import Sentence as PageSentence
from deep_research.gates.vocabulary import sentences as page_sentences
from deep_research.models import VoteRecord

Verdict = Literal["supported", "partially_supported", "unsupported", "unreachable", "not_checked"]
#: Verdicts a reader must look at: each is a line on stdout and a row of the annotated table.
FLAGGED: frozenset[Verdict] = frozenset({"partially_supported", "unsupported", "unreachable"})
_RANK = {"unsupported": 0, "partially_supported": 1, "supported": 2}

NO_CITATION = "no_citation"
OVER_CITATION_CAP = "over_citation_cap"
REFERENCE_NOT_FOUND = "reference_not_found"
QUOTE_DIFFERS = "quote_differs"
FIGURE_DIFFERS = "figure_differs"
DATE_DIFFERS = "date_differs"
NAME_NOT_IN_SOURCE = "name_not_in_source"
NEGATION_DIFFERS = "negation_differs"
NO_SUPPORTING_PASSAGE = "no_supporting_passage"
PASSAGE_TOO_SHORT = "passage_too_short"
MODEL_REFUTED = "model_refuted"

#: The gate's reasons as the check names them.
_CODES = {
    NAME_MISSING: NAME_NOT_IN_SOURCE,
    NEGATION_MISMATCH: NEGATION_DIFFERS,
    LOW_OVERLAP: NO_SUPPORTING_PASSAGE,
    QUOTE_NOT_IN_SOURCE: QUOTE_NOT_IN_SOURCE,
    SPAN_TOO_SHORT: PASSAGE_TOO_SHORT,
}
_DATE_KINDS = frozenset({"date", "year"})

#: A quotation this long or longer claims the page's words; a shorter one ("so-called")
#: is a term, not a quote.
QUOTE_MIN_WORDS = 2
_QUOTED = re.compile(r"“([^“”]+)”|\"([^\"]+)\"")
#: The most words a quoted title has; a longer quotation is someone's words.
TITLE_MAX_WORDS = 10
_TITLE_WORD = re.compile(r"[^\W_][\w'’.-]*")
_DIGITS = re.compile(r"\d+")
#: Words a title leaves uncapitalized ("Merry Company on a Terrace").
_TITLE_SMALL_WORDS = frozenset(
    "a an the and but or nor for of in on at to by with from as into v. vs vs. de del la le".split()
)
#: Passages of a page checked against a sentence: the best-scoring few.
CANDIDATES = 3
#: Where a sentence joins clauses that may each rest on a passage of their own: a semicolon, a
#: dash, or a comma before a conjunction or a relative word.
_CLAUSE_BREAK = re.compile(
    r"\s*;\s+|\s+[–—]\s+|,\s+(?=(?:and|but|while|whereas|which|where|when|who|before|after"
    r"|saying|including|although|though)\b)"
)
#: The fewest content words a clause must have to be judged alone; a shorter one stays with
#: the clause before it.
CLAUSE_MIN_WORDS = 3
#: More than this share of a sentence's content words its passage must hold to be about what
#: it says.
MIN_COVERAGE = 0.5
#: The most neighbouring sentences one passage spans.
WINDOW = 4
#: The best-scoring sentences of a page whose neighbourhoods are searched for wider windows.
WINDOW_SEEDS = 64
#: Characters of page text shown around a passage to a model.
CONTEXT_CHARS = 300


@dataclass(frozen=True)
class Evidence:
    """The page's passage a verdict rests on: where it is in the retained text, and its words."""

    url: str
    span: tuple[int, int]
    passage: str


@dataclass(frozen=True)
class Row:
    """One sentence's verdict, its reasons and its evidence (and a model's vote on it)."""

    sentence: Sentence
    verdict: Verdict
    reasons: tuple[str, ...] = ()
    evidence: Evidence | None = None
    #: Supported by shared words alone: the literal checks cannot decide it.
    undecided: bool = False
    vote: VoteRecord | None = None

    @property
    def flagged(self) -> bool:
        return self.verdict in FLAGGED


def not_checked(sentence: Sentence, reason: str) -> Row:
    return Row(sentence, "not_checked", (reason,))


def judge(sentence: Sentence, pages: Mapping[str, Fetched]) -> Row:
    """Steps 1–4 of the module docstring for one sentence, whose cites ``pages`` holds."""
    if not sentence.cites and not sentence.unresolved:
        return not_checked(sentence, NO_CITATION)
    read: list[Page] = []
    failures: list[str] = []
    for cite in sentence.cites:
        found = Unreachable(cite.target, LOCAL_FILE) if cite.local else pages[cite.target]
        if isinstance(found, Page):
            read.append(found)
        else:
            failures.append(found.reason)
    if sentence.unresolved:
        failures.append(REFERENCE_NOT_FOUND)
    if not read:
        return Row(sentence, "unreachable", tuple(dict.fromkeys(failures)))
    differs: list[str] = []
    at_quote: tuple[Page, Located] | None = None
    for quote in quotes_of(sentence.text):
        spot = _find_quote(quote, read)
        if spot is None and is_title(quote) and any(_holds_title(quote, p) for p in read):
            continue  # a work's title the page names in its own typography, not its words
        if spot is None:
            best = _best(sentence.text, read)
            evidence = best.evidence if best is not None else None
            return Row(sentence, "unsupported", (QUOTE_NOT_IN_SOURCE,), evidence)
        if spot[1].method == "fuzzy":
            differs.append(QUOTE_DIFFERS)
        at_quote = at_quote or spot
    if at_quote is not None:
        page, located = at_quote
        span = _widen(page.text, _covering(page.text, located.start, located.end))
        best = _checked(sentence.text, page, span)
    else:
        best = _best(sentence.text, read)
        if best is not None and best.verdict != "supported":
            best = _by_clauses(sentence.text, read) or best
    if best is None:
        return Row(sentence, "unsupported", (NO_SUPPORTING_PASSAGE,))
    reasons = tuple(dict.fromkeys([*differs, *best.reasons]))
    verdict = best.verdict
    if differs and verdict == "supported":
        verdict = "partially_supported"
    undecided = at_quote is None and (
        (verdict == "supported" and not best.held) or reasons == (NO_SUPPORTING_PASSAGE,)
    )
    return Row(sentence, verdict, reasons, best.evidence, undecided=undecided)


def quotes_of(text: str) -> list[str]:
    """The quotations in a sentence long enough to claim a page's words."""
    found = (match[1] or match[2] for match in _QUOTED.finditer(text))
    return [quote.strip() for quote in found if len(quote.split()) >= QUOTE_MIN_WORDS]


def is_title(quote: str) -> bool:
    """Whether a quotation is a work's title set in quotation marks, as Wikipedia writes them
    ("The Hunger Games: Mockingjay – Part 2"): a few words, each capitalized but the small ones.
    A title names a work; its page may typeset it otherwise (other dashes, italics, a short
    form), so it is held by its words, not located verbatim."""
    words = _TITLE_WORD.findall(quote)
    if not words or len(words) > TITLE_MAX_WORDS:
        return False
    major = [word for word in words if word.casefold() not in _TITLE_SMALL_WORDS]
    return bool(major) and all(word[0].isupper() or word[0].isdigit() for word in major)


def _holds_title(quote: str, page: Page) -> bool:
    """Whether the page holds every word and number of a title, case and stops aside."""
    if not content_tokens(quote) <= _page_tokens(page.text):
        return False
    return set(_DIGITS.findall(quote)) <= _page_numbers(page.text)


@lru_cache(maxsize=32)
def _page_tokens(text: str) -> frozenset[str]:
    return content_tokens(text)


@lru_cache(maxsize=32)
def _page_numbers(text: str) -> frozenset[str]:
    return frozenset(_DIGITS.findall(text))


def codes(support: Support, dated: PageDate | None = None) -> list[str]:
    """The gate's reasons for a passage, as the check's codes; a date or year the page's own
    date (``dated``) states is no reason."""
    found: list[str] = []
    for reason in support.reasons:
        if reason == LITERAL_MISSING and support.literals is not None:
            missing = support.literals.numeric_missing
            kinds = {token.kind for token in missing if not _dated(token, dated)}
            if kinds - _DATE_KINDS:
                found.append(FIGURE_DIFFERS)
            if kinds & _DATE_KINDS:
                found.append(DATE_DIFFERS)
        else:
            found.append(_CODES.get(reason, reason))
    return found


#: A page's own date: year, month and day (:attr:`LiteralToken.date`).
PageDate = tuple[int, int | None, int | None]
#: The longest line read as a page's dateline ("November 20, 2013 at 6:35 PM").
DATELINE_MAX_CHARS = 60
#: The most words a dateline has besides its date ("Video", "Updated", "at", "PM", "EDT").
DATELINE_MAX_WORDS = 4


def page_date(page: Page) -> PageDate | None:
    """The date a page is dated: its declared publication date, else its first dateline — a
    short line that states a full date and little else. A news page's sentence "In November
    2013, the board voted…" takes its month from the page it is on; a date the sentence states
    is held by this date only when they agree in every part the sentence writes."""
    if page.published is not None:
        return page.published.year, page.published.month, page.published.day
    return _dateline(page.text)


@lru_cache(maxsize=32)
def _dateline(text: str) -> PageDate | None:
    for line in text.split("\n"):
        line = line.strip()
        if not line or len(line) > DATELINE_MAX_CHARS:
            continue
        dates = [t for t in literals_of(line) if t.kind == "date" and t.date is not None]
        if len(dates) != 1 or dates[0].date is None or dates[0].date[1] is None:
            continue
        rest = line[: dates[0].start] + line[dates[0].end :]
        if len(re.findall(r"[^\W\d_]+", rest)) <= DATELINE_MAX_WORDS:
            return dates[0].date
    return None


def _dated(token: LiteralToken, dated: PageDate | None) -> bool:
    """Whether the page's own date states a sentence's date or year, in every part it writes."""
    if dated is None:
        return False
    if token.kind == "year":
        return token.value is not None and token.value == dated[0]
    if token.kind != "date" or token.date is None:
        return False
    return all(part is None or part == mine for part, mine in zip(token.date, dated, strict=True))


def page_says(row: Row) -> list[str]:
    """What the passage states where a figure or a date of the sentence differs: its literals
    of that kind the sentence does not write."""
    if row.evidence is None:
        return []
    kinds: set[str] = set()
    if FIGURE_DIFFERS in row.reasons:
        kinds |= {"number", "percent", "money", "ordinal"}
    if DATE_DIFFERS in row.reasons:
        kinds |= _DATE_KINDS
    written = {token.text for token in literals_of(row.sentence.text)}
    said = [t.text for t in literals_of(row.evidence.passage) if t.kind in kinds]
    return [text for text in dict.fromkeys(said) if text not in written]


def _held_by_literals(support: Support) -> bool:
    """Whether a figure, date or name of the sentence was found in the passage: something the
    literal check verified, not shared words alone."""
    return support.literals is not None and bool(support.literals.claim_literals)


def _find_quote(quote: str, read: Sequence[Page]) -> tuple[Page, Located] | None:
    """Where ``quote`` is on the cited pages: an exact (or normalized) match on any page before
    a fuzzy one."""
    fuzzy: tuple[Page, Located] | None = None
    for page in read:
        located = locate(quote, page.document)
        if located is None:
            continue
        if located.method != "fuzzy":
            return page, located
        fuzzy = fuzzy or (page, located)
    return fuzzy


# --- the passage finder --------------------------------------------------------------------


@dataclass(frozen=True)
class _Unit(PageSentence):
    """A page's sentence (or line) with its content words."""

    tokens: frozenset[str]


@lru_cache(maxsize=32)
def _units(text: str) -> tuple[_Unit, ...]:
    """The page's sentences (its lines, for text with no prose), with their content words."""
    spans = [(s.start, s.end) for s in page_sentences(text)]
    if not spans:
        position = 0
        for line in text.split("\n"):
            if line.strip():
                spans.append((position, position + len(line)))
            position += len(line) + 1
    return tuple(
        _Unit(start, end, text[start:end], content_tokens(text[start:end])) for start, end in spans
    )


def _figures(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The figures a text writes (a name's number, as in "PEP 8", is the name's) and the kinds
    of literal they are, a year and a date counting as one kind."""
    numeric = [token for token in literals_of(text) if token.numeric]
    kinds = {"date" if token.kind in _DATE_KINDS else token.kind for token in numeric}
    return frozenset(token.text for token in numeric), frozenset(kinds)


def passages(claim: str, text: str, limit: int = CANDIDATES) -> list[tuple[float, int, int]]:
    """The passages of ``text`` that best share ``claim``'s words, best first: sentences and
    runs of neighbours, each scored by the claim's words it holds weighed by how few of the
    page's sentences hold them (log(1 + N / n)); each figure of the claim it repeats counts as
    the rarest word, and each kind of figure it states that the claim states (a date, a count)
    as half of one, so the passage a changed figure would be in is found. A window of up to
    :data:`WINDOW` neighbouring sentences is kept only when it scores above each shorter window
    it holds: a quotation and its attribution are one passage."""
    units = _units(text)
    if not units:
        return []
    wanted = content_tokens(claim)
    figures, kinds = _figures(claim)
    stated = _unit_figures(text) if figures else None
    frequency: Counter[str] = Counter()
    for unit in units:
        frequency.update(unit.tokens & wanted)
    total = len(units)
    weight = {token: math.log(1 + total / count) for token, count in frequency.items()}
    rarest = math.log(1 + total)

    def score(first: int, last: int) -> float:
        """The window of sentences ``first`` to ``last``, both included."""
        part = range(first, last + 1)
        words = math.fsum(
            weight[t] for t in frozenset().union(*(units[i].tokens for i in part)) & wanted
        )
        if stated is None:
            return words
        said = frozenset().union(*(stated[i][0] for i in part))
        said_kinds = frozenset().union(*(stated[i][1] for i in part))
        return words + rarest * len(said & figures) + rarest / 2 * len(said_kinds & kinds)

    singles = [score(index, index) for index in range(total)]
    # A window whose first or last sentence scores nothing scores what the window inside it
    # does, so only windows between two sentences that score are worth a look.
    live = [index for index, value in enumerate(singles) if value > 0]
    scored = [(singles[index], units[index].start, units[index].end) for index in live]
    # Windows around the best-scoring sentences only: on a page where every sentence shares a
    # word with the claim, windows everywhere would cost the page's length again per window size.
    best = sorted(live, key=lambda index: -singles[index])[:WINDOW_SEEDS]
    firsts = sorted({f for seed in best for f in range(max(0, seed - WINDOW + 1), seed + 1)})
    for first in firsts:
        if not singles[first]:
            continue
        for last in range(first + 1, min(first + WINDOW, total)):
            if not singles[last]:
                continue
            value = score(first, last)
            if value > max(score(first, last - 1), score(first + 1, last)):
                scored.append((value, units[first].start, units[last].end))
    scored.sort(key=lambda item: (-item[0], item[1], item[2]))
    return scored[:limit]


@lru_cache(maxsize=32)
def _unit_figures(text: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """Each of the page's sentences' figures and their kinds (:func:`_figures`), read once."""
    return tuple(_figures(unit.text) for unit in _units(text))


def _covering(text: str, start: int, end: int) -> tuple[int, int]:
    """The page's sentences a located quote lies in."""
    inside = [u for u in _units(text) if u.end > start and u.start < end]
    if not inside:
        return start, end
    return min(start, inside[0].start), max(end, inside[-1].end)


def _widen(text: str, span: tuple[int, int]) -> tuple[int, int]:
    """``span`` grown by its neighbouring sentences until it can support alone (the gate's
    :data:`MIN_SUPPORT_CHARS`)."""
    start, end = span
    units = _units(text)
    after = [u for u in units if u.start >= end]
    before = [u for u in units if u.end <= start][::-1]
    while end - start < MIN_SUPPORT_CHARS and (after or before):
        if after:
            end = after.pop(0).end
        else:
            start = before.pop(0).start
    return start, end


@dataclass(frozen=True)
class _Found:
    """One passage's verdict on a sentence."""

    verdict: Verdict
    reasons: tuple[str, ...]
    support: Support
    evidence: Evidence

    @property
    def rank(self) -> int:
        return _RANK[self.verdict]

    @property
    def held(self) -> bool:
        return _held_by_literals(self.support)


def _checked(claim: str, page: Page, span: tuple[int, int]) -> _Found:
    """The gate's steps 3 and 4 on one passage, and the share of the sentence's words it holds:
    a passage holding no more than :data:`MIN_COVERAGE` of them says something else, whatever
    names or figures it shares (a page's byline names its authors, not what they wrote)."""
    start, end = span
    passage = page.text[start:end]
    facts = SourceFacts(title=page.title, published=page.published)
    support = check_support(claim, [passage], page.document, facts=facts)
    located = support.quotes[0].located if support.quotes else None
    where = (located.start, located.end) if located is not None else span
    evidence = Evidence(page.url, where, page.text[where[0] : where[1]])
    reasons = codes(support, page_date(page))
    verdict: Verdict = support.outcome
    if verdict == "partially_supported" and not reasons:
        verdict = "supported"  # the passage lacked only a date the page is dated
    wanted = content_tokens(claim)
    if wanted and len(wanted & content_tokens(evidence.passage)) <= MIN_COVERAGE * len(wanted):
        reasons = [*reasons, NO_SUPPORTING_PASSAGE]
        verdict = "unsupported"
    return _Found(verdict, tuple(dict.fromkeys(reasons)), support, evidence)


def _best(claim: str, read: Sequence[Page]) -> _Found | None:
    """The best verdict any cited page's best passages give, the earlier page and passage on a
    tie."""
    best: _Found | None = None
    for page in read:
        for _, start, end in passages(claim, page.text):
            found = _checked(claim, page, _widen(page.text, (start, end)))
            if best is None or found.rank > best.rank:
                best = found
    return best


def clauses_of(claim: str) -> list[str]:
    """A sentence's clauses (:data:`_CLAUSE_BREAK`), each with enough words to be judged."""
    clauses: list[str] = []
    for part in _CLAUSE_BREAK.split(claim):
        if clauses and len(content_tokens(part)) < CLAUSE_MIN_WORDS:
            clauses[-1] = f"{clauses[-1]}, {part}"
        elif part.strip():
            clauses.append(part.strip())
    if len(clauses) > 1 and len(content_tokens(clauses[0])) < CLAUSE_MIN_WORDS:
        clauses[:2] = [f"{clauses[0]}, {clauses[1]}"]
    return clauses


def _by_clauses(claim: str, read: Sequence[Page]) -> _Found | None:
    """A sentence no one passage supports, supported when each of its clauses is by a passage
    of its own on the cited pages — each clause's figures, dates and names checked against its
    own passage, as strictly as a sentence's; None when some clause is not."""
    clauses = clauses_of(claim)
    if len(clauses) < 2:
        return None
    found = [_best(clause, read) for clause in clauses]
    supported = [f for f in found if f is not None and f.verdict == "supported"]
    if len(supported) < len(clauses):
        return None
    held = next((f for f in supported if f.held), supported[0])
    return replace(held, evidence=supported[0].evidence)


def with_vote(row: Row, vote: VoteRecord) -> Row:
    """A row as a model's vote on its passage decides it: refuted is ``unsupported``, upheld
    ``supported``; an abstention leaves the literal checks' verdict, and the vote is kept."""
    if vote.status != "valid" or vote.refuted is None:
        return replace(row, vote=vote)
    if vote.refuted:
        return replace(row, verdict="unsupported", reasons=(MODEL_REFUTED,), vote=vote)
    return replace(row, verdict="supported", reasons=(), vote=vote)
