"""The check: which literals of a claim the quotes cited for it do not establish.

Each claim literal is matched against the literals of all quotes taken together. A claim literal
is satisfied when a compatible quote literal's interval (see
:mod:`~deep_research.gates.literals.intervals`) lies inside the claim literal's interval:
``250`` is not established by ``more than 200``, and a bare ``4,300`` not by ``4,312``. A quote's
one-sided bound is read at face value, to the precision it is written in — ``over 3.4 million``
is 3.4 million and some part of the next 0.1 million — so it establishes ``under 3.5 million``
but not ``under 3.4 million``, nor ``under 3.45 million``, nor a bare ``3.4 million``. A
numeral written ambiguously is satisfied by either of its readings (``300.000``). A claim's
``12 500`` is also read as the one figure 12,500, and a quote's as both.

A bound is judged against its referent, not against every figure (else any larger number in the
quote would establish ``more than X``): the quote figure nearest in value (relative distance for
figures, days for dates) — a writer bounds the figure they paraphrase — and between figures
exactly as near, the ones sharing more neighbouring lower-case words with the claim figure
(``more than 100 seats`` between ``95 seats`` and ``105 votes`` is judged against the seats).
When figures remain exactly as near and as alike, the quote does not say which one the claim
bounds, and the bound must hold for each: ``before 9 May`` is not established by a quote dating
its count ``as of 11 May`` beside a note ``as of 7 May``. Equality and ``about`` accept any
matching figure.

Compatible kinds: number with number, ordinal (the 26th year makes 26 years) and money (a claim
may leave out a sum's currency, never add one), and with a year only for equality; percent with
percent; money with money of the same currency; ordinal with ordinal; date and year claims with
quote dates and years (a bare four-digit quote number may be a year). A claim date without a
year compares day and month only.

Names: satisfied when the normalized name (case, diacritics, punctuation and possessive ``'s``
removed) occurs as a whole-word phrase in the normalized quotes. A shorter claim name inside a
longer quote name counts (``Ada`` in ``Ada Lovelace``); a longer one does not (``North
Carolina State`` is not established by ``North Carolina``: it names something more specific). A
plain claim number next to a capitalized word — the first word of its sentence (``Apollo 11``)
or the start of a phrase (``101 Dalmatians``) — is also satisfied when that phrase occurs as a
name.

Document context (:mod:`.context`), when given, may establish what the quotes leave out, and
each literal it establishes is reported with the passage: a name found in a passage; a claim
year or season when the quotes state no date or year of their own, from the years in force (the
first passage, nearest first, that states one — for a paragraph, its last-stated year); and a
claim date, from a quote date without a year, which takes the years in force (the publication
date's year last), or from the quotes' relative dates ("today", "next month",
:mod:`.relative`), which the publication date resolves and which then decide alone.

A quotation speaks for its speaker (:mod:`.voice`): when the quotes are inside an attributed
quotation, a claim name the claim makes the speaker ("Roe said …") must be in the attribution,
unless it is the publisher of a page about itself; and no passage establishes a name the
quotation was told to, nor the publisher reporting it (a newspaper is not the operator's "we").
A title or lead naming two entities establishes only the one the located text's "we", "it" or
"the plant" refers to (:mod:`.subjects`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal

from deep_research.gates.literals.context import DocumentContext, Passage, Where
from deep_research.gates.literals.dates import YEAR_MAX, YEAR_MIN
from deep_research.gates.literals.derived import Derivation, derived_satisfied
from deep_research.gates.literals.extraction import literals_of
from deep_research.gates.literals.figure_context import Evidence, evidence_of
from deep_research.gates.literals.intervals import (
    Interval,
    claim_interval,
    date_interval,
    quote_interval,
)
from deep_research.gates.literals.names import normalize_name
from deep_research.gates.literals.numbers import step_of
from deep_research.gates.literals.openers import named_openers
from deep_research.gates.literals.ordinals import counts
from deep_research.gates.literals.relative import RelativeDate, relative_dates
from deep_research.gates.literals.subjects import entities, established, reference, standing
from deep_research.gates.literals.tokens import LiteralToken, Qualifier
from deep_research.gates.literals.voice import attribution
from deep_research.gates.vocabulary import STOP_WORDS
from deep_research.models import ContextLiteral


@dataclass(frozen=True)
class ContextUse:
    """A claim literal the quotes leave out that the document's context establishes."""

    token: LiteralToken
    where: Where
    #: The quotes' relative date ("today") the publication date resolved, if that is how.
    relative: str | None = None

    def __str__(self) -> str:
        return f"{self.token.text} ({self.where})"

    def record(self) -> ContextLiteral:
        """As claims.json and the batch gate's results record it."""
        return ContextLiteral(literal=self.token.text, passage=self.where, relative=self.relative)


