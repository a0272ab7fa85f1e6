"""Which entity of a title or lead the located text's "we", "it" or "the plant" stands for.

A title or lead naming two entities ("Brightwater Energy sets restart date for Kestrel Bay
plant") does not let either stand in for what the located text refers to. The located text's
own referring words pick one:

- a description, ``the plant`` or ``the station``: the entity the title or lead writes with
  that noun (``Kestrel Bay plant``, ``Kestrel Bay Generating Station``);
- the first person, ``we`` or ``our``: the voice — the publisher outside a quotation (the page's
  subject when no publisher is known), the speaker inside one (and the publisher of a page about
  itself, whose officer speaks for it);
- a pronoun, ``it``, ``its``, ``they``: the passage's subject, its first name (a pronoun's
  preferred antecedent is the subject before it).

Another entity of such a passage is not established by it — unless the claim also names one
that stands (it then relates the two as the passage does). When the located text has none of
these words, or the passage names one entity, any name of the passage may stand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from deep_research.gates.literals.extraction import literals_of
from deep_research.gates.literals.names import normalize_name
from deep_research.gates.literals.openers import named_openers
from deep_research.gates.literals.voice import first_person

_DESCRIPTION_RE = re.compile(r"(?<![\w'’-])[Tt]he ([a-z][a-z-]+)(?![\w'’-])")
_PRONOUN_RE = re.compile(r"(?<![\w'’-])(?:[Ii]ts?|[Tt]hey|[Tt]heir|[Tt]hem)(?![\w'’-])")
_NEXT_WORD_RE = re.compile(r"\s+([A-Za-z][\w-]*)")
_SITE_SEPARATOR = " | "


@dataclass(frozen=True)
class Entity:
    """A name of a passage, normalized, with the nouns it is written with."""

    name: str
    nouns: frozenset[str]


def entities(passage: str, document: str) -> tuple[Entity, ...]:
    """The names of a title or lead, in order (a title's site after `` | `` left out)."""
    text = passage.split(_SITE_SEPARATOR)[0]
    tokens = [token for token in literals_of(text) if token.kind == "name"]
    tokens += named_openers(text, literals_of(text), [text], document)
    found: dict[str, Entity] = {}
    for token in sorted(tokens, key=lambda token: token.start):
        name = normalize_name(token.text)
        after = _NEXT_WORD_RE.match(text, token.end)
        nouns = {name.rsplit(" ", 1)[-1], *([after.group(1).lower()] if after else [])}
        if name and name not in found:
            found[name] = Entity(name, frozenset(nouns))
    return tuple(found.values())


@dataclass(frozen=True)
class Reference:
    """How the located text refers to what it speaks of."""

    nouns: frozenset[str]  # its descriptions' nouns ("the plant")
    voices: tuple[str, ...] | None  # the first person's names, normalized; None: no "we"
    pronoun: bool  # "it", "its", "they"


def reference(located: Sequence[str], voices: Sequence[str]) -> Reference:
    text = " ".join(located)
    nouns = frozenset(found.group(1) for found in _DESCRIPTION_RE.finditer(text))
    spoken = tuple(voices) if first_person(text) else None
    return Reference(nouns, spoken, _PRONOUN_RE.search(text) is not None)


def _same(a: str, b: str) -> bool:
    return f" {a} " in f" {b} " or f" {b} " in f" {a} "


def standing(found: Sequence[Entity], refers: Reference, every_noun: frozenset[str]) -> set[str]:
    """The entities of one passage the located text may refer to; all of them when it names
    fewer than two or the located text has no referring word. ``every_noun``: the nouns any
    title or lead writes a name with (a description no name carries refers to none)."""
    everyone = {entity.name for entity in found}
    if len(found) < 2:
        return everyone
    stands: set[str] = set()
    described = refers.nouns & every_noun
    referring = bool(described)
    stands |= {entity.name for entity in found if entity.nouns & described}
    if refers.voices is not None:
        referring = True
        voiced = {e.name for e in found for voice in refers.voices if _same(voice, e.name)}
        stands |= voiced if refers.voices else {found[0].name}
    if refers.pronoun:
        referring = True
        stands.add(found[0].name)
    return stands if referring else everyone


def established(
    name: str, found: Sequence[Entity], stands: set[str], claim_names: Sequence[str]
) -> bool:
    """Whether ``name`` may be taken from a passage with ``found`` entities of which ``stands``
    stand for the located text: it is none of its entities, one that stands, or the claim also
    names one that stands."""
    if not any(_same(name, entity.name) for entity in found):
        return True
    if any(_same(name, subject) for subject in stands):
        return True
    return any(_same(other, subject) for other in claim_names for subject in stands)
