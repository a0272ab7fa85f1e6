"""A real ``deep-research run`` process, killed (SIGKILL) or interrupted (SIGINT, SIGTERM) part-way.

The in-process resume tests stop *between* phases by asking the runner to; these kill the OS
process, so whatever the runner had half-written is on disk exactly as a crash leaves it. Kill
points come from the runner's test-only pause (``DEEP_RESEARCH_TEST_PAUSE``, which only sleeps):
``after:<phase>`` is just after the checkpoint, ``within:<phase>`` is after the phase wrote its
artifacts but before it was recorded as done — the worst mid-phase point, since resume must redo
that phase on top of its own output. One more kill lands at an arbitrary moment (no pause).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from deep_research.brief.layout import Brief, slugify
from deep_research.cli import main
from deep_research.gates.trace import emitted_claims
from deep_research.run.crashpoint import TEST_PAUSE_ENV
from deep_research.run.pipeline import phase_names
from deep_research.schemas import validate_brief

QUESTION = "How are chained comparisons evaluated?"
SLUG = slugify(QUESTION)
WAIT_S = 30.0

# Two owners (top-level folders), a few sentences each: enough for claims, fast to index.
DOCS = {
    "alpha/comparisons.md": (
        "# Comparisons\n\n"
        "Comparisons can be chained arbitrarily, so x < y <= z is equivalent to x < y and "
        "y <= z, except that y is evaluated only once.\n\n"
        "In a chained comparison, z is not evaluated at all when x < y is found to be false.\n"
    ),
    "beta/operators.md": (
        "# Operators\n\n"
        "A chained comparison such as a < b < c evaluates each operand at most once and stops "
        "at the first comparison that is false.\n\n"
        "The comparison operators all have the same priority, which is lower than that of any "
        "arithmetic, shifting or bitwise operation.\n"
    ),
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    for name, text in DOCS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def uninterrupted(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    state = tmp_path_factory.mktemp("whole")
    return _finish(
        [
            "run",
            QUESTION,
            "--corpus",
            str(corpus),
            "--depth",
            "quick",
            "--state",
            str(state),
            "--json",
        ]
    )


def _finish(argv: list[str]) -> dict[str, object]:
    """Run in-process (fast) and return the --json summary."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(argv)
    assert code == 0, out.getvalue()
    summary: dict[str, object] = json.loads(out.getvalue())
    return summary


