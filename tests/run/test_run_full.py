"""Full depth end to end: round 2, the skeptic panel's votes and CIBER's diagnosis applied.

The reasoner is scripted (tests/fakereasoner.py ``PanelReasoner``): it paraphrases, so three
owners' differently worded sentences support one claim and triangulation has independent
voices; its panel refutes one planted claim; its CIBER answer is chosen per test. Everything
else is real: the local corpus, the gates, the checkpoints — and, for the crash tests, a real
process killed with SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from briefs import assert_phases_read_back, assert_verified, read_phase
from conftest import REPO
from deep_research.brief.layout import Brief, slugify
from deep_research.gates.trace import emitted_claims
from deep_research.run.driver import Progress, RunRequest, RunResult, start
from deep_research.run.governor import default_limits
from deep_research.run.localcorpus import open_corpus
from deep_research.run.pipeline import phase_names
from deep_research.schemas import validate_brief
from deep_research.settings import Settings, load_settings
from fakereasoner import PanelReasoner

QUESTION = "How are chained comparisons evaluated?"
ONCE = "A chained comparison evaluates each operand at most once."
STOPS = "A chained comparison stops at the first comparison that is false."
# Every claim answers the question: the relevance gate would drop one about comparisons alone.
PRIORITY = "The operators of a chained comparison share the same priority, below arithmetic ones."
PLANTED = "Chained comparisons were introduced in Python 3.0."
PHASES_FULL = phase_names("full")

# Three owners (top-level folders) saying the same things in their own words.
DOCS = {
    "alpha/comparisons.md": [
        (
            "In a chained comparison each operand is evaluated at most once, even when it takes "
            "part in two comparisons.",
            ONCE,
        ),
        (
            "Evaluation of a chained comparison stops at the first comparison that turns out to be "
            "false.",
            STOPS,
        ),
        (
            "All comparison operators in a chained comparison share one priority level, which is "
            "lower than that of arithmetic operators.",
            PRIORITY,
        ),
        (
            "Some tutorials claim that chained comparisons were introduced in Python 3.0 "
            "by a later proposal.",
            PLANTED,
        ),
    ],
    "beta/operators.md": [
        (
            "The interpreter evaluates every operand of a chained comparison at most once, caching "
            "the middle value.",
            ONCE,
        ),
        (
            "A chained comparison halts at the first comparison that is false and returns that "
            "result.",
            STOPS,
        ),
        (
            "Inside a chained comparison every operator binds equally, and each binds more loosely "
            "than arithmetic, shifting and bitwise operators.",
            PRIORITY,
        ),
    ],
    "gamma/notes.md": [
        (
            "Each operand in a chained comparison is evaluated at most once, so side effects "
            "happen once.",
            ONCE,
        ),
        (
            "Precedence is uniform across the links of a chained comparison, and it sits under all "
            "arithmetic operators.",
            PRIORITY,
        ),
    ],
}
SCRIPT = {quote: claim for sentences in DOCS.values() for quote, claim in sentences}
# Floors sized to this three-document corpus (the defaults are sized for the web).
FLOORS = (
    "full_sub_questions=2",
    "full_queries_per_sub_question=1",
    "full_round1_fetches=1",
    "full_distinct_sources=3",
    "full_counter_queries_per_sub_question=1",
    "full_round2_fetches=0",  # round 2 finds the same three documents again
)


def write_corpus(root: Path) -> Path:
    for relative, sentences in DOCS.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(quote for quote, _ in sentences)
        path.write_text(f"# {path.stem.title()}\n\n{body}\n", encoding="utf-8")
    return root


def reasoner(ciber_passed: bool | None = True) -> PanelReasoner:
    return PanelReasoner(
        script=SCRIPT,
        queries=("chained comparison operand", "chained comparison false"),
        refute=frozenset({PLANTED}),
        ciber_passed=ciber_passed,
    )


def settings() -> Settings:
    return load_settings(FLOORS, environ={})


def run_full(
    state: Path,
    docs: Path,
    *,
    ciber_passed: bool | None = True,
    resume: str | None = None,
    stop_after: str | None = None,
) -> RunResult:
    return start(
        RunRequest(QUESTION, state, depth="full", resume=resume),
        open_corpus(str(docs), state),
        reasoner(ciber_passed),
        settings(),
        default_limits("full"),
        Progress(quiet=True),
        stop_after=stop_after,
    )


@pytest.fixture(scope="module")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("full") / "docs")


@pytest.fixture(scope="module")
def whole(docs: Path, tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    return run_full(tmp_path_factory.mktemp("whole") / "state", docs)


def test_full_depth_reaches_ready_with_panel_and_ciber_applied(whole: RunResult) -> None:
    assert whole.verdict == "READY", whole.reasons
    brief = Brief(whole.brief)
    document = brief.load_claims()
    emitted = {c.claim: c for c in emitted_claims(document)}
    assert set(emitted) == {ONCE, STOPS, PRIORITY}
    assert all(c.independent_count >= 2 for c in emitted.values())
    # The panel's votes were applied: the planted claim is stripped with the panel's reason.
    assert [s.claim for s in document.stripped] == [PLANTED]
    assert "panel" in document.stripped[0].reason
    assert document.ciber_passed is True and document.ciber_skipped is None
    # Round 2 ran: its workers are recorded and counted as counter-queries per sub-question.
    assert [w["id"] for w in read_phase(brief, "round2")["workers"]] == ["sq1", "sq2"]
    trace = json.loads(brief.trace_path.read_text(encoding="utf-8"))
    assert trace["counters"]["rounds"] == 2
    assert trace["counters"]["counter_queries_per_sub_question"] == {"sq1": 1, "sq2": 1}
    assert read_phase(brief, "run")["completed"] == list(PHASES_FULL)
    assert {"run", "plan", "cast", "round2", "votes", "ciber"} <= assert_phases_read_back(brief)
    assert_verified(whole.brief)


def test_the_relaxed_floors_are_named_in_the_verdict_handoff_and_report(whole: RunResult) -> None:
    from deep_research.decide.handoff import run_handoff

    line = (
        "this verdict was decided with settings changed from their defaults: "
        "full_sub_questions=2 (default 5), full_queries_per_sub_question=1 (default 4), "
        "full_round1_fetches=1 (default 20), full_distinct_sources=3 (default 30), "
        "full_round2_fetches=0 (default 5) [non-default-settings]"
    )
    assert whole.reasons[-1] == line
    assert f"- {line}" in (whole.brief / "report.md").read_text(encoding="utf-8")
    assert set(run_handoff(whole.brief).non_default_settings) == {
        "full_sub_questions",
        "full_queries_per_sub_question",
        "full_round1_fetches",
        "full_distinct_sources",
        "full_round2_fetches",
    }


def test_ciber_failure_makes_the_full_brief_partial(docs: Path, tmp_path: Path) -> None:
    result = run_full(tmp_path / "state", docs, ciber_passed=False)
    assert result.verdict == "PARTIAL"
    assert result.reasons[0].endswith("[ciber-inconsistent]")


def test_a_reasoner_that_cannot_run_ciber_makes_the_full_brief_partial(
    docs: Path, tmp_path: Path
) -> None:
    # Not a valid CIBER skip, but nothing a re-run with this reasoner changes: reasoner-unable,
    # not a HOLD, saying what READY would need.
    result = run_full(tmp_path / "state", docs, ciber_passed=None)
    assert result.verdict == "PARTIAL"
    assert result.reasons[0].startswith("PARTIAL: this run's reasoner cannot re-frame claims")
    assert result.reasons[0].endswith("[reasoner-unable]")
    assert read_phase(Brief(result.brief), "run")["unable"] == {"ciber": "scripted: no CIBER"}


def test_default_floors_scale_to_a_three_document_corpus(docs: Path, tmp_path: Path) -> None:
    result = start(
        RunRequest(QUESTION, tmp_path / "state", depth="full"),
        open_corpus(str(docs), tmp_path / "state"),
        reasoner(),
        load_settings(environ={}),
        default_limits("full"),
        Progress(quiet=True),
    )
    assert result.verdict == "READY", result.reasons
    assert result.reasons[-1] == (
        "the corpus holds only 3 document(s), so the work asked of the run was lowered to fit "
        "it: 3 sources fetched in round 1 (not 20), 3 distinct sources (not 30), 0 sources new "
        "in round 2 (not 5) [floors-scaled-to-corpus]"
    )
    # The planner planned the floors the reasoner did not: five sub-questions of four queries.
    counters = json.loads(Brief(result.brief).trace_path.read_text(encoding="utf-8"))["counters"]
    assert counters["sub_questions"] == 5
    assert min(counters["queries_per_sub_question"].values()) >= 4


@pytest.mark.parametrize("phase", PHASES_FULL[:-1])
def test_full_run_stopped_after_any_phase_resumes_to_the_same_verdict(
    docs: Path, whole: RunResult, tmp_path: Path, phase: str
) -> None:
    state = tmp_path / "state"
    cut = run_full(state, docs, stop_after=phase)
    assert validate_brief(cut.brief).ok
    assert read_phase(Brief(cut.brief), "run")["completed"][-1] == phase
    resumed = run_full(state, docs, resume=cut.slug)
    assert (resumed.verdict, resumed.claims, resumed.stripped) == (
        whole.verdict,
        whole.claims,
        whole.stripped,
    )
    assert_verified(resumed.brief)


# --- a real process, killed mid-phase --------------------------------------------------------

CHILD = """
import sys
from pathlib import Path
sys.path[:0] = [sys.argv[3], str(Path(sys.argv[3]) / "run")]
import test_run_full as t
t.run_full(Path(sys.argv[1]), Path(sys.argv[2]))
"""


@pytest.mark.parametrize("pause", ["within:round2", "within:panel", "within:ciber"])
def test_killed_mid_phase_at_full_depth_resumes_to_the_same_verdict(
    docs: Path, whole: RunResult, tmp_path: Path, pause: str
) -> None:
    state = tmp_path / "state"
    env = {**os.environ, "DEEP_RESEARCH_TEST_PAUSE": pause}
    process = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(state), str(docs), str(REPO / "tests")],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # the pause line; the child sleeps after writing it
        assert line.strip() == f"test pause: {pause.replace(':', ' ')}", line
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        process.kill()
        if process.stderr is not None:
            process.stderr.close()
    brief = Brief(state / "briefs" / whole.slug)
    assert validate_brief(brief.root).ok
    phase = pause.split(":")[1]
    assert phase not in read_phase(brief, "run")["completed"]
    resumed = run_full(state, docs, resume=whole.slug)
    assert (resumed.verdict, resumed.claims, resumed.stripped) == (
        whole.verdict,
        whole.claims,
        whole.stripped,
    )
    assert_verified(resumed.brief)


@pytest.mark.parametrize("phase", ["panel", "ciber", "synthesize"])
def test_a_kill_between_a_phases_two_writes_resumes_to_the_same_verdict(
    docs: Path, whole: RunResult, tmp_path: Path, phase: str
) -> None:
    """claims.json and trace.json are written one after the other; a kill in between leaves
    the phase's new claims.json beside the previous trace.json. Resume must redo the phase
    without applying its work twice."""
    state = tmp_path / "state"
    brief = Brief(state / "briefs" / whole.slug)
    run_full(state, docs, stop_after=PHASES_FULL[PHASES_FULL.index(phase) - 1])
    old_trace = brief.trace_path.read_bytes()
    run_full(state, docs, resume=whole.slug, stop_after=phase)
    brief.trace_path.write_bytes(old_trace)
    assert phase not in read_phase(brief, "run")["completed"]
    resumed = run_full(state, docs, resume=whole.slug)
    assert (resumed.verdict, resumed.claims, resumed.stripped) == (
        whole.verdict,
        whole.claims,
        whole.stripped,
    )
    assert validate_brief(resumed.brief).ok


# --- naming: one brief per question, found by both drivers ----------------------------------


def test_the_same_question_asked_again_reuses_its_brief(
    whole: RunResult, docs: Path, tmp_path: Path
) -> None:
    events: list[tuple[str, str]] = []
    again = start(
        RunRequest(f"  {QUESTION.upper()}  ", whole.brief.parent.parent, depth="full"),
        open_corpus(str(docs), tmp_path),
        reasoner(),
        settings(),
        default_limits("full"),
        lambda phase, message: events.append((phase, message)),
    )
    assert again.reused and again.brief == whole.brief and again.verdict == "READY"
    assert events[0][0] == "fresh" and events[0][1].startswith("reusing")


def test_questions_that_differ_only_past_the_cut_get_two_briefs(docs: Path, tmp_path: Path) -> None:
    """Reported: the second question printed the first one's verdict as ``(reused)``."""
    stem = "How are chained comparisons evaluated when every operand is an expression with "
    state = tmp_path / "state"
    questions = [stem + "side effects?", stem + "no side effects?"]
    results = [
        start(
            RunRequest(question, state, depth="full"),
            open_corpus(str(docs), state),
            reasoner(),
            settings(),
            default_limits("full"),
            Progress(quiet=True),
        )
        for question in questions
    ]
    assert [r.reused for r in results] == [False, False]
    assert [r.brief.name for r in results] == [slugify(q) for q in questions]
    assert results[0].brief != results[1].brief
    for question, result in zip(questions, results, strict=True):
        assert read_phase(Brief(result.brief), "run")["question"] == question
