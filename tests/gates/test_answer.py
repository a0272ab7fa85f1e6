"""The answer gate: each clause checked against its own citations; no position left out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from briefs import PageSpec, edit, write_brief
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.gates.answer import CheckedAnswer, check_answer, clauses
from deep_research.gates.trace import TraceOptions, run_trace
from deep_research.render import render_brief
from outage import MARCH, SEPTEMBER, outage


@pytest.fixture(scope="module")
def brief(tmp_path_factory: pytest.TempPathFactory) -> Brief:
    return Brief(outage(tmp_path_factory.mktemp("outage") / "brief"))


def answer(brief: Brief, text: str) -> CheckedAnswer:
    return check_answer(brief, text)


BOTH = (
    "The official target for restarting the treatment works is March 2026 [S1], while the "
    "contractor's programme puts the restart in September 2026 [S2]."
)


def test_a_sentence_stating_two_positions_passes_each_against_its_own_cites(brief: Brief) -> None:
    checked = answer(brief, BOTH)
    (sentence,) = checked.sentences
    assert sentence.passed, sentence.reason
    assert [c.sources for c in sentence.clauses] == [("S1",), ("S2",)]
    assert not checked.refused


@pytest.mark.parametrize(
    ("written", "shown", "reason"),
    [
        # Each clause still answers for its own figures: the dates swapped fail both sources.
        (
            "The official target for restarting the treatment works is September 2026 [S1], "
            "while the contractor's programme puts the restart in March 2026 [S2].",
            None,
            '"The official target for restarting the treatment works is September 2026": '
            "S1 partially_supported (literal_missing: September 2026)",
        ),
        # Text after the last marker belongs to the last clause: an uncited figure there fails
        # it, and the first clause, verified, is shown without it.
        (
            "The official target for restarting the treatment works is March 2026 [S1], while "
            "the contractor's programme puts the restart in September 2026 [S2] at a cost of "
            "40 million.",
            "The official target for restarting the treatment works is March 2026 [S1].",
            "S2 partially_supported (literal_missing: 40 million)",
        ),
        # A clause without a marker of its own is checked with the next clause's sources; one
        # that loses the source it names ("According to [S1]") is struck whole.
        (
            "According to [S1], the contractor's programme puts the restart of the treatment "
            "works in September 2026 [S2].",
            None,
            "S1 partially_supported (literal_missing: September 2026",
        ),
        # A citation that does not state its clause is dropped; the clause stays with the
        # source that states it.
        (
            f"{MARCH[:-1]} [S1][S2].",
            f"{MARCH[:-1]} [S1].",
            "S2 partially_supported (literal_missing: March 2026)",
        ),
        # The second clause struck, the first shown: a verified clause is not lost with it.
        (
            f"{MARCH[:-1]} [S1], and {SEPTEMBER[0].lower()}{SEPTEMBER[1:-1]} [S1].",
            f"{MARCH[:-1]} [S1].",
            "S1 partially_supported (literal_missing: September 2026)",
        ),
        # The first clause struck: the second is shown as a sentence of its own.
        (
            f"{MARCH[:-1]} [S2], while {SEPTEMBER[0].lower()}{SEPTEMBER[1:-1]} [S2].",
            SEPTEMBER.replace("2026.", "2026 [S2]."),
            "S2 partially_supported (literal_missing: March 2026)",
        ),
    ],
)
def test_each_clause_answers_for_its_own_words(
    brief: Brief, written: str, shown: str | None, reason: str
) -> None:
    checked = answer(brief, written).sentences
    passed = [sentence.text for sentence in checked if sentence.passed]
    assert passed == ([shown] if shown else [])
    (struck,) = [sentence for sentence in checked if not sentence.passed]
    assert struck.text == written and reason in struck.reason, struck.reason


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("Sales rose [S1][S4].", ["Sales rose [S1][S4]."]),
        ("A says x y z [S1], B says p q r [S2].", ["A says x y z [S1]", "B says p q r. [S2]"]),
        ("According to [S1], B says p q r [S2].", ["According to, B says p q r. [S1][S2]"]),
        (
            "See https://a.example/x [S1], and y z [S2].",
            ["See https://a.example/x [S1], and y z [S2]."],
        ),
    ],
)
def test_clauses(written: str, expected: list[str]) -> None:
    assert clauses(written) == expected


@pytest.mark.parametrize(
    "written",
    [
        f"{MARCH[:-1]} [S1].",  # the contractor's date left out
        # The contractor cited, but its date not stated: the position is not there.
        "The official target for restarting the treatment works is March 2026 [S1], and the "
        "contractor's programme puts the restart of the treatment works later [S2].",
    ],
)
def test_an_answer_dropping_a_side_of_an_open_contradiction_is_refused(
    brief: Brief, written: str
) -> None:
    checked = answer(brief, written)
    assert [(d.claim, d.sources) for d in checked.dropped] == [("C2", ("S2",))]
    assert checked.refusal().startswith("the answer leaves out a side of an open contradiction")
    assert "September 2026" in checked.refusal()


def test_an_answer_stating_both_sides_in_two_sentences_is_accepted(brief: Brief) -> None:
    checked = answer(brief, f"{MARCH[:-1]} [S1]. {SEPTEMBER[:-1]} [S2].")
    assert all(s.passed for s in checked.sentences) and not checked.refused


def test_without_an_open_contradiction_nothing_is_asked(tmp_path: Path) -> None:
    root = outage(tmp_path / "brief", contradictions=[])
    assert not answer(Brief(root), f"{MARCH[:-1]} [S1].").refused


def test_render_refuses_a_one_sided_answer_and_shows_a_two_sided_one(tmp_path: Path) -> None:
    root = outage(tmp_path / "brief")
    edit(root, lambda c, t: c.update(verdict="PARTIAL", synthesis=f"{MARCH[:-1]} [S1]."))
    report, markdown = render_brief(Brief(root), check_answer=check_answer)
    assert report.answer == "" and report.answer_refused
    section = markdown.split("## Answer", 1)[1].split("## Key findings", 1)[0]
    assert "The written answer was refused" in section and "C2" in section
    edit(root, lambda c, t: c.update(synthesis=BOTH))
    report, markdown = render_brief(Brief(root), check_answer=check_answer)
    assert report.answer == BOTH and report.answer_refused is None


def test_the_answer_command_refuses_a_one_sided_answer_with_the_next_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = outage(tmp_path / "brief")
    one_sided = tmp_path / "synthesis.md"
    one_sided.write_text(f"{MARCH[:-1]} [S1].\n", encoding="utf-8")
    assert main(["answer", str(root), "--synthesis", str(one_sided)]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["accepted"] is False and result["dropped_positions"][0]["claim"] == "C2"
    capsys.readouterr()
    assert main(["answer", str(root), "--synthesis", str(one_sided)]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("next: rewrite the answer: the answer leaves out a side")
    both = tmp_path / "both.md"
    both.write_text(BOTH + "\n", encoding="utf-8")
    assert main(["answer", str(root), "--synthesis", str(both)]) == 0
    assert json.loads(capsys.readouterr().out)["accepted"] is True
    # Bad input: one line, exit 2, nothing written.
    assert main(["answer", str(root), "--synthesis", str(tmp_path / "missing.md")]) == 2
    assert main(["answer", str(root)]) == 2  # no synthesis stored yet


def test_no_answer_written_is_not_refused(tmp_path: Path) -> None:
    root = outage(tmp_path / "brief")
    edit(root, lambda c, t: c.update(verdict="PARTIAL"))
    report, markdown = render_brief(Brief(root), check_answer=check_answer)
    assert report.answer is None and report.answer_refused is None
    assert "No synthesis was written" in markdown


_WORD = st.sampled_from(["the", "target", "is", "March", "2026", "says", "works", "-5%", "and"])
_PIECE = st.tuples(
    st.lists(_WORD, min_size=0, max_size=6).map(" ".join),
    st.lists(st.integers(1, 9), min_size=1, max_size=3),
    st.sampled_from(["", ",", ";", " -", " \u2014"]),
)


@settings(max_examples=300, database=None)
@given(st.lists(_PIECE, min_size=1, max_size=4), st.sampled_from(["", ".", " and more."]))
def test_clauses_keep_every_citation_and_every_word(
    pieces: list[tuple[str, list[int], str]], tail: str
) -> None:
    sentence = (
        "".join(
            f"{text} {''.join(f'[S{n}]' for n in cites)}{mark} " for text, cites, mark in pieces
        ).rstrip()
        + tail
    )
    found = clauses(sentence)
    cited = [m for part in found for m in re.findall(r"S\d+", part)]
    assert set(cited) == set(re.findall(r"S\d+", sentence))

    # Every word of the sentence is checked in some clause, in order (the joins between
    # clauses — markers, spaces, commas, dashes — aside).
    def letters(text: str) -> str:
        return re.sub(r"\[S\d+\]|[\s,;\u2014]", "", text)

    assert letters(" ".join(found)) == letters(sentence)


#: A claim one source states in two of its findings together: the date in one, the cost in the
#: other. The trace gate checks the claim against both quotes at once and supports it.
TWO_FINDINGS = (
    "The official target for restarting the treatment works is March 2026.",
    "Repairing the collapsed filter bed of the treatment works will cost 40 million euros.",
)
JOINT_CLAIM = (
    "The treatment works restart is targeted for March 2026 and the repair will cost 40 million "
    "euros."
)


def test_a_clause_stating_a_verified_claim_reads_the_result_the_table_shows(
    tmp_path: Path,
) -> None:
    page = PageSpec(
        "https://water-authority.example/northwater",
        "Update.\n\n" + "\n\n".join(TWO_FINDINGS),
        [("Date", TWO_FINDINGS[0]), ("Cost", TWO_FINDINGS[1])],
    )
    claim = {"claim": JOINT_CLAIM, "supporting": ["S1"], "findings": ["S1.F1", "S1.F2"]}
    root = write_brief(tmp_path / "brief", [page], [claim])
    run_trace(TraceOptions(brief=root))
    written = f"{JOINT_CLAIM[:-1]} [S1]."
    edit(root, lambda c, t: c.update(verdict="PARTIAL", synthesis=written))
    # Traced afresh, each quote alone misses a figure, and the sentence was struck while the
    # verification table showed the claim Supported by S1; now both read the gate's result.
    report, _ = render_brief(Brief(root), check_answer=check_answer)
    (row,) = report.verification
    assert row.support_class == "Supported" and row.sources == ["S1"]
    assert report.answer == written and report.answer_stripped == []
    # A clause in other words is traced as written: the recorded result is the claim's own.
    reworded = "The repair will cost 40 million euros and the restart is set for March 2026 [S1]."
    (sentence,) = check_answer(Brief(root), reworded).sentences
    assert not sentence.passed and "literal_missing" in sentence.reason
