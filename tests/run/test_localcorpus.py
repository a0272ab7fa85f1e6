"""The local corpus: FTS5 index, incremental sync, identities, owners, retention like a fetch."""

from __future__ import annotations

import multiprocessing
import os
import secrets
import sys
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from deep_research.brief.layout import Brief
from deep_research.errors import InputError, MissingArtifact
from deep_research.gates.trace import SourceIndex
from deep_research.models import SourceRow
from deep_research.run import localcorpus
from deep_research.run.corpusfolder import Admitted
from deep_research.run.localcorpus import (
    PYTHON_DOCS,
    PYTHON_DOCS_OWNER,
    CorpusIndex,
    declared_author,
    folder_documents,
    headings_of,
    index_path,
    match_expression,
    open_corpus,
)
from pdfs import text_pdf


def _folder(root: Path) -> Path:
    (root / "alpha").mkdir(parents=True)
    (root / "alpha" / "a.md").write_text("# Heat pumps\n\nHeat pumps move heat from outside air.\n")
    (root / "beta").mkdir()
    (root / "beta" / "b.html").write_text(
        "<html><head><title>B</title></head><body><article><h1>Boilers</h1>"
        "<p>Gas boilers burn fuel to heat water for radiators in most older homes.</p>"
        "</article></body></html>"
    )
    (root / "top.txt").write_text("---\nauthor: Ada\n---\nA note on boilers and heat pumps.\n")
    (root / ".hidden.md").write_text("secret heat pumps")
    (root / "image.png").write_bytes(b"\x89PNG")
    return root


def test_folder_index_identities_owners_and_search(tmp_path: Path) -> None:
    corpus = open_corpus(str(_folder(tmp_path / "My Notes")), tmp_path / "state")
    assert corpus.index.label == "my-notes"
    assert corpus.index.count() == 3  # hidden and non-text files are not indexed
    hits = corpus.search("heat pumps outside air", 5)
    assert hits[0].url == "file://my-notes/alpha/a.md"
    owners = {url: corpus.index.document(url).owner for url in (h.url for h in hits)}  # type: ignore[union-attr]
    assert owners["file://my-notes/alpha/a.md"] == "alpha"
    assert owners.get("file://my-notes/top.txt") == "Ada"
    boiler = corpus.index.document("file://my-notes/beta/b.html")
    assert boiler is not None and "Gas boilers burn fuel" in boiler.text
    assert "<p>" not in boiler.text
    assert corpus.search("", 5) == [] and corpus.search("zzzz", 5) == []


def test_query_text_is_never_fts_syntax(tmp_path: Path) -> None:
    corpus = open_corpus(str(_folder(tmp_path / "c")), tmp_path / "state")
    for hostile in ['heat" OR body:*', "NEAR(heat pumps)", "heat AND -pumps", "'; DROP TABLE docs"]:
        corpus.search(hostile, 5)  # no sqlite error
    assert match_expression("the and of") is None


def test_sync_is_incremental_and_content_hashed(tmp_path: Path) -> None:
    root = _folder(tmp_path / "c")
    index = CorpusIndex(index_path(tmp_path / "state", "c", str(root)), "c")
    first = index.sync(folder_documents(root, "c", index.known()))
    assert (first.added, first.updated, first.removed) == (3, 0, 0)
    again = index.sync(folder_documents(root, "c", index.known()))
    assert (again.added, again.updated, again.unchanged) == (0, 0, 3)
    touched = root / "alpha" / "a.md"
    os.utime(touched, ns=(1, 1))  # new mtime, same text: read again, not re-indexed
    assert index.sync(folder_documents(root, "c", index.known())).updated == 0
    touched.write_text("# Heat pumps\n\nHeat pumps now also cool houses in summer.\n")
    (root / "top.txt").unlink()
    changed = index.sync(folder_documents(root, "c", index.known()))
    assert (changed.updated, changed.removed) == (1, 1)
    assert index.search("cool houses", 3)[0].url == "file://c/alpha/a.md"
    assert index.search("boilers fuel note", 5) and all(
        h.url != "file://c/top.txt" for h in index.search("note", 5)
    )


