"""Brief IO: atomic writes, clear errors on unreadable artifacts, the corpus guard."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from briefs import EXAMPLE, held_elsewhere
from deep_research.brief.layout import Brief, sha256_text, slugify
from deep_research.brief.readers import load_sources, parse_json
from deep_research.brief.writers import atomic_write_text, claims_chunks, write_claims
from deep_research.errors import (
    BriefBusy,
    InputError,
    MissingArtifact,
    NotACorpusFile,
    SchemaViolation,
    UnreadableInput,
)
from deep_research.models import Claim, ClaimsFile

EXAMPLE_CLAIMS = EXAMPLE / "brief" / "claims.json"


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


def test_lock_refuses_a_second_writer_and_is_free_again_once_released(tmp_path: Path) -> None:
    brief = Brief(tmp_path)
    other = [sys.executable, "-c", TRY_LOCK, str(tmp_path)]
    with brief.lock():
        assert brief.lock_path.read_text() == str(os.getpid())
        done = subprocess.run(other, capture_output=True, text=True, check=False)
        assert done.stdout.strip() == "busy", done.stderr
    assert not brief.lock_path.exists()
    done = subprocess.run(other, capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "held", done.stderr


def test_a_lock_held_by_another_process_refuses_with_its_pid(tmp_path: Path) -> None:
    with held_elsewhere(tmp_path) as holder:
        with pytest.raises(BriefBusy, match=f"process {holder.pid}"), Brief(tmp_path).lock():
            pass
        assert (tmp_path / ".lock").read_text() == str(holder.pid)  # not taken, not changed
    assert not (tmp_path / ".lock").exists()


@pytest.fixture
def unrelated_process() -> Iterator[int]:
    """A live process that never took any lock: what a reused PID names."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield sleeper.pid
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.parametrize(
    "content",
    ["", "not a pid\x00\xff", "-7", "999999999", "1", "{own pid}", "{unrelated pid}"],
    ids=["empty", "garbage", "negative", "dead-pid", "pid-1", "own-pid", "reused-pid"],
)
def test_a_lock_nobody_holds_is_taken_over_whatever_it_says(
    tmp_path: Path, content: str, unrelated_process: int
) -> None:
    brief = Brief(tmp_path)
    text = content.format(**{"own pid": os.getpid(), "unrelated pid": unrelated_process})
    brief.lock_path.write_text(text, encoding="utf-8", errors="surrogateescape")
    with brief.lock():
        assert brief.lock_path.read_text() == str(os.getpid())
        done = subprocess.run(
            [sys.executable, "-c", TRY_LOCK, str(tmp_path)], capture_output=True, text=True
        )
        assert done.stdout.strip() == "busy", done.stderr  # and what it took, it holds
    assert not brief.lock_path.exists()


KILLED_MID_WRITE = """
import os, sys, tempfile, time
from pathlib import Path
from deep_research.brief.layout import Brief
root = Path(sys.argv[1])
with Brief(root).lock():
    for name in ("claims.json", "trace.json", "sources.jsonl"):
        tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=root)
    print("writing", flush=True)
    time.sleep(60)
"""


def test_a_writer_killed_mid_write_leaves_a_lock_that_is_taken_over_and_its_temps_cleaned(
    tmp_path: Path,
) -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_MID_WRITE, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
    with pytest.raises(BriefBusy), Brief(tmp_path).lock():
        pass
    writer.kill()
    writer.wait()
    assert (tmp_path / ".lock").read_text() == str(writer.pid)  # left behind by the kill
    # Temp files of what is written outside the lock may have a live writer: they stay.
    (tmp_path / "corpus").mkdir()
    kept = [tmp_path / ".run.json.abc123.tmp", tmp_path / "corpus" / ".ab12.txt.x1y2.tmp"]
    for path in kept:
        path.write_text("in flight")
    with Brief(tmp_path).lock():
        leftovers = sorted(path.name for path in tmp_path.glob(".*.tmp"))
        assert leftovers == [".run.json.abc123.tmp"]
    assert all(path.exists() for path in kept)