@dataclass(frozen=True)
class LiteralCheck:
    """Which literals of a claim the quotes do not establish (and which only context does)."""

    claim_literals: tuple[LiteralToken, ...]
    missing: tuple[LiteralToken, ...]
    context: tuple[ContextUse, ...] = ()

    @property
    def numeric_missing(self) -> tuple[LiteralToken, ...]:
        return tuple(token for token in self.missing if token.numeric)

    @property
    def names_missing(self) -> tuple[LiteralToken, ...]:
        return tuple(token for token in self.missing if not token.numeric)

    @property
    def ok(self) -> bool:
        return not self.missing


def _is_year_number(token: LiteralToken) -> bool:
    return (
        token.kind == "number"
        and token.value is not None
        and len(token.text) == 4
        and token.text.isdecimal()  # what \d{4} matches, without a pattern lookup per call
        and YEAR_MIN <= token.value <= YEAR_MAX
    )


def as_year(token: LiteralToken) -> LiteralToken | None:
    """A quote's bare four-digit integer may be a year the extractor had no context for."""
    if token.kind in ("date", "year"):
        return token
    if _is_year_number(token):
        assert token.value is not None
        return replace(token, kind="year", date=(int(token.value), None, None))
    return None


@dataclass(frozen=True)
class _Candidate:
    interval: Interval
    distance: Decimal  # how far the quote literal is from the claim literal
    shared: int  # context words it shares with the claim literal


def _may_be_dated(token: LiteralToken) -> bool:
    """A date or year — or a bare four-digit number stated exactly, which may be a year (a
    bounded one is a count: "more than 1850 tests")."""
    return token.kind in ("date", "year") or (_is_year_number(token) and token.qualifier == "eq")


def _date_satisfied(claim: Evidence, quotes: Sequence[Evidence]) -> bool:
    token = as_year(claim.token) if _may_be_dated(claim.token) else None
    if token is None or token.date is None:
        return False
    yearless = token.date[0] == 0
    outer = date_interval(token, claim=True, yearless=yearless)
    if outer is None:
        return False
    candidates: list[_Candidate] = []
    for evidence in quotes:
        quote = as_year(evidence.token)
        if quote is None or quote.date is None:
            continue
        if yearless and (quote.date[1] is None or (token.date[2] and quote.date[2] is None)):
            continue
        inner = date_interval(quote, claim=False, yearless=yearless)
        if inner is not None:
            # a date bound refers to the quote date nearest it: what follows a date is the
            # clause it dates, not a count, so context words do not pick it
            candidates.append(_Candidate(inner, abs(inner.middle - outer.middle), 0))
    return _judge(token.qualifier, outer, candidates)


def _judge(qualifier: Qualifier, outer: Interval, candidates: list[_Candidate]) -> bool:
    """Equality-like claims need any contained quote literal. A bound is judged only against its
    referent, else any larger figure would establish "more than X": the figure nearest in
    value (a writer bounds the figure they paraphrase), and between figures equally near, the
    ones sharing the most context words with the claim figure. Referents still tied must each
    satisfy the bound: an ambiguous referent is no evidence for either reading."""
    if not candidates:
        return False
    if qualifier in ("gt", "ge", "lt", "le"):
        nearest = min(candidate.distance for candidate in candidates)
        pool = [candidate for candidate in candidates if candidate.distance == nearest]
        most = max(candidate.shared for candidate in pool)
        referents = [candidate for candidate in pool if candidate.shared == most]
        return all(candidate.interval.within(outer) for candidate in referents)
    return any(candidate.interval.within(outer) for candidate in candidates)


def _compatible(claim: LiteralToken, quote: LiteralToken) -> bool:
    if quote.value is None:
        return False
    if claim.kind == "number":
        if quote.kind == "year":
            # a year is a count only by coincidence: it can equal a figure, never bound one
            return claim.qualifier not in ("gt", "ge", "lt", "le")
        # the 26th consecutive year makes 26 consecutive years; a count does not make a rank; a
        # claim that leaves out a sum's currency ("earned 40 million") says less, not otherwise
        return quote.kind in ("number", "ordinal", "money")
    if claim.kind == "money":
        return quote.kind == "money" and quote.unit == claim.unit
    return quote.kind == claim.kind