def test_empty_or_missing_corpus_is_an_error_not_a_fallback(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "blank.md").write_text("   \n")
    with pytest.raises(InputError, match="holds no"):
        open_corpus(str(tmp_path / "empty"), tmp_path / "state")
    with pytest.raises(MissingArtifact, match="not found"):
        open_corpus(str(tmp_path / "absent"), tmp_path / "state")


def test_retained_document_resolves_in_the_trace_gate(tmp_path: Path) -> None:
    corpus = open_corpus("python-docs", tmp_path / "state")
    hit = corpus.search("chained comparisons", 1)[0]
    brief = Brief(tmp_path / "brief")
    retained = corpus.retain(hit, brief)
    assert retained is not None and retained.owner == PYTHON_DOCS_OWNER
    log = brief.load_fetch_log()
    assert log[-1].status == 200 and log[-1].content_hash == retained.content_hash
    row = SourceRow(id="S1", url=hit.url, content_hash=retained.content_hash, tier="raw")
    resolution = SourceIndex(brief, [row], log).resolve("S1")
    assert resolution.reason is None and resolution.document is not None
    # Adversarial: the same document never retained in this brief does not resolve.
    other = SourceIndex(Brief(tmp_path / "other"), [row], []).resolve("S1")
    assert other.reason == "not_fetched"


def test_python_docs_holds_the_library_beside_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydoc_data.topics import topics

    from deep_research.run import localcorpus

    state = tmp_path / "state"
    # An index built before the library was added (the old key) is never reused.
    stale = CorpusIndex(index_path(state, PYTHON_DOCS, PYTHON_DOCS), PYTHON_DOCS)
    stale.sync([("x", localcorpus.LocalDoc("file://python-docs/x", "x", "x\n", "o", "x"), 0, 2)])
    corpus = open_corpus(PYTHON_DOCS, state)
    assert corpus.index.db_path != stale.db_path
    urls = [hit.url for hit in corpus.search("json encoder decoder serialize", 5)]
    assert any(url.startswith("file://python-docs/library/json") for url in urls), urls
    threading = corpus.index.document("file://python-docs/library/threading")
    assert (
        threading is not None
        and threading.title
        == "threading — Thread module emulating a subset of Java's threading model."
    )
    assert threading.owner == PYTHON_DOCS_OWNER
    library = corpus.index.count() - len(topics)
    assert library > 200 and corpus.index.document("file://python-docs/comparisons") is not None
    # A built index is opened as it is: nothing is rendered again.
    monkeypatch.setattr(localcorpus, "python_doc_documents", lambda: pytest.fail("re-rendered"))
    assert open_corpus(PYTHON_DOCS, state).index.count() == corpus.index.count()