TRY_LOCK = """
import sys
from pathlib import Path
from deep_research.brief.layout import Brief
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
        done = subprocess.run(
            [sys.executable, "-c", TRY_LOCK, str(tmp_path)], capture_output=True, text=True
        )
        assert done.stdout.strip() == "busy", done.stderr
    assert not brief.lock_path.exists()


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
    with held_elsewhere(tmp_path):
        assert main(["trace", str(tmp_path)]) == 3
    assert (tmp_path / "claims.json").read_bytes() == before


#: Every command that writes a brief, with the arguments that make it write.
WRITERS: dict[str, list[str]] = {
    "trace": ["trace", "{brief}"],
    "votes": ["votes", "{brief}", "--input", "{votes}"],
    "triangulate": ["triangulate", "{brief}"],
    "ciber": ["ciber", "apply", "{brief}", "--skip", "depth-quick"],
    "verdict": ["verdict", "{brief}"],
    "counters": ["counters", "{brief}"],
    "normalize": ["normalize", "{raw}", "--brief", "{brief}"],
    "refetch": ["refetch", "{brief}"],
    "render": ["render", "{brief}"],
}


@pytest.mark.parametrize("command", WRITERS.values(), ids=WRITERS.keys())
def test_a_writer_takes_the_lock_before_it_reads_anything(
    tmp_path: Path, command: list[str]
) -> None:
    """While another process holds the brief, its files may be half-replaced (here: torn); a
    command that read them before asking for the lock would decide on them, or fail on them
    (exit 2). Asking first, it is refused (exit 3) and writes nothing."""
    from briefs import ready_claims, ready_document, ready_pages, ready_trace, write_brief
    from deep_research.cli import main

    root = tmp_path / "brief"
    write_brief(root, ready_pages(), ready_claims(), document=ready_document(), trace=ready_trace())
    (tmp_path / "votes.json").write_text("{}")
    (tmp_path / "raw.json").write_text('[{"url": "https://c.example/", "findings": []}]')
    args = [
        arg.format(brief=root, votes=tmp_path / "votes.json", raw=tmp_path / "raw.json")
        for arg in command
    ]
    with held_elsewhere(root):
        for name in ("claims.json", "trace.json", "sources.jsonl", "fetch-log.jsonl"):
            torn = (root / name).read_bytes()[:25]
            (root / name).write_bytes(torn)  # the holder is mid-way through replacing it
        before = {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}
        assert main(args) == 3
        after = {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}
    assert after == before


# --- claims.json written a claim at a time -------------------------------------------------


def _whole(document: ClaimsFile) -> str:
    return document.model_dump_json(by_alias=True, indent=2) + "\n"


def test_claims_chunks_are_the_document_as_one_dump_writes_it() -> None:
    example = ClaimsFile.model_validate_json(EXAMPLE_CLAIMS.read_bytes())
    assert example.claims
    assert "".join(claims_chunks(example)) == _whole(example)
    empty = ClaimsFile(topic="nothing yet")
    assert "".join(claims_chunks(empty)) == _whole(empty)


@settings(max_examples=60, deadline=None)
@given(
    topic=st.text(),
    texts=st.lists(st.text(min_size=1), min_size=1, max_size=4),
    questions=st.lists(st.dictionaries(st.sampled_from(["claims", "q"]), st.text()), max_size=2),
)
def test_claims_chunks_hold_any_text_as_one_dump_does(
    topic: str, texts: list[str], questions: list[dict[str, str]]
) -> None:
    # Text that looks like the layout (a "claims" key, newlines, quotes) stays inside its string.
    document = ClaimsFile(
        topic=topic + '\n  "claims": []',
        claims=[Claim(id=f"C{n}", claim=text) for n, text in enumerate(texts, start=1)],
        sub_questions=list(questions),
    )
    assert "".join(claims_chunks(document)) == _whole(document)


def test_write_claims_replaces_the_file_or_leaves_the_old_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "claims.json"
    document = ClaimsFile(topic="t", claims=[Claim(id="C1", claim="one")])
    write_claims(target, document)
    assert target.read_text(encoding="utf-8") == _whole(document)

    def explode(*_: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", explode)
    with pytest.raises(OSError):
        write_claims(target, ClaimsFile(topic="t", claims=[Claim(id="C2", claim="two")]))
    assert target.read_text(encoding="utf-8") == _whole(document)
    assert os.listdir(tmp_path) == ["claims.json"]


def test_loaded_models_share_one_set_of_field_names_and_still_copy_and_compare() -> None:
    # A set per instance (~730 bytes, ~13 models a claim) was half a large brief's memory.
    example = ClaimsFile.model_validate_json(EXAMPLE_CLAIMS.read_bytes())
    first, second = example.claims[0], example.claims[1]
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    assert first.__pydantic_fields_set__ == set(Claim.model_fields)
    before = second.model_dump()
    first.importance = "central" if first.importance != "central" else "supporting"
    changed = first.model_copy(update={"claim": "changed"})
    assert changed.claim == "changed" and first.claim != "changed"
    assert second.model_dump() == before
    assert first.__pydantic_fields_set__ == set(Claim.model_fields)
    again = ClaimsFile.model_validate_json(EXAMPLE_CLAIMS.read_bytes()).claims[1]
    assert again == second