def _relative_distance(a: Decimal, b: Decimal) -> Decimal:
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale else Decimal(0)


def _value_satisfied(claim: Evidence, quotes: Sequence[Evidence]) -> bool:
    token = claim.token
    assert token.value is not None
    outer = claim_interval(token)
    candidates = [
        _Candidate(
            quote_interval(evidence.token),
            _relative_distance(evidence.token.value, token.value),
            len(claim.context & evidence.context),
        )
        for evidence in quotes
        if evidence.token.value is not None and _compatible(token, evidence.token)
    ]
    return _judge(token.qualifier, outer, candidates)


_WORD_BEFORE_RE = re.compile(r"([^\W\d_][\w'’-]*)\.? $")
_CAPITALIZED_AFTER_RE = re.compile(r" ((?:[A-Z][\w'’-]*)(?: [A-Z][\w'’-]*){0,2})")


def _name_phrases(claim: str, token: LiteralToken) -> tuple[str, ...]:
    """The names a plain number may be part of: with the capitalized word before it (Apollo 11,
    Vol. 2) or the capitalized words after it (101 Dalmatians), normalized."""
    if token.kind not in ("number", "year") or token.qualifier != "eq":
        return ()
    if not token.text.isdigit():
        return ()
    phrases = []
    # The word holds no space and ends one or two characters before the figure: searching from
    # the last space before that finds what a search from 40 characters back finds.
    lowest = max(0, token.start - 40)
    lowest = max(lowest, claim.rfind(" ", lowest, token.start - 2) + 1)
    before = _WORD_BEFORE_RE.search(claim, lowest, token.start)
    if before is not None and before.group(1)[0].isupper():
        phrases.append(normalize_name(f"{before.group(1)} {token.text}"))
    after = _CAPITALIZED_AFTER_RE.match(claim, token.end)
    if after is not None:
        phrases.append(normalize_name(f"{token.text} {after.group(1)}"))
    return tuple(phrases)


def _satisfied(
    claim: Evidence,
    quotes: Sequence[Evidence],
    quote_text: str,
    derived: Derivation | None,
    phrases: Sequence[str],
) -> bool:
    token = claim.token
    if token.kind == "name":
        name = normalize_name(token.text)
        return bool(name) and f" {name} " in quote_text
    if phrases and any(f" {phrase} " in quote_text for phrase in phrases):
        return True
    for reading in token.readings():
        evidence = claim if reading is token else Evidence(reading, claim.context)
        # a bare four-digit claim number may be a year ("the 2019 floods"), as in a quote
        if _may_be_dated(reading) and _date_satisfied(evidence, quotes):
            return True
        if reading.kind not in ("date", "year") and _value_satisfied(evidence, quotes):
            return True
    return (
        derived is not None
        and token.value is not None
        and derived_satisfied(token, [evidence.token for evidence in quotes], derived)
    )


# --- one figure written with an ordinary space ----------------------------------------------

_GROUP_HEAD_RE = re.compile(r"[^\d\s]*\s?\d{1,3}")


def _merged(text: str, first: LiteralToken, second: LiteralToken) -> LiteralToken | None:
    """``12 500``: two figures, or one grouped with an ordinary space."""
    if (
        second.start != first.end + 1
        or text[first.end] != " "
        or first.value is None
        or second.value is None
        or first.value < 0
        or first.kind not in ("number", "money")
        or second.kind != "number"
        or not re.fullmatch(r"\d{3}", second.text)
        or _GROUP_HEAD_RE.fullmatch(first.text) is None
    ):
        return None
    value = first.value * 1000 + second.value
    return replace(
        first,
        text=text[first.start : second.end],
        end=second.end,
        value=value,
        step=step_of(value),
        alternatives=(),
        qualifier=first.qualifier,
    )


def _merged_evidence(text: str, items: Sequence[Evidence]) -> list[Evidence]:
    merged = []
    for left, right in itertools.pairwise(items):
        token = _merged(text, left.token, right.token)
        if token is not None:
            merged.append(Evidence(token, left.context | right.context))
    return merged


