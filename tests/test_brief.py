"""Brief IO: atomic writes, clear errors on unreadable artifacts, the corpus guard."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from deep_research.brief import (
    Brief,
    atomic_write_text,
    load_sources,
    parse_json,
    sha256_text,
    slugify,
)
from deep_research.errors import (
    BriefBusy,
    InputError,
    MissingArtifact,
    NotACorpusFile,
    SchemaViolation,
    UnreadableInput,
)


def test_atomic_write_replaces_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "claims.json"
    atomic_write_text(target, "one")
    atomic_write_text(target, "two")
    assert target.read_text() == "two"
    assert os.listdir(target.parent) == ["claims.json"]


def test_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "claims.json"
    atomic_write_text(target, "old")

    def explode(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", explode)
    with pytest.raises(OSError):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["claims.json"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "is empty"),
        ('{"topic": ', "not valid JSON"),
        ("[" * 100_000, "nests too deeply"),
    ],
)
def test_parse_json_errors_are_one_line(content: str, message: str) -> None:
    with pytest.raises(UnreadableInput, match=message) as caught:
        parse_json(content, what="claims.json")
    assert "\n" not in str(caught.value)


def test_load_sources_errors(tmp_path: Path) -> None:
    path = tmp_path / "sources.jsonl"
    with pytest.raises(MissingArtifact):
        load_sources(path)
    path.write_bytes(b"\x89PNG\x00\x01")
    with pytest.raises(UnreadableInput, match=r"not UTF-8|binary"):
        load_sources(path)
    path.write_text(
        '{"id": "S1", "url": "https://a.example/"}\n{"id": "S1", "url": "https://b.example/"}\n'
    )
    with pytest.raises(SchemaViolation, match="duplicate source id S1"):
        load_sources(path)
    path.write_text('{"id": "S1", "url": "https://a.example/", "round": "two"}\n')
    with pytest.raises(SchemaViolation, match=r"line 1: \$\.round"):
        load_sources(path)


def test_corpus_guard(tmp_path: Path) -> None:
    brief = Brief(tmp_path)
    text = "The retained page text.\n"
    digest = sha256_text(text)
    brief.corpus_dir.mkdir()
    brief.corpus_path(digest).write_text(text)
    assert brief.read_corpus(digest) == text
    assert brief.require_corpus_file(brief.corpus_path(digest)) == text
    outside = tmp_path / "summary.txt"
    outside.write_text(text)
    with pytest.raises(NotACorpusFile, match="not a corpus file"):
        brief.require_corpus_file(outside)
    # A file inside corpus/ whose name is not its hash is not a corpus file either.
    renamed = brief.corpus_dir / ("0" * 64 + ".txt")
    renamed.write_text(text)
    with pytest.raises(NotACorpusFile, match="does not hash"):
        brief.require_corpus_file(renamed)


def test_torn_last_fetch_log_line_is_ignored(tmp_path: Path) -> None:
    brief = Brief(tmp_path)
    brief.fetch_log_path.write_text(
        '{"url": "https://a.example/", "outcome": "ok", "status": 200}\n{"url": "htt'
    )
    with pytest.warns(UserWarning, match="torn last line"):
        entries = brief.load_fetch_log()
    assert [entry.url for entry in entries] == ["https://a.example/"]


def test_lock_refuses_a_second_writer_and_recovers_a_stale_one(tmp_path: Path) -> None:
    brief = Brief(tmp_path)
    other = [sys.executable, "-c", TRY_LOCK, str(tmp_path)]
    with brief.lock():
        assert brief.lock_path.read_text() == str(os.getpid())
        done = subprocess.run(other, capture_output=True, text=True, check=False)
        assert done.stdout.strip() == "busy", done.stderr
    assert not brief.lock_path.exists()
    done = subprocess.run(other, capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "held", done.stderr
    # A lock left by a process that no longer exists is taken over.
    brief.lock_path.write_text("999999999")
    with brief.lock():
        assert brief.lock_path.read_text() == str(os.getpid())


TRY_LOCK = """
import sys
from pathlib import Path
from deep_research.brief import Brief
from deep_research.errors import BriefBusy
try:
    with Brief(Path(sys.argv[1])).lock():
        print("held")
except BriefBusy:
    print("busy")
"""


def test_lock_nests_within_its_holder_and_is_released_by_the_outermost(tmp_path: Path) -> None:
    brief = Brief(tmp_path)
    with brief.lock():
        with brief.lock():  # a gate called by the driver while the driver holds the brief
            assert brief.lock_path.exists()
        assert brief.lock_path.exists()  # the inner release leaves the outer hold in place
    assert not brief.lock_path.exists()
    # A lock file written by this process outside a hold is another writer's, not a nesting.
    brief.lock_path.write_text(str(os.getpid()))
    with pytest.raises(BriefBusy, match="another run"), brief.lock():
        pass


SLUGS = [
    # question, expected readable part
    (
        "How does Python evaluate chained comparisons?",
        "how-does-python-evaluate-chained-comparisons",
    ),
    ("Ça coûte combien, l'énergie ?", "ca-coute-combien-l-energie"),
    ("???", "topic"),
]


@pytest.mark.parametrize(("question", "readable"), SLUGS)
def test_slug_is_readable_ascii_with_a_digest(question: str, readable: str) -> None:
    slug = slugify(question)
    assert slug.rsplit("-", 1)[0] == readable
    assert re.fullmatch(r"[a-z0-9-]+-[0-9a-f]{8}", slug)
    assert slug == slugify(question)


def test_slug_is_bounded_and_tells_long_questions_apart() -> None:
    stem = "What is the difference between a list and a tuple when used as "
    keys, members = slugify(stem + "dictionary keys?"), slugify(stem + "set members?")
    assert keys != members
    assert keys.rsplit("-", 1)[0] == members.rsplit("-", 1)[0]  # the cut hides the difference
    assert len(slugify("word " * 40)) <= 48 + 1 + 8


@pytest.mark.parametrize(
    "variant",
    [
        "how does python evaluate chained comparisons",
        "  How does Python  evaluate chained comparisons ?",
        "HOW DOES PYTHON EVALUATE CHAINED COMPARISONS.",
    ],
)
def test_the_same_question_in_other_case_or_spacing_names_the_same_brief(variant: str) -> None:
    assert slugify(variant) == slugify("How does Python evaluate chained comparisons?")


def test_a_question_without_words_is_an_input_error() -> None:
    with pytest.raises(InputError, match="give the question"):
        slugify("   ")


def test_trace_on_a_busy_brief_exits_3_and_writes_nothing(tmp_path: Path) -> None:
    from briefs import PageSpec, page, write_brief
    from deep_research.cli import main

    quote = "approve a budget of $1.82 billion for the 2025 fiscal year, an increase of 3.5%"
    write_brief(
        tmp_path,
        [PageSpec("https://news.example/b", page("city-budget.txt"), [("Budget", quote)])],
        [{"claim": "Harbourton approved a $1.82 billion budget", "supporting": ["S1"]}],
    )
    before = (tmp_path / "claims.json").read_bytes()
    (tmp_path / ".lock").write_text(str(os.getpid()))
    assert main(["trace", str(tmp_path)]) == 3
    assert (tmp_path / "claims.json").read_bytes() == before
