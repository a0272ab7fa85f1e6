"""The headless run with links no source has: each run ends with a verdict and report.md, the
link withheld with its reason shown; a link a page states stays linked; a brief a run left
behind is finished by ``run --resume``."""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deep_research.brief.layout import Brief, slugify
from deep_research.cli import main
from deep_research.decide.audit import URL_WITHHELD
from deep_research.run.driver import RunRequest, start
from deep_research.run.governor import default_limits
from deep_research.run.localcorpus import open_corpus
from deep_research.run.progress import Progress
from deep_research.run.reasoners import ExtractiveReasoner
from deep_research.settings import load_settings
from deep_research.shown_urls import WITHHELD
from fakereasoner import StrayLinkReasoner

INVENTED = "https://invented.example/chained-comparisons/history"
#: A URL a page of the corpus states: quoted, it is text the page says.
STATED = "https://reference.example/expressions/comparisons"

QUESTION = "How are chained comparisons evaluated?"
ONCE = "A chained comparison evaluates each operand at most once."
STOPS = "A chained comparison stops at the first comparison that is false."
#: The claim the panel refutes, written with a link no source has: stripped, kept for the record.
PLANTED = f"Chained comparisons were introduced in Python 3.0, see {INVENTED}."
DOCS = {
    "alpha/comparisons.md": [
        (
            "In a chained comparison each operand is evaluated at most once, even when it is "
            "shared by two comparisons.",
            ONCE,
        ),
        (
            "Evaluation of a chained comparison stops at the first comparison that turns out to "
            "be false.",
            STOPS,
        ),
        (
            "Some tutorials claim that chained comparisons were introduced in Python 3.0 by a "
            "later proposal.",
            PLANTED,
        ),
        (
            f"The full grammar of chained comparisons is given at {STATED} in the reference.",
            f"The full grammar of chained comparisons is given at {STATED}.",
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
    ],
}
FLOORS = (
    "full_sub_questions=2",
    "full_queries_per_sub_question=1",
    "full_round1_fetches=1",
    "full_distinct_sources=2",
    "full_counter_queries_per_sub_question=1",
    "full_round2_fetches=0",
)


def _corpus(root: Path) -> Path:
    for relative, sentences in DOCS.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(quote for quote, _ in sentences)
        path.write_text(f"# {path.stem.title()}\n\n{body}\n", encoding="utf-8")
    return root


def _verify(brief: Path) -> dict[str, object]:
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        main(["verify", str(brief), "--offline"])
    checked: dict[str, object] = json.loads(printed.getvalue())
    return checked


def test_a_model_run_with_invented_links_ends_with_a_verdict_and_report(tmp_path: Path) -> None:
    """A model writes a link no source has in a claim the panel strips, in a synthesis sentence
    and in the contradiction note CIBER records: each is withheld, the run ends PARTIAL (CIBER
    found the re-framing supported), and a link a page states stays linked."""
    state, docs = tmp_path / "state", _corpus(tmp_path / "docs")
    reasoner = StrayLinkReasoner(
        script={quote: claim for sentences in DOCS.values() for quote, claim in sentences},
        queries=("chained comparison operand", "chained comparison false"),
        refute=frozenset({PLANTED}),
        ciber_passed=False,
        link=INVENTED,
        quoted=STATED,
    )
    result = start(
        RunRequest(QUESTION, state, depth="full"),
        open_corpus(str(docs), state),
        reasoner,
        load_settings(FLOORS, environ={}),
        default_limits("full"),
        Progress(quiet=True),
    )
    assert result.verdict == "PARTIAL", result.reasons
    document = Brief(result.brief).load_claims()
    claims_json = Brief(result.brief).claims_path.read_text(encoding="utf-8")
    report = (result.brief / "report.md").read_text(encoding="utf-8")
    for shown in (claims_json, report):
        assert "invented.example" not in shown and WITHHELD in shown
    (stripped,) = [s for s in document.stripped if s.claim.startswith("Chained comparisons were")]
    assert stripped.claim.endswith(f"see {WITHHELD}.")
    # The answer's sentence citing by the invented URL is struck, kept beside it as written.
    written = " ".join([document.synthesis or "", *(s.text for s in document.synthesis_struck)])
    assert WITHHELD in written
    (ciber,) = document.unresolved_contradictions
    assert ciber.description.endswith(f"as {WITHHELD} shows")
    (note,) = [r for r in result.reasons if r.endswith("[links-withheld]")]
    # The struck sentence, and the reason it was struck, each show the link once.
    assert note.startswith("4 link(s) that no source of this brief has"), note
    assert note.endswith(
        f"withheld where they stood: contradiction 1, {stripped.id} (stripped), the answer (2) "
        "[links-withheld]"
    )
    assert f"are shown as {WITHHELD}." in report
    # The page's own link is quoted text: linked wherever the brief repeats it.
    assert STATED in written and STATED in report
    assert _verify(result.brief)["identical"] is True


# --- the extractive reasoner's "nearest passage": cut, never inside a URL ----------------------

ARCHIVE = "https://archive.example.org/collections/harbour-bridge/ceremony-programme-for-visitors"
BRIDGE = (
    "# Harbour bridge\n\n"
    # A year, so a "when" question reads the sentence as one that could answer it.
    f"The 1932 harbour bridge ceremony programme is kept in the city archive at {ARCHIVE}.\n\n"
    "The harbour bridge is painted grey every ten years by the city works department.\n"
)
BRIDGE_QUESTION = "When was the harbour bridge opened?"


@pytest.fixture
def bridge(tmp_path: Path) -> Path:
    (tmp_path / "docs" / "city").mkdir(parents=True)
    (tmp_path / "docs" / "city" / "bridge.md").write_text(BRIDGE, encoding="utf-8")
    return tmp_path / "docs"


def _run(*argv: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return main(list(argv))


def test_a_nearest_passage_is_never_cut_inside_a_url(bridge: Path, tmp_path: Path) -> None:
    state = tmp_path / "state"
    assert _run("run", BRIDGE_QUESTION, "--corpus", str(bridge), "--state", str(state)) == 1
    brief = state / "briefs" / slugify(BRIDGE_QUESTION)
    (gap,) = Brief(brief).load_claims().coverage_gaps
    assert 'city archive at…"' in gap and "archive.example" not in gap, gap
    assert (brief / "report.md").is_file()


#: What an earlier version left in claims.json before its verdict refused the brief: the
#: excerpt cut inside the URL (a new, unknown one), a synthesis sentence and a stripped claim
#: with a link no source has.
LEFT_BEHIND: dict[str, Callable[[Any], Any]] = {
    "coverage_gaps": lambda claims: [f'{gap}: "… at {ARCHIVE[:45]}…"' for gap in claims],
    "synthesis": lambda _: f"The harbour bridge record is at {INVENTED}.",
    "stripped": lambda _: [{"id": "C7", "claim": f"It opened in 1932 ({INVENTED})", "reason": "x"}],
}


@pytest.mark.parametrize("field", list(LEFT_BEHIND))
def test_run_resume_finishes_a_brief_a_run_left_behind(
    bridge: Path, tmp_path: Path, field: str
) -> None:
    state = tmp_path / "state"
    request = RunRequest(BRIDGE_QUESTION, state)
    cut = start(
        request,
        open_corpus(str(bridge), state),
        ExtractiveReasoner(),
        load_settings(environ={}),
        default_limits("quick"),
        Progress(quiet=True),
        stop_after="synthesize",
    )
    path = Brief(cut.brief).claims_path
    claims = json.loads(path.read_text(encoding="utf-8"))
    claims[field] = LEFT_BEHIND[field](claims[field])
    path.write_text(json.dumps(claims), encoding="utf-8")
    code = _run("run", "--resume", cut.slug, "--corpus", str(bridge), "--state", str(state))
    assert code in (0, 1)
    report = (cut.brief / "report.md").read_text(encoding="utf-8")
    for shown in (path.read_text(encoding="utf-8"), report):
        assert "invented.example" not in shown and "collections/harb" not in shown
        assert WITHHELD in shown
    assert any(
        r.endswith("[links-withheld]") for r in Brief(cut.brief).load_claims().verdict_reasons
    )


# --- a fetched URL that holds page text ------------------------------------------------------

#: A document named after its own heading: its URL (``file://…/<name>.md``) holds the heading,
#: page text, which audit.json may not hold.
TITLED = "Evaluation order of chained comparisons in Python expressions"


def test_a_document_named_after_its_heading_is_withheld_from_the_record(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / f"{TITLED}.md").write_text(f"# {TITLED}\n\n{ONCE}\n\n{STOPS}\n", encoding="utf-8")
    state = tmp_path / "state"
    assert _run("run", QUESTION, "--corpus", str(docs), "--state", str(state)) in (0, 1)
    brief = state / "briefs" / slugify(QUESTION)
    audit = (brief / "audit.json").read_text(encoding="utf-8")
    assert URL_WITHHELD in audit and "chained comparisons in python" not in audit.casefold()
    assert (brief / "report.md").is_file()
    (note,) = [r for r in Brief(brief).load_claims().verdict_reasons if "[links-withheld]" in r]
    assert "holding page text" in note and "withheld from audit.json" in note, note
    assert _verify(brief)["identical"] is True
    # verdict and render finish it again, as a run left it.
    assert _run("verdict", str(brief)) in (0, 1)
    assert _run("render", str(brief)) == 0
