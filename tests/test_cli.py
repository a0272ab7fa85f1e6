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
