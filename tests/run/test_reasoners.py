"""The extractive reasoner: verbatim sentences, honest skips, a digest that names itself."""

from __future__ import annotations

import pytest

from deep_research.errors import InputError
from deep_research.gates.vocabulary import Sentence, sentences
from deep_research.models import Claim
from deep_research.run.answering import identifiers
from deep_research.run.interface import CitedClaim, Retained, Skipped, SubQuestionPlan, SurveyDoc
from deep_research.run.reasoners import (
    ExtractiveReasoner,
    Ranked,
    best,
    depends_on_context,
    key_phrases,
    make_reasoner,
    stands_alone,
)

TEXT = (
    'Comparisons\n***********\n\nComparisons can be chained arbitrarily, e.g., "x < y <= z" is\n'
    'equivalent to "x < y and y <= z". Short one. Chained comparisons evaluate each\n'
    "operand at most once in the chain.\n\n   comparison ::= or_expr (comp_operator or_expr)*\n"
    "   chained comparisons chained comparisons chained comparisons everywhere\n"
)


def _doc(text: str = TEXT) -> Retained:
    return Retained("file://t/doc", "Doc", text, "sha256:" + "0" * 64, "t")


def test_sentences_keep_exact_offsets() -> None:
    for sentence in sentences(TEXT):
        assert TEXT[sentence.start : sentence.end] == sentence.text
    assert all("::=" not in s.text for s in sentences(TEXT))  # grammar is not prose


def test_findings_are_verbatim_long_enough_and_relevant() -> None:
    sq = SubQuestionPlan("sq1", "How are chained comparisons evaluated?", ("chained",), 2)
    findings = ExtractiveReasoner().extract(sq, _doc())
    assert findings
    for finding in findings:
        assert finding.quote in TEXT and len(finding.claim) >= 40
        assert "\n" not in finding.claim
    off_topic = SubQuestionPlan("sq2", "What do tomatoes need?", ("tomatoes",), 2)
    assert ExtractiveReasoner().extract(off_topic, _doc()) == []


CHAINED = "How does Python evaluate chained comparisons?"
PRECEDENCE_DOC = (
    "Operator precedence\n*******************\n\n"
    "The following table summarizes the operator precedence in Python, from highest\n"
    "precedence (most binding) to lowest precedence (least binding).\n\n"
    "Where this occurs in the precedence chain depends on which descriptor methods were\n"
    "defined and how they were called.\n\n"
    "Note that comparisons, membership tests, and identity tests, all have the same precedence\n"
    "and have a left-to-right chaining feature as described in the Comparisons section.\n"
)
VALUE_DOC = (
    "Value comparisons\n=================\n\n"
    "Custom rich comparison methods may return non-boolean values. In this case Python will\n"
    "call bool() on such value in boolean contexts.\n\n"
    "Comparisons can be chained arbitrarily, e.g., x < y <= z is equivalent to x < y and\n"
    "y <= z, except that y is evaluated only once.\n"
)
ANAPHORA_DOC = (
    "This means that chained comparisons are evaluated from left to right, pairwise.\n\n"
    "Chained comparisons are evaluated pairwise, and each operand is evaluated at most once.\n"
)
RARE_TERM_DOC = (
    "Python evaluates comparisons of numbers exactly, without any loss of precision.\n\n"
    "Python is a programming language; Python programs are run by the Python interpreter.\n"
    "Python objects have an identity, a type and a value in every Python program.\n"
    "Python code is read from top to bottom by the parser, one line at a time.\n\n"
    "Comparisons can be chained, and each operand is evaluated at most once in the chain.\n"
)
HEADING_DOC = (
    "Evaluation of chained comparisons in Python\n"
    "===========================================\n\n"
    "   x < y <= z\n\n"
    'is evaluated as a chain: "x < y and y <= z" with "y" evaluated only once.\n\n'
    'In Python, chained comparisons are evaluated as if joined by "and", left to right.\n'
)
GENERIC_DOC = (
    "Python will evaluate expressions from left to right in every Python program.\n\n"
    "Python will evaluate the right-hand side of an assignment before the left-hand side.\n"
    "Python will evaluate default argument values once, when the function is defined.\n\n"
    "Comparisons can be chained, and each operand is evaluated at most once.\n"
)
ASSERT_DOC = (
    "The import statement is one of the simple statements that bind names in a module.\n"
    "Assert statements are a convenient way to insert debugging assertions into a program.\n"
)
LAMBDA_DOC = (
    "A function definition binds the function name in the current local namespace.\n"
    "Lambda expressions (sometimes called lambda forms) are used to create anonymous functions.\n"
)


