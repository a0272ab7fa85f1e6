"""Every command on bad input: a one-line error, a documented exit code, nothing half-written."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from briefs import PageSpec, page, write_brief
from deep_research.cli import main

FIFTY_MB = 50 * 1024 * 1024

BAD_CONTENT: dict[str, Callable[[], bytes]] = {
    "empty": lambda: b"",
    "truncated": lambda: b'{"topic": "x", "claims": [{"id": "C1", "cla',
    "binary": lambda: bytes(range(256)) * 64,
    "fifty-mb-line": lambda: b'{"topic": "' + b"x" * FIFTY_MB,
    "wrong-types": lambda: b'{"topic": 7, "claims": {"id": "C1"}}',
    "scalar": lambda: b"42",
}


def _brief(tmp_path: Path) -> Path:
    quote = "approve a budget of $1.82 billion for the 2025 fiscal year, an increase of 3.5%"
    return write_brief(
        tmp_path / "brief",
        [
            PageSpec(
                "https://harbourton-news.example/budget",
                page("city-budget.txt"),
                [("Budget", quote)],
            )
        ],
        [{"claim": "Harbourton approved a $1.82 billion budget for 2025", "supporting": ["S1"]}],
    )


def _digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.count("\n") == 1, err
    return err


@pytest.mark.parametrize(
    ("artifact", "kind"),
    [
        (artifact, kind)
        for artifact in ("claims.json", "sources.jsonl", "trace.json")
        for kind in sorted(BAD_CONTENT)
        # An empty sources.jsonl is a search that found nothing (the next test).
        if (artifact, kind) != ("sources.jsonl", "empty")
    ],
)
def test_trace_on_bad_artifact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], artifact: str, kind: str
) -> None:
    root = _brief(tmp_path)
    (root / artifact).write_bytes(BAD_CONTENT[kind]())
    before = _digest(root)
    assert main(["trace", str(root)]) == 2
    err = _one_line_error(capsys)
    assert artifact.split(".")[0] in err
    assert _digest(root) == before


def test_trace_with_no_sources_flags_every_citation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _brief(tmp_path)
    (root / "sources.jsonl").write_bytes(b"")
    assert main(["trace", str(root)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["total_cites_checked"] == 1 and len(report["violations"]) == 1


@pytest.mark.parametrize("kind", ["truncated", "binary", "fifty-mb-line", "wrong-types", "scalar"])
def test_trace_on_bad_fetch_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    root = _brief(tmp_path)
    # A torn *last* line is what a crash leaves and is tolerated; garbage before it is not.
    (root / "fetch-log.jsonl").write_bytes(BAD_CONTENT[kind]() + b"\n")
    before = _digest(root)
    assert main(["trace", str(root)]) == 2
    assert "fetch-log" in _one_line_error(capsys)
    assert _digest(root) == before


@pytest.mark.parametrize("kind", ["empty", "binary", "fifty-mb-line"])
def test_trace_on_bad_dossier(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    root = _brief(tmp_path)
    dossier = tmp_path / "report.md"
    dossier.write_bytes(BAD_CONTENT[kind]())
    before = _digest(root)
    code = main(["trace", str(root), "--dossier", str(dossier)])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    # An empty or garbage-free-of-citations dossier checks nothing (0); binary is refused (2).
    assert code == (2 if kind == "binary" else 0)
    assert _digest(root) == before


@pytest.mark.parametrize("kind", sorted(BAD_CONTENT))
def test_validate_on_bad_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    root = _brief(tmp_path)
    (root / "claims.json").write_bytes(BAD_CONTENT[kind]())
    before = _digest(root)
    assert main(["validate", str(root)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("invalid: ")
    assert _digest(root) == before


@pytest.mark.parametrize("kind", ["empty", "binary", "fifty-mb-line"])
def test_locate_on_bad_text_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    text = tmp_path / "page.txt"
    text.write_bytes(BAD_CONTENT[kind]())
    code = main(
        ["locate", "--quote", "approve a budget of $1.82 billion", "--text-file", str(text)]
    )
    assert code in (1, 2)  # not located (1) or unreadable (2), never a crash
    assert "Traceback" not in capsys.readouterr().err


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["trace", "--mode", "sideways"])
    assert caught.value.code == 2
    with pytest.raises(SystemExit) as caught:
        main([])
    assert caught.value.code == 2


def test_real_process_prints_no_traceback(tmp_path: Path) -> None:
    root = _brief(tmp_path)
    (root / "claims.json").write_bytes(BAD_CONTENT["binary"]())
    done = subprocess.run(
        [sys.executable, "-m", "deep_research.cli", "trace", str(root)],
        capture_output=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.decode().count("\n") == 1 and b"Traceback" not in done.stderr


def test_a_warning_is_one_line_that_names_the_command(tmp_path: Path) -> None:
    """A torn last fetch-log line is skipped with a warning: one line, no library source line."""
    root = _brief(tmp_path)
    with (root / "fetch-log.jsonl").open("ab") as log:
        log.write(b'{"url": "https://torn.exa')
    done = subprocess.run(
        [sys.executable, "-m", "deep_research.cli", "trace", str(root)],
        capture_output=True,
        text=True,
        check=False,
    )
    warned = [line for line in done.stderr.splitlines() if "torn last line" in line]
    assert warned and warned[0].startswith("deep-research trace: warning: "), done.stderr
    assert "warnings.warn" not in done.stderr and "stacklevel" not in done.stderr


# --- a newcomer's bad inputs: each was a traceback or a wrong answer -------------------------


def test_run_state_that_is_a_file_or_cannot_be_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine\n")
    # A one-document folder, not python-docs: the state folder is what is tested, and building
    # python-docs' index would be most of the test's time.
    corpus = tmp_path / "docs"
    corpus.mkdir()
    sentence = "The lighthouse keeper logs every passing ship in the harbour ledger each night."
    (corpus / "ledger.md").write_text(f"# Ledger\n\n{sentence}\n")
    question = "What does the lighthouse keeper log?"
    base = ["run", question, "--corpus", str(corpus), "--state"]
    assert main([*base, str(a_file)]) == 2
    assert "is a file, not a folder" in _one_line_error(capsys)
    assert a_file.read_text() == "mine\n"
    assert main([*base, "/proc/deep-research-cannot-be-here"]) == 2
    assert "cannot make the state folder" in _one_line_error(capsys)
    # The twin: a state folder that does not exist yet is made.
    fresh = tmp_path / "new" / "state"
    assert main([*base, str(fresh), "--json"]) == 0
    assert (fresh / "briefs").is_dir()


def test_schemas_dir_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "schemas"
    a_file.write_text("x")
    assert main(["schemas", "--dir", str(a_file)]) == 2
    assert "is a file, not a folder" in _one_line_error(capsys)
    assert a_file.read_text() == "x"
    assert main(["schemas", "--dir", str(tmp_path / "out")]) == 0
    assert main(["schemas", "--dir", str(tmp_path / "out"), "--check"]) == 0


def test_validate_of_a_folder_that_is_no_brief(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["validate", str(tmp_path / "empty")]) == 2
    assert "is not a brief" in _one_line_error(capsys)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.md").write_text("# not a brief\n")
    assert main(["validate", str(tmp_path / "other")]) == 2
    assert "is not a brief" in _one_line_error(capsys)
    assert main(["validate", str(_brief(tmp_path))]) == 0  # the twin: a brief is one


def test_hosts_add_needs_the_brief_and_a_host(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing"
    assert main(["hosts", "add", "example.org", "--brief", str(missing)]) == 2
    assert "brief directory not found" in _one_line_error(capsys)
    assert not missing.exists()
    root = _brief(tmp_path)
    before = _digest(root)
    for empty in ("", "   ", "https://"):
        assert main(["hosts", "add", "example.org", empty, "--brief", str(root)]) == 2
        assert "names no host" in _one_line_error(capsys)
    assert _digest(root) == before  # not even the good host of a refused command
    assert main(["hosts", "add", "example.org", "--brief", str(root)]) == 0
    assert main(["hosts", "check", "https://example.org/a", "--brief", str(root)]) == 0


def test_finish_of_a_missing_brief(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "state"
    assert main(["finish", str(tmp_path / "nope"), "--state", str(state)]) == 2
    assert "brief directory not found" in _one_line_error(capsys)
    assert not state.exists()
    # An existing brief that is not the active run: nothing to clear, and no error.
    assert main(["finish", str(_brief(tmp_path)), "--state", str(state)]) == 0


def test_locate_with_an_empty_quote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "page.txt"
    text.write_text("The council approved the budget on Tuesday after a long debate.\n")
    for quote in ("", "  "):
        assert main(["locate", "--quote", quote, "--text-file", str(text)]) == 2
        assert "--quote is empty" in _one_line_error(capsys)
    assert main(["locate", "--quote", "no such words anywhere", "--text-file", str(text)]) == 1
    assert "not found: the quote is not in" in capsys.readouterr().err
    assert main(["locate", "--quote", "approved the budget", "--text-file", str(text)]) == 0


def test_normalize_of_a_large_all_rejected_file_reports_a_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = 5_000
    rejected = tmp_path / "rejected.jsonl"
    with rejected.open("w") as handle:
        for number in range(lines):
            handle.write(json.dumps({"url": f"ftp://x.example/{number}", "title": "x" * 900}))
            handle.write("\n")
    report = tmp_path / "report.json"
    assert main(["normalize", str(rejected), "--report", str(report)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert len(err) <= 22 and max(map(len, err)) <= 320
    assert f"… and {lines - 20:,} more" in err[-2]
    assert f"{lines} rejection(s)" in err[-1]
    # Every rejection is still in the report.
    assert len(json.loads(report.read_text())["rejections"]) == lines


def test_gate_input_that_is_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "--input", str(tmp_path)]) == 2
    message = _one_line_error(capsys)
    assert "is not a file" in message and "not found" not in message
    assert main(["gate", "--input", str(tmp_path / "absent.jsonl")]) == 2
    assert "not found" in _one_line_error(capsys)


def test_a_corpus_file_over_the_size_cap_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from deep_research.run import localcorpus

    # The cap, scaled down so the test writes kilobytes, not 20 MB.
    monkeypatch.setattr(localcorpus, "MAX_FILE_BYTES", 2_000)
    corpus = tmp_path / "docs"
    corpus.mkdir()
    sentence = "The lighthouse keeper logs every passing ship in the harbour ledger each night. "
    (corpus / "huge.md").write_text("# Ledger\n\n" + sentence * 40)
    (corpus / "small.md").write_text("# Ledger\n\n" + sentence)
    question = "What does the lighthouse keeper log?"
    state = str(tmp_path / "state")
    code = main(["run", question, "--corpus", str(corpus), "--state", state, "--json"])
    assert code in (0, 1)
    warned = [line for line in capsys.readouterr().err.splitlines() if "cap" in line]
    assert len(warned) == 1 and "huge.md" in warned[0] and "small.md" not in warned[0]
    assert warned[0].startswith("deep-research run: warning: 1 file(s)")
