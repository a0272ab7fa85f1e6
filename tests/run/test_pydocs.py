"""The library half of python-docs: pydoc's rendering, laid flat, in an isolated child."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import pytest

from deep_research.gates.vocabulary import sentences
from deep_research.run.pydocs import library_modules, render_library, wanted


def test_which_modules_are_rendered() -> None:
    names = library_modules()
    assert {"json", "threading", "asyncio", "dataclasses", "io", "unicodedata"} <= set(names)
    # Adversarial: private, GUI, demo, test and side-effect modules are never imported.
    for never in ("antigravity", "this", "tkinter", "turtle", "idlelib", "_thread", "test"):
        assert never not in names
    assert not wanted("json._private") and not wanted("unittest.test.test_case")
    assert not wanted("encodings.utf_8") and wanted("json.decoder")


def test_rendering_is_prose_a_sentence_splitter_reads() -> None:
    docs = {doc.name: doc for doc in render_library(["textwrap", "json"])}
    assert set(docs) == {"textwrap", "json"}
    text = docs["textwrap"].text
    assert docs["textwrap"].synopsis == "Text wrapping and filling."
    claims = [s.claim for s in sentences(text)]
    assert any(c.startswith("Wrap a single paragraph of text") for c in claims), claims[:20]
    # Left out: pydoc's notice, inherited members, the resolution order, values, the path.
    assert "automatically generated" not in text and "docs.python.org" not in text
    assert "inherited from" not in text and "Method resolution order" not in text
    assert "FILE" not in text and "textwrap.py" not in text
    assert " at 0x" not in text


def test_render_is_the_same_every_time() -> None:
    first = render_library(["json", "dataclasses"])
    assert first == render_library(["json", "dataclasses"])


def test_hostile_modules_are_left_out_and_the_rest_kept(tmp_path: Path) -> None:
    (tmp_path / "loud.py").write_text(
        '"""A module that prints as it loads."""\n'
        "import os, sys\nprint('x' * 100000)\nos.write(1, b'{not json\\n')\n"
        "sys.stderr.write('noise')\n"
    )
    (tmp_path / "broken.py").write_text("raise RuntimeError('no')\n")
    (tmp_path / "quits.py").write_text("import sys\nsys.exit(3)\n")
    (tmp_path / "slow.py").write_text("import time\ntime.sleep(60)\n")
    (tmp_path / "dies.py").write_text("import os\nos._exit(0)\n")
    (tmp_path / "commented.py").write_text(
        "# Licence: all rights reserved\n# https://example.org/x\n\n"
        "# The helper below.\ndef helper():\n    return 1\n"
    )
    began = time.monotonic()
    docs = render_library(
        ["loud", "broken", "quits", "commented", "slow", "json", "dies", "textwrap"],
        module_seconds=1,
        also_search=[tmp_path],
    )
    # The slow module ran out of its second; the one that killed its interpreter took the
    # modules after it, never the ones before.
    assert [doc.name for doc in docs] == ["commented", "json", "loud"]
    assert docs[2].synopsis == "A module that prints as it loads."
    # Comments are no documentation: pydoc's fallback to them is not taken.
    assert "helper()" in docs[0].text and "#" not in docs[0].text
    assert "Licence" not in docs[0].text and "example.org" not in docs[0].text
    assert time.monotonic() - began < 50


def test_no_local_module_shadows_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "textwrap.py").write_text('"""Impostor."""\n')
    (tmp_path / "sitecustomize.py").write_text("raise SystemExit(9)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("PYTHONSTARTUP", str(tmp_path / "textwrap.py"))
    docs = render_library(["textwrap"], also_search=[tmp_path])
    assert [doc.synopsis for doc in docs] == ["Text wrapping and filling."]


def test_the_process_environment_is_never_rendered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pydoc shows default arguments, and os.environ is one (cgi.parse's environ=os.environ):
    # rendered with this process's environment, an exported API key was in the documentation.
    (tmp_path / "spawner.py").write_text(
        '"""Starts programs."""\nimport os\n\n\n'
        'def spawn(command, env=os.environ):\n    """Run command with env."""\n'
    )
    canary = f"sk-ant-canary-{secrets.token_hex(8)}"
    monkeypatch.setenv("DEEP_RESEARCH_TEST_SECRET", canary)
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    [first] = render_library(["spawner"], also_search=[tmp_path])
    assert canary not in first.text and "DEEP_RESEARCH_TEST_SECRET" not in first.text
    assert "spawn(command, env=environ({}))" in first.text
    # Another environment renders the same documentation: two state folders agree.
    monkeypatch.delenv("DEEP_RESEARCH_TEST_SECRET")
    monkeypatch.setenv("LANG", "C")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert render_library(["spawner"], also_search=[tmp_path]) == [first]
