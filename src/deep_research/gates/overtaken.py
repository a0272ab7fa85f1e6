"""Dated claims the report's date has overtaken (docs/contracts.md §12).

"The works restart in March 2026", fetched in 2025 and read in December 2026, is a statement
about a future that has since become the past: true as the source stated it, and no longer an
answer to "when will it restart?". A claim is flagged when one of its evidence quotes states, in
the same sentence and before the date, that the date lies ahead (``will``, ``expected``,
``target``, ``scheduled``, ``plans``, …) and every day the claim's date covers lies before the
brief's ``generated`` date. The report's date is that recorded date, never the clock at render
time, so a brief renders the same forever.

A source also states the future in the present tense, as English states a timetable: "the line
returns to service in March 2026", "works resume in May 2026", "the bridge is reopening on
4 March 2026". That reading is admitted in a closed set of shapes only (:func:`_present_future`):
a verb of a scheduled event, in the present or the progressive, with a subject, governing an
"in/on/by/from <date>" phrase that closes its clause — and never for a date the source's own
publication date already passed, for then the present describes ("the series begins in
January 2020"). "The plant closed in March 2026", "figures published in March 2026 show" and
"in March 2026 the ministry said" state the past and are not read as the future.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import date

from deep_research.gates.literals.extraction import literals_of
from deep_research.gates.literals.intervals import date_interval
from deep_research.gates.literals.tokens import LiteralToken
from deep_research.models import Claim

NOTE = "stated as future in the source; that date has passed"

#: Words that put what follows in the future, as a source writes a plan or a forecast.
_FUTURE = re.compile(
    r"(?<![\w-])(?:will|shall|'ll|expected|expects?|scheduled|planned|plans?|targets?|targeted|"
    r"due|aims?|aiming|forecasts?|projected|intends?|set\s+to|on\s+track|anticipated|"
    r"programme|program|timetable|timeline)(?![\w-])",
    re.IGNORECASE,
)
_SENTENCE_START = re.compile(r"[.!?]\s+(?=\S)")
#: How far before a date its future word may stand, in characters.
_REACH = 160

#: Verbs of a scheduled event, base form → (third person singular, progressive). English states a
#: timetable in the present of these ("the bridge reopens on 4 March"); in the present any other
#: verb narrates or describes ("inflation rises in March", "the report states"), so none is here.
#: ``run`` is left out: "the series runs from 2019 to 2024" describes a range, not a plan.
_SCHEDULE: dict[str, tuple[str, str]] = {
    "open": ("opens", "opening"),
    "reopen": ("reopens", "reopening"),
    "close": ("closes", "closing"),
    "start": ("starts", "starting"),
    "restart": ("restarts", "restarting"),
    "begin": ("begins", "beginning"),
    "resume": ("resumes", "resuming"),
    "return": ("returns", "returning"),
    "launch": ("launches", "launching"),
    "relaunch": ("relaunches", "relaunching"),
    "end": ("ends", "ending"),
    "finish": ("finishes", "finishing"),
    "commence": ("commences", "commencing"),
    "expire": ("expires", "expiring"),
    "arrive": ("arrives", "arriving"),
    "take effect": ("takes effect", "taking effect"),
    "take place": ("takes place", "taking place"),
    "come into force": ("comes into force", "coming into force"),
    "go live": ("goes live", "going live"),
    "enter service": ("enters service", "entering service"),
}
#: Third-person forms that are as often plural nouns ("housing starts", "strong returns"): a verb
#: only after a subject that is plainly one — a pronoun, or a noun phrase a determiner opens.
_ALSO_NOUNS = frozenset({"starts", "restarts", "returns", "launches", "relaunches", "ends"})


def _alternation(forms: Iterable[str]) -> str:
    return "|".join(sorted((f.replace(" ", r"\s+") for f in forms), key=len, reverse=True))


_BASE = _alternation(_SCHEDULE)
_THIRD = _alternation(third for third, _ in _SCHEDULE.values())
_PROGRESSIVE = _alternation(ing for _, ing in _SCHEDULE.values())
#: The schedule verb, then at most three words before the preposition ("returns to service in",
#: "resume on the line in") — none a past participle, which would open a clause of its own
#: ("begins with data collected in"), then "in/on/by/from" and the words that may stand between
#: it and a date's literal ("in early May", "by the end of March", "in spring 2026"). Matched
#: against the sentence up to the date, so it ends where the date starts.
_GOVERNS = re.compile(
    rf"(?<![\w'’-])(?:(?P<ing>{_PROGRESSIVE})|(?P<third>{_THIRD})|(?P<base>{_BASE}))"
    r"(?P<between>(?:\s+(?![\w'’-]*ed\b)[\w'’-]+){0,3}?)"
    r"\s+(?:in|on|by|from)\s+"
    r"(?:(?:the|early|mid|late|end|start|beginning|middle|spring|summer|autumn|fall|winter|"
    r"first|second|third|fourth|last|half|quarter|of)[\s-]+){0,5}$",
    re.IGNORECASE,
)
#: Before a progressive: the present of ``be``, whole or contracted after a pronoun ("it's",
#: never "the bridge's reopening", a possessive). "Was reopening" is a past plan, not read.
_BE = frozenset(
    ["is", "are", "am"]
    + [f"{p}{a}s" for p in ("it", "that", "he", "she") for a in "'’"]
    + [f"{p}{a}re" for p in ("they", "we", "you") for a in "'’"]
)
#: Subjects after which the third person is a verb whatever the form: "it starts", "the service
#: that returns" (a relative "that": before a plural noun "that" would be "those").
_PRONOUNS = frozenset({"it", "he", "she", "that", "which", "who"})
_PLURAL_PRONOUNS = frozenset({"they", "we", "you"})
#: Words that open a noun phrase: "the restart", "a strong start", "its return".
_DETERMINERS = frozenset(
    "the a an this that these those its his her their our my your each every no any some".split()
)
#: Words before which a schedule verb's form is no present verb: a determiner makes it a noun
#: ("the launch in"), ``to``/``not`` and the auxiliaries make it an infinitive or a negation
#: ("failed to reopen in", "did not reopen in"), a preposition makes it a noun ("after the",
#: "since return"). Words ending in "s" among them ("its", "was", "has", "this") would
#: otherwise pass for a plural subject.
_NOT_SUBJECTS = _DETERMINERS | frozenset(
    "to not n't never of in on at by for from with after before since until during and or but "
    "as than is are was were be been being has have had do does did can could may might must "
    "should would will shall thus plus".split()
)
#: What may follow the date for it to close the verb's clause: the end of the sentence, a
#: punctuation mark, or a word that opens a new clause or an adjunct. Another word — "housing
#: starts in March 2026 rose" — shows the date was inside a noun phrase, not after its verb.
_CLOSES = re.compile(
    r"\s*(?:$|[.,;:!?)\]—–]|-\s|(?:and|or|but|after|before|once|when|while|following|until|"
    r"pending|subject|as|if|unless|to|for|with|under|amid|despite|because|so|then|according)"
    r"(?![\w'’-]))",
    re.IGNORECASE,
)


def _dates(text: str) -> list[LiteralToken]:
    return [t for t in literals_of(text) if t.kind in ("date", "year") and t.date is not None]


def _last_day(token: LiteralToken) -> date | None:
    interval = date_interval(token, claim=True, yearless=False)
    if interval is None or not interval.high.is_finite():
        return None
    return date.fromordinal(int(interval.high))


def _future_before(text: str, at: int) -> bool:
    """Whether a future word stands before offset ``at`` in the same sentence."""
    window = text[max(0, at - _REACH) : at]
    starts = [m.end() for m in _SENTENCE_START.finditer(window)]
    return bool(_FUTURE.search(window[starts[-1] if starts else 0 :]))


def _words(text: str) -> list[str]:
    """The words of ``text`` after its last punctuation mark, lower-cased."""
    clause = re.split(r"[,;:()\[\]—–\"“”]", text)[-1]
    return re.findall(r"[\w'’-]+", clause.lower())


def _has_subject(before: str, form: str, verb: str) -> bool:
    """Whether the words ``before`` a schedule verb make it a present verb with a subject.

    ``form`` is which form the verb stands in: ``ing``, ``third`` or ``base``.
    """
    words = _words(before)
    if not words:
        return False  # "Returns in March 2026 ...", a headline's "Restart in May": no subject
    last = words[-1]
    if form == "ing":
        return last in _BE  # "is reopening in" — never the gerund of "its reopening in"
    if form == "third" and last in _PRONOUNS:
        return True
    if last in _NOT_SUBJECTS or last.endswith(("'s", "’s", "s'", "s’")):
        return False  # "the launch in", "did not reopen in", "the fund's returns in"
    if form == "base":
        # Plural agreement tells the verb from a noun: "works resume", "services restart",
        # "they return", but "a strong start", "a late return" stand after a singular word.
        plural = last.endswith("s") and not last.endswith(("ss", "us", "is"))
        return last in _PLURAL_PRONOUNS or plural
    if verb.split()[0].lower() in _ALSO_NOUNS:
        # "the line returns", "it starts", but not "housing starts" or "strong returns".
        return any(w in _DETERMINERS for w in words[-4:-1])
    return True  # "the bridge reopens", "Crossrail reopens": no noun has this form


def _present_future(text: str, token: LiteralToken) -> bool:
    """Whether a schedule verb in the present governs ``token``'s date in the same sentence
    (the module's docstring gives the shapes)."""
    window_start = max(0, token.start - _REACH)
    starts = [m.end() for m in _SENTENCE_START.finditer(text[window_start : token.start])]
    before = text[window_start + (starts[-1] if starts else 0) : token.start]
    found = _GOVERNS.search(before)
    if found is None or not _CLOSES.match(text, token.end):
        return False
    form = next(name for name in ("ing", "third", "base") if found.group(name))
    return _has_subject(before[: found.start()], form, found.group(form))


def _stated_as_future(quote: str, passed: date, written: date | None, present: bool) -> bool:
    for token in _dates(quote):
        last = _last_day(token)
        if last is None or last >= passed:
            continue
        if _future_before(quote, token.start):
            return True
        # A date the source's own date had passed is described in the present, not planned.
        if present and (written is None or written < last) and _present_future(quote, token):
            return True
    return False


def overtaken(
    claims: Iterable[Claim], generated: date | None, written: Mapping[str, date] | None = None
) -> dict[str, str]:
    """Claim id → :data:`NOTE` for each claim whose future-tense date ``generated`` has passed.

    ``written``: source id → the date the source states it was published, where known; a
    quote's present tense is read as the future only for a date after it.
    """
    if generated is None:
        return {}
    written = written or {}
    flagged: dict[str, str] = {}
    for claim in claims:
        claimed = [last for t in _dates(claim.claim) if (last := _last_day(t)) is not None]
        if not claimed or max(claimed) >= generated:
            continue
        quoted = [
            (item.quote, written.get(item.source), True) for item in claim.evidence if item.quote
        ]
        # The claim's own words are the researcher's, not the source's: only a future word
        # there says the source stated a plan.
        quoted = quoted or [(claim.claim, None, False)]
        if any(_stated_as_future(text, generated, day, present) for text, day, present in quoted):
            flagged[claim.id] = NOTE
    return flagged
