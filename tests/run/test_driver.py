"""The headless run end to end: real corpus, real gates, scripted misbehaving reasoners."""

from __future__ import annotations

import json
import shlex
import time
from pathlib import Path

import pytest

from briefs import assert_verified, held_elsewhere, read_phase
from conftest import REPO
from deep_research.brief.layout import Brief, slugify
from deep_research.cli import main
from deep_research.errors import BriefBusy, InputError
from deep_research.gates.trace import emitted_claims
from deep_research.models import SourceRow
from deep_research.run.driver import Progress, RunRequest, RunResult, start
from deep_research.run.governor import MAX_SEARCHES_PER_WORKER, MAX_WORKERS, Limits, default_limits
from deep_research.run.interface import CallPrice
from deep_research.run.localcorpus import LocalCorpus, open_corpus
from deep_research.run.phases import build_claims
from deep_research.run.pipeline import phase_names
from deep_research.run.reasoners import ExtractiveReasoner
from deep_research.schemas import validate_brief
from deep_research.settings import load_settings
from fakereasoner import ScriptedReasoner

QUESTION = "How does Python evaluate chained comparisons?"


def _quiet() -> Progress:
    return Progress(quiet=True)


def _run(
    state: Path,
    reasoner: object,
    *,
    question: str = QUESTION,
    corpus: LocalCorpus | None = None,
    limits: Limits | None = None,
    **kwargs: object,
) -> RunResult:
    adapter = corpus or open_corpus("python-docs", state)
    return start(
        RunRequest(question, state, **kwargs),  # type: ignore[arg-type]
        adapter,
        reasoner,  # type: ignore[arg-type]
        load_settings(environ={}),
        limits or default_limits("quick"),
        _quiet(),
    )


# --- the README command ------------------------------------------------------------------------


def readme_main_job() -> list[str]:
    """The README's first command, after its set-up part: the main job, as a newcomer runs it."""
    first = next(
        line
        for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines()
        if "deep-research run" in line
    )
    words = shlex.split(first.split("&&", 1)[1].split("#", 1)[0])
    assert words[:3] == ["deep-research", "run", QUESTION], words
    return words


#: What the README's main command prints under its verdict, in order.
READ_FIRST = (
    "PARTIAL_QUICK: a quick first look, usable within the limits listed below; only a "
    "full-depth run (--depth full) can be READY [quick-depth]"
)
TAU_ZERO = (
    "PARTIAL: too few findings are confirmed by two independent sources (τ 0.0, needs 0.85); "
    "a second publisher for each finding, from another corpus or host, would raise it "
    "[tau-below-threshold]"
)


def test_readme_command_end_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DEEP_RESEARCH_STATE", raising=False)
    code = main(readme_main_job()[1:])
    out = capsys.readouterr()
    brief = tmp_path / "state" / "briefs" / slugify(QUESTION)
    assert code == 0, out.err
    assert "verdict:" in out.out
    assert f"report: state/briefs/{slugify(QUESTION)}/report.md" in out.out
    assert "[" in out.err and "render" in out.err  # progress lines go to stderr
    assert_verified(brief)
    document = Brief(brief).load_claims()
    # One publisher (the Python docs) is one voice: τ is 0. At quick depth that is reported
    # beside the verdict, which stays PARTIAL_QUICK (PARTIAL presumes the adversarial round).
    assert document.verdict == "PARTIAL_QUICK"
    # What a newcomer reads first under the verdict is what happened, in words, the rule's id
    # last: never a rule number ("rule 8 → PARTIAL_QUICK: …", "rule 6 → PARTIAL: τ 0.0 < 0.85").
    printed = out.out.splitlines()
    assert printed[:3] == ["verdict: PARTIAL_QUICK", f"  {READ_FIRST}", f"  {TAU_ZERO}"], out.out
    assert "→" not in "\n".join(printed[:3])
    assert document.verdict_reasons == [READ_FIRST, TAU_ZERO]
    assert document.depth == "quick" and document.ciber_skipped == "depth-quick"
    assert emitted_claims(document), "the docs answer this question"
    assert any("chained" in c.claim for c in emitted_claims(document))
    report = (brief / "report.md").read_text(encoding="utf-8")
    assert "extractive reasoner" in report
    trace = Brief(brief).load_trace()
    assert trace.phases["panel"]["skipped"].startswith("extractive reasoner")
    assert document.ciber_passed is None and document.claims[0].votes is None


