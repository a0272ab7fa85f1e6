"""Every section reference in the repository's text resolves to a real heading.

A reference names a document by its repository path and a numbered section, e.g.
``docs/contracts.md §4`` or ``docs/contracts.md §8, §10``; the document must exist and have a
heading with that number (``## 4.`` or ``### 4.2``). Inside a markdown document a bare section
number refers to that document itself; anywhere else a section number without a document is
an error, since a reader of the repository alone could not follow it. A published standard
(``RFC 9309``) is cited by its own numbering and is not checked against the repository.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest

from conftest import REPO

#: Written as an escape so this file's own patterns and made-up references are not references.
SIGN = "\u00a7"
#: Where references are looked for, and in which files.
ROOTS = ("src", "tests", "skills", "agents", "roles", "conduct", "docs", "README.md")
SUFFIXES = (".py", ".md")

NUMBER = r"\d+(?:\.\d+)*"
SECTION = re.compile(rf"{SIGN}({NUMBER})")
CITATION = re.compile(
    rf"(?P<doc>RFC \d+|[\w./-]+\.md) (?P<sections>{SIGN}{NUMBER}(?:(?:, | and |–){SIGN}{NUMBER})*)"
)
BARE = re.compile(rf"{SIGN}\S*")
HEADING = re.compile(rf"^#+ ({NUMBER})\.?(?=\s|$)", re.MULTILINE)


@cache
def headings(doc: str) -> frozenset[str] | None:
    """Section numbers of a repository document, or None when it is not one."""
    path = (REPO / doc).resolve()
    if REPO not in path.parents or not path.is_file():
        return None
    return frozenset(HEADING.findall(path.read_text(encoding="utf-8")))


def in_repository(doc: str, number: str) -> str | None:
    found = headings(doc)
    if found is None:
        return f"{doc} {SIGN}{number}: {doc} is not a file of the repository"
    if number not in found:
        return f"{doc} {SIGN}{number}: {doc} has no heading numbered {number}"
    return None


def published(doc: str, number: str) -> str | None:
    return None


#: How a reference to each kind of document is checked, first match wins.
DOCUMENTS: tuple[tuple[re.Pattern[str], Callable[[str, str], str | None]], ...] = (
    (re.compile(r"RFC \d+"), published),
    (re.compile(r".+\.md"), in_repository),
)


def problems(text: str, where: str) -> list[str]:
    """What does not resolve in ``text``, the content of the repository file ``where``."""
    found = []
    for match in CITATION.finditer(text):
        check = next(rule for pattern, rule in DOCUMENTS if pattern.fullmatch(match["doc"]))
        found += [
            problem
            for number in SECTION.findall(match["sections"])
            if (problem := check(match["doc"], number)) is not None
        ]
    for bare in BARE.findall(CITATION.sub("", text)):
        shown = bare.rstrip(".,;:)`'\"")
        number = SECTION.fullmatch(shown)
        if number is None:
            found.append(f"{shown}: not a numbered section")
        elif where.endswith(".md"):
            found += [p for p in [in_repository(where, number[1])] if p is not None]
        else:
            found.append(f"{shown}: a section number that names no document")
    return found


def texts() -> Iterator[Path]:
    for root in ROOTS:
        top = REPO / root
        files = [top] if top.is_file() else sorted(top.rglob("*"))
        yield from (
            path
            for path in files
            if path.suffix in SUFFIXES and path.is_file() and "__pycache__" not in path.parts
        )


def test_every_section_reference_resolves() -> None:
    found = [
        f"{path.relative_to(REPO)}:{number}: {problem}"
        for path in texts()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        for problem in problems(line, path.relative_to(REPO).as_posix())
    ]
    assert not found, "\n".join(found)


def test_the_scan_reads_the_cited_code() -> None:
    scanned = {path.relative_to(REPO).as_posix() for path in texts()}
    assert {"src/deep_research/settings.py", "docs/contracts.md", "README.md"} <= scanned


@pytest.mark.parametrize(
    ("text", "where", "expected"),
    [
        (f"see docs/nowhere.md {SIGN}1", "src/x.py", "not a file of the repository"),
        (f"see ../outside.md {SIGN}1", "src/x.py", "not a file of the repository"),
        (f"(docs/contracts.md {SIGN}99)", "src/x.py", "no heading numbered 99"),
        (f"(docs/contracts.md {SIGN}4.9)", "src/x.py", "no heading numbered 4.9"),
        (f"(docs/contracts.md {SIGN}8, {SIGN}77)", "src/x.py", "no heading numbered 77"),
        (f"(docs/contracts.md {SIGN}6–{SIGN}66)", "src/x.py", "no heading numbered 66"),
        (f"(contracts.md {SIGN}4)", "src/x.py", "contracts.md is not a file of the repository"),
        (f"(contracts {SIGN}12)", "src/x.py", "names no document"),
        (f"floors ({SIGN}10)", "tests/test_x.py", "names no document"),
        (f"see {SIGN}URLs", "docs/contracts.md", "not a numbered section"),
        (f"as in {SIGN}42.", "docs/contracts.md", "no heading numbered 42"),
    ],
)
def test_a_broken_reference_is_reported(text: str, where: str, expected: str) -> None:
    found = problems(text, where)
    assert len(found) == 1 and expected in found[0], found


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (f"(docs/contracts.md {SIGN}4 step 4)", "src/x.py"),
        (f"(docs/contracts.md {SIGN}4.2).", "src/x.py"),
        (f"(docs/contracts.md {SIGN}8, {SIGN}10)", "src/x.py"),
        (f"(docs/contracts.md {SIGN}6–{SIGN}11)", "src/x.py"),
        (f"follows RFC 9309 {SIGN}2.3.1: a 4xx", "src/x.py"),
        (f"located (as in {SIGN}4 step 2)", "docs/contracts.md"),
        ("no reference at all", "src/x.py"),
    ],
)
def test_a_sound_reference_passes(text: str, where: str) -> None:
    assert problems(text, where) == []
