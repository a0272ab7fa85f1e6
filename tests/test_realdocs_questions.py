"""The real-documents question sets and their folders' recipes, checked without a run of the tool.

``benchmarks/realdocs_questions.json`` and ``realdocs2_questions.json`` are read by
``benchmarks/offline_eval.py``'s own reader. Every row asks the folder
``benchmarks/realdocs_build.py`` builds for its set; every answerable row cites the sentences
that answer it (a document of that folder and the sentence, whitespace collapsed) and every
marker is held by a cited sentence — so a marker with a typo, or one copied from no answer,
fails here instead of quietly labelling every claim off topic. Where a folder is built, each
cited sentence must also be in its document. An unanswerable row has no marker and says why.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from conftest import REPO


def _script(name: str) -> ModuleType:
    """A script of benchmarks/, not a package module, imported by its path."""
    spec = importlib.util.spec_from_file_location(name, REPO / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up while being defined
    spec.loader.exec_module(module)
    return module


OFFLINE, BUILD = _script("offline_eval"), _script("realdocs_build")


@dataclass(frozen=True)
class QuestionSet:
    """A question file, the folder it asks, and what issue 34 asks of both."""

    name: str  # the build script's --set
    min_answerable: int
    min_unanswerable: int
    min_documents: int
    min_publishers: int

    @property
    def questions(self) -> Path:
        return REPO / "benchmarks" / f"{self.name}_questions.json"

    @property
    def folder(self) -> Path:
        folder: Path = BUILD.SETS[self.name][0]
        return folder

    @property
    def targets(self) -> set[str]:
        return {doc.target for doc in BUILD.SETS[self.name][1]}

    def rows(self) -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = OFFLINE.load_rows(self.questions)
        return rows


FIRST = QuestionSet("realdocs", 16, 3, 12, 4)
SECOND = QuestionSet("realdocs2", 16, 4, 10, 3)
SETS = [pytest.param(FIRST, id=FIRST.name), pytest.param(SECOND, id=SECOND.name)]


def collapsed(text: str) -> str:
    return " ".join(text.split())


def built(qset: QuestionSet) -> dict[str, str] | None:
    """Each document's text, collapsed, when the set's folder is built; else None."""
    paths = {target: qset.folder / target for target in qset.targets}
    if not all(path.is_file() for path in paths.values()):
        return None
    return {target: collapsed(path.read_text(encoding="utf-8")) for target, path in paths.items()}


def row_problems(qset: QuestionSet, row: dict[str, Any], texts: dict[str, str] | None) -> list[str]:
    """What is wrong with one row's corpus, citations and markers (``texts``: the built folder)."""
    shown = row.get("question", "?")[:50]
    if not row.get("corpus") or Path(OFFLINE.corpus_of(row)).resolve() != qset.folder:
        return [f"{shown}: asks {row.get('corpus')}, not the folder realdocs_build makes"]
    markers, answers = row.get("markers", []), row.get("answers", [])
    if not row["answerable"]:
        if markers or answers:
            return [f"{shown}: unanswerable but labelled"]
        return [] if row.get("why") else [f"{shown}: unanswerable without a why"]
    if not markers or not answers:
        return [f"{shown}: answerable without markers or cited answers"]
    found = []
    for answer in answers:
        if answer["file"] not in qset.targets:
            found.append(f"{shown}: cites {answer['file']}, no document of the folder")
        elif texts is not None and collapsed(answer["sentence"]) not in texts[answer["file"]]:
            found.append(f"{shown}: {answer['file']} does not hold {answer['sentence'][:40]!r}")
        elif not OFFLINE.on_topic(answer["sentence"], markers):
            found.append(f"{shown}: cited {answer['sentence'][:40]!r} holds no marker")
    sentences = [answer["sentence"] for answer in answers]
    found += [
        f"{shown}: marker {marker!r} is in no cited sentence"
        for marker in markers
        if not any(OFFLINE.on_topic(sentence, [marker]) for sentence in sentences)
    ]
    return found


@pytest.mark.parametrize("qset", SETS)
def test_the_set_loads_in_the_evaluators_reader_and_its_labels_are_its_citations(
    qset: QuestionSet,
) -> None:
    rows = qset.rows()
    assert [problem for row in rows for problem in row_problems(qset, row, None)] == []
    assert len({row["question"] for row in rows}) == len(rows)
    assert sum(row["answerable"] for row in rows) >= qset.min_answerable
    assert sum(not row["answerable"] for row in rows) >= qset.min_unanswerable
    assert {row["parts"] for row in rows if row["answerable"]} == {1, 2}


@pytest.mark.parametrize("qset", SETS)
def test_every_cited_sentence_is_in_the_built_folder(qset: QuestionSet) -> None:
    texts = built(qset)
    if texts is None:
        pytest.skip(f"not built: python benchmarks/realdocs_build.py SOURCES --set {qset.name}")
    rows = qset.rows()
    assert [problem for row in rows for problem in row_problems(qset, row, texts)] == []


@pytest.mark.parametrize("qset", SETS)
def test_the_folder_holds_documents_of_several_publishers_and_nothing_of_its_own(
    qset: QuestionSet,
) -> None:
    targets = [Path(target) for target in qset.targets]
    # A file at the top would be the corpus's own voice (a README of ours), not a publisher's.
    assert [path for path in targets if len(path.parts) != 2] == []
    assert len(targets) >= qset.min_documents
    assert len({path.parts[0] for path in targets}) >= qset.min_publishers