def test_duplicated_sentence_under_two_owners_is_one_voice(tmp_path: Path) -> None:
    # Adversarial twin of the README run: the same sentence under two owners is a near-copy,
    # so independence stays 1 — a corpus cannot manufacture triangulation by duplication.
    sentence = (
        "Comparisons can be chained arbitrarily, so x < y <= z means x < y and y <= z "
        "with y evaluated only once."
    )
    for owner in ("alpha", "beta"):
        (tmp_path / "docs" / owner).mkdir(parents=True)
        (tmp_path / "docs" / owner / "note.md").write_text(f"# Notes\n\n{sentence}\n")
    corpus = open_corpus(str(tmp_path / "docs"), tmp_path / "state")
    result = _run(tmp_path / "state", ExtractiveReasoner(), corpus=corpus)
    claims = emitted_claims(Brief(result.brief).load_claims())
    assert claims and all(c.independent_count == 1 for c in claims)
    document = Brief(result.brief).load_claims()
    assert document.triangulation_score == 0.0
    assert TAU_ZERO in document.verdict_reasons


def test_json_summary_and_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = str(tmp_path / "s")
    assert main(["run", QUESTION, "--corpus", "python-docs", "--state", state, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["verdict"] == "PARTIAL_QUICK" and summary["reasoner"] == "extractive"
    assert summary["partial"] is False and summary["claims"] > 0
    assert (
        main(["run", QUESTION, "--reasoner", "nobody", "--corpus", "python-docs", "--state", state])
        == 2
    )
    # A reasoner that is not installed is named, with what is: never a traceback.
    assert "unknown reasoner 'nobody'; use one of: auto, extractive" in capsys.readouterr().err
    # One that is installed but cannot run here says why (no key), and spends nothing.
    assert (
        main(["run", QUESTION, "--reasoner", "claude", "--corpus", "python-docs", "--state", state])
        == 2
    )
    assert "'claude' is not available here: ANTHROPIC_API_KEY is not set" in (
        capsys.readouterr().err
    )
    assert main(["run", QUESTION, "--state", state]) == 2
    assert "--corpus" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main(["run", QUESTION, "--corpus", str(tmp_path / "empty"), "--state", state]) == 2
    assert "holds no" in capsys.readouterr().err


def test_finished_quick_brief_is_regenerated_never_reused(tmp_path: Path) -> None:
    first = _run(tmp_path, ExtractiveReasoner())
    again = _run(tmp_path, ExtractiveReasoner())
    assert not again.reused and again.verdict == first.verdict
    assert len(list((tmp_path / "briefs" / ".superseded").iterdir())) == 1


# --- caps ------------------------------------------------------------------------------------


def _workers(brief: Path) -> list[dict[str, object]]:
    return list(read_phase(Brief(brief), "cast")["workers"])


def test_plan_asking_for_50_workers_and_ten_million_searches_is_clamped(tmp_path: Path) -> None:
    # A small folder: every worker runs out of new documents long before the fetch cap, so
    # what stops it is the clamp on its searches (python-docs holds enough to reach the cap).
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a", "b", "c"):
        (docs / f"{name}.md").write_text(
            f"# {name}\n\nChained comparisons evaluate each operand once; comparison operators "
            f"bind alike ({name}).\n"
        )
    reasoner = ScriptedReasoner(workers=50, max_searches=10_000_000, endless=True)
    result = _run(tmp_path / "state", reasoner, corpus=open_corpus(str(docs), tmp_path / "state"))
    plan = read_phase(Brief(result.brief), "plan")
    assert plan["asked"] == 50
    assert len(plan["sub_questions"]) == MAX_WORKERS
    assert all(sq["max_searches"] == MAX_SEARCHES_PER_WORKER for sq in plan["sub_questions"])
    for worker in _workers(result.brief):
        assert len(worker["queries"]) == MAX_SEARCHES_PER_WORKER  # type: ignore[arg-type]
    assert_verified(result.brief)


def test_cost_cap_below_plan_returns_partial_all_supported_brief(tmp_path: Path) -> None:
    price = CallPrice(tokens=1000, usd=0.01)
    # Worst case of one worker (2 turns × 6 calls) plus the fixed calls fits; three do not.
    limits = default_limits("quick").lowered(usd=2.0)
    reasoner = ScriptedReasoner(workers=3, max_searches=2, call_price=price)
    result = _run(tmp_path, reasoner, limits=limits)
    assert result.partial
    assert any(reason.startswith("usd") for reason in result.incomplete)
    document = Brief(result.brief).load_claims()
    assert any(gap.startswith("incomplete:usd") for gap in document.coverage_gaps)
    # A capped run can never read READY: the verdict lists the cap (run-incomplete). Here the
    # cap also dropped two of three sub-questions, so the sub-question floor holds the brief.
    assert result.verdict == "HOLD"
    assert document.verdict_reasons[0].endswith("[floor-unmet:sub_questions]")
    assert any(
        reason.startswith("PARTIAL: a cap stopped the run early")
        and ": usd" in reason
        and reason.endswith("[run-incomplete]")
        for reason in document.verdict_reasons
    )
    assert result.spend["usd"] <= 2.0
    assert emitted_claims(document)
    assert_verified(result.brief)


def test_cost_cap_below_one_worker_is_refused_before_any_fan_out(tmp_path: Path) -> None:
    reasoner = ScriptedReasoner(call_price=CallPrice(tokens=1000, usd=1.0))
    with pytest.raises(InputError, match="cannot cover one worker"):
        _run(tmp_path, reasoner, limits=default_limits("quick").lowered(usd=0.5))
    assert "extract" not in reasoner.calls


def test_reasoner_that_never_stops_is_stopped_by_the_turn_cap(tmp_path: Path) -> None:
    reasoner = ScriptedReasoner(workers=3, max_searches=4, endless=True)
    result = _run(tmp_path, reasoner)
    for worker in _workers(result.brief):
        assert len(worker["queries"]) == 4  # type: ignore[arg-type]
        assert worker["complete"] is False and "turn cap" in str(worker["reason"])
    assert result.partial
    # At quick depth the cut-short workers are listed and the verdict stays PARTIAL_QUICK.
    assert result.verdict == "PARTIAL_QUICK"
    assert any(
        "only part of the question: sq1 complete: false" in reason
        and reason.endswith("[run-incomplete]")
        for reason in result.reasons
    )
    assert_verified(result.brief)


def test_honest_reasoner_is_not_cut_short(tmp_path: Path) -> None:
    result = _run(tmp_path, ScriptedReasoner(workers=3, max_searches=2))
    assert all(worker["complete"] for worker in _workers(result.brief))
    assert not result.partial


def test_question_without_answer_stops_with_explicit_not_found(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "garden.md").write_text(
        "# Tomatoes\n\nTomatoes need full sun and regular watering through the summer months.\n"
        "\nA ripe tomato gains mass quickly once the nights stay warm in late summer.\n"
    )
    corpus = open_corpus(str(tmp_path / "docs"), tmp_path / "state")
    reasoner = ScriptedReasoner(
        workers=3, max_searches=3, endless=True, queries=("top quark mass",)
    )
    result = _run(
        tmp_path / "state", reasoner, corpus=corpus, question="What is the mass of the top quark?"
    )
    assert result.claims == 0
    assert len(result.not_found) == 3
    document = Brief(result.brief).load_claims()
    assert document.synthesis is not None and not emitted_claims(document)
    # An empty brief is never a usable answer, however cleanly its gates ran.
    assert result.verdict == "HOLD" and result.reasons[0] == (
        "HOLD: no claim survived the checks: the sources found do not answer the question; "
        "search with other queries, another corpus or other hosts [no-verified-claim]"
    )
    assert_verified(result.brief)


def test_corpus_without_any_matching_document_gives_a_not_found_brief(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "garden.md").write_text(
        "# Tomatoes\n\nTomatoes need full sun and regular watering through the summer months.\n"
    )
    state = str(tmp_path / "state")
    code = main(
        [
            "run",
            "What is the mass of the top quark?",
            "--corpus",
            str(tmp_path / "docs"),
            "--state",
            state,
            "--json",
        ]
    )
    summary = json.loads(capsys.readouterr().out)
    assert code == 1 and summary["verdict"] == "HOLD"
    assert summary["claims"] == 0 and summary["sources"] == 0
    assert summary["not_found"] and all("no passage" in gap for gap in summary["not_found"])
    assert summary["report"] is not None
    assert "top quark" in Path(summary["report"]).read_text(encoding="utf-8")
    assert_verified(Path(summary["brief"]))


def test_wedged_worker_becomes_incomplete_at_the_shared_deadline(tmp_path: Path) -> None:
    corpus = open_corpus("python-docs", tmp_path)
    reasoner = ScriptedReasoner(workers=3, wedge="sq2")
    limits = default_limits("quick").lowered(deadline_s=1.5)
    began = time.monotonic()
    try:
        result = _run(tmp_path, reasoner, corpus=corpus, limits=limits)
    finally:
        reasoner.release.set()
    assert time.monotonic() - began < 10
    workers = {str(w["id"]): w for w in _workers(result.brief)}
    assert workers["sq2"]["complete"] is False
    assert "deadline" in str(workers["sq2"]["reason"])
    assert workers["sq1"]["complete"] is True
    assert any("sq2 complete: false" in reason for reason in result.incomplete)
    assert_verified(result.brief)


# --- checkpoints and resume ------------------------------------------------------------------


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    """The uninterrupted quick run, made once: the cut runs are held to its verdict and claims."""
    return _run(tmp_path_factory.mktemp("whole"), ExtractiveReasoner())


@pytest.mark.parametrize("phase", phase_names("quick"))
def test_killed_after_any_phase_validates_and_resumes_to_the_same_verdict(
    tmp_path: Path, whole: RunResult, phase: str
) -> None:
    state = tmp_path / "cut"
    corpus = open_corpus("python-docs", state)
    settings = load_settings(environ={})
    request = RunRequest(QUESTION, state)
    cut = start(
        request,
        corpus,
        ExtractiveReasoner(),
        settings,
        default_limits("quick"),
        _quiet(),
        stop_after=phase,
    )
    assert validate_brief(cut.brief).ok
    done = read_phase(Brief(cut.brief), "run")["completed"]
    assert done[-1] == phase
    resumed = start(
        RunRequest(QUESTION, state, resume=cut.slug),
        corpus,
        ExtractiveReasoner(),
        settings,
        default_limits("quick"),
        _quiet(),
    )
    assert resumed.verdict == whole.verdict
    assert resumed.claims == whole.claims
    assert_verified(resumed.brief)


def test_unfinished_run_needs_resume_or_refresh(tmp_path: Path) -> None:
    corpus = open_corpus("python-docs", tmp_path)
    settings = load_settings(environ={})
    start(
        RunRequest(QUESTION, tmp_path),
        corpus,
        ExtractiveReasoner(),
        settings,
        default_limits("quick"),
        _quiet(),
        stop_after="cast",
    )
    with pytest.raises(InputError, match="--resume"):
        _run(tmp_path, ExtractiveReasoner(), corpus=corpus)
    with pytest.raises(InputError, match="no run to resume"):
        _run(tmp_path, ExtractiveReasoner(), corpus=corpus, resume="never-started")


def test_second_run_on_the_same_brief_is_refused(tmp_path: Path) -> None:
    brief = tmp_path / "briefs" / slugify(QUESTION)
    brief.mkdir(parents=True)
    (brief / "trace.json").write_text(
        json.dumps(
            {"phases": {"run": {"question": QUESTION, "depth": "quick", "completed": ["plan"]}}}
        )
    )
    with held_elsewhere(brief), pytest.raises(BriefBusy):  # another run holds the brief
        _run(tmp_path, ExtractiveReasoner(), resume=slugify(QUESTION))


def test_spend_is_counted_per_run_across_a_resume(tmp_path: Path) -> None:
    price = CallPrice(tokens=1000, usd=0.01)
    whole = _run(tmp_path / "whole", ScriptedReasoner(call_price=price))
    state = tmp_path / "cut"
    corpus = open_corpus("python-docs", state)
    settings = load_settings(environ={})
    limits = default_limits("quick")
    cut = start(
        RunRequest(QUESTION, state),
        corpus,
        ScriptedReasoner(call_price=price),
        settings,
        limits,
        _quiet(),
        stop_after="cast",
    )
    assert cut.spend["usd"] > 0
    resumed = start(
        RunRequest(QUESTION, state, resume=cut.slug),
        corpus,
        ScriptedReasoner(call_price=price),
        settings,
        limits,
        _quiet(),
    )
    # Spend before the interruption still counts: the cap is per run, not per process.
    assert resumed.spend == whole.spend


def test_a_shared_finding_goes_to_the_finder_holding_fewest_claims() -> None:
    def row(number: int, claims: list[str]) -> SourceRow:
        return SourceRow.model_validate(
            {
                "id": f"S{number}",
                "url": f"file://docs/{number}.md",
                "sub_questions": ["sq1"],
                "findings": [
                    {"id": f"S{number}.F{i}", "claim": c, "quote": c}
                    for i, c in enumerate(claims, start=1)
                ],
            }
        )

    a, b, c = (
        "A is found by both workers.",
        "B is found by both workers too.",
        "C is found by the first worker only.",
    )
    rows = [row(1, [a, b]), row(2, [c])]
    finders = {
        " ".join(k.casefold().split()): v
        for k, v in {a: ["sq1", "sq2"], b: ["sq1", "sq2"], c: ["sq1"]}.items()
    }
    assert {claim.claim: claim.sq for claim in build_claims(rows, 10, finders)} == {
        a: "sq1",
        b: "sq2",
        c: "sq1",
    }


def test_ranked_findings_put_the_claims_the_words_say_answer_first_and_drop_none() -> None:
    def row(number: int, claim: str) -> SourceRow:
        return SourceRow.model_validate(
            {
                "id": f"S{number}",
                "url": f"file://docs/{number}.md",
                "sub_questions": ["sq1"],
                "findings": [{"id": f"S{number}.F1", "claim": claim, "quote": claim}],
            }
        )

    widely = "The river is quoted by two publishers, on another subject."
    answers = "The ferry crossing takes twelve minutes at high water."
    near = "The ferry timetable is printed at the quay."
    rows = [row(1, widely), row(2, widely), row(3, near), row(4, answers)]
    ranks = {"S1.F1": 0.4, "S2.F1": 0.4, "S3.F1": 0.8, "S4.F1": 1.9}
    built = [claim.claim for claim in build_claims(rows, 10, ranks=ranks)]
    assert built == [answers, widely, near]  # then more sources, then the higher rank
    assert [claim.claim for claim in build_claims(rows, 1, ranks=ranks)] == [answers]
    # Without ranks, the order is by sources alone, as before.
    assert build_claims(rows, 10)[0].claim == widely


# --- one brief name for both drivers ---------------------------------------------------------


def test_a_brief_started_by_the_plugin_is_the_one_run_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID", raising=False)
    state = tmp_path / "state"
    assert main(["start", QUESTION, "--depth", "quick", "--state", str(state)]) == 0
    started = Path(json.loads(capsys.readouterr().out)["brief"])
    assert started == (state / "briefs" / slugify(QUESTION)).resolve()
    main(["finish", str(started), "--state", str(state)])
    capsys.readouterr()
    # --resume finds the plugin's brief under the same name and says what it is.
    assert (
        main(
            ["run", "--resume", slugify(QUESTION), "--corpus", "python-docs", "--state", str(state)]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert f"{started} is a Claude Code plugin run" in err
    # The same question asked headless finds it too, and never moves it aside unasked.
    assert main(["run", QUESTION, "--corpus", "python-docs", "--state", str(state)]) == 2
    assert "plugin run with no verdict yet" in capsys.readouterr().err
    assert (started / "run.json").is_file()
    # The reverse: a headless brief is the one the plugin's start finds. A quick brief is never
    # reused, so start moves it aside whole and the plugin run begins clean in its place.
    other = "How does Python compare sequences?"
    headless = _run(state, ExtractiveReasoner(), question=other)
    assert main(["start", other, "--depth", "quick", "--state", str(state)]) == 0
    found = json.loads(capsys.readouterr().out)
    assert Path(found["brief"]) == headless.brief.resolve() and not found["existing_brief"]
    kept = Path(found["superseded"])
    assert kept.name.startswith(headless.brief.name) and (kept / "report.md").is_file()
