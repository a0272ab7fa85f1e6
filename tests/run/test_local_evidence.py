"""A local corpus's evidence as a newcomer's folder holds it: publishers that agree in their
own words, and publishers that disagree on a date and a length.

Everything is real — the folder, its index, the gates, the verdict, the report — and the
reasoner (tests/fakereasoner.py ``VerbatimReasoner``) quotes each document's sentences as they
are written, so two wordings of one fact are one claim only if the runner groups them, and two
figures for one thing are a contradiction only if code finds it. Every run uses the default
settings: no floor is relaxed by hand.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from briefs import assert_verified, read_phase
from deep_research.brief.layout import Brief
from deep_research.gates.trace import emitted_claims
from deep_research.run.driver import Progress, RunRequest, RunResult, start
from deep_research.run.governor import default_limits
from deep_research.run.localcorpus import open_corpus
from deep_research.run.reasoners import ExtractiveReasoner
from deep_research.settings import load_settings
from fakereasoner import VerbatimReasoner

QUESTION = "When did the Old Harbour Bridge open, how long is it and who designed it?"

# Two publishers (top-level folders) that disagree on the opening year and the length, and
# state who designed the bridge in their own words.
DISAGREE = {
    "harbour-trust/history.md": [
        "The Old Harbour Bridge was opened to traffic in 1923 after six years of construction.",
        "The Old Harbour Bridge has a total length of 1,240 m, including both approach viaducts.",
        "The engineer Margaret Holloway designed the Old Harbour Bridge and also planned the "
        "harbour railway line.",
    ],
    "city-archive/bridge.md": [
        "According to the city archive, the Old Harbour Bridge opened to traffic in 1927, four "
        "years later than often stated.",
        "Measured between its abutments, the Old Harbour Bridge is 980 m long.",
        "The Old Harbour Bridge was designed by the engineer Margaret Holloway, who also planned "
        "the harbour railway.",
    ],
}
HOLLOWAY = {DISAGREE["harbour-trust/history.md"][2], DISAGREE["city-archive/bridge.md"][2]}

# Three publishers that agree on every fact, each in its own words.
AGREE = {
    "harbour-trust/history.md": [
        "The Old Harbour Bridge was opened to traffic in 1923 after six years of construction.",
        "The Old Harbour Bridge has a total length of 1,240 m, including both approach viaducts.",
        "The engineer Margaret Holloway designed the Old Harbour Bridge and also planned the "
        "harbour railway line.",
    ],
    "city-archive/bridge.md": [
        "Six years of construction ended in 1923, when the Old Harbour Bridge opened to traffic.",
        "Counting both approach viaducts, the total length of the Old Harbour Bridge is 1,240 m.",
        "The Old Harbour Bridge was designed by the engineer Margaret Holloway, who also planned "
        "the harbour railway.",
    ],
    "rail-society/notes.md": [
        # Each wording names what the question asks (opened), as the relevance gate needs.
        "Traffic began to cross the Old Harbour Bridge when it opened in 1923, after its six "
        "years of construction.",
        "With its approach viaducts, the Old Harbour Bridge reaches a total length of 1,240 m.",
        "Margaret Holloway, the engineer who planned the harbour railway, also designed the Old "
        "Harbour Bridge.",
    ],
}


def write_corpus(root: Path, documents: dict[str, list[str]]) -> Path:
    for relative, sentences in documents.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {path.stem.title()}\n\n" + "\n\n".join(sentences) + "\n", "utf-8")
    return root


def run(
    state: Path, docs: Path, reasoner: object, depth: str = "quick", *, question: str = QUESTION
) -> RunResult:
    return start(
        RunRequest(question, state, depth=depth),  # type: ignore[arg-type]
        open_corpus(str(docs), state),
        reasoner,  # type: ignore[arg-type]
        load_settings(environ={}),
        default_limits(depth),
        Progress(quiet=True),
    )


@pytest.fixture(scope="module")
def disagree(tmp_path_factory: pytest.TempPathFactory) -> RunResult:
    root = tmp_path_factory.mktemp("disagree")
    return run(root / "state", write_corpus(root / "docs", DISAGREE), VerbatimReasoner())


def test_two_publishers_disagreeing_on_a_date_and_a_length_are_two_contradictions(
    disagree: RunResult,
) -> None:
    document = Brief(disagree.brief).load_claims()
    by_id = {claim.id: claim.claim for claim in document.claims}
    found = {
        entry.topic: {by_id[cid] for cid in entry.ids}
        for entry in document.unresolved_contradictions
    }
    assert found == {
        "Year of Old Harbour Bridge opened traffic": {
            DISAGREE["harbour-trust/history.md"][0],
            DISAGREE["city-archive/bridge.md"][0],
        },
        "Length of Old Harbour Bridge": {
            DISAGREE["harbour-trust/history.md"][1],
            DISAGREE["city-archive/bridge.md"][1],
        },
    }
    # Both are shown side by side in the report, each figure beside the other.
    report = (disagree.brief / "report.md").read_text(encoding="utf-8")
    section = report.split("## Contradictions", 1)[1].split("\n## ", 1)[0]
    assert "### Year of Old Harbour Bridge opened traffic" in section
    assert "### Length of Old Harbour Bridge" in section
    for figure in ("1923", "1927", "1,240 m", "980 m"):
        assert figure in section
    assert "None unresolved" not in report
    assert "(2 unresolved contradictions); the report gives each position" in " ".join(
        disagree.reasons
    )
    # A contradicted claim is contested, never high.
    contested = {cid for entry in document.unresolved_contradictions for cid in entry.ids}
    assert {c.confidence for c in document.claims if c.id in contested} == {"medium-contested"}
    assert_verified(disagree.brief)


def test_one_fact_worded_differently_by_both_publishers_is_one_claim_with_two_sources(
    disagree: RunResult,
) -> None:
    document = Brief(disagree.brief).load_claims()
    designed = [c for c in emitted_claims(document) if c.claim in HOLLOWAY]
    assert len(designed) == 1, [c.claim for c in document.claims]
    claim = designed[0]
    assert len(claim.supporting) == 2 and claim.independent_count == 2
    owners = {row.id: row.owner for row in Brief(disagree.brief).load_sources()}
    assert {owners[s] for s in claim.supporting} == {"harbour-trust", "city-archive"}
    # The wording that differs in its figures stays apart: four claims of one source each.
    others = [c for c in emitted_claims(document) if c.id != claim.id]
    assert len(others) == 4 and all(c.independent_count == 1 for c in others)


def test_the_same_folder_as_one_publisher_is_one_voice(tmp_path: Path) -> None:
    # One owner for both documents (no top-level folders): the merged claim has two sources
    # and one voice — independence comes from publishers, not from files.
    flat = {
        Path(name).name.replace(".md", f"-{n}.md"): text
        for n, (name, text) in enumerate(DISAGREE.items())
    }
    result = run(tmp_path / "state", write_corpus(tmp_path / "docs", flat), VerbatimReasoner())
    designed = [c for c in emitted_claims(Brief(result.brief).load_claims()) if c.claim in HOLLOWAY]
    assert len(designed) == 1
    assert len(designed[0].supporting) == 2 and designed[0].independent_count == 1


@pytest.fixture(scope="module")
def agree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_corpus(tmp_path_factory.mktemp("agree") / "docs", AGREE)


def test_a_full_run_over_enough_independent_evidence_is_ready(agree: Path, tmp_path: Path) -> None:
    result = run(tmp_path / "state", agree, VerbatimReasoner(), "full")
    assert result.verdict == "READY", result.reasons
    document = Brief(result.brief).load_claims()
    emitted = emitted_claims(document)
    assert len(emitted) == 3 and all(c.independent_count == 3 for c in emitted)
    assert document.triangulation_score == 1.0
    # The floors a three-document corpus cannot give were lowered, and the verdict says so.
    assert document.floors["distinct_sources"].required == 3
    assert any(
        r.startswith("the corpus holds only 3 document(s)")
        and r.endswith("[floors-scaled-to-corpus]")
        for r in result.reasons
    )
    assert all(floor.met for floor in document.floors.values())
    assert_verified(result.brief)


@pytest.mark.parametrize(
    "reasoner",
    [ExtractiveReasoner(), VerbatimReasoner(panel=False), VerbatimReasoner(ciber=False)],
    ids=["extractive", "no-panel", "no-ciber"],
)
def test_a_full_run_whose_reasoner_cannot_judge_is_partial_saying_what_ready_needs(
    agree: Path, tmp_path: Path, reasoner: object
) -> None:
    result = run(tmp_path / "state", agree, reasoner, "full")
    assert result.verdict == "PARTIAL", result.reasons
    assert result.reasons[0].startswith("PARTIAL: this run's reasoner cannot")
    assert result.reasons[0].endswith("[reasoner-unable]")
    assert "re-frame claims for CIBER" in result.reasons[0]
    assert sum("READY needs" in reason for reason in result.reasons) == 1  # said once
    assert not any("[floor-unmet:" in r or "[ciber-missing]" in r for r in result.reasons)


def test_a_full_run_over_disagreeing_publishers_is_partial_for_the_contradictions(
    tmp_path: Path,
) -> None:
    result = run(
        tmp_path / "state", write_corpus(tmp_path / "docs", DISAGREE), VerbatimReasoner(), "full"
    )
    assert result.verdict == "PARTIAL", result.reasons
    assert not any("[floor-unmet:" in r for r in result.reasons)
    assert (
        "PARTIAL: the sources contradict each other and nothing settles it "
        "(2 unresolved contradictions); the report gives each position with its sources: "
        "weigh them, or find a source that settles it [contradictions-unresolved]" in result.reasons
    )


def test_a_short_question_plans_the_quick_floors(agree: Path, tmp_path: Path) -> None:
    # Reported: "queries_per_sub_question 1 < 2" held short questions even with good claims.
    result = run(tmp_path / "state", agree, ExtractiveReasoner(), question="Who designed it?")
    assert result.verdict == "PARTIAL_QUICK", result.reasons
    assert not any("[floor-unmet:" in reason for reason in result.reasons)


def test_each_search_reads_what_its_worker_has_not_read_and_round_2_only_new_documents(
    tmp_path: Path,
) -> None:
    # Six documents that all match; one hit per search, one worker: a search whose best match
    # was read already reads the next one, and round 2 reads none that round 1 read.
    documents = {
        f"p{n}/bridge.md": [
            f"The Old Harbour Bridge is described in note number {n} of this publisher's series."
        ]
        for n in range(6)
    }
    state = tmp_path / "state"
    result = start(
        RunRequest(QUESTION, state, depth="full"),
        open_corpus(str(write_corpus(tmp_path / "docs", documents)), state),
        VerbatimReasoner(),
        load_settings(environ={}),
        default_limits("full").lowered(hits_per_search=1, workers=1),
        Progress(quiet=True),
    )
    brief = Brief(result.brief)
    (worker,) = read_phase(brief, "cast")["workers"]
    first = [source["url"] for source in worker["sources"]]
    assert len(worker["queries"]) == 4 and len(set(first)) == len(first) == 4
    (again,) = read_phase(brief, "round2")["workers"]
    second = [source["url"] for source in again["sources"]]
    assert second and not set(second) & set(first)