def test_python_docs_keeps_no_trace_of_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An exported key was rendered into the index (pydoc shows os.environ as a default
    # argument) and, through a retained document, into briefs.
    canary = f"sk-ant-canary-{secrets.token_hex(8)}"
    name = f"DEEP_RESEARCH_CANARY_{secrets.token_hex(4).upper()}"
    monkeypatch.setenv("ANTHROPIC_API_KEY", canary)
    monkeypatch.setenv(name, canary)
    state = tmp_path / "state"
    # The index an earlier version built, with the environment in it, is removed, not kept.
    key = f"{PYTHON_DOCS}:reference+library-v2:{sys.version}"
    leaked = CorpusIndex(index_path(state, PYTHON_DOCS, key), PYTHON_DOCS)
    leaked.sync([("x", localcorpus.LocalDoc("file://python-docs/x", "x", canary, "o", "x"), 0, 1)])
    localcorpus.python_doc_documents.cache_clear()  # rendered here, under the canary
    try:
        corpus = open_corpus(PYTHON_DOCS, state)
        brief = Brief(state / "briefs" / "environ")
        for hit in corpus.search("environ environment variables FieldStorage", 10):
            corpus.retain(hit, brief)
        assert brief.load_fetch_log()  # documents were retained into the brief
    finally:
        localcorpus.python_doc_documents.cache_clear()
    files = [path for path in state.rglob("*") if path.is_file()]
    assert files and not leaked.db_path.exists()
    for path in files:
        data = path.read_bytes()
        assert canary.encode() not in data and name.encode() not in data, path


def test_headings_and_declared_author() -> None:
    text = "Comparisons\n***********\n\nText.\n\nValue comparisons\n=================\n# Md\n"
    assert headings_of(text) == ("Comparisons", "Value comparisons", "Md")
    assert declared_author("---\ntitle: x\nauthor: 'Grace'\n---\nbody") == "Grace"
    assert declared_author("author: nobody\n") is None


# --- PDF ----------------------------------------------------------------------------------------


def test_pdf_text_is_indexed_retained_and_traceable(tmp_path: Path) -> None:
    docs = tmp_path / "papers"
    (docs / "lab").mkdir(parents=True)
    sentence = "Chained comparisons evaluate every operand at most once in this report."
    (docs / "lab" / "report.pdf").write_bytes(text_pdf("Operators in practice", sentence))
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4\n" + os.urandom(2048))  # unreadable: skipped
    corpus = open_corpus(str(docs), tmp_path / "state")
    assert corpus.index.count() == 1
    hit = corpus.search("chained comparisons operand", 3)[0]
    assert hit.url == "file://papers/lab/report.pdf"
    brief = Brief(tmp_path / "brief")
    retained = corpus.retain(hit, brief)
    assert retained is not None and sentence in retained.text and retained.owner == "lab"
    row = SourceRow(id="S1", url=hit.url, content_hash=retained.content_hash, tier="raw")
    resolution = SourceIndex(brief, [row], brief.load_fetch_log()).resolve("S1")
    assert resolution.document is not None and sentence in resolution.document.text


def test_an_encrypted_pdf_contributes_nothing(tmp_path: Path) -> None:
    from io import BytesIO

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(BytesIO(text_pdf("A secret about heat pumps."))))
    writer.encrypt("owner-only")
    buffer = BytesIO()
    writer.write(buffer)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "locked.pdf").write_bytes(buffer.getvalue())
    (tmp_path / "docs" / "open.md").write_text("# Boilers\n\nBoilers heat water for radiators.\n")
    corpus = open_corpus(str(tmp_path / "docs"), tmp_path / "state")
    assert corpus.index.count() == 1
    assert all(not hit.url.endswith("locked.pdf") for hit in corpus.search("secret", 3))


def test_publishers_as_the_readme_lays_them_out(tmp_path: Path) -> None:
    # README "Using your own folder": a top-level folder is a publisher; `author:` outranks it; a
    # file directly in the corpus folder belongs to the corpus. The corpus declares its size.
    root = tmp_path / "bridge-sources"
    for relative, text in {
        "harbour-trust/history.md": "# History\n\nThe bridge opened to traffic.\n",
        "city-archive/bridge.md": "# Records\n\nThe archive keeps the bridge records.\n",
        "clippings/1923-gazette.md": "---\nauthor: Harbour Gazette\n---\n# Gazette\n\nBridge.\n",
        "loose.md": "# Loose\n\nA bridge note.\n",
    }.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    corpus = open_corpus(str(root), tmp_path / "state")
    owners = {
        url: corpus.index.document(url).owner  # type: ignore[union-attr]
        for url in (hit.url for hit in corpus.search("bridge", 10))
    }
    assert owners == {
        "file://bridge-sources/harbour-trust/history.md": "harbour-trust",
        "file://bridge-sources/city-archive/bridge.md": "city-archive",
        "file://bridge-sources/clippings/1923-gazette.md": "Harbour Gazette",
        "file://bridge-sources/loose.md": "bridge-sources",
    }
    assert corpus.capacity().documents == 4