def _spawn(corpus: Path, state: Path, pause: str | None) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != TEST_PAUSE_ENV}
    if pause is not None:
        env[TEST_PAUSE_ENV] = pause
    return subprocess.Popen(
        [
            sys.executable,
            "-c",
            # Ctrl-C as a terminal delivers it: a job started in the background of a script
            # (a CI runner's, say) inherits SIGINT ignored, and Python then never raises it.
            "import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
            "from deep_research.cli import main; sys.exit(main(sys.argv[1:]))",
            "run",
            QUESTION,
            "--corpus",
            str(corpus),
            "--depth",
            "quick",
            "--state",
            str(state),
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _lines(stream: object) -> Iterator[str]:
    assert stream is not None
    yield from iter(stream.readline, "")  # type: ignore[attr-defined]


def _wait_for_pause(process: subprocess.Popen[str], pause: str) -> list[str]:
    """Read stderr until the pause line; the process is then asleep at the named point."""
    when, phase = pause.split(":")
    seen = []
    deadline = time.monotonic() + WAIT_S
    for line in _lines(process.stderr):
        seen.append(line)
        if line.strip() == f"test pause: {when} {phase}":
            return seen
        assert time.monotonic() < deadline, seen
    pytest.fail(f"the run ended without reaching {pause}: {seen}")


def _completed(state: Path) -> list[str]:
    trace = json.loads((state / "briefs" / SLUG / "trace.json").read_text(encoding="utf-8"))
    return list(trace["phases"]["run"]["completed"])


def _resume_and_compare(
    state: Path, corpus: Path, uninterrupted: dict[str, object], command: list[str] | None = None
) -> None:
    brief = state / "briefs" / SLUG
    report = validate_brief(brief)
    assert report.ok, report.problems
    # The brief remembers its corpus and depth: --resume needs only its name and its state.
    resumed = _finish([*(command or ["run", "--resume", SLUG, "--state", str(state)]), "--json"])
    assert resumed["adapter"] == f"local:{corpus.name}"
    assert resumed["verdict"] == uninterrupted["verdict"]
    assert resumed["claims"] == uninterrupted["claims"]
    assert resumed["verdict_reasons"] == uninterrupted["verdict_reasons"]
    assert validate_brief(brief).ok
    assert emitted_claims(Brief(brief).load_claims())


@pytest.mark.parametrize(
    "pause",
    # Every phase mid-way (its own output on disk, not recorded), and a few boundaries (the
    # in-process tests already stop at every boundary).
    [f"within:{phase}" for phase in phase_names("quick")]
    + ["after:plan", "after:normalize", "after:triangulate", "after:verdict"],
)
def test_sigkill_at_a_phase_point_leaves_a_valid_brief_that_resumes_to_the_same_verdict(
    corpus: Path, uninterrupted: dict[str, object], tmp_path: Path, pause: str
) -> None:
    state = tmp_path / "state"
    process = _spawn(corpus, state, pause)
    try:
        _wait_for_pause(process, pause)
        when, phase = pause.split(":")
        done = _completed(state)
        # The pause is where the test says: after → recorded, within → written but not recorded.
        assert (phase in done) == (when == "after"), done
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=WAIT_S) == -signal.SIGKILL
    finally:
        process.kill()
        process.communicate()
    _resume_and_compare(state, corpus, uninterrupted)


def test_sigkill_at_an_arbitrary_moment_leaves_a_valid_brief_that_resumes(
    corpus: Path, uninterrupted: dict[str, object], tmp_path: Path
) -> None:
    state = tmp_path / "state"
    process = _spawn(corpus, state, None)
    try:
        # Kill once the run has begun writing the brief, wherever it then is (often mid-phase).
        deadline = time.monotonic() + WAIT_S
        while not (state / "briefs" / SLUG / "trace.json").exists():
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.005)
        time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=WAIT_S)
    finally:
        process.kill()
        process.communicate()
    if "render" in _completed(state):
        pytest.skip("the run finished before the kill landed")  # a machine far faster than ours
    _resume_and_compare(state, corpus, uninterrupted)


@pytest.mark.parametrize(
    ("pause", "signum"),
    [
        ("after:cast", signal.SIGINT),
        ("within:triangulate", signal.SIGINT),
        ("within:claims", signal.SIGTERM),
    ],
)
def test_ctrl_c_or_sigterm_exits_130_with_one_line_and_leaves_a_resumable_brief(
    corpus: Path, uninterrupted: dict[str, object], tmp_path: Path, pause: str, signum: int
) -> None:
    state = tmp_path / "state"
    process = _spawn(corpus, state, pause)
    try:
        _wait_for_pause(process, pause)
        process.send_signal(signum)
        out, err = process.communicate(timeout=WAIT_S)
    finally:
        process.kill()
    assert process.returncode == 130
    # After the pause line: where the run stopped, with the command that continues it, then
    # the one interruption line. --json changes stdout only.
    hint, last = err.splitlines()
    assert last == "deep-research: interrupted", err
    assert "Traceback" not in err and out == ""
    assert not (state / "briefs" / SLUG / ".lock").exists()  # released, not left stale
    printed = hint.split("continue with: ", 1)[1]
    assert printed == f"deep-research run --resume {SLUG} --state {shlex.quote(str(state))}"
    _resume_and_compare(state, corpus, uninterrupted, shlex.split(printed)[1:])