def _plan_for(question: str, heading: str | None) -> SubQuestionPlan:
    """The sub-question decompose() makes for ``heading`` (the question's own when None)."""
    if heading is None:
        return ExtractiveReasoner().decompose(question, []).sub_questions[0]
    # A heading's sub-question as the floors' top-up writes one: its scope the question.
    topic = f"What does the corpus say about {heading}?"
    return SubQuestionPlan("sq2", topic, (heading, f"{heading} {question}"), 2, question)


@pytest.mark.parametrize(
    ("question", "heading", "text", "first", "never"),
    [
        pytest.param(
            CHAINED,
            "Operator precedence",
            PRECEDENCE_DOC,
            "left-to-right chaining feature",
            ["The following table", "Where this occurs"],
            id="heading-sub-question-still-answers-the-question",
        ),
        pytest.param(
            CHAINED,
            "Value comparisons",
            VALUE_DOC,
            "Comparisons can be chained",
            ["In this case Python"],
            id="generic-words-and-a-heading-word-are-not-enough",
        ),
        pytest.param(
            "How are chained comparisons evaluated?",
            None,
            ANAPHORA_DOC,
            "Chained comparisons are evaluated pairwise",
            [],
            id="a-sentence-that-stands-alone-ranks-above-one-that-points-back",
        ),
        pytest.param(
            CHAINED,
            None,
            RARE_TERM_DOC,
            "Comparisons can be chained",
            ["programming language"],
            id="a-term-rare-in-the-document-outweighs-one-every-sentence-repeats",
        ),
        pytest.param(
            CHAINED,
            None,
            HEADING_DOC,
            "In Python, chained comparisons",
            ["=====", "is evaluated as a chain"],
            id="headings-and-fragments-are-never-claims",
        ),
        pytest.param(
            CHAINED,
            None,
            GENERIC_DOC,
            "Comparisons can be chained",
            ["Python will evaluate"],
            id="the-question-s-common-words-alone-are-not-enough",
        ),
        pytest.param(
            "What does the assert statement do?",
            "Simple statements",
            ASSERT_DOC,
            "Assert statements are",
            ["import statement"],
            id="a-generic-word-shared-with-the-question-and-the-heading-is-not-the-topic",
        ),
        pytest.param(
            "What is a lambda?",
            None,
            LAMBDA_DOC,
            "Lambda expressions",
            ["function definition"],
            id="a-one-word-question-needs-its-one-word",
        ),
    ],
)
def test_extract_picks_the_sentence_that_answers_the_question(
    question: str, heading: str | None, text: str, first: str, never: list[str]
) -> None:
    findings = ExtractiveReasoner().extract(_plan_for(question, heading), _doc(text))
    assert findings and first in findings[0].claim, [f.claim for f in findings]
    for finding in findings:
        assert not any(bad in finding.claim for bad in never), finding.claim
        # Verbatim: the quote is the document's text; the claim is it with spaces collapsed.
        assert finding.quote in text and finding.claim == " ".join(finding.quote.split())
        assert len(finding.claim) >= 40


@pytest.mark.parametrize(
    ("text", "dependent"),
    [
        ("This is Python's approach to operator overloading.", True),
        ("However, if the looked-up value is an object defining a descriptor method.", True),
        ("In this case Python will call bool() on such value.", True),
        ("Where this occurs in the precedence chain depends on the methods.", True),
        ("It terminates the nearest enclosing loop.", True),
        ("It is a SyntaxError to use an async for statement outside a coroutine.", False),
        ('"finally" clauses always run, even when the suite raises.', False),
        ("Comparisons can be chained arbitrarily.", False),
        ("Thereafter the suite is executed.", False),
    ],
)
def test_openings_that_point_back(text: str, dependent: bool) -> None:
    assert depends_on_context(Sentence(0, len(text), text)) is dependent


