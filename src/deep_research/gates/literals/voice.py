"""Whose words a passage is: a quotation's speaker, the one it was told to, a first-person voice.

A quotation in a report speaks for the person it is attributed to, not for the publisher that
reports it: ``"We are targeting 2027," said Jane Roe, chief executive of Acme`` makes Acme's
chief executive the "we", never the newspaper. An attribution is read from the sentence around
the quotation — after it when the quotation ends without a full stop (``"…," said X`` / ``"…,"
X told Y``), else before it when that part ends in a colon or a comma (``X told Y: "…"``) — by
its first speech verb: the speaker is the phrase before the verb, or after it when nothing
comes before (``said X``, ``according to X``); after a verb of telling, the phrase after the
verb is the addressee (``told the Daily Courier``).

A claim is read the same way: "Jane Roe said Acme is targeting 2027" names Jane Roe as the
speaker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Speech verbs as they appear inside a sentence (lower-case: "States" or "Notes" in a name is
#: no verb), and the attribution that names its speaker after it.
_SPEECH_RE = re.compile(
    r"(?<![\w'’-])(?:said|says|told|tells|added|adds|stated|explained|explains|announced"
    r"|wrote|noted|confirmed|commented|insisted|argued|recalled|asked|(?i:according to))"
    r"(?![\w'’-])"
)
#: Verbs whose object is the one spoken to, not what was said.
_TELLING = frozenset({"told", "tells", "asked"})
_QUOTE_MARKS = '"“”'
_SENTENCE_END_RE = re.compile(r"[.!?](?=\s|$)|\n")
#: The first person: the words by which a text speaks for its writer.
_FIRST_PERSON_RE = re.compile(r"(?<![\w'’-])(?:[Ww]e|[Oo]urs?|us|I|[Mm]y|me)(?![\w'’-])")
#: How far around a quotation its attribution is looked for.
_ATTRIBUTION_CHARS = 240


@dataclass(frozen=True)
class Attribution:
    """Who spoke (``speaker``) and to whom (``addressee``), as offsets into the text read."""

    speaker: tuple[int, int]
    addressee: tuple[int, int] | None


def _trimmed(text: str, start: int, end: int) -> tuple[int, int] | None:
    """``start:end`` without the spaces and punctuation around it; None when no letter is left."""
    while start < end and not text[start].isalnum():
        start += 1
    while end > start and not text[end - 1].isalnum():
        end -= 1
    return (start, end) if start < end else None


def attribution(text: str, start: int = 0, end: int | None = None) -> Attribution | None:
    """The speaker (and addressee) a speech verb in ``text[start:end]`` names, if one does."""
    end = len(text) if end is None else end
    verb = _SPEECH_RE.search(text, start, end)
    if verb is None:
        return None
    before = _trimmed(text, start, verb.start())
    after = _trimmed(text, verb.end(), end)
    if verb.group(0).lower() == "according to" or before is None:
        return Attribution(after, None) if after is not None else None
    return Attribution(before, after if verb.group(0) in _TELLING else None)


def first_person(text: str) -> bool:
    return _FIRST_PERSON_RE.search(text) is not None


def _quotations(block: str) -> list[tuple[int, int]]:
    """The quotations of one paragraph, mark to mark (straight marks alternate)."""
    found: list[tuple[int, int]] = []
    opened: int | None = None
    for index, char in enumerate(block):
        if char not in _QUOTE_MARKS:
            continue
        if opened is None and char != "”":
            opened = index
        elif opened is not None and char != "“":
            found.append((opened, index + 1))
            opened = None
    return found


def quoted_speaker(block: str, position: int) -> Attribution | None:
    """The attribution of the quotation of ``block`` that holds ``position`` (or opens right
    after it), offsets into ``block``; None when ``position`` is in no attributed quotation."""
    for opened, closed in _quotations(block):
        if not opened - 1 <= position < closed:
            continue
        if block[closed - 2] != ".":  # "…," said X: the sentence goes on after the quotation
            stop = _SENTENCE_END_RE.search(block, closed, closed + _ATTRIBUTION_CHARS)
            after = attribution(block, closed, stop.start() if stop else closed)
            if after is not None:
                return after
        lead_in = block[max(0, opened - _ATTRIBUTION_CHARS) : opened].rstrip()
        if lead_in.endswith((":", ",")):  # X told Y: "…"
            start = max(0, opened - _ATTRIBUTION_CHARS)
            ends = list(_SENTENCE_END_RE.finditer(block, start, opened))
            return attribution(block, ends[-1].end() if ends else start, opened)
        return None
    return None