# --- reading in a process pool ----------------------------------------------------------------


def _many(root: Path, count: int = 40) -> Path:
    """Enough files for a pool: notes, pages, a text-less page, one declaring its author."""
    _folder(root)
    for number in range(count):
        folder = root / f"part{number % 3}"
        folder.mkdir(exist_ok=True)
        if number % 4 == 0:
            (folder / f"p{number}.html").write_text(
                f"<html><body><article><h1>Page {number}</h1><p>Heat pump installers number "
                f"{number * 7} in the region this year, the survey of firms found.</p>"
                "</article></body></html>"
            )
        elif number % 4 == 1:
            (folder / f"n{number}.md").write_text(
                f"# Note {number}\n\nBoilers, {number} of them.\n"
            )
        elif number % 4 == 2:
            (folder / f"e{number}.html").write_text("<html><body></body></html>")  # no text
        else:
            (folder / f"a{number}.txt").write_text(f"---\nauthor: Writer {number}\n---\nText.\n")
    return root


@pytest.mark.slow  # starts a pool of spawned processes
def test_a_pool_reads_the_same_documents_in_the_same_order(tmp_path: Path) -> None:
    root = _many(tmp_path / "c")
    listed = list(localcorpus._listed(root, {}))
    assert len([path for _, path, _, _ in listed if path]) >= localcorpus.POOL_MIN_FILES
    serial = list(localcorpus.read_changed(listed, "c", workers=1))
    pooled = list(localcorpus.read_changed(listed, "c", workers=2))
    assert pooled == serial
    assert len(serial) == len(listed) - 10  # the ten text-less pages are left out
    # And the index built from them is the same, row for row.
    rows = []
    for name, items in (("serial", serial), ("pooled", pooled)):
        index = CorpusIndex(tmp_path / f"{name}.sqlite", "c")
        index.sync(items)
        with index.connect() as db:
            rows.append(db.execute("SELECT * FROM docs ORDER BY path").fetchall())
    assert rows[0] == rows[1] and len(rows[0]) == len(serial)


@pytest.mark.slow  # starts a pool of spawned processes
def test_unchanged_files_are_not_read_again_by_the_pool(tmp_path: Path) -> None:
    root = _many(tmp_path / "c")
    index = CorpusIndex(tmp_path / "i.sqlite", "c")
    first = index.sync(folder_documents(root, "c", index.known()))
    again = list(localcorpus._listed(root, index.known()))
    # Only the pages without text, which were never indexed, are read again.
    assert {file.path.name for _, file, _, _ in again if file} == {
        f"e{n}.html" for n in range(2, 40, 4)
    }
    assert index.sync(localcorpus.read_changed(again, "c", workers=2)).unchanged == first.total


def crash_on_one(file: Admitted, *job: object) -> localcorpus.LocalDoc | None:
    """A reader whose worker dies on one file (a pool worker killed mid-run)."""
    if file.path.name == "n5.md" and multiprocessing.parent_process() is not None:
        os._exit(1)
    return localcorpus.local_document(file, *job)  # type: ignore[arg-type]


@pytest.mark.slow  # starts a pool of spawned processes
def test_a_broken_pool_leaves_the_rest_to_this_process(tmp_path: Path) -> None:
    root = _many(tmp_path / "c")
    jobs = [
        (path, "c", relative, mtime, size)
        for relative, path, mtime, size in localcorpus._listed(root, {})
        if path is not None
    ]
    crashing = next(job for job in jobs if job[0].path.name == "n5.md")
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(1, mp_context=spawn) as pool, pytest.raises(BrokenProcessPool):
        pool.submit(crash_on_one, *crashing).result()  # the reader does kill its worker
    assert list(localcorpus.pooled(jobs, 2, crash_on_one)) == [
        localcorpus.local_document(*job) for job in jobs
    ]


