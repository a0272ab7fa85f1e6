"""Does a claim's located evidence answer its sub-question? The judges say; code counts.

With a model (the plugin, ``run --reasoner claude``) the judges that already read a claim's
located passage — the skeptics, in both drivers — also vote on whether it answers the claim's
sub-question, which they are shown: ``"answers": "yes" | "partly" | "no"``. Both drivers count
those votes here, once (docs/contracts.md §7.1):

* a vote's ``answers`` is read apart from the rest of it: missing, errored or malformed, it
  abstains — the vote's ``refuted`` still counts — and never raises;
* a claim is **off its question** iff at least ``kill_votes`` (2) counted votes say ``no`` and
  they outnumber the ``yes`` and ``partly`` ones. Triangulate strips it with the tally as its
  reason, so it is in neither the answer, the synthesis nor the sub-questions answered;
* with fewer ``no`` votes, or none counted, the claim stays: abstaining never drops a claim.

In such a run the word-level relevance score (:mod:`deep_research.gates.relevance`) only ranks
the findings claims are built from; it drops none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import product
from typing import get_args

from deep_research.models import Answers, Claim, ClaimsFile
from deep_research.settings import Settings

ANSWERS: tuple[Answers, ...] = get_args(Answers)
#: The field of a vote that carries it.
FIELD = "answers"


def read_answers(raw: object) -> Answers | None:
    """The ``answers`` of one vote as cast (case and spaces aside); None — an abstention — for
    a vote that gives none, errored, or gives anything but ``yes``, ``partly`` or ``no``."""
    if not isinstance(raw, Mapping) or "error" in raw:
        return None
    value = raw.get(FIELD)
    if not isinstance(value, str):
        return None
    said = value.strip().casefold()
    return next((answer for answer in ANSWERS if answer == said), None)


def count(answers: Sequence[Answers | None]) -> dict[Answers, int]:
    """How many counted votes say each answer (abstentions are in none)."""
    return {answer: sum(1 for given in answers if given == answer) for answer in ANSWERS}


def off_question(answers: Sequence[Answers | None], settings: Settings) -> bool:
    """Whether the judges' majority says the evidence does not answer the sub-question."""
    counted = count(answers)
    return counted["no"] >= settings.kill_votes and counted["no"] > (
        counted["yes"] + counted["partly"]
    )


def settled(answers: Sequence[Answers | None], settings: Settings) -> bool:
    """Whether no vote still to come (``panel_size`` in all) can change :func:`off_question`."""
    remaining = max(0, settings.panel_size - len(answers))
    found = {
        off_question([*answers, *rest], settings)
        for rest in product(("yes", "no", None), repeat=remaining)
    }
    return len(found) == 1


def tally(claim: Claim) -> str:
    """``yes 1, partly 0, no 2`` over the votes recorded for ``claim``."""
    records = claim.votes.records if claim.votes is not None else []
    counted = count([record.answers for record in records])
    return ", ".join(f"{answer} {counted[answer]}" for answer in ANSWERS)


def is_off_question(claim: Claim) -> bool:
    return claim.votes is not None and claim.votes.off_question


def strip_reason(claim: Claim) -> str | None:
    """Why ``claim`` leaves the brief for not answering its sub-question, or None."""
    if not is_off_question(claim):
        return None
    return (
        f"does not answer its sub-question {claim.sq or '(none)'}, "
        f"the judges voted ({tally(claim)})"
    )


def sub_question_texts(document: ClaimsFile) -> dict[str, str]:
    """Each sub-question's id and text, as claims.json lists them (``{"id", "question"}``)."""
    found = {}
    for item in document.sub_questions:
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            text = item.get("question")
            found[str(item["id"])] = text if isinstance(text, str) else str(item["id"])
    return found