@pytest.mark.parametrize(
    ("text", "alone"),
    [
        ("Strings compare by the code points of their characters. [3]", True),
        # A colon points at what follows (a code block, a list), which the claim lacks.
        ("A context manager defines the runtime context of a block:", False),
        ("The execution proceeds as follows:", False),
        ('It is quoted as "on the way out."', True),
        ("With Statement Context Managers\n*******************************", False),
        ("## Chained comparisons in Python evaluate once", False),
        ("at the location you want to break into the debugger, and then run it.", False),
        ("pdb.run(statement, globals=None, locals=None)", False),
    ],
)
def test_only_sentences_that_stand_alone_are_claims(text: str, alone: bool) -> None:
    assert stands_alone(Sentence(0, len(text), text)) is alone


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("How does Python evaluate chained comparisons?", 1),
        ("What is the default maxsize of functools.lru_cache?", 1),
        ("When did the bridge open, how long is it and who designed it?", 3),
        ("What is the GIL, and how does it affect threads?", 2),
    ],
)
def test_decompose_plans_the_question_parts_never_titles(question: str, parts: int) -> None:
    survey = [SurveyDoc("file://t/d", "Comparisons", ("Comparisons", "Value comparisons"))]
    plan = ExtractiveReasoner().decompose(question, survey)
    questions = [sq.question for sq in plan.sub_questions]
    assert len(questions) == parts
    assert not any("Comparisons" in q for q in questions[1:])
    assert all(sq.queries and sq.scope == question for sq in plan.sub_questions)
    assert key_phrases("How does it work?") == ["work"]
    with pytest.raises(InputError, match="no content words"):
        ExtractiveReasoner().decompose("How is it?", [])


def test_identifiers_lead_the_queries_and_a_part_pointing_back_names_the_subject() -> None:
    plan = ExtractiveReasoner().decompose("What does os.path.join do with an absolute path?", [])
    assert plan.sub_questions[0].queries[0] == "os.path.join"
    parts = ExtractiveReasoner().decompose("When did the bridge open, how long is it?", [])
    assert parts.sub_questions[1].question == "How long is it (bridge open)?"


def test_panel_and_ciber_are_skipped_never_passed() -> None:
    reasoner = ExtractiveReasoner()
    claim = Claim(id="C1", claim="x")
    assert isinstance(reasoner.judge(claim, []), Skipped)
    assert isinstance(reasoner.reframe([claim]), Skipped)
    digest = reasoner.synthesize("q", [CitedClaim("C1", "A claim.", "sq1", ("S1", "S2"))])
    assert digest == "- A claim. [S1][S2]"  # every line cites: nothing uncited to strip
    assert reasoner.synthesize("q?", []) == ""  # no claim: no answer (the report says why)


def test_reasoner_choice() -> None:
    assert make_reasoner("auto").name == "extractive"
    with pytest.raises(InputError, match="not available yet"):
        make_reasoner("claude")
    with pytest.raises(InputError, match="unknown reasoner"):
        make_reasoner("gpt")


LIBRARY_DOC = (
    "module functools\n\nFUNCTIONS\n\n"
    "lru_cache(maxsize=128, typed=False)\n\nLeast-recently-used cache decorator.\n\n"
    "If *maxsize* is set to None, the LRU features are disabled and the cache can grow.\n\n"
    "singledispatch(func)\n\nSingle-dispatch generic function decorator.\n\n"
    "The decorated function acts as the default implementation of the generic function.\n\n"
    "loads(s)\n\nDeserialize a JSON document held in a string to a Python object.\n"
)


def _library(question: str, url: str = "file://python-docs/library/functools") -> list[str]:
    sq = SubQuestionPlan("sq1", question, (question,), 2, question)
    document = Retained(url, "functools — Tools.", LIBRARY_DOC, "sha256:" + "0" * 64, "o")
    return [f.claim for f in ExtractiveReasoner().extract(sq, document)]


def test_an_entry_s_first_sentence_comes_with_its_declaration() -> None:
    claims = _library("What does the lru_cache decorator do?")
    assert claims[0] == "lru_cache(maxsize=128, typed=False) Least-recently-used cache decorator."
    assert LIBRARY_DOC.find("lru_cache(maxsize") < LIBRARY_DOC.find("Least-recently")


def test_an_entry_about_another_name_does_not_answer_what_something_is() -> None:
    # "What is a decorator?" is not answered by what singledispatch is...
    assert _library("What is a decorator?") == []
    # ... but "How do I …" is answered by an entry's summary in a module about the question.
    json = "file://python-docs/library/json"
    assert _library("How do I deserialize a JSON document?", json) == [
        "loads(s) Deserialize a JSON document held in a string to a Python object."
    ]
    # Adversarial: not by a sentence deeper in an entry the question does not name.
    assert not any(
        "default implementation" in c
        for c in _library("How do I use a generic function decorator?")
    )


