"""When an ordinal word in a claim is a figure: only where it ranks one of a series.

"The third phase", "its 26th year", "came second", "fifth of the twelve runners" rank something,
and a source giving another rank contradicts them. "First water to the network", "was first
reported", "first aid" rank nothing a reader could count: the word is part of a phrase, and a
source saying "water will reach the network in September" states the same fact without it. So a
claim's ordinal *word* is a literal only after a determiner, a possessive or a number (``the``,
``its``, ``a``, ``this``, ``Norway's``, ``1``), after a verb of ranking (``came``, ``finished``,
``placed``, ``ranked``, ``ended``), or before ``of`` or ``place`` ("third of 12", "second
place"). An ordinal written in digits (``26th``) is always a figure: the writer chose one.

Only a claim's ordinals are read so; a quote keeps every ordinal, since one stated there can
only help establish the claim.
"""

from __future__ import annotations

import re

from deep_research.gates.literals.tokens import LiteralToken

_BEFORE = re.compile(
    r"(?:(?<![\w-])(?:the|its|their|his|her|our|my|your|this|that|these|those|each|every|"
    r"whose|an?|came|come|comes|finished|finishes|placed|places|ranked|ranks|ended|ends)"
    r"|['\u2019]s|\d)\s+(?:[`'\"\u201c\u2018(]+\s*)*\Z",  # an opening quote may intervene
    re.IGNORECASE,
)
_AFTER = re.compile(r"\s+(?:of|out\s+of|place|placed)(?!\w)", re.IGNORECASE)
#: How far before an ordinal its determiner or verb may start.
_REACH = 24


def counts(text: str, token: LiteralToken) -> bool:
    """Whether ``token`` of the claim ``text`` is a figure (module doc)."""
    if token.kind != "ordinal" or not text[token.start : token.end][:1].isalpha():
        return True
    before = text[max(0, token.start - _REACH) : token.start]
    return bool(_BEFORE.search(before) or _AFTER.match(text, token.end))
