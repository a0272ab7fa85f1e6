"""The relevance gate: a claim must answer the research question, not share a word with it."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from deep_research.brief.layout import Brief
from deep_research.fetch.corpus import retain_document
from deep_research.gates.relevance import (
    Question,
    _related,
    answers,
    document_name,
    relevance_ranks,
    relevant_rows,
    retained_texts,
    topic_stems,
)
from deep_research.models import SourceRow

GIL = "What is the GIL and how does it affect threads?"
READ_LINES = "How do I read a file line by line?"
UNICODE = "Unicode normalization, NFC/NFKD?"
NFKC = (
    "All identifiers are converted into the normal form NFKC while parsing; comparison of "
    "identifiers is based on NFKC."
)


def test_filler_and_asking_words_are_not_the_topic() -> None:
    assert topic_stems("What is a decorator in Python?") == topic_stems("What is a decorator?")
    assert topic_stems("How does it affect threads?") == topic_stems("threads")
    # Adversarial: a question about the filler itself keeps it.
    assert topic_stems("What is Python?") == frozenset({"python"})
    assert not Question("How does it work?").answers("It works like this, in every case here.")


@pytest.mark.parametrize(
    ("question", "claim", "expected"),
    [
        ("What is a decorator in Python?", "A function definition may be wrapped by one or "
         "more *decorator* expressions.", True),
        (GIL, "Only one thread at a time holds the global interpreter lock.", True),
        (GIL, "The GIL lets one thread run Python bytecode at a time.", True),
        # The misses and off-topic claims.
        (GIL, "Calling the functions releases the Python GIL during the call.", False),
        (GIL, "A context manager is an object that defines the runtime context.", False),
        (READ_LINES, "readline(self, size=-1, /) Read and return a line from the stream.", True),
        (READ_LINES, 'If a file ".pdbrc" exists in the home directory, it is read first.', False),
        ("What does the finally clause of a try statement do?",
         "The try statement specifies exception handlers for a group of statements.", False),
        ("What does the finally clause of a try statement do?",
         'When "return" passes control out of a "try" statement with a "finally" clause, '
         'that "finally" clause is executed first.', True),
        ("When was Python 3.0 released?", "The lock is released when the block ends.", False),
        ("When was Python 3.0 released?", "Python 3.0 introduces characters outside ASCII.",
         False),
        ("How do I copy a file?", "copyfile(src, dst) Copy data from src to dst.", True),
        # Identifiers split only into words the question uses.
        ("How do I read a file?", "The thread profile is kept in memory for later.", False),
    ],
)  # fmt: skip
def test_a_claim_names_what_the_question_asks(question: str, claim: str, expected: bool) -> None:
    assert answers(question, claim) is expected, Question(question).judge(claim).reason


def test_siblings_are_one_concept_and_a_generic_one_may_go_unnamed() -> None:
    asked = Question(UNICODE)
    assert [c.stem for c in asked.concepts] == ["unicod", "normaliz", "nfc"]
    # A word in capitals weighs double: beside it "Unicode" is generic, and may go unnamed.
    assert asked.answers(NFKC)
    # Weighed by the retained texts it is more so: every text names Unicode, few NFC.
    texts = ["Unicode text"] * 8 + ["a normal form of Unicode", "a normal form again", NFKC]
    weights = asked.weigh(texts)
    assert weights["nfc"] > weights["normaliz"] > weights["unicod"]
    assert asked.judge(NFKC, weights).missing_share < asked.judge(NFKC).missing_share
    # Adversarial: the most specific concept is never the one left out...
    assert not asked.answers("Unicode strings have a normal form of their own.", weights)
    # ... and of three equally common words none is generic.
    reads = Question(READ_LINES)
    even = reads.weigh(["read a line of the file"] * 5)
    assert not reads.answers("The file is read when the debugger starts.", even)


def test_a_question_of_two_concepts_needs_both_however_rare_one_is() -> None:
    asked = Question(GIL)
    weights = asked.weigh(["thread"] * 20 + ["the GIL"])
    assert not asked.answers(
        "The GIL is released around every call to a foreign function.", weights
    )
    assert asked.answers("A thread must hold the GIL to run bytecode.", weights)


def test_an_abbreviation_spelled_out_in_the_question_is_one_concept() -> None:
    asked = Question("What is the global interpreter lock (GIL)?")
    assert [c.stem for c in asked.concepts] == ["gil"]
    assert asked.answers("The global interpreter lock serializes bytecode.")
    assert not asked.answers("A lock is global to the interpreter here.")


def test_a_concept_no_retained_text_names_cannot_be_left_out() -> None:
    asked = Question("How does the Java garbage collector work?")
    weights = asked.weigh(["The garbage collector frees unreachable cycles."] * 5)
    assert not asked.answers("The garbage collector frees unreachable cycles.", weights)


def test_the_document_name_counts_as_named() -> None:
    asked = Question("How do I run a subprocess and capture its output?")
    claim = "run(*popenargs, capture_output=False) Run command with arguments."
    assert not asked.answers(claim)
    assert asked.answers(claim, source="file://python-docs/library/subprocess")
    assert not asked.answers(claim, source="file://python-docs/library/shlex")
    assert document_name("file://notes/alpha/heat-pumps.md") == "heat-pumps"
    assert document_name("file://python-docs/library/asyncio.tasks") == "asyncio.tasks"
    assert document_name("https://example.org/a/b/") == "b"


def _row(sid: str, url: str, claims: list[str], content_hash: str | None = None) -> SourceRow:
    return SourceRow.model_validate(
        {
            "id": sid,
            "url": url,
            "tier": "raw",
            "content_hash": content_hash,
            "findings": [
                {"id": f"{sid}.F{n}", "claim": c, "quote": c} for n, c in enumerate(claims, 1)
            ],
        }
    )


def test_relevant_rows_drop_only_the_findings_that_answer_nothing(tmp_path: Path) -> None:
    brief = Brief(tmp_path / "brief")
    text = "A thread must hold the GIL to run bytecode.\n"
    stored, _ = retain_document(
        brief,
        "file://c/gil.md",
        text,
        extractor="local-corpus",
        adapter="local:c",
        retrieved_at=datetime(2024, 1, 1, tzinfo=UTC),
        duration_ms=0,
    )
    rows = [
        _row("S1", "file://c/gil.md", [text.strip(), "Calling releases the GIL."],
             stored.content_hash),
        _row("S2", "file://c/ctx.md", ["A context manager defines a runtime context."]),
    ]  # fmt: skip
    texts = retained_texts(brief, rows)
    assert texts == [text]  # S2 has no retained text: left to the trace gate
    kept = relevant_rows(rows, GIL, texts)
    assert [f.claim for f in kept[0].findings] == [text.strip()]
    assert kept[1].findings == [] and kept[1].id == "S2"  # the source stays; its finding goes
    # Adversarial: a corpus file edited after retention is not read as evidence of anything.
    brief.corpus_path(stored.content_hash).write_text("edited", encoding="utf-8")
    assert retained_texts(brief, rows) == []


def test_a_word_named_only_in_a_list_is_a_passing_mention() -> None:
    asked = Question("What is a frozenset?")
    assert not asked.answers(
        "For container types such as list, tuple, set, frozenset, dict, or deque, the "
        "expression x in y tests membership."
    )
    assert not asked.answers("Empty containers (strings, tuples, lists, sets and frozensets).")
    assert asked.answers("A frozenset is an immutable set of hashable objects.")
    # Adversarial: a signature's parameters are no list; the called name still counts.
    copying = Question("How do I copy a file?")
    assert copying.answers("copyfile(src, dst, *, follow_symlinks=True) Copy data from src.")


def test_an_aspect_verb_may_go_unnamed() -> None:
    evaluated = Question("How are chained comparisons evaluated?")
    assert evaluated.answers("A chained comparison stops at the first comparison that is false.")
    assert not evaluated.answers("All comparison operators have the same priority.")
    declared = Question("How are keyword-only parameters declared?")
    weights = declared.weigh(["keyword-only parameters after *"] * 2 + ["parameters"] * 8)
    assert declared.answers("Parameters after * are keyword-only parameters.", weights)


def test_run_is_the_task_of_a_how_to_question_only() -> None:
    assert [c.stem for c in Question("How do I run a coroutine?").concepts] == ["run", "coroutin"]
    assert [c.stem for c in Question("How does the event loop run?").concepts] == ["event", "loop"]
    assert not Question("How do I run a coroutine?").answers("A coroutine object is awaitable.")


def test_only_code_is_split_into_the_question_s_words() -> None:
    asked = Question(READ_LINES)
    assert asked.answers("readline(size=-1) Read and return one line from the stream.")
    assert not asked.answers("Load a readline history file from the home directory.")


def test_a_question_of_several_parts_is_answered_part_by_part() -> None:
    asked = Question("When did the Old Harbour Bridge open, how long is it and who designed it?")
    assert asked.answers("The Old Harbour Bridge was opened to traffic in 1923.")
    assert asked.answers("Measured between its abutments, the Old Harbour Bridge is 980 m long.")
    assert asked.answers("The engineer Margaret Holloway designed the Old Harbour Bridge.")
    # Adversarial: a part that points back ("it") needs the subject named too.
    assert not asked.answers("Margaret Holloway designed the harbour railway line.")
    assert not asked.answers("The bridge over the river is long.")
    # A first part naming only the subject is no part of its own.
    assert len(Question(GIL).facets) == 1


@pytest.mark.parametrize(
    ("a", "b", "related"),
    [
        ("divid", "division", True),
        ("extend", "extension", True),
        ("includ", "inclusion", True),
        ("omit", "omission", True),
        ("decorat", "decorator", True),
        # A noun in "-sion" meets only its own verb.
        ("vers", "version", False),
        ("pass", "passion", False),
        ("divid", "dividend", False),
        # A place and the people or things of it: "America", "American".
        ("america", "american", True),
        ("europe", "european", True),
        # Not any ending: "import" never meets "important", nor "canal" "canalside".
        ("import", "important", False),
        ("canal", "canalsid", False),
    ],
)
def test_a_latin_noun_meets_its_verb(a: str, b: str, related: bool) -> None:
    assert _related(a, b) is related


def test_an_acronym_names_the_words_the_question_spells_out() -> None:
    question = Question("What exception does input() raise when it reaches end of file?")
    words = question.words("If the user hits EOF, raise EOFError.")
    assert {"end", "fil"} <= words
    assert not {"end", "fil"} & question.words("If the user hits ESC, raise an error.")


def test_relevance_ranks_order_by_the_same_rule_and_drop_nothing() -> None:
    rows = [
        _row("S1", "file://c/gil.md", ["A thread must hold the GIL to run bytecode."]),
        _row("S2", "file://c/ctx.md", ["A context manager defines a runtime context."]),
        _row("S3", "file://c/io.md", ["Threads wait while the interpreter lock is held."]),
    ]
    ranks = relevance_ranks(rows, GIL)
    assert set(ranks) == {"S1.F1", "S2.F1", "S3.F1"}  # every finding, none dropped
    # The one the words say answers ranks 1 or more; the rest below 1, those naming part of
    # the question above those naming none.
    kept = {f.id for row in relevant_rows(rows, GIL) for f in row.findings}
    assert kept == {"S1.F1"} and ranks["S1.F1"] >= 1.0
    assert 0.5 >= ranks["S3.F1"] > ranks["S2.F1"] >= 0.0