def test_a_sentence_that_points_back_is_never_a_finding() -> None:
    text = (
        "This repeatedly tests the expression and runs the else clause of the loop.\n\n"
        "The else clause of a loop runs when the loop ends without a break statement.\n"
    )
    sq = SubQuestionPlan("sq1", "When does the else clause of a loop run?", ("else",), 2)
    claims = [f.claim for f in ExtractiveReasoner().extract(sq, _doc(text))]
    assert claims == [
        "The else clause of a loop runs when the loop ends without a break statement."
    ]


def test_an_entry_is_entitled_only_by_its_whole_name() -> None:
    text = (
        "dataclass_transform(*, eq_default=True)\n\nDecorator that gives a class the dataclass "
        "behaviour of another decorator.\n"
    )
    sq = SubQuestionPlan("sq1", "What does the dataclass decorator do?", ("dataclass",), 2)
    doc = Retained("file://python-docs/library/typing", "typing", text, "sha256:" + "0" * 64, "o")
    assert ExtractiveReasoner().extract(sq, doc) == []


def test_a_sentence_quoted_with_its_neighbour_replaces_the_one_it_holds() -> None:
    # Ranked first, the first sentence alone; ranked after it and scoring as well, the two
    # together: the fuller one is the finding, not the first sentence alone.
    text = "First sentence here, long enough to stand alone. It says what matters."
    alone = Sentence(0, 49, text[:49])
    both = Sentence(0, len(text), text)
    other = Sentence(200, 260, "x" * 60)
    ranked = [Ranked(0.9, 1.0, alone), Ranked(0.9, 1.0, both), Ranked(0.8, 1.0, other)]
    assert [r.sentence for r in best(ranked, 2)] == [both, other]
    # A fuller one that answers worse does not replace it.
    assert [r.sentence for r in best([Ranked(0.9, 1.0, alone), Ranked(0.7, 1.0, both)], 2)] == [
        alone
    ]


@pytest.mark.parametrize(
    ("question", "keys"),
    [
        ("What does getattr return when the attribute does not exist?", ("getattr",)),
        ("What is the default start value of enumerate?", ("enumerate",)),
        ("Is isinstance() slower than type()?", ("isinstance", "type")),
        # Everyday words are code only when written as code.
        ("How do I sort a list and round the result?", ()),
        ("What does list() return with no argument?", ("list",)),
    ],
)
def test_a_built_in_written_bare_is_an_identifier(question: str, keys: tuple[str, ...]) -> None:
    assert identifiers(question) == keys


_FERRY_PAGE = (
    "# Quenby Ferry\n\n"
    "The Quenby Ferry carries cars and foot passengers across the estuary.\n\n"
    "The ferry is run by the harbour board and crosses every twenty minutes in summer.\n\n"
)


@pytest.mark.parametrize(
    ("question", "extra", "answer"),
    [
        pytest.param(
            "When did the Quenby Ferry start running?",
            "The Quenby Ferry started running in 1962, when the old chain ferry was retired.\n\n",
            "started running in 1962",
            id="a-date-answers-when",
        ),
        pytest.param(
            "When did the Quenby Ferry start running?",
            "The Quenby Ferry started running with a single boat and a slipway on each bank.\n\n",
            None,
            id="a-page-about-the-ferry-with-no-date-is-not-found",
        ),
        pytest.param(
            "Who runs the Quenby Ferry?",
            "The Quenby Ferry is run for the harbour board by Marle Shipping Limited.\n\n",
            "Marle Shipping",
            id="a-name-answers-who",
        ),
        pytest.param(
            "Why did the Quenby Ferry stop running at night?",
            "The Quenby Ferry stopped running at night in 1990 and in winter in 1995.\n\n",
            None,
            id="that-it-stopped-is-not-why",
        ),
    ],
)
def test_a_sentence_on_the_subject_answers_only_what_the_question_asks_for(
    question: str, extra: str, answer: str | None
) -> None:
    page = _FERRY_PAGE + extra
    document = Retained("file://t/Quenby Ferry.md", "Quenby Ferry", page, "sha256:" + "0" * 64, "t")
    findings = ExtractiveReasoner().extract(_plan_for(question, None), document)
    claims = [f.claim for f in findings]
    if answer is None:
        assert claims == []
    else:
        assert claims and answer in claims[0], claims
        # On the subject, but no date, no name: never chosen for "when" or "who".
        assert all("foot passengers" not in claim for claim in claims), claims
