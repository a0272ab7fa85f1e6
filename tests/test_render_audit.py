"""The report a person can audit, as a newcomer's own folder produces it: the question as its
heading, every source by a path or URL the reader can open, plain sentences rather than codes,
an answer that is not the findings again, titles that are titles, whole-sentence claims, and no
character that hides or reorders text."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from deep_research.brief.layout import Brief, slugify
from deep_research.brief.writers import printable_text
from deep_research.cli import main
from deep_research.gaps import INCOMPLETE, NOT_FOUND, VENDOR_MONOCULTURE, describe
from deep_research.gates.answer import CheckedSentence
from deep_research.models import ClaimsFile, FetchLogEntry, SourceRow
from deep_research.render import build_report, to_markdown
from deep_research.run.localcorpus import title_of

QUESTION = "When was the Old Harbour Bridge opened and how long is it?"
BIDI = "\u202e"
DOCS = {
    "alpha/bridge.md": (
        "---\nauthor: Alpha Gazette\ndate: 2020-01-01\n---\n"
        f"# The Old Harbour Bridge {BIDI}gnp.exe\n\n"
        "The Old Harbour Bridge was opened in 1923 after four years of construction work.\n\n"
        "The Old Harbour Bridge spans 1,240 m across the estuary, the longest in the region.\n\n"
        "The opening of the Old Harbour Bridge went as follows:\n\n    ceremony()\n"
    ),
    "beta/bridge.html": (
        "<html><head><title>Harbour Bridge facts</title></head><body>"
        "<p>Local guide, updated weekly.</p>"
        "<p>The Old Harbour Bridge was opened in 1927 following a long delay in construction.</p>"
        "<p>The Old Harbour Bridge spans 980 m across the estuary according to the survey.</p>"
        "</body></html>"
    ),
}


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, Path]:
    root = tmp_path_factory.mktemp("audit")
    corpus = root / "harbour docs"
    for name, text in DOCS.items():
        (corpus / name).parent.mkdir(parents=True, exist_ok=True)
        (corpus / name).write_text(text, encoding="utf-8")
    state = root / "state"
    assert main(["run", QUESTION, "--corpus", str(corpus), "--state", str(state)]) in (0, 1)
    brief = state / "briefs" / slugify(QUESTION)
    return (brief / "report.md").read_text(encoding="utf-8"), brief, corpus


def _section(markdown: str, title: str) -> str:
    return markdown.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_the_question_is_the_heading(report: tuple[str, Path, Path]) -> None:
    markdown, brief, _ = report
    assert markdown.startswith(f"# {QUESTION}\n")
    assert brief.name not in markdown  # the brief's name is a folder, not a title


def test_every_source_shows_a_path_the_reader_can_open(report: tuple[str, Path, Path]) -> None:
    markdown, _, corpus = report
    rows = [line for line in _section(markdown, "Sources").splitlines() if line[:3] == "| S"]
    rows = [row for row in rows if not row.startswith("| S# ")]
    assert rows and "withheld" not in markdown
    for row in rows:
        path = row.split(" | ")[2]
        assert (corpus / path).is_file(), row
    assert f"path inside the corpus {corpus.resolve()}." in markdown


def test_no_internal_codes_only_sentences(report: tuple[str, Path, Path]) -> None:
    markdown, _, _ = report
    for code in (NOT_FOUND, INCOMPLETE, VENDOR_MONOCULTURE):
        assert code not in markdown
    gaps = _section(markdown, "What could not be determined")
    assert all(line.endswith(".") for line in gaps.splitlines() if line.startswith("- sq1"))


def test_the_answer_does_not_repeat_the_findings(report: tuple[str, Path, Path]) -> None:
    markdown, brief, _ = report
    claims = [c.claim for c in Brief(brief).load_claims().claims if c.support_class == "Supported"]
    assert len(claims) >= 2
    answer = _section(markdown, "Answer")
    assert sum(claim in answer for claim in claims) == 1  # the most direct one, not all
    assert "extractive reasoner" in answer


def test_titles_are_titles_and_claims_are_sentences(report: tuple[str, Path, Path]) -> None:
    _, brief, _ = report
    sources = Brief(brief).load_sources()
    titles = {source.url.rsplit("/", 1)[-1]: source.title for source in sources}
    assert titles["bridge.md"] is not None and titles["bridge.md"].startswith("The Old Harbour")
    assert titles["bridge.html"] == "Harbour Bridge facts"  # its <title>, not a paragraph
    for claim in Brief(brief).load_claims().claims:
        assert not claim.claim.rstrip().endswith(":"), claim.claim


def test_no_character_hides_or_reorders_text(report: tuple[str, Path, Path]) -> None:
    markdown, _, _ = report
    assert BIDI not in markdown and "\\u202egnp.exe" in markdown  # shown, not obeyed
    assert not re.search(
        "[\x00-\x08\x0b-\x1f\x7f\u200b\u200e\u200f\u202a-\u202e\u2066-\u2069]", markdown
    )


# --- the pieces, each beside its adversarial twin ----------------------------------------------


def test_title_of() -> None:
    assert title_of("---\nauthor: Ann\n---\n# Real title\n\nText.\n") == "Real title"
    assert title_of("---\ntitle: Declared\nauthor: Ann\n---\n# Heading\n") == "Declared"
    assert title_of("Plain first line\n\nMore.\n") == "Plain first line"
    assert title_of("Underlined\n==========\n\nText.\n") == "Underlined"
    # A leading rule that opens no metadata block is no title, and neither is the rule itself.
    assert title_of("---\n\nFirst words.\n") == "First words."


def test_each_gap_code_is_a_sentence() -> None:
    questions = {"sq1": "How long is the bridge?"}
    found = describe(
        f"{NOT_FOUND}sq1: no passage in local:docs answers it after 2 search(es)", questions
    )
    assert found.startswith('sq1 ("How long is the bridge?") is not answered by the sources')
    one = describe(f"{VENDOR_MONOCULTURE}sq1:docs.example", questions)
    assert "one publisher, docs.example" in one and ":" not in one.split(",")[0][-3:]
    assert describe(f"{INCOMPLETE}cast: cap searches", questions).startswith("The run stopped")
    assert describe("the orchestrator's own words", questions) == "the orchestrator's own words"


def test_printable_text_neutralizes_what_is_invisible() -> None:
    assert printable_text(f"a{BIDI}b\x07c\u2066d") == "a\\u202eb\\u0007c\\u2066d"
    # Tabs, newlines and joiners that scripts and emoji need are text, kept as they are.
    assert printable_text("x\ty\nz \u200d\u200c") == "x\ty\nz \u200d\u200c"


def _brief(synthesis: str) -> tuple[ClaimsFile, list[SourceRow], list[FetchLogEntry]]:
    document = ClaimsFile.model_validate(
        {
            "topic": "bridge-facts-1234abcd",
            "question": QUESTION,
            "verdict": "PARTIAL_QUICK",
            "depth": "quick",
            "synthesis": synthesis,
            "sub_questions": [{"id": "sq1", "question": QUESTION}],
            "claims": [
                {
                    "id": f"C{n}",
                    "claim": text,
                    "sq": "sq1",
                    "supporting": ["S1"],
                    "support_class": "Supported",
                }
                for n, text in enumerate(
                    ["The bridge opened in 1923 after works.", "The bridge spans 1,240 m wide."], 1
                )
            ],
        }
    )
    now = datetime(2026, 1, 1, tzinfo=UTC)
    sources = [
        SourceRow.model_validate({"id": "S1", "url": "file://docs/a/bridge.md", "title": "A"}),
        SourceRow.model_validate({"id": "S2", "url": "file://docs/b/never.md", "title": "B"}),
    ]
    document.claims[1].supporting.append("S2")
    log = [
        FetchLogEntry.model_validate(
            {"url": "file://docs/a/bridge.md", "outcome": "ok", "status": 200, "retrieved_at": now}
        )
    ]
    return document, sources, log


def test_a_local_source_this_brief_never_retained_shows_no_path() -> None:
    document, sources, log = _brief("")
    report = build_report(document, sources, log, answer=[])
    shown = {view.id: (view.url, view.path) for view in report.sources}
    assert shown == {"S1": (None, "a/bridge.md"), "S2": (None, None)}
    assert "(not fetched by this brief; URL withheld)" in to_markdown(report)


def test_a_model_answer_is_shown_as_written_a_digest_is_summarized() -> None:
    document, sources, log = _brief("x")
    digest = [
        CheckedSentence("The bridge opened in 1923 after works. [S1]", True),
        CheckedSentence("The bridge spans 1,240 m wide. [S1][S2]", True),
    ]
    summarized = build_report(document, sources, log, answer=digest)
    assert summarized.summary is not None and "one of 2 verified findings" in summarized.summary
    prose = [CheckedSentence("Opened in 1923, the bridge spans 1,240 m. [S1]", True)]
    written = build_report(document, sources, log, answer=prose)
    assert written.summary is None
    assert "Opened in 1923, the bridge spans 1,240 m. [S1]" in to_markdown(written)
    assert json.loads(written.model_dump_json())["title"] == QUESTION  # topic is a slug