def test_long_indexing_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _many(tmp_path / "c", count=4)
    heard: list[tuple[str, str]] = []
    monkeypatch.setattr(localcorpus, "REPORT_EVERY_S", 0.0)
    list(folder_documents(root, "c", {}, report=lambda *line: heard.append(line)))
    files = len([p for _, p, _, _ in localcorpus._listed(root, {}) if p])
    assert heard[0] == ("index", f"1/{files} files read")
    assert heard[-1][1].startswith(f"{files}/{files} files read in ")
    quiet: list[tuple[str, str]] = []
    monkeypatch.setattr(localcorpus, "REPORT_EVERY_S", 3600.0)
    list(folder_documents(root, "c", {}, report=lambda *line: quiet.append(line)))
    assert quiet == []  # indexing that does not take long says nothing


def test_the_pool_is_sized_to_the_machine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "process_cpu_count", lambda: 64, raising=False)
    assert localcorpus.pool_size() == localcorpus.MAX_POOL
    monkeypatch.setattr(os, "process_cpu_count", lambda: None, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert localcorpus.pool_size() == 1


def test_an_identifier_finds_the_document_that_declares_it_first(tmp_path: Path) -> None:
    root = tmp_path / "lib"
    root.mkdir()
    # Many documents mention max; one declares it, in a long page BM25 ranks low.
    for n in range(6):
        (root / f"note{n}.txt").write_text(f"Set the max value {n} here; max is the max.\n")
    filler = "Other functions are listed on this page.\n\n" * 200
    (root / "builtins.txt").write_text(
        f"{filler}max(iterable, *, default=obj)\n\nReturn the largest item of the iterable.\n"
    )
    (root / "functools.txt").write_text("lru_cache(maxsize=128)\n\nCache decorator.\n")
    (root / "other.txt").write_text("lru_cache(maxsize=None)\n\nAnother cache decorator.\n")
    corpus = open_corpus(str(root), tmp_path / "state")
    assert corpus.search("max()", 3)[0].url == "file://lib/builtins.txt"
    assert corpus.search("max", 3)[0].url != "file://lib/builtins.txt"  # a word, not a key
    # A qualifier the path holds comes first among the documents that declare the name.
    assert corpus.search("functools.lru_cache", 3)[0].url == "file://lib/functools.txt"
    assert corpus.search("== operators", 3) is not None  # an operator is no name to look up


@pytest.mark.parametrize(
    ("short", "long", "found"),
    [
        pytest.param(
            # decimal declares an abs() of its own; abs() written bare is the built-in, as
            # Python itself resolves the name.
            ("decimal.txt", "abs(self, x, /)\n\nReturn the absolute value of x.\n"),
            "abs(x, /)\n\nReturn the absolute value of the argument.\n",
            {"abs()": "builtins.txt", "decimal.abs": "decimal.txt"},
            id="a-bare-name-is-looked-up-in-builtins-first",
        ),
        pytest.param(
            # dict.get is documented under "class dict" in the builtins page.
            ("mailbox.txt", "get(self, key, default=None)\n\nReturn a message.\n"),
            "class dict(object)\n\nget(self, key, default=None, /)\n\n"
            "Return the value for key if key is in the dictionary, else default.\n",
            {"dict.get": "builtins.txt"},
            id="a-method-s-class-is-a-qualifier-the-page-declares",
        ),
    ],
)
def test_a_name_is_looked_up_where_python_finds_it(
    tmp_path: Path, short: tuple[str, str], long: str, found: dict[str, str]
) -> None:
    root = tmp_path / "lib"
    root.mkdir()
    # The other page is short, so BM25 ranks it first; builtins is long.
    (root / short[0]).write_text(short[1])
    filler = "Other names are documented on this page.\n\n" * 200
    (root / "builtins.txt").write_text(filler + long)
    corpus = open_corpus(str(root), tmp_path / "state")
    assert {query: corpus.search(query, 3)[0].url for query in found} == {
        query: f"file://lib/{name}" for query, name in found.items()
    }