def _quote_evidence(quote: str) -> list[Evidence]:
    items = list(evidence_of(quote))
    readings = [
        Evidence(reading, item.context) for item in items for reading in item.token.readings()[1:]
    ]
    return items + readings + _merged_evidence(quote, items)


# --- context --------------------------------------------------------------------------------


_YEAR_IN_NAME_RE = re.compile(r"(?<!\d)(1\d{3}|20\d{2})(?:[-–/](\d{2}))?(?!\d)")


def _year_token(year: int, start: int, end: int, text: str) -> LiteralToken:
    return LiteralToken("year", text, start, end, Decimal(year), None, (year, None, None), "eq")


def _years_in_name(token: LiteralToken) -> list[LiteralToken]:
    """A name's year states the year of what it names: Harbour Fair 2021, the 2016–17 season."""
    found = []
    for match in _YEAR_IN_NAME_RE.finditer(token.text):
        first = int(match.group(1))
        start = token.start + match.start()
        found.append(_year_token(first, start, start + 4, match.group(1)))
        if match.group(2) and int(match.group(2)) == (first + 1) % 100:
            found.append(_year_token(first + 1, start + 5, start + 7, match.group(2)))
    return found


def _years(passage: Passage) -> list[LiteralToken]:
    """The years a passage puts in force: a paragraph's last-stated one (a season: both of its
    years), every one of a heading's or title's, the publication date's."""
    found: list[LiteralToken] = []
    for token in literals_of(passage.text):
        if token.kind == "name":
            found.extend(_years_in_name(token))
            continue
        year = as_year(token)
        if year is None or year.date is None or year.date[0] == 0:
            continue
        found.append(_year_token(year.date[0], year.start, year.end, year.text))
    if passage.where in ("paragraph", "paragraph before") and found:
        last = found[-1]
        found = [token for token in found if token.end >= last.start - 3]
    return found


def _years_in_force(context: DocumentContext) -> tuple[Where, list[LiteralToken]] | None:
    for passage in context.passages:
        years = _years(passage)
        if years:
            return passage.where, years
    return None


@dataclass(frozen=True)
class _Voices:
    """A claim's attribution, read against a quotation the quotes are part of: the claim's
    names the claim makes its speaker, and those it makes the one spoken to."""

    speakers: frozenset[LiteralToken] = frozenset()
    addressees: frozenset[LiteralToken] = frozenset()


def _claim_voices(claim: str, tokens: Sequence[LiteralToken]) -> _Voices:
    said = attribution(claim)
    if said is None:
        return _Voices()

    def within(span: tuple[int, int] | None) -> frozenset[LiteralToken]:
        if span is None:
            return frozenset()
        return frozenset(t for t in tokens if t.kind == "name" and span[0] <= t.start < span[1])

    return _Voices(within(said.speaker), within(said.addressee))


def _voice_names(text: str) -> list[str]:
    """The names a byline or an addressee phrase holds, normalized (a lower-case byline read
    from a web domain is one name as a whole)."""
    names = [normalize_name(t.text) for t in literals_of(text) if t.kind == "name"]
    return [name for name in names or [normalize_name(text)] if name]


def _self_published(name: str, context: DocumentContext) -> bool:
    """Whether ``name`` is the publisher of a page about itself — its title or lead names it: a
    company's release quoting its own officer speaks for the company."""
    subject = f" {' '.join(normalize_name(text) for text in context.subjects)} "
    return any(
        f" {voice} " in f" {name} " and f" {voice} " in subject
        for byline in context.bylines
        for voice in _voice_names(byline)
    )


def _other_voice(name: str, context: DocumentContext) -> bool:
    """Whether ``name`` is one a quotation does not speak for: the one it was told to, or the
    publisher reporting it — unless the attribution names it, or the page is the publisher's
    own (:func:`_self_published`)."""
    speaking = " ".join(
        normalize_name(p.text) for p in context.name_passages if p.where == "speaker"
    )
    if f" {name} " in f" {speaking} ":
        return False

    def named(texts: Sequence[str]) -> bool:
        return any(f" {voice} " in f" {name} " for text in texts for voice in _voice_names(text))

    if named(context.addressees):
        return True
    return named(context.bylines) and not _self_published(name, context)


