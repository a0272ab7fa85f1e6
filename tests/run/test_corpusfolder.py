"""A --corpus folder is read without leaving it: links, hard links, odd names, unreadable files.

Each attack below was once indexed, quoted or crashed on: a symbolic link to the process's
environment, to /etc/passwd, to its memory, to a file beside the folder; a hard link to a file
outside; a name with a newline or bytes that are not UTF-8; a file or folder that cannot be read.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from deep_research.cli import main
from deep_research.errors import InputError
from deep_research.run import localcorpus
from deep_research.run.localcorpus import CorpusIndex, folder_documents, open_corpus

QUESTION = "When did the harbour ferry first sail?"
ANSWER = "The harbour ferry first sailed in 1901 from the old stone pier at dawn."


def _corpus(root: Path) -> Path:
    """A folder with one ordinary document (the control) and room for one attack."""
    root.mkdir(parents=True)
    (root / "normal.md").write_text("# Boilers\n\nGas boilers heat water for radiators.\n")
    return root


def _every_byte_under(folder: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file())


def _run(corpus: Path, state: Path, question: str = QUESTION) -> Path:
    """``deep-research run`` over ``corpus`` (the README's main job); the brief it wrote."""
    code = main(["run", question, "--corpus", str(corpus), "--state", str(state), "--json"])
    assert code in (0, 1)
    [brief] = [path for path in (state / "briefs").iterdir() if not path.name.startswith(".")]
    return brief


# --- symbolic links -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "target", "shown"),
    [
        ("env.md", "/proc/self/environ", "env.md → /proc/self/environ"),
        ("passwd.txt", "/etc/passwd", "passwd.txt → /etc/passwd"),
        ("mem.md", "/proc/self/mem", "mem.md → /proc/self/mem"),  # was an OSError traceback
        ("beside.md", "../outside.md", "beside.md → ../outside.md"),
        ("gone.md", "nowhere.md", "gone.md (broken)"),
    ],
)
def test_a_link_out_of_the_folder_is_skipped_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, target: str, shown: str
) -> None:
    canary = f"canary-{secrets.token_hex(8)}"
    monkeypatch.setenv("DEEP_RESEARCH_TEST_CANARY", canary)
    root = _corpus(tmp_path / "c")
    (tmp_path / "outside.md").write_text(f"# Outside\n\nA secret {canary} from outside.\n")
    (root / name).symlink_to(target)
    state = tmp_path / "state"
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        corpus = open_corpus(str(root), state)
    assert canary.encode() not in _every_byte_under(state)
    assert b"root:x:0:0" not in _every_byte_under(state)
    assert corpus.index.count() == 1  # the control is read
    said = [str(warning.message) for warning in heard]
    assert any("lead outside it or not to a regular file" in line for line in said), said
    assert any(shown in line for line in said), said


def test_a_link_inside_the_folder_is_followed(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "c")
    (root / "alias.md").symlink_to("normal.md")
    (root / "sub").mkdir()
    (root / "sub" / "up.md").symlink_to("../normal.md")
    corpus = open_corpus(str(root), tmp_path / "state")
    assert sorted(hit.url for hit in corpus.search("boilers radiators", 5)) == [
        "file://c/alias.md",
        "file://c/normal.md",
        "file://c/sub/up.md",
    ]


def test_a_link_to_a_folder_or_a_pipe_is_not_followed(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "c")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "far.md").write_text("# Far\n\nFar away boilers.\n")
    (root / "folder").symlink_to(tmp_path / "elsewhere")
    os.mkfifo(root / "pipe.md")  # opening it for reading would wait for a writer forever
    (root / "to-pipe.md").symlink_to("pipe.md")
    with pytest.warns(UserWarning) as heard:
        corpus = open_corpus(str(root), tmp_path / "state")
    said = " | ".join(str(warning.message) for warning in heard)
    assert "folder (a folder)" in said and "to-pipe.md (not a regular file" in said
    assert "not regular files (a pipe, device or socket) and are not read: pipe.md" in said
    assert corpus.index.count() == 1


def test_a_link_out_quoted_nowhere_in_the_brief(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The attack as reported: ../outside.md was quoted into a report.
    root = _corpus(tmp_path / "c")
    (tmp_path / "outside.md").write_text(f"# Ferry\n\n{ANSWER}\n")
    (root / "ferry.md").symlink_to("../outside.md")
    brief = _run(root, tmp_path / "state")
    assert b"1901" not in _every_byte_under(brief)
    assert "not found" in (brief / "report.md").read_text(encoding="utf-8")
    assert "are not followed: ferry.md → ../outside.md;" in capsys.readouterr().err


# --- hard links -----------------------------------------------------------------------------


def test_a_hard_link_to_a_file_outside_is_skipped_and_named(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "c")
    secret = tmp_path / "private.md"
    secret.write_text("# Private\n\nThe private boilers ledger.\n")
    os.link(secret, root / "ledger.md")
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        corpus = open_corpus(str(root), tmp_path / "state")
    assert b"private boilers" not in _every_byte_under(tmp_path / "state")
    assert corpus.index.count() == 1
    said = [str(warning.message) for warning in heard]
    assert any("hard links to a file with names outside" in line for line in said), said
    assert any("are not searched: ledger.md;" in line for line in said), said


def test_a_hard_link_within_the_folder_is_read(tmp_path: Path) -> None:
    # A de-duplicated corpus: every name of the file is inside the folder.
    root = _corpus(tmp_path / "c")
    (root / "copies").mkdir()
    os.link(root / "normal.md", root / "copies" / "twin.md")
    corpus = open_corpus(str(root), tmp_path / "state")
    assert corpus.index.count() == 2


# --- odd names ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "identity"),
    [
        (b"new\nline.md", "file://c/new%0Aline.md"),  # was dropped: an invalid URL
        (b"bad\xffname.md", "file://c/bad%FFname.md"),  # was a UnicodeEncodeError, every rerun
        (b"bidi\xe2\x80\xaedm.txt", "file://c/bidi%E2%80%AEdm.txt"),  # a right-to-left override
        (b"a#b?c%41.md", "file://c/a%23b%3Fc%2541.md"),  # a fragment, a query, an escape
    ],
)
def test_an_odd_name_is_read_and_shown_escaped(tmp_path: Path, raw: bytes, identity: str) -> None:
    root = _corpus(tmp_path / "c")
    (root / os.fsdecode(raw)).write_text(f"# Ferry\n\n{ANSWER}\n")
    state = tmp_path / "state"
    for _ in range(2):  # a rerun reads the index the first run built
        brief = _run(root, state)
        sources = [json.loads(line) for line in (brief / "sources.jsonl").read_text().splitlines()]
        assert [source["url"] for source in sources if source["title"] == "Ferry"] == [identity]
        assert "1901" in (brief / "report.md").read_text(encoding="utf-8")


