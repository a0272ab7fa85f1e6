"""``deep-research mcp-fetch``: one MCP tool call through the three gates, retained like a page.

The server is the real stdio fixture (tests/fixtures/mcp/tiny_server.py), its reviewed
fingerprint recorded once (``mcp_state``); ``--call-log`` makes it write down every tool call it
receives, which is how a refused server is proven never called.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import write_config
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.urls import canonicalize, mcp_identity, registrable_domain

PAGE = "https://docs.python.org/3/reference/expressions.html"
QUOTE = (
    "Comparisons can be chained arbitrarily, e.g., x < y <= z is equivalent to x < y and "
    "y <= z, except that y is evaluated only once."
)


def mcp_fetch(
    capsys: pytest.CaptureFixture[str],
    state: Path,
    tool: str,
    arguments: dict[str, Any],
    *flags: str,
) -> tuple[int, Any, str]:
    code = main(
        [
            "mcp-fetch",
            "tiny",
            tool,
            "--arguments",
            json.dumps(arguments),
            "--brief",
            str(state / "brief"),
            "--state",
            str(state),
            "--json",
            *flags,
        ]
    )
    out, err = capsys.readouterr()
    return code, json.loads(out) if out.strip() else None, err


def log(state: Path) -> list[dict[str, Any]]:
    path = state / "brief" / "fetch-log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def calls(state: Path) -> list[str]:
    path = state / "calls.txt"
    return path.read_text().split() if path.exists() else []


def test_a_gated_call_is_retained_and_its_quote_traces(
    mcp_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(mcp_state, "--call-log", str(mcp_state / "calls.txt"))
    code, view, _ = mcp_fetch(capsys, mcp_state, "read_page", {"url": PAGE})
    assert code == 0 and view["outcome"] == "ok" and calls(mcp_state) == ["read_page"]
    identity = mcp_identity("tiny", "read_page", {"url": PAGE})
    assert view["url"] == identity and identity.startswith("mcp://tiny/read_page?url=")
    assert view["text"].startswith("<untrusted_source")
    assert QUOTE in Brief(mcp_state / "brief").read_corpus(view["content_hash"])
    [entry] = log(mcp_state)
    assert (entry["outcome"], entry["adapter"], entry["content_hash"]) == (
        "ok",
        "mcp:tiny",
        view["content_hash"],
    )
    # The path a fetcher's finding takes: normalize, then the trace gate on the retained text.
    raw = mcp_state / "raw.json"
    raw.write_text(
        json.dumps(
            {
                "sources": [
                    {
                        "url": identity,
                        "title": "Comparisons",
                        "content_hash": view["content_hash"],
                        "findings": [
                            {
                                "claim": "In a chained comparison y is evaluated only once.",
                                "quote": QUOTE,
                                "importance": "central",
                            }
                        ],
                    }
                ]
            }
        )
    )
    brief = mcp_state / "brief"
    assert main(["normalize", str(raw), "--brief", str(brief), "--sub-question", "sq1"]) == 0
    row = json.loads((brief / "sources.jsonl").read_text())
    assert row["owner"] == "python.org"  # the page the tool read, not the server, is the voice
    (brief / "claims.json").write_text(
        json.dumps(
            {
                "topic": "t",
                "question": "q",
                "generated": "2026-11-29",
                "depth": "quick",
                "sub_questions": [{"id": "sq1", "question": "q"}],
                "claims": [
                    {
                        "id": "C1",
                        "claim": "In a chained comparison y is evaluated only once.",
                        "supporting": ["S1"],
                        "findings": ["S1.F1"],
                    }
                ],
            }
        )
    )
    capsys.readouterr()
    assert main(["trace", str(brief)]) == 0
    assert json.loads(capsys.readouterr().out)["supported"] == 1


@pytest.mark.parametrize(
    ("extra", "fields", "gate"),
    [
        (("--change-schema",), {}, "manifest-audit"),
        (("--version", "1.3.0"), {}, "version-pin"),
        ((), {"env": ["DOCS_TOKEN"]}, "least-privilege"),
    ],
)
def test_a_failed_gate_is_refused_logged_and_the_tool_never_called(
    mcp_state: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    extra: tuple[str, ...],
    fields: dict[str, Any],
    gate: str,
) -> None:
    monkeypatch.setenv("DOCS_TOKEN", "do-not-leak-4f9a")
    write_config(mcp_state, "--call-log", str(mcp_state / "calls.txt"), *extra, **fields)
    code, result, said = mcp_fetch(capsys, mcp_state, "read_page", {"url": PAGE})
    assert code == 1 and result["error"] == f"{gate}-failed"
    assert said.strip().splitlines()[-1].startswith("next: this page is not evidence")
    assert calls(mcp_state) == []
    [entry] = log(mcp_state)
    assert entry["outcome"] == "refused" and entry["reason"].startswith(f"{gate}-failed")
    assert "do-not-leak" not in json.dumps(entry)
    assert not (mcp_state / "brief" / "corpus").exists()


def test_a_tool_error_is_logged_and_nothing_is_retained(
    mcp_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(mcp_state, "--tool-error")
    code, view, err = mcp_fetch(capsys, mcp_state, "search_docs", {"query": "chained"})
    assert code == 1 and view["outcome"] == "error" and view["text"] is None
    assert "the tool reported an error" in err
    assert "backend unavailable" not in err + json.dumps(log(mcp_state))  # never repeated
    assert [e["outcome"] for e in log(mcp_state)] == ["error"]


def test_unknown_tool_and_bad_arguments_are_input_errors(
    mcp_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(mcp_state, "--call-log", str(mcp_state / "calls.txt"))
    code, _, err = mcp_fetch(capsys, mcp_state, "run_shell", {})
    assert code == 2 and "no tool 'run_shell'" in err and calls(mcp_state) == []
    code, _, err = mcp_fetch(capsys, mcp_state, "read_page", {"url": PAGE, "api_key": "k-123"})
    assert code == 2 and "looks like a credential" in err and calls(mcp_state) == []
    assert "k-123" not in err and log(mcp_state) == []
    assert (
        main(
            [
                "mcp-fetch",
                "tiny",
                "read_page",
                "--arguments",
                "[1]",
                "--brief",
                str(mcp_state / "brief"),
                "--state",
                str(mcp_state),
            ]
        )
        == 2
    )
    assert "JSON object" in capsys.readouterr().err


def test_a_hung_server_times_out_as_an_error(
    mcp_state: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_config(mcp_state, "--hang")
    code, view, _ = mcp_fetch(capsys, mcp_state, "read_page", {"url": PAGE}, "--timeout", "1")
    assert code == 1 and view["outcome"] == "error"
    assert "no answer within 1s" in view["reason"]


def test_mcp_identities_are_canonical_and_owned() -> None:
    first = mcp_identity("Docs", "read_page", {"url": PAGE, "n": 3})
    assert first == mcp_identity("docs", "read_page", {"n": 3, "url": PAGE})  # argument order
    assert canonicalize(first) == first
    assert registrable_domain(first) == "python.org"
    assert registrable_domain(mcp_identity("docs", "search_docs", {"q": "x"})) == "mcp:docs"
    assert mcp_identity("docs", "search_docs", {"q": "x"}) != mcp_identity(
        "docs", "search_docs", {"q": "y"}
    )