def _name_from_context(
    token: LiteralToken, context: DocumentContext, voices: _Voices, claim_names: Sequence[str]
) -> Where | None:
    """The passage that establishes a claim name, if one does. A quotation's voice is its own:
    the name a claim makes its speaker must be the attribution's (or the publisher's, on a page
    about itself); and no passage establishes a name the quotation does not speak for
    (:func:`_other_voice`)."""
    name = normalize_name(token.text)
    if not name:
        return None
    others = [other for other in claim_names if other != name]
    passages = context.name_passages
    if context.quoted:
        if token in voices.speakers:
            if not _self_published(name, context):
                passages = tuple(p for p in passages if p.where == "speaker")
        elif token not in voices.addressees and _other_voice(name, context):
            return None
    for passage in passages:
        if _contains_name(passage, name) and _stands_for_located(passage, name, context, others):
            return passage.where
    return None


def _page_voices(context: DocumentContext) -> tuple[str, ...]:
    """Whose first person the located text speaks in: a quotation's speaker (and the publisher
    of a page about itself), else the publisher."""
    bylines = [voice for byline in context.bylines for voice in _voice_names(byline)]
    if not context.quoted:
        return tuple(bylines)
    speakers = [p.text for p in context.name_passages if p.where == "speaker"]
    spoken = [voice for speaker in speakers for voice in _voice_names(speaker)]
    return tuple(spoken + [voice for voice in bylines if _self_published(voice, context)])


def _stands_for_located(
    passage: Passage, name: str, context: DocumentContext, others: Sequence[str]
) -> bool:
    """A title or lead naming two entities establishes only the one the located text's "we",
    "it" or "the plant" stands for (:mod:`.subjects`)."""
    if passage.where not in ("title", "lead"):
        return True
    found = entities(passage.text, context.text)
    if len(found) < 2:
        return True
    summaries = [p.text for p in context.name_passages if p.where in ("title", "lead")]
    every_noun = frozenset(
        noun
        for text in summaries
        for entity in entities(text, context.text)
        for noun in entity.nouns
    )
    refers = reference(context.located, _page_voices(context))
    return established(name, found, standing(found, refers, every_noun), others)


def _relative_use(
    claim: Evidence, relative: Sequence[RelativeDate], published: date
) -> ContextUse | None:
    """A claim date the quotes' relative dates ("today"), read from the publication date,
    establish. They are the quotes' own dates: when they do not establish it, nothing else may."""
    token = as_year(claim.token)
    if token is None or token.date is None:
        return None
    if token.date[0] == 0:  # "on 3 March": in the year the page was published
        token = replace(token, date=(published.year, *token.date[1:]))
    outer = date_interval(token, claim=True, yearless=False)
    if outer is None:
        return None
    candidates = [
        _Candidate(r.interval, abs(r.interval.middle - outer.middle), 0) for r in relative
    ]
    if not _judge(token.qualifier, outer, candidates):
        return None
    nearest = min(relative, key=lambda r: abs(r.interval.middle - outer.middle))
    return ContextUse(claim.token, "publication date", nearest.text)


def _from_context(
    claim: Evidence,
    evidence: Sequence[Evidence],
    context: DocumentContext,
    phrases: Sequence[str],
    quotes: Sequence[str],
    voices: _Voices,
    claim_names: Sequence[str],
) -> ContextUse | None:
    """How the document's context establishes a claim literal the quotes leave out, if it does."""
    token = claim.token
    if token.kind == "name":
        named = _name_from_context(token, context, voices, claim_names)
        return None if named is None else ContextUse(token, named)
    for passage in context.passages:
        if any(_contains_name(passage, phrase) for phrase in phrases):
            return ContextUse(token, passage.where)
    if not _may_be_dated(token):
        return None  # context establishes years, seasons and names, never a figure
    relative = relative_dates(" ".join(quotes), context.published)
    if relative and context.published is not None:
        return _relative_use(claim, relative, context.published)
    in_force = _years_in_force(context)
    if in_force is None:
        return None
    where, years = in_force
    dated = [item for item in evidence if item.token.kind in ("date", "year")]
    yearless = [item for item in dated if item.token.date and item.token.date[0] == 0]
    if yearless:
        given = [
            Evidence(replace(item.token, date=(year.date[0], *item.token.date[1:])), item.context)
            for item in yearless
            for year in years
            if year.date is not None and item.token.date is not None
        ]
        return ContextUse(token, where) if _date_satisfied(claim, given) else None
    if dated or where == "publication date":
        return None  # the quotes' own dates decide; a page's date is no year of its events
    stated = [Evidence(year, frozenset()) for year in years]
    return ContextUse(token, where) if _date_satisfied(claim, stated) else None


