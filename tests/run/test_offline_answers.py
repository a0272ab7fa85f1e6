"""The offline default over a folder of two publishers: the question's parts planned, the
agreed fact one claim of both, and each disagreement found however it is worded."""

from __future__ import annotations

from pathlib import Path

import pytest

from briefs import assert_verified
from deep_research.brief.layout import Brief
from deep_research.gates.trace import emitted_claims
from deep_research.run.answering import Asked
from deep_research.run.driver import RunRequest, start
from deep_research.run.governor import default_limits
from deep_research.run.interface import CitedClaim, Retained, SubQuestionPlan
from deep_research.run.localcorpus import open_corpus
from deep_research.run.progress import Progress
from deep_research.run.reasoners import ExtractiveReasoner
from deep_research.settings import load_settings

LIGHTHOUSE = Path(__file__).parents[1] / "fixtures" / "lighthouse"
QUESTION = (
    "When was the Carrick Point lighthouse completed, how tall is its tower and when was its "
    "lamp first lit?"
)


def test_two_publishers_one_agreed_fact_and_both_disagreements(tmp_path: Path) -> None:
    state = tmp_path / "state"
    result = start(
        RunRequest(QUESTION, state, depth="full"),
        open_corpus(str(LIGHTHOUSE), state),
        ExtractiveReasoner(),
        load_settings(environ={}),
        default_limits("full"),
        Progress(quiet=True),
    )
    document = Brief(result.brief).load_claims()
    parts = [sq["question"] for sq in document.sub_questions if isinstance(sq, dict)][:3]
    assert parts == [
        "When was the Carrick Point lighthouse completed?",
        "How tall is its tower (carrick point lighthouse)?",
        "When was its lamp first lit (carrick point lighthouse)?",
    ]
    claims = emitted_claims(document)
    # "forty metres" (harbour-trust) and "40 m" (county-archive): one claim, two voices.
    height = [c for c in claims if "forty metres" in c.claim]
    assert len(height) == 1 and height[0].independent_count == 2
    assert not any("40 m" in c.claim for c in claims)
    topics = sorted(c.topic for c in document.unresolved_contradictions)
    assert len(topics) == 2 and any("completed" in t for t in topics)
    assert any("lamp" in t for t in topics)
    assert result.verdict == "PARTIAL"
    assert_verified(result.brief)


def test_a_short_sentence_is_quoted_with_the_one_naming_its_subject() -> None:
    text = (
        "# Carrick Point Lighthouse\n\n"
        "The Carrick Point lighthouse stands on the northern headland. Its tower is 40 m tall.\n"
    )
    sq = SubQuestionPlan("sq1", "How tall is the Carrick Point lighthouse tower?", ("tower",), 2)
    doc = Retained(
        "file://c/trust/a.md", "Carrick Point Lighthouse", text, "sha256:" + "0" * 64, "t"
    )
    claims = [f.claim for f in ExtractiveReasoner().extract(sq, doc)]
    assert claims == [
        "The Carrick Point lighthouse stands on the northern headland. Its tower is 40 m tall."
    ]


def test_the_answer_leads_with_the_best_scoring_claim() -> None:
    question = "What is the default maxsize of functools.lru_cache?"
    reasoner = ExtractiveReasoner()
    cited = [
        CitedClaim("C1", "Arguments to the cached function must be hashable.", "sq1", ("S1",)),
        CitedClaim(
            "C2", "lru_cache(maxsize=128, typed=False) Least-recently-used cache.", "sq1", ("S1",)
        ),
    ]
    assert reasoner.synthesize(question, cited).splitlines()[0].startswith("- lru_cache(")


def _quick(tmp_path: Path, question: str, docs: dict[str, str]) -> Path:
    folder = tmp_path / "docs"
    for name, text in docs.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    state = tmp_path / "state"
    result = start(
        RunRequest(question, state),
        open_corpus(str(folder), state),
        ExtractiveReasoner(),
        load_settings(environ={}),
        default_limits("quick"),
        Progress(quiet=True),
    )
    return result.brief


def test_a_url_inside_the_answering_sentence_is_quoted_text(tmp_path: Path) -> None:
    brief = _quick(
        tmp_path,
        "Where is the Carrick Point lighthouse timetable published?",
        {
            "trust/a.md": "# Timetable\n\nThe Carrick Point lighthouse timetable is published "
            "at https://carrick.example/timetable every spring.\n"
        },
    )
    claims = emitted_claims(Brief(brief).load_claims())
    assert ["https://carrick.example/timetable" in c.claim for c in claims] == [True]
    assert_verified(brief)


def test_a_question_in_any_script_is_asked_and_not_found_shows_no_freshness(
    tmp_path: Path,
) -> None:
    # Content words in any script: the question is asked, never refused as wordless.
    ExtractiveReasoner().decompose("Когда был построен маяк?", [])
    brief = _quick(
        tmp_path,
        "What colour is the Carrick Point lighthouse?",
        {"trust/a.md": "# Keepers\n\nThree keepers lived in the cottages beside the old tower.\n"},
    )
    report = (brief / "report.md").read_text(encoding="utf-8")
    assert "Not found" in report and "Freshness" not in report  # nothing cited, no date


