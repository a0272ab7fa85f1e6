"""Qualifiers: the comparative that bounds a figure, date or ordinal.

A comparative right before a figure (``more than``, ``over``, ``at least``, ``under``, ``older
than``, ``about``, ``~``, ``nearly``, ``almost``…), or ``or more`` / ``or less`` / ``+`` right
after it; ``eq`` otherwise. A verb that bounds the figure it governs counts in every inflection,
by its stem (``exceed``, ``exceeds``, ``exceeded``, ``exceeding``; likewise ``surpass`` and
``outstrip``). ``over`` right after a verb or noun of spreading or averaging is a preposition
naming what is spread over, not a bound: "scores averaged over 40 reviews" are not more than 40
of anything, and "rainfall spread over 3 days" is three days.

Before dates and ordinals: ``after``/``later than`` (gt), ``before``/``prior to`` (lt), ``no
later than`` (le), ``no earlier than`` (ge), ``around``/``circa`` (approx). ``by``, ``since`` and
``until`` mark an endpoint and are read as ``eq``: "by June 3 the lake had risen 40 cm" is the
rise as of June 3, which a rise as of June 2 does not establish.
"""

from __future__ import annotations

import re
import string

from deep_research.gates.literals.tokens import Qualifier

# Comparative adjectives: "<adjective> than X" bounds X from above or below.
_GREATER = (
    "more", "greater", "higher", "larger", "bigger", "older", "longer", "taller", "heavier",
    "wider", "deeper", "faster", "stronger", "richer",
)  # fmt: skip
_SMALLER = (
    "less", "fewer", "lower", "smaller", "younger", "shorter", "lighter", "narrower",
    "shallower", "slower", "cheaper", "weaker", "poorer",
)  # fmt: skip
# Comparatives immediately before a figure; the longest phrase wins ("no less than" is ge, not lt).
_NUMERIC_QUALIFIERS: tuple[tuple[str, Qualifier], ...] = (
    ("no less than", "ge"), ("not less than", "ge"), ("no fewer than", "ge"),
    ("not fewer than", "ge"), ("at least", "ge"), ("a minimum of", "ge"), ("minimum of", "ge"),
    ("no more than", "le"), ("not more than", "le"), ("at most", "le"), ("up to", "le"),
    ("a maximum of", "le"), ("maximum of", "le"), ("as many as", "le"), ("as much as", "le"),
    *((f"{word} than", "gt") for word in _GREATER),
    ("in excess of", "gt"), ("upwards of", "gt"), ("upward of", "gt"), ("over", "gt"),
    ("above", "gt"), ("north of", "gt"), ("beyond", "gt"),
    *((f"{word} than", "lt") for word in _SMALLER),
    ("under", "lt"), ("below", "lt"), ("shy of", "lt"), ("short of", "lt"),
    ("approximately", "approx"), ("approx.", "approx"), ("approx", "approx"),
    ("about", "approx"), ("around", "approx"), ("roughly", "approx"), ("circa", "approx"),
    ("ca.", "approx"), ("some", "approx"), ("an estimated", "approx"),
    ("estimated", "approx"), ("close to", "approx"), ("~", "approx"), ("≈", "approx"),
    ("nearly", "nearly"), ("almost", "nearly"),
)  # fmt: skip
_DATE_QUALIFIERS: tuple[tuple[str, Qualifier], ...] = (
    ("no later than", "le"), ("not later than", "le"), ("on or before", "le"),
    ("no earlier than", "ge"), ("not earlier than", "ge"), ("on or after", "ge"),
    ("later than", "gt"), ("after", "gt"), ("earlier than", "lt"), ("prior to", "lt"),
    ("before", "lt"),
    ("around", "approx"), ("about", "approx"),
    ("circa", "approx"), ("ca.", "approx"), ("c.", "approx"), ("approximately", "approx"),
    ("roughly", "approx"),
)  # fmt: skip


def inflections(lemma: str) -> frozenset[str]:
    """A word's regular English inflections: the lemma family a rule about the word covers
    (exceed, exceeds, exceeded, exceeding; divide, divides, divided, dividing; span, spanned)."""
    stem = lemma[:-1] if lemma.endswith("e") else lemma
    third = lemma + "es" if lemma.endswith(("s", "sh", "ch", "x", "z")) else lemma + "s"
    forms = {lemma, third, stem + "ed", stem + "ing"}
    if re.search(r"[^aeiou][aeiou][bdgmnprt]$", lemma):  # a final consonant may double: spanned
        forms |= {lemma + lemma[-1] + "ed", lemma + lemma[-1] + "ing"}
    return frozenset(forms)


