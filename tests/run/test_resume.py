"""Resume and reuse as a newcomer meets them: the brief remembers its corpus, state and depth;
every printed hint is a command that works as printed; a ``--resume`` that asks for something
else is refused; runs on one state folder take turns instead of colliding."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from briefs import read_phase
from deep_research.brief.layout import Brief, slugify, state_lock
from deep_research.cli import main
from deep_research.run.driver import RunRequest, RunResult, start
from deep_research.run.governor import default_limits
from deep_research.run.localcorpus import open_corpus
from deep_research.run.progress import Progress
from deep_research.run.reasoners import ExtractiveReasoner
from deep_research.schemas import validate_brief
from deep_research.settings import load_settings

QUESTION = "How are chained comparisons evaluated?"
SLUG = slugify(QUESTION)
DOCS = {
    "alpha/comparisons.md": (
        "# Comparisons\n\n"
        "Comparisons can be chained arbitrarily, so x < y <= z is equivalent to x < y and "
        "y <= z, except that y is evaluated only once.\n"
    ),
    "beta/operators.md": (
        "# Operators\n\n"
        "A chained comparison such as a < b < c evaluates each operand at most once and stops "
        "at the first comparison that is false.\n"
    ),
}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    for name, text in DOCS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _cut(state: Path, corpus: Path, phase: str = "cast") -> None:
    """A run stopped after ``phase``, as a kill there leaves it."""
    start(
        RunRequest(QUESTION, state, corpus=str(corpus.resolve())),
        open_corpus(str(corpus), state),
        ExtractiveReasoner(),
        load_settings(environ={}),
        default_limits("quick"),
        Progress(quiet=True),
        stop_after=phase,
    )


def _error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if not line.startswith("[")]  # progress lines
    assert len(lines) == 1, err
    return lines[0]


def test_the_brief_remembers_its_corpus_state_and_depth(tmp_path: Path, corpus: Path) -> None:
    state = tmp_path / "state"
    _cut(state, corpus)
    record = read_phase(Brief(state / "briefs" / SLUG), "run")
    assert record["corpus"] == str(corpus.resolve())
    assert record["state"] == str(state.resolve())
    assert record["depth"] == "quick"


def test_the_unfinished_run_hint_works_as_printed(
    tmp_path: Path,
    corpus: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    state = tmp_path / "state"
    _cut(state, corpus)
    assert main(["run", QUESTION, "--corpus", str(corpus), "--state", str(state)]) == 2
    message = _error(capsys)
    resume = message.split("continue it with ", 1)[1].split(", or start over with ")[0]
    refresh = message.split(", or start over with ", 1)[1]
    # Pasted from another directory, with no --corpus: the brief says where to look.
    monkeypatch.chdir(tmp_path)
    words = shlex.split(resume)
    assert words[:4] == ["deep-research", "run", "--resume", SLUG] and "--corpus" not in words
    assert main([*words[1:], "--json"]) in (0, 1)
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["adapter"] == "local:docs" and not resumed["reused"]
    assert validate_brief(state / "briefs" / SLUG).ok
    # The other hint starts it over, as printed.
    words = shlex.split(refresh)
    assert words[-1] == "--refresh" and words[2] == QUESTION
    assert main([*words[1:], "--json"]) in (0, 1)
    assert len(list((state / "briefs" / ".superseded").iterdir())) == 1


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--corpus", "python-docs"], "the run searches --corpus"),
        (["--depth", "full"], "the run is at --depth quick, not full"),
        (["What is a decorator?"], "the run researches"),
        (["--refresh"], "--refresh starts the question over"),
    ],
)
def test_a_resume_that_asks_for_something_else_is_refused(
    tmp_path: Path,
    corpus: Path,
    capsys: pytest.CaptureFixture[str],
    extra: list[str],
    said: str,
) -> None:
    state = tmp_path / "state"
    _cut(state, corpus)
    trace = (state / "briefs" / SLUG / "trace.json").read_bytes()
    assert main(["run", "--resume", SLUG, "--state", str(state), *extra]) == 2
    message = _error(capsys)
    assert said in message and "continue it with deep-research run --resume" in message
    assert (state / "briefs" / SLUG / "trace.json").read_bytes() == trace  # nothing written


@pytest.mark.parametrize(
    "same",
    [
        lambda corpus: [QUESTION],
        lambda corpus: ["--depth", "quick"],
        lambda corpus: ["--corpus", str(corpus)],
        # The same folder by another spelling is the same corpus.
        lambda corpus: ["--corpus", str(corpus / ".." / corpus.name)],
    ],
)
def test_a_resume_that_repeats_what_the_run_has_is_accepted(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str], same: object
) -> None:
    state = tmp_path / "state"
    _cut(state, corpus)
    extra = same(corpus)  # type: ignore[operator]
    assert main(["run", "--resume", SLUG, "--state", str(state), *extra, "--json"]) in (0, 1)
    assert json.loads(capsys.readouterr().out)["slug"] == SLUG


def test_a_run_that_recorded_no_corpus_is_told_it_once(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    start(  # through the library, which records what its caller gives: no corpus here
        RunRequest(QUESTION, state),
        open_corpus(str(corpus), state),
        ExtractiveReasoner(),
        load_settings(environ={}),
        default_limits("quick"),
        Progress(quiet=True),
        stop_after="cast",
    )
    assert main(["run", "--resume", SLUG, "--state", str(state)]) == 2
    assert "records no corpus; pass the --corpus it searched" in _error(capsys)
    argv = ["run", "--resume", SLUG, "--state", str(state), "--corpus", str(corpus), "--json"]
    assert main(argv) in (0, 1)
    assert read_phase(Brief(state / "briefs" / SLUG), "run")["corpus"] == str(corpus.resolve())


def test_resume_of_a_name_with_no_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    assert main(["run", "--resume", "never-started", "--state", str(state)]) == 2
    assert "no run to resume" in _error(capsys)
    assert main(["run", "--resume", "../elsewhere", "--state", str(state)]) == 2
    assert "give the brief's name" in _error(capsys)


def test_a_repeated_quick_question_says_what_will_happen(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    argv = ["run", QUESTION, "--corpus", str(corpus), "--state", str(state), "--json"]
    assert main(argv) in (0, 1)
    capsys.readouterr()
    assert main(argv) in (0, 1)
    out, err = capsys.readouterr()
    said = next(line for line in err.splitlines() if " fresh " in line)
    assert "not reusing the brief" in said and "never reused" in said
    assert "researching the question again at quick depth" in said
    assert "research at full depth" not in said  # what it did not then do
    assert json.loads(out)["reused"] is False
    # Asked over another corpus, the brief is never taken for an answer from this one.
    other = tmp_path / "other"
    (other / "gamma").mkdir(parents=True)
    (other / "gamma" / "notes.md").write_text(DOCS["alpha/comparisons.md"], encoding="utf-8")
    assert main(["run", QUESTION, "--corpus", str(other), "--state", str(state), "--json"]) in (
        0,
        1,
    )
    out, err = capsys.readouterr()
    said = next(line for line in err.splitlines() if " fresh " in line)
    assert f"it was researched over {corpus.resolve()}, not {other.resolve()}" in said
    assert json.loads(out)["adapter"] == "local:other"


# --- runs on one state folder take turns ------------------------------------------------------


def test_the_state_lock_makes_a_second_holder_wait(tmp_path: Path) -> None:
    told, done = threading.Event(), []

    def second() -> None:
        with state_lock(tmp_path, lambda holder: told.set()):
            done.append("second")

    with state_lock(tmp_path):
        with state_lock(tmp_path):  # re-entrant in the holding thread
            done.append("nested")
        other = threading.Thread(target=second)
        other.start()
        assert told.wait(30)  # it is waiting, and was told so
        done.append("first")
    other.join(30)
    assert done == ["nested", "first", "second"]


def _spawn(argv: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "deep_research.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("DEEP_RESEARCH_")},
    )


@pytest.mark.parametrize(
    "kind",
    ["two questions, fresh state", "one question twice", "two --refresh runs"],
)
def test_runs_started_together_on_one_state_folder_take_turns(
    tmp_path: Path, corpus: Path, kind: str
) -> None:
    state = tmp_path / "state"
    base = ["--corpus", str(corpus), "--state", str(state), "--json"]
    questions = [QUESTION, "What do comparison operators share?"]
    if kind != "two questions, fresh state":
        questions = [QUESTION, QUESTION]
    refresh = ["--refresh"] if kind == "two --refresh runs" else []
    if refresh:
        assert main(["run", QUESTION, *base]) in (0, 1)
    processes = [_spawn(["run", question, *base, *refresh]) for question in questions]
    results = [(p.wait(timeout=300), *p.communicate()) for p in processes]
    for code, out, err in results:
        assert code in (0, 1), err
        assert "Traceback" not in err and "Error" not in err
        assert json.loads(out)["verdict"] is not None
    for question in set(questions):
        assert validate_brief(state / "briefs" / slugify(question)).ok
    if refresh:
        # Each refresh moved the brief before it aside, whole.
        assert len(list((state / "briefs" / ".superseded").iterdir())) == 2


# --- what the run prints ----------------------------------------------------------------------


def test_run_json_keeps_progress_on_stderr(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", QUESTION, "--corpus", str(corpus), "--state", str(tmp_path / "s"), "--json"]
    assert main(argv) in (0, 1)
    out, err = capsys.readouterr()
    assert json.loads(out)["slug"] == SLUG  # stdout is the JSON alone
    assert "] plan " in err and "] verdict " in err  # progress, as without --json


def test_the_summary_shows_every_verdict_reason(tmp_path: Path) -> None:
    reasons = [f"rule {n} → HOLD: reason number {n}" for n in range(1, 8)]
    result = RunResult(
        slug=SLUG,
        brief=tmp_path,
        verdict="HOLD",
        reasons=reasons,
        claims=0,
        stripped=0,
        sources=0,
        incomplete=[],
        not_found=[],
        reasoner="extractive",
        adapter="local:docs",
        report=None,
        spend={},
    )
    lines = result.summary_lines()
    assert [line.strip() for line in lines[1:8]] == reasons