def test_a_folder_name_is_escaped_in_what_is_shown(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "c")
    odd = root / os.fsdecode(b"dir\n\xfe")
    odd.mkdir()
    (odd / "x.md").write_text("# Ferry\n\nFerries carry boilers.\n")
    corpus = open_corpus(str(root), tmp_path / "state")
    doc = corpus.index.document("file://c/dir%0A%FE/x.md")
    assert doc is not None and doc.owner == "dir%0A%FE"


def test_a_corpus_folder_whose_own_name_is_not_utf8_is_refused(tmp_path: Path) -> None:
    root = _corpus(tmp_path / os.fsdecode(b"f\xffolder"))
    with pytest.raises(InputError, match=r"f%FFolder has a name that is not UTF-8"):
        open_corpus(str(root), tmp_path / "state")


# --- what cannot be read --------------------------------------------------------------------


def _without_read_override() -> list[str]:
    """A command prefix under which permissions bind: as root, the capabilities that override
    them are dropped (setpriv); otherwise none is needed."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file permissions cannot bind")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


def test_an_unreadable_file_or_folder_is_named_never_a_traceback(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "c")
    (root / "ferry.md").write_text(f"# Ferry\n\n{ANSWER}\n")
    (root / "locked.md").write_text("# Locked\n\nThe ferry locked notes.\n")
    (root / "closed").mkdir()
    (root / "closed" / "inner.md").write_text("# Inner\n\nThe ferry inner notes.\n")
    (root / "locked.md").chmod(0)
    (root / "closed").chmod(0)
    try:
        done = subprocess.run(
            [
                *_without_read_override(),
                sys.executable,
                "-m",
                "deep_research.cli",
                "run",
                QUESTION,
                "--corpus",
                str(root),
                "--state",
                str(tmp_path / "state"),
            ],
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
    finally:
        (root / "closed").chmod(0o755)
        (root / "locked.md").chmod(0o644)
    assert "Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr[-2000:]
    warned = [line for line in done.stderr.splitlines() if "could not be read" in line]
    assert warned == [
        f"deep-research run: warning: 2 file(s) or folder(s) of {root} could not be read and "
        "are not searched: closed/ (permission denied), locked.md (permission denied)"
    ]
    [brief] = (tmp_path / "state" / "briefs").iterdir()
    assert "1901" in (brief / "report.md").read_text(encoding="utf-8")  # the readable one answers


@pytest.mark.parametrize(
    ("swap", "why"),
    [("link", "too many levels of symbolic links"), ("hard link", "changed since the folder")],
)
def test_a_file_swapped_after_listing_is_not_read(tmp_path: Path, swap: str, why: str) -> None:
    root = _corpus(tmp_path / "c")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nOutside boilers, never read.\n")
    listed = list(localcorpus._listed(root, {}))
    (root / "normal.md").unlink()
    if swap == "link":
        (root / "normal.md").symlink_to(outside)
    else:
        os.link(outside, root / "normal.md")
    with pytest.warns(UserWarning, match=rf"could not be read .*: normal.md \({why}"):
        read = list(localcorpus.read_changed(listed, "c", root=root))
    assert read == []


def test_a_pseudo_file_system_is_no_corpus(tmp_path: Path) -> None:
    for folder in ("/proc/self", "/sys/kernel", "/dev"):
        if Path(folder).is_dir():
            with pytest.raises(InputError, match="live state, not documents"):
                open_corpus(folder, tmp_path / "state")


def test_a_row_that_leaves_the_index_leaves_no_bytes(tmp_path: Path) -> None:
    # An index built before links were checked holds what a link led to; the next sync drops
    # the row, and the bytes go with it (secure delete, FTS segments merged).
    root = _corpus(tmp_path / "c")
    index = CorpusIndex(tmp_path / "i.sqlite", "c")
    leaked = localcorpus.LocalDoc("file://c/env.md", "env", "PWD=/x CANARYWORD=zq9x7\n", "c")
    index.sync([("env.md", leaked, 1, 1)])
    assert b"zq9x7" in (tmp_path / "i.sqlite").read_bytes()
    assert index.sync(folder_documents(root, "c", index.known())).removed == 1
    assert b"zq9x7" not in (tmp_path / "i.sqlite").read_bytes()
