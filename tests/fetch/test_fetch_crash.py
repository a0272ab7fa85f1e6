"""Crash safety: a fetcher process killed mid-write leaves no partial corpus file under its final
name, and no torn fetch-log line except possibly the last, which readers skip with a warning."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from deep_research.brief.layout import Brief
from deep_research.fetch.fetcher import Fetcher
from localhttp import LocalServer, Route, article, loopback_policy, words

PAGE = article("The census counted 48,213 households in 2021. " + words(300))

# Runs one fetch in a child process that SIGKILLs itself at the chosen write.
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from deep_research.brief import writers as brief_module
    from deep_research.fetch import fetchlog
    from deep_research.fetch.fetcher import run_fetch

    where, url, root = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    real_replace, real_write = os.replace, os.write

    def dying_replace(src, dst):
        if str(dst).endswith(".txt"):  # the corpus text, after its temp file is written
            os.kill(os.getpid(), signal.SIGKILL)
        return real_replace(src, dst)

    def dying_write(fd, data):
        if b'"purpose":"page"' in data:  # half of the page's fetch-log line, then death
            real_write(fd, data[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        return real_write(fd, data)

    if where == "corpus":
        brief_module.os.replace = dying_replace
    else:
        fetchlog.os.write = dying_write
    run_fetch(url, root)
    """
)


def run_child(where: str, url: str, root: Path, port: int) -> int:
    env = dict(os.environ)
    env["DEEP_RESEARCH_TEST_PRIVATE_CIDRS"] = "127.0.0.1/32"
    env["DEEP_RESEARCH_TEST_PORTS"] = str(port)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, where, url, str(root)], env=env, timeout=60, check=False
    )
    return done.returncode


def test_killed_while_storing_text_leaves_no_corpus_file(
    server: LocalServer, tmp_path: Path
) -> None:
    server.routes["/p"] = Route(body=PAGE)
    assert run_child("corpus", server.url("/p"), tmp_path, server.port) == -9
    assert not list((tmp_path / "corpus").glob("*.txt"))  # only a hidden temp file, if any
    # The page line was never written: no 2xx entry claims text that is not there.
    assert [entry.purpose for entry in Brief(tmp_path).load_fetch_log()] == ["robots"]


def test_killed_while_logging_tears_only_the_last_line(server: LocalServer, tmp_path: Path) -> None:
    server.routes["/p"] = Route(body=PAGE)
    server.routes["/q"] = Route(body=article("A different page. " + words(50, "q")))
    assert run_child("log", server.url("/p"), tmp_path, server.port) == -9
    brief = Brief(tmp_path)
    assert not brief.fetch_log_path.read_bytes().endswith(b"\n")
    with pytest.warns(UserWarning, match="torn last line"):
        assert [entry.purpose for entry in brief.load_fetch_log()] == ["robots"]
    # The corpus file is complete (it was renamed into place before the log line).
    (text_file,) = (tmp_path / "corpus").glob("*.txt")
    assert brief.read_corpus("sha256:" + text_file.stem)
    # The next append cuts the torn tail off, so it never ends up in the middle of the log.
    with Fetcher(brief, loopback_policy(server.port)) as fetcher:
        assert fetcher.fetch(server.url("/q")).ok
    lines = brief.load_fetch_log()
    assert [(entry.purpose, entry.outcome) for entry in lines] == [
        ("robots", "error"),  # robots.txt is 404 here: allowed, and still logged
        ("page", "ok"),
    ]
    assert lines[-1].url.endswith("/q")