def test_a_sentence_scoring_below_the_threshold_is_no_finding() -> None:
    text = (
        "module functools\n\nFUNCTIONS\n\n"
        "lru_cache(maxsize=128, typed=False)\n\nLeast-recently-used cache decorator.\n\n"
        "If *maxsize* is set to None, the LRU features are disabled and the cache can grow.\n"
    )
    question = "What is the default maxsize of functools.lru_cache?"
    sq = SubQuestionPlan("sq1", question, ("functools.lru_cache",), 2, question)
    url = "file://python-docs/library/functools"
    doc = Retained(url, "functools", text, "sha256:" + "0" * 64, "o")
    # The second sentence names maxsize but states no default: it scores below MIN_SCORE.
    assert [f.claim for f in ExtractiveReasoner().extract(sq, doc)] == [
        "lru_cache(maxsize=128, typed=False) Least-recently-used cache decorator."
    ]


def test_not_found_names_the_nearest_passage(tmp_path: Path) -> None:
    brief = _quick(
        tmp_path,
        "What colour is the Carrick Point lighthouse painted?",
        {"trust/a.md": "# Lighthouse\n\nThe Carrick Point lighthouse was completed in 1891.\n"},
    )
    gaps = Brief(brief).load_claims().coverage_gaps
    assert gaps and gaps[0].startswith("not_found:sq1: no passage")
    assert 'nearest passage, in Lighthouse: "The Carrick Point lighthouse was completed' in gaps[0]
    assert "but not colour" in gaps[0]


def _entry_findings(question: str, module: str, text: str) -> list[str]:
    sq = SubQuestionPlan("sq1", question, (question,), 2, question)
    doc = Retained(f"file://python-docs/library/{module}", module, text, "sha256:" + "0" * 64, "o")
    return [f.claim for f in ExtractiveReasoner().extract(sq, doc)]


def test_a_short_sentence_of_a_docstring_stands_with_the_one_before_it() -> None:
    # "all" is a stop-word, yet all() is the name asked about; the answering sentence is short
    # and a paragraph of its own inside the entry.
    text = (
        "module builtins\n\nFUNCTIONS\n\n"
        "abs(x, /)\n\nReturn the absolute value of the argument.\n\n"
        "all(iterable, /)\n\nReturn True if bool(x) is True for all values x in the iterable.\n\n"
        "If the iterable is empty, return True.\n"
    )
    assert _entry_findings("What does all() return for an empty iterable?", "builtins", text) == [
        "Return True if bool(x) is True for all values x in the iterable. "
        "If the iterable is empty, return True."
    ]


def test_a_declaration_s_parameters_are_names_not_a_list_in_passing() -> None:
    text = (
        "module math\n\nFUNCTIONS\n\nfloor(x, /)\n\nReturn the floor of x as an Integral.\n\n"
        "isclose(a, b, *, rel_tol=1e-09, abs_tol=0.0)\n\n"
        "Determine whether two floating point numbers are close in value.\n"
    )
    found = _entry_findings("What is the default rel_tol of math.isclose?", "math", text)
    assert found and found[0].startswith("isclose(a, b, *, rel_tol=1e-09")


# A language reference in miniature: the statement's own section, and another statement's
# section naming it in passing.
_STATEMENTS = {
    "reference/break.md": (
        '# The "break" statement\n\n'
        '"break" may only occur syntactically nested in a "for" or "while" loop, but not '
        "nested in a function or class definition within that loop.\n\n"
        'It terminates the nearest enclosing loop, skipping the optional "else" clause if the '
        "loop has one.\n\n"
        'If a "for" loop is terminated by "break", the loop control target keeps its current '
        "value.\n"
    ),
    "reference/try.md": (
        '# The "try" statement\n\n'
        'When "break" passes control out of a "try" statement with a "finally" clause, that '
        '"finally" clause is executed before really leaving the loop.\n'
    ),
}


def test_a_statement_is_answered_by_its_own_section_and_its_first_sentences(
    tmp_path: Path,
) -> None:
    # The try section's sentence names "break" and "statement" itself; the break section's
    # sentences name "statement" only by their heading. One publisher: its best claim alone.
    brief = _quick(tmp_path, "What does the break statement do?", _STATEMENTS)
    document = Brief(brief).load_claims()
    claims = [c.claim for c in emitted_claims(document)]
    # One part asked, one sub-question planned: the floors add no copy of the question.
    assert [sq["question"] for sq in document.sub_questions] == [
        "What does the break statement do?"
    ]
    assert claims == [
        '"break" may only occur syntactically nested in a "for" or "while" loop, but not '
        "nested in a function or class definition within that loop. It terminates the nearest "
        'enclosing loop, skipping the optional "else" clause if the loop has one.'
    ]
    assert_verified(brief)


