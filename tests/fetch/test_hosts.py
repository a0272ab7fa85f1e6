"""The run host allow-list learns hosts from search results, never a public suffix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.fetch.hosts import add_hosts, allowlist_path, learnable, load
from deep_research.plugin import runstate

# What a search hit may name that is a public suffix and nothing more: the ICANN section's
# (com, co.uk, a wildcard rule's *.ck), the private section's (github.io, blogspot.com,
# s3.amazonaws.com), in any spelling the host parser accepts (case, trailing dot, port,
# user info, Unicode).
SUFFIX_HITS = [
    "https://github.io/",
    "https://co.uk/",
    "https://com/",
    "https://GitHub.IO./pages",
    "https://user:pw@github.io:443/x",
    "https://blogspot.com/",
    "https://s3.amazonaws.com/",
    "https://bar.ck/",
    "https://公司.cn/",
    "xn--55qx5d.cn",
    "co.uk",
]
# Hosts a suffix on the list would admit.
UNDER_SUFFIXES = [
    "https://x.github.io/",
    "https://attacker.co.uk/",
    "https://attacker.com/",
    "https://bucket.s3.amazonaws.com/",
    "https://a.bar.ck/",
    "https://a.公司.cn/",
]


def test_a_normal_host_is_learned_as_given(tmp_path: Path) -> None:
    brief = Brief(tmp_path / "b")
    listed = add_hosts(brief, ["https://docs.python.org/3/library/", "https://x.github.io/p"])
    assert sorted(listed.search) == ["docs.python.org", "x.github.io"]
    assert listed.allows("https://docs.python.org/3/") and listed.allows("https://a.x.github.io/")
    # Adversarial: the host is not widened to its owner, nor to a sibling under its suffix.
    assert not listed.allows("https://python.org/") and not listed.allows("https://y.github.io/")


@pytest.mark.parametrize("hit", SUFFIX_HITS)
def test_a_public_suffix_is_never_learned(tmp_path: Path, hit: str) -> None:
    brief = Brief(tmp_path / "b")
    listed = add_hosts(brief, [hit, "https://www.oecd.org/ai/"])
    assert listed.search == ("www.oecd.org",) and learnable(hit) is None
    for url in UNDER_SUFFIXES:
        assert not listed.allows(url), url
    assert json.loads(allowlist_path(brief).read_text())["search"] == ["www.oecd.org"]


def test_a_suffix_already_on_the_search_list_admits_nothing(tmp_path: Path) -> None:
    # A list written before the rule, or edited by hand: its suffix opens nothing and is
    # dropped the next time the list is saved. The operator's static choice stands.
    brief = Brief(tmp_path / "b")
    brief.root.mkdir()
    written = {"static": ["gov.uk"], "search": ["github.io", "co.uk", "www.oecd.org"]}
    allowlist_path(brief).write_text(json.dumps(written))
    listed = load(brief)
    assert listed is not None
    assert not listed.allows("https://x.github.io/") and not listed.allows("https://a.co.uk/")
    assert listed.allows("https://www.oecd.org/") and listed.allows("https://www.gov.uk/x")
    saved = add_hosts(brief, ["https://example.org/"])
    assert sorted(saved.search) == ["example.org", "www.oecd.org"] and saved.static == ("gov.uk",)


def test_hosts_add_refuses_a_suffix_for_the_search_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "b"
    root.mkdir()
    assert main(["hosts", "add", "https://github.io/", "--brief", str(root)]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "github.io is a public suffix" in error
    assert not allowlist_path(Brief(root)).exists()
    assert main(["hosts", "add", "gov.uk", "--static", "--brief", str(root)]) == 0
    assert main(["hosts", "add", "example.org", "--brief", str(root)]) == 0
    assert main(["hosts", "check", "https://x.github.io/", "--brief", str(root)]) == 1


def _hook(payload: dict[str, object], phase: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """One event through ``deep-research guard``, as the plugin's hooks call it."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_PROJECT_DIR",)}
    env["DEEP_RESEARCH_STATE"] = str(cwd / "state")
    return subprocess.run(
        [sys.executable, "-m", "deep_research.cli", "guard", "--phase", phase],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
        timeout=60,
    )


def test_a_search_hit_on_a_suffix_opens_nothing_in_a_run(tmp_path: Path) -> None:
    run = runstate.start_run(
        "Who publishes on GitHub Pages?",
        depth="quick",
        state=tmp_path / "state",
        requested={},
        static_hosts=[],
    )
    common = {"session_id": "s1", "cwd": str(tmp_path), "tool_use_id": "toolu_01"}
    hits = [
        {"title": t, "url": u} for t, u in (("a", "https://github.io/"), ("b", "https://co.uk/"))
    ]
    hits.append({"title": "c", "url": "https://pages.example.org/post"})
    post = {
        **common,
        "hook_event_name": "PostToolUse",
        "tool_name": "WebSearch",
        "tool_input": {"query": "pages"},
        "tool_response": {"query": "pages", "results": [{"content": hits}]},
    }
    assert _hook(post, "post", tmp_path).returncode == 0
    saved = json.loads(allowlist_path(Brief(Path(run["brief"]))).read_text())
    assert saved["search"] == ["pages.example.org"]

    def fetch(url: str) -> subprocess.CompletedProcess[str]:
        event = {
            **common,
            "hook_event_name": "PreToolUse",
            "tool_name": "WebFetch",
            "tool_input": {"url": url, "prompt": "read it"},
        }
        return _hook(event, "pre", tmp_path)

    assert fetch("https://pages.example.org/post").returncode == 0  # control: a learned host
    for url in ("https://x.github.io/", "https://attacker.co.uk/"):
        denied = fetch(url)
        assert denied.returncode == 2 and "not on this run's allow-list" in denied.stderr, url