#: Verbs whose object is bounded by them ("the crowd exceeded 40,000"): every inflection of each,
#: and nothing else, bounds the figure it governs.
_BOUNDING_VERBS: dict[str, Qualifier] = {
    form: "gt" for verb in ("exceed", "surpass", "outstrip") for form in inflections(verb)
}
#: Verbs and nouns of spreading, dividing and averaging: "over" after them names the span or the
#: population (averaged over 40 reviews, spread over 3 days), not a lower bound.
_OVER_AS_PREPOSITION = frozenset(
    form
    for word in (
        "average", "spread", "span", "distribute", "divide", "split", "scatter", "stretch",
        "aggregate", "integrate", "compute", "calculate",
    )
    for form in inflections(word)
)  # fmt: skip

_NUMERIC_QUALIFIER_MAP = dict(_NUMERIC_QUALIFIERS)
_DATE_QUALIFIER_MAP = dict(_DATE_QUALIFIERS)
_LONGEST_QUALIFIER = max(
    len(phrase.split()) for phrase, _ in _NUMERIC_QUALIFIERS + _DATE_QUALIFIERS
)
# Words, a few symbols, and any other single character: punctuation between a comparative and
# the figure breaks the phrase ("more than, 5" is not "more than 5").
_QUALIFIER_TOKEN_RE = re.compile(r"[^\W\d_]+\.?|\S")
_POST_QUALIFIER_RE = re.compile(
    r"\s*(?:(?P<ge>or\s+(?:more|greater|higher|above)|\+|-plus)|(?P<le>or\s+(?:less|fewer|below)))"
    r"(?![\w])",
    re.IGNORECASE,
)
#: The characters those phrases start with, after white space (\s is what lstrip() strips).
_POST_QUALIFIER_FIRST = frozenset("oO+-")
#: Characters before a figure searched for its qualifier: longer than the longest phrase.
_QUALIFIER_WINDOW = 40
# A window can only end a qualifier phrase if it ends with the phrase's last word ("the" may be
# dropped before a dated figure, so it is kept as a possible ending).
_QUALIFIER_ENDINGS = tuple(
    {phrase.split()[-1] for phrase, _ in _NUMERIC_QUALIFIERS + _DATE_QUALIFIERS} | {"the"}
)


_LOWER_ASCII = string.ascii_lowercase


def qualifier_before(text: str, start: int, *, dated: bool) -> Qualifier:
    """The comparative that ends right before ``start``, looked up by its last few words (a
    dictionary probe per figure keeps extraction linear in the number of figures)."""
    window = text[max(0, start - _QUALIFIER_WINDOW) : start].rstrip().lower()
    if not window or not (window[-1].isalpha() or window[-1] in "~≈."):
        return "eq"
    if not dated:
        # The ASCII lower-case letters ending the window (a search for ``[a-z]+$`` would try
        # every position of it).
        verb = _BOUNDING_VERBS.get(window[len(window.rstrip(_LOWER_ASCII)) :])
        if verb is not None:
            return verb
    if not window.endswith(_QUALIFIER_ENDINGS):
        return "eq"  # the last word ends no phrase: skip tokenizing (most figures)
    words = _QUALIFIER_TOKEN_RE.findall(window)[-(_LONGEST_QUALIFIER + 1) :]
    if dated and words and words[-1] == "the":
        words.pop()  # "before the 71st minute": positions read like dates
    mapping = _DATE_QUALIFIER_MAP if dated else _NUMERIC_QUALIFIER_MAP
    for size in range(min(_LONGEST_QUALIFIER, len(words)), 0, -1):
        qualifier = mapping.get(" ".join(words[-size:]))
        if qualifier is None:
            continue
        if words[-size:] == ["over"] and size < len(words) and words[-2] in _OVER_AS_PREPOSITION:
            return "eq"  # averaged over 40 reviews: the population, not a bound
        return qualifier
    return "eq"


def qualifier_after(text: str, end: int) -> Qualifier | None:
    limit = min(len(text), end + 20)
    if text[end:limit].lstrip()[:1] not in _POST_QUALIFIER_FIRST:
        return None  # what follows starts none of the phrases (most figures)
    found = _POST_QUALIFIER_RE.match(text, end, limit)
    if found is None:
        return None
    return "ge" if found.group("ge") else "le"