_WORD = re.compile(r"[^\W_][\w'-]*")
#: How many words beside a name must read alike for another name to stand in its place.
_PLACE_WORDS = 2


def _words(text: str) -> list[str]:
    return [word.lower() for word in _WORD.findall(text)]


def _stands_in_place(claim: str, token: LiteralToken, quotes: Sequence[str]) -> bool:
    """Whether the quotes write another name where the claim writes ``token``: the claim's next
    (or previous) words follow (or precede) a capitalized word of the quotes that the claim does
    not hold. "PowerShell now performs its own search" against "Rust now performs its own
    search" puts PowerShell in Rust's place, and no passage may then establish PowerShell — the
    sentence names its own subject."""
    after = _words(claim[token.end :])[:_PLACE_WORDS]
    before = _words(claim[: token.start])[-_PLACE_WORDS:]
    held = set(_words(claim))
    for quote in quotes:
        for match in _WORD.finditer(quote):
            word = match.group()
            if not word[0].isupper() or word.lower() in STOP_WORDS or word.lower() in held:
                continue
            if len(after) == _PLACE_WORDS and _words(quote[match.end() :])[:_PLACE_WORDS] == after:
                return True
            if (
                len(before) == _PLACE_WORDS
                and _words(quote[: match.start()])[-_PLACE_WORDS:] == before
            ):
                return True
    return False


def _contains_name(passage: Passage, name: str) -> bool:
    if passage.where == "publication date":
        return False
    return f" {name} " in f" {normalize_name(passage.text)} "


# --- the check ------------------------------------------------------------------------------


def check(
    claim: str,
    quotes: Sequence[str],
    *,
    derived: Derivation | None = None,
    context: DocumentContext | None = None,
) -> LiteralCheck:
    """Which literals of ``claim`` the ``quotes`` (taken together) do not establish, and which
    of the rest only the document ``context`` establishes."""
    claim_tokens = tuple(token for token in literals_of(claim) if counts(claim, token))
    quote_text = " " + " ".join(normalize_name(quote) for quote in quotes) + " "
    read = [claim, *quotes, *([context.title] if context is not None and context.title else [])]
    document = context.text if context is not None and context.text else None
    openers = named_openers(claim, claim_tokens, read, document, settled=quote_text)
    if openers:
        claim_tokens = tuple(sorted((*claim_tokens, *openers), key=lambda token: token.start))
    claim_evidence = {item.token: item for item in evidence_of(claim)}
    evidence = [item for quote in quotes for item in _quote_evidence(quote)]
    missing: list[LiteralToken] = []
    used: list[ContextUse] = []
    voices = _Voices() if context is None else _claim_voices(claim, claim_tokens)
    claim_names = tuple(normalize_name(t.text) for t in claim_tokens if t.kind == "name")
    for token in claim_tokens:
        item = claim_evidence.get(token) or Evidence(token, frozenset())
        phrases = _name_phrases(claim, token)
        if _satisfied(item, evidence, quote_text, derived, phrases):
            continue
        use = None
        if context is not None and not (
            token.kind == "name" and _stands_in_place(claim, token, quotes)
        ):
            use = _from_context(item, evidence, context, phrases, quotes, voices, claim_names)
        if use is not None:
            used.append(use)
        else:
            missing.append(token)
    missing = _regrouped(claim, claim_tokens, missing, claim_evidence, evidence, quote_text)
    return LiteralCheck(claim_literals=claim_tokens, missing=tuple(missing), context=tuple(used))


def _regrouped(
    claim: str,
    tokens: Sequence[LiteralToken],
    missing: list[LiteralToken],
    claim_evidence: dict[LiteralToken, Evidence],
    evidence: Sequence[Evidence],
    quote_text: str,
) -> list[LiteralToken]:
    """A claim's ``12 500`` missing as two figures may be established as the one 12,500."""
    if not missing:
        return missing
    absent = set(missing)
    for first, second in itertools.pairwise(tokens):
        if first not in absent and second not in absent:
            continue
        merged = _merged(claim, first, second)
        if merged is None:
            continue
        around = claim_evidence.get(first, Evidence(first, frozenset())).context
        if _satisfied(Evidence(merged, around), evidence, quote_text, None, ()):
            absent.discard(first)
            absent.discard(second)
    return [token for token in missing if token in absent]
