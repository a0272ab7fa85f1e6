"""The offline relevance decision on answers in other words, beside near misses.

A true answer may use the corpus's own forms of the question's words ("stabilized" for
"stable"), a name the document gives the thing ("called floats"), its document for subject
("This proposal", "We") and a release number for "when"; a sentence about another entity, of
another kind than asked, or leaving out what the question weighs most stays rejected. The
document is written for this test (no evaluation set uses it).
"""

from __future__ import annotations

import pytest

from deep_research.gates.relevance import Question, _related, aliases, topic_stems
from deep_research.run.answering import Asked
from deep_research.run.reasoners import MIN_SCORE, rank

TITLE = "Quill 2 notes"
SOURCE = "file://notes/quill-2.md"
DOCUMENT = f"""# {TITLE}

Quill is a typesetting engine for scientific papers, written by the Marl Press.

The strict-margins option was stabilized in Quill as part of the 2.14.0 release, after two \
years behind a flag.

Margins of a page are measured from the edge of the paper in millimetres.

This proposal adds a second column mode to the page layout of every template.

Floating figures are often called floats, and each float waits for the next free page.

A float is placed at the top of the next page when it does not fit on the current one.

We are targeting the autumn of 2027 for the first release with the column mode.

Quill renders equations with its own font, which ships in the default install.
"""
STABILIZED = "The strict-margins option was stabilized"
PROPOSAL = "This proposal adds a second column mode"
FLOAT = "A float is placed at the top of the next page"
TARGETING = "We are targeting the autumn of 2027"


def answer(question: str) -> str | None:
    """The opening of the sentence the extractive ranking answers with, or None."""
    ranked = rank(
        DOCUMENT, Question(question), topic_stems(question), TITLE, SOURCE, Asked(question)
    )
    found = [item for item in ranked if item.score >= MIN_SCORE]
    return found[0].sentence.claim if found else None


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # Other forms of the question's words, and no "available" anywhere.
        ("When did strict margins become available in stable Quill?", STABILIZED),
        ("Which version of Quill made strict margins stable?", STABILIZED),
        # The document is the subject of "This proposal" and of "We".
        ("What does this proposal add to the page layout?", PROPOSAL),
        ("When will Quill release the column mode?", TARGETING),
        # The document's own other name for the thing asked about.
        ("What happens to a floating figure that does not fit on the page?", FLOAT),
        # Near misses: another entity, another kind than asked, a word the page never uses.
        ("What does the Heddle proposal add to the page layout?", None),
        ("What happens to a floating figure in Heddle that does not fit on the page?", None),
        ("Who designed the strict-margins option?", None),
        ("When were margins measured in inches?", None),
        ("Which version of Quill made equations stable?", None),
        ("What colour are the margins of Quill?", None),
    ],
)  # fmt: skip
def test_an_answer_in_other_words_beside_near_misses(question: str, expected: str | None) -> None:
    found = answer(question)
    if expected is None:
        assert found is None, found
    else:
        assert found is not None and found.startswith(expected), found


@pytest.mark.parametrize(
    ("a", "b", "related"),
    [
        ("stabl", "stabiliz", True),
        ("stabl", "stability", True),
        ("availabl", "availability", True),
        ("elect", "election", True),
        ("nation", "national", True),
        # A root of fewer than five letters is never reached by stripping.
        ("form", "formal", False),
        ("import", "important", False),
        ("stabl", "stab", False),
    ],
)
def test_a_word_meets_its_derived_forms(a: str, b: str, related: bool) -> None:
    assert _related(a, b) is related


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Glacier caves are often called ice caves.", [({"glacier"}, {"ice"})]),
        ("Floating figures are often called floats.", [({"figur"}, {"float"})]),
        # Saying a thing is called by its own name again gives no other name.
        ("The float is called a float.", []),
        ("A float waits for the next free page.", []),
    ],
)
def test_a_document_gives_other_names(text: str, expected: list[tuple[set[str], set[str]]]) -> None:
    assert [(set(a), set(b)) for a, b in aliases(text)] == expected


@pytest.mark.parametrize(
    ("named", "context", "answers"),
    [
        ({"strict", "margin", "stabl", "quill"}, set(), True),
        # The heaviest concept left out: more than a third of the question's weight.
        ({"strict", "margin", "quill"}, set(), False),
        # Named by its context only, a concept counts half.
        ({"strict", "margin", "stabl"}, {"quill"}, True),
        ({"stabl"}, {"quill", "margin"}, False),
        # The name the question capitalises is never left out.
        ({"strict", "margin", "stabl"}, set(), False),
    ],
)
def test_the_unnamed_share_decides(named: set[str], context: set[str], answers: bool) -> None:
    asked = Question("Are strict margins stable in Quill?")
    weights = {"strict": 2.0, "margin": 2.0, "stabl": 3.0, "quill": 0.5}
    assert asked.decide(named, weights, context).answers is answers


@pytest.mark.parametrize(
    ("sentence", "states"),
    [
        ("The engine was written by Ada Marl in her spare time.", 1.0),
        # A people's or a language's name says no one's name.
        ("The engine was written by an English printer.", 0.0),
    ],
)
def test_who_asks_for_a_name_not_a_people(sentence: str, states: float) -> None:
    assert Asked("Who wrote the engine?").states_kind(sentence) == states