def test_each_publisher_keeps_its_best_answer_whatever_its_page_is_titled(
    tmp_path: Path,
) -> None:
    # The archive's page is titled less precisely and its sentence scores lower: it is still
    # that publisher's answer, and the two years disagree.
    brief = _quick(
        tmp_path,
        "When was the Carrick Point lighthouse completed?",
        {
            "trust/a.md": "# Carrick Point Lighthouse\n\nThe Carrick Point lighthouse was "
            "completed in 1891 by the Northern Lights Board. Three keepers lived beside it "
            "until the light was automated in 1891 or later.\n",
            "archive/b.md": "# A history\n\nThe county's records of Carrick Point show that the "
            "lighthouse was completed in 1893, after two winters of storms delayed the "
            "masons.\n",
        },
    )
    claims = [c.claim for c in emitted_claims(Brief(brief).load_claims())]
    assert len(claims) == 2
    assert any("1891 by the Northern" in c for c in claims) and any("1893" in c for c in claims)


def test_a_method_documented_on_pydoc_s_stand_in_is_its_class_s() -> None:
    # pydoc writes dict.pop as "pop(...)" then "D.pop(k[,d]) -> v, …" under class dict.
    text = (
        "module builtins\n\nCLASSES\n\nclass dict(object)\n\nMethods defined here:\n\n"
        "pop(...)\n\nD.pop(k[,d]) -> v, remove specified key and return the corresponding "
        "value.\n\nIf the key is not found, return the default if given; otherwise,\n"
        "raise a KeyError.\n"
    )
    found = _entry_findings("What exception does dict.pop raise for a key?", "builtins", text)
    assert found and "raise a KeyError" in found[0]


def test_a_docstring_sentence_may_open_with_the_entry_s_parameter() -> None:
    text = (
        "module builtins\n\nCLASSES\n\nclass str(object)\n\nMethods defined here:\n\n"
        "startswith(...)\n\nS.startswith(prefix[, start[, end]]) -> bool\n\n"
        "Return True if S starts with the specified prefix, False otherwise.\n\n"
        "prefix can also be a tuple of strings to try.\n"
    )
    question = "What can the prefix argument of str.startswith be besides a string?"
    assert _entry_findings(question, "builtins", text) == [
        "prefix can also be a tuple of strings to try."
    ]


def test_a_summary_line_without_a_stop_is_the_entry_s_sentence() -> None:
    text = (
        "module posixpath\n\nFUNCTIONS\n\nbasename(p)\n\nReturns the final component of a "
        "pathname\n\ncommonpath(paths)\n\nGiven a sequence of path names, returns the longest "
        "common sub-path.\n"
    )
    found = _entry_findings("What does os.path.basename return?", "posixpath", text)
    assert found == ["basename(p) Returns the final component of a pathname"]


def test_which_exception_is_answered_by_an_exception_s_name() -> None:
    asked = Asked("What exception is raised when you divide by zero?")
    assert asked.states_kind("Division by zero raises the ZeroDivisionError exception.") == 1.0
    assert asked.states_kind("The interpreter raises an exception on a division by zero.") == 0


@pytest.mark.parametrize(
    ("question", "docs", "expected"),
    [
        pytest.param(
            "How long does the Kestrel Island ferry crossing take?",
            {
                "ferry/a.md": "# The island ferry\n\nThe Kestrel Island ferry crosses the sound "
                "in twenty-five minutes. The first sailing leaves the harbour at half past six.\n"
            },
            "The Kestrel Island ferry crosses the sound in twenty-five minutes.",
            # "How long … take?" is answered by a duration; the sentence says neither word.
            id="a-measurement-is-answered-by-a-figure-in-other-words",
        ),
        pytest.param(
            "When did the Brennan Hill telescope see first light?",
            {
                "uni/a.md": "# The Brennan Hill Observatory\n\n## History\n\nThe telescope saw "
                "first light in 1987, after eleven years of construction.\n"
            },
            "The telescope saw first light in 1987, after eleven years of construction.",
            id="an-irregular-past-form-answers-the-verb-asked",
        ),
        pytest.param(
            "What does the with statement do?",
            {
                "reference/global.md": '# The "global" statement\n\nNames listed in a "global" '
                'statement must not be defined as targets in "with" statements or "except" '
                "clauses.\n",
                "reference/with.md": '# The "with" statement\n\nThe "with" statement is used '
                "to wrap the execution of a block with methods defined by a context manager.\n",
            },
            'The "with" statement is used to wrap the execution of a block with methods defined '
            "by a context manager.",
            # "with" is a stop word; named as a statement it is the keyword, and the global
            # statement's section naming "with" statements in passing is not about it.
            id="a-keyword-named-as-a-statement-is-the-subject",
        ),
    ],
)
def test_a_question_is_read_as_an_engineer_reads_it(
    tmp_path: Path, question: str, docs: dict[str, str], expected: str
) -> None:
    brief = _quick(tmp_path, question, docs)
    assert [c.claim for c in emitted_claims(Brief(brief).load_claims())] == [expected]