def test_the_second_set_is_read_from_other_publishers_than_the_first() -> None:
    def publishers(qset: QuestionSet) -> set[str]:
        return {Path(target).parts[0] for target in qset.targets}

    def repositories(qset: QuestionSet) -> set[str]:
        return {doc.source[0] for doc in BUILD.SETS[qset.name][1]}

    assert publishers(FIRST).isdisjoint(publishers(SECOND))
    assert repositories(FIRST).isdisjoint(repositories(SECOND))
    assert FIRST.folder != SECOND.folder
    assert {row["question"] for row in FIRST.rows()}.isdisjoint(
        row["question"] for row in SECOND.rows()
    )


def _good_row() -> dict[str, Any]:
    return next(row for row in FIRST.rows() if row["answerable"])


def _broken(change: str) -> dict[str, Any]:
    row = copy.deepcopy(_good_row())
    first = row["answers"][0]
    if change == "typo":
        row["markers"] = [row["markers"][0] + "x"]
    elif change == "foreign marker":
        row["markers"] = [*row["markers"], "a phrase from no answer"]
    elif change == "reworded sentence":
        first["sentence"] = first["sentence"].replace(" ", " really ", 1)
        row["markers"] = [first["sentence"]]
    elif change == "no such document":
        first["file"] = "nowhere/absent.md"
    elif change == "other corpus":
        row["corpus"] = "corpora/aqueduct"
    elif change == "unanswerable labelled":
        row["answerable"] = False
    elif change == "unlabelled":
        row["markers"] = []
    return row


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ("typo", "holds no marker"),
        ("foreign marker", "is in no cited sentence"),
        ("reworded sentence", "does not hold"),
        ("no such document", "no document of the folder"),
        ("other corpus", "not the folder realdocs_build makes"),
        ("unanswerable labelled", "unanswerable but labelled"),
        ("unlabelled", "without markers"),
    ],
)
def test_a_label_that_does_not_match_its_folder_is_reported(change: str, expected: str) -> None:
    texts = {target: "" for target in FIRST.targets}
    good = _good_row()
    for answer in good["answers"]:  # a folder holding exactly the good row's sentences
        texts[answer["file"]] += " " + collapsed(answer["sentence"])
    assert row_problems(FIRST, good, texts) == []
    found = row_problems(FIRST, _broken(change), texts)
    assert found and expected in found[0], found


# --- the folder's recipe ----------------------------------------------------------------------

POST = '+++\npath = "2024/05/06/a-post"\ntitle = "A post"\n+++\n\nBody line.\n'


@pytest.mark.parametrize(
    ("text", "options", "expected"),
    [
        ("a\nb\nc\nd\n", {"keep": ((1, 1), (3, 4))}, "a\nc\nd\n"),
        ("a\nb\n", {}, "a\nb\n"),
        ("see `flit <https://example.org/flit>`_ now\n", {"unlink": (1,)}, "see flit now\n"),
        (
            "see `flit <https://example.org/flit>`_ now\n",
            {},
            "see `flit <https://example.org/flit>`_ now\n",
        ),
        (POST, {"front_matter": True}, "---\ntitle: A post\ndate: 2024-05-06\n---\n\nBody line.\n"),
    ],
)
def test_a_document_is_trimmed_and_converted_as_its_entry_says(
    text: str, options: dict[str, Any], expected: str
) -> None:
    doc = BUILD.Document("p/d.md", ("o/r", "0" * 40), "d.md", "", **options)
    assert BUILD.converted(text, doc) == expected


def test_a_post_without_its_front_matter_is_refused() -> None:
    doc = BUILD.Document("p/d.md", ("o/r", "0" * 40), "d.md", "", front_matter=True)
    with pytest.raises(ValueError, match="without its"):
        BUILD.converted("Body line.\n", doc)


def _clone(sources: Path) -> str:
    """A one-commit repository ``o/r`` in ``sources``; its commit."""
    repo = sources / "r"
    repo.mkdir(parents=True)
    (repo / "d.md").write_text("kept\ndropped\n", encoding="utf-8")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "d.md"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "d"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    return head.stdout.strip()


@pytest.mark.parametrize(
    ("digest_of", "expected"), [("kept\n", []), ("other\n", ["p/d.md does not match its digest"])]
)
def test_a_document_is_written_only_when_it_hashes_to_its_digest(
    tmp_path: Path, digest_of: str, expected: list[str]
) -> None:
    commit = _clone(tmp_path / "sources")
    digest = hashlib.sha256(digest_of.encode()).hexdigest()
    doc = BUILD.Document("p/d.md", ("o/r", commit), "d.md", digest, keep=((1, 1),))
    folder = tmp_path / "folder"
    assert BUILD.build(tmp_path / "sources", folder, (doc,)) == expected
    written = folder / "p" / "d.md"
    assert (written.read_text(encoding="utf-8") if written.exists() else None) == (
        None if expected else "kept\n"
    )


@pytest.mark.parametrize("missing", ["clone", "commit"])
def test_a_missing_source_builds_nothing(tmp_path: Path, missing: str) -> None:
    commit = _clone(tmp_path / "sources")
    repository = "o/absent" if missing == "clone" else "o/r"
    pinned = commit if missing == "clone" else "f" * 40
    doc = BUILD.Document("p/d.md", (repository, pinned), "d.md", "")
    with pytest.raises(BUILD.Missing):
        BUILD.build(tmp_path / "sources", tmp_path / "folder", (doc,))
    assert not (tmp_path / "folder").exists()
