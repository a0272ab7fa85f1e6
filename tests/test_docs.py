"""The repository's documents hold together: references resolve, links land, the README onboards.

A section reference names a document by its repository path and a numbered section, e.g.
``docs/contracts.md §4`` or ``docs/contracts.md §8, §10``; the document must exist and have a
heading with that number (``## 4.`` or ``### 4.2``). Inside a markdown document a bare section
number refers to that document itself; anywhere else a section number without a document is
an error, since a reader of the repository alone could not follow it. A published standard
(``RFC 9309``) is cited by its own numbering and is not checked against the repository.

A markdown link to a file of the repository must name one that exists, and a ``#fragment`` a
heading of the page it points to. The README is the page a newcomer reads: it stays short
(:data:`README_MAX_BYTES`), every page under docs/ and the measured results are reachable from it
by links, its test command is the one CI runs, and docs/commands.md describes every command the
CLI has.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path

import pytest

from cli_commands import subcommands
from conftest import REPO

#: Written as an escape so this file's own patterns and made-up references are not references.
SIGN = "\u00a7"
#: Where references are looked for, and in which files.
ROOTS = ("src", "tests", "skills", "agents", "roles", "conduct", "docs", "benchmarks", "README.md")
SUFFIXES = (".py", ".md")
#: Documents written by others, as their publishers wrote them (built by
#: benchmarks/realdocs_build.py, never committed): their links point into their own sites.
OTHERS = tuple(
    REPO / "benchmarks" / "corpora" / name / "documents" for name in ("realdocs", "realdocs2")
)

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
            if path.suffix in SUFFIXES
            and path.is_file()
            and "__pycache__" not in path.parts
            and not any(folder in path.parents for folder in OTHERS)
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
    # Others' documents (where built) are left out, the folder's own README is read.
    assert "benchmarks/corpora/realdocs/README.md" in scanned
    assert not any(name.startswith("benchmarks/corpora/realdocs/documents/") for name in scanned)
    assert not any(name.startswith("benchmarks/corpora/realdocs2/documents/") for name in scanned)


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


# --- links ---------------------------------------------------------------------------------------

#: A markdown link ``[text](target)``; the target has no spaces in our documents.
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")
MARKDOWN_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) of a markdown text outside its fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            yield number, line


def anchor(heading: str) -> str:
    """The fragment GitHub gives a heading: lower case, punctuation dropped, spaces → hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> frozenset[str]:
    """Every heading's fragment; a repeated heading gets ``-1``, ``-2``… as GitHub numbers it."""
    seen: dict[str, int] = {}
    found = set()
    for _, line in prose_lines(text):
        if match := MARKDOWN_HEADING.match(line):
            base = anchor(match[1])
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def link_problems(text: str, where: Path) -> list[str]:
    """What does not resolve among the links of ``text``, the markdown document at ``where``."""
    found = []
    for number, line in prose_lines(text):
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not a repository file
                continue
            path_part, _, fragment = target.partition("#")
            path = (where.parent / path_part).resolve() if path_part else where
            shown = f"{where.relative_to(REPO)}:{number}: {target}"
            if REPO not in path.parents or not path.exists():
                found.append(f"{shown}: no such file in the repository")
            elif (
                fragment
                and path.suffix == ".md"
                and fragment not in anchors(path.read_text(encoding="utf-8"))
            ):
                found.append(f"{shown}: {path.name} has no heading #{fragment}")
    return found


def linked_pages(page: Path) -> set[Path]:
    """The repository's markdown pages ``page`` links to."""
    text = page.read_text(encoding="utf-8")
    targets = (LINK.findall(line) for _, line in prose_lines(text))
    return {
        (page.parent / target.partition("#")[0]).resolve()
        for found in targets
        for target in found
        if target.partition("#")[0].endswith(".md") and not re.match(r"[a-z]+:", target)
    }


def reachable(start: Path) -> set[Path]:
    """Every markdown page a reader can reach from ``start`` by following links."""
    seen, todo = {start.resolve()}, [start.resolve()]
    while todo:
        for page in linked_pages(todo.pop()):
            if page.is_file() and page not in seen:
                seen.add(page)
                todo.append(page)
    return seen


def markdown_pages() -> list[Path]:
    return [path for path in texts() if path.suffix == ".md"]


def test_every_link_lands() -> None:
    found = [
        problem
        for path in markdown_pages()
        for problem in link_problems(path.read_text(encoding="utf-8"), path)
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[gone](nowhere.md)", "no such file"),
        ("[out](../../outside.md)", "no such file"),
        ("[sec](contracts.md#99-nothing)", "contracts.md has no heading #99-nothing"),
        ("[self](#no-such-heading)", "commands.md has no heading #no-such-heading"),
        ("[readme](../README.md#glossaryy)", "README.md has no heading #glossaryy"),
    ],
)
def test_a_broken_link_is_reported(text: str, expected: str) -> None:
    found = link_problems(text, REPO / "docs" / "commands.md")
    assert len(found) == 1 and expected in found[0], found


def test_a_sound_link_passes() -> None:
    page = REPO / "docs" / "commands.md"
    for text in (
        "[c](contracts.md#101-precedence)",
        "[r](../README.md#using-your-own-folder)",
        "[ci](../.ci/run)",
        "[web](https://example.org/x.md#nowhere)",
        "```\n[not a link](nowhere.md)\n```",
    ):
        assert link_problems(text, page) == [], text


def test_anchors_follow_githubs_rule() -> None:
    text = "# Title\n## 10.1 Precedence\n## The plugin's run\n## Tests\n### Tests\n```\n# no\n```"
    assert anchors(text) == {"title", "101-precedence", "the-plugins-run", "tests", "tests-1"}


# --- the README ----------------------------------------------------------------------------------

README = REPO / "README.md"
#: The README onboards; what does not fit belongs in docs/, linked from it.
README_MAX_BYTES = 12 * 1024
#: Pages a reader must be able to reach from the README.
MUST_REACH = ("docs/*.md", "benchmarks/RESULTS.md")


def test_the_readme_stays_short() -> None:
    size = len(README.read_bytes())
    assert size <= README_MAX_BYTES, f"README.md is {size} bytes; move detail into docs/"


def test_every_page_is_reachable_from_the_readme() -> None:
    pages = {path.resolve() for pattern in MUST_REACH for path in REPO.glob(pattern)}
    assert len(pages) >= 6, pages  # contracts, commands, plugin, claude, architecture, results
    unreached = sorted(str(p.relative_to(REPO)) for p in pages - reachable(README))
    assert not unreached, f"linked from nothing the README leads to: {unreached}"


def test_reachability_follows_links_only(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("[b](b.md) and [web](https://x.org/c.md)\n")
    (tmp_path / "b.md").write_text("[a](a.md#top) `c.md` [gone](gone.md)\n")
    (tmp_path / "c.md").write_text("nothing links here\n")
    assert reachable(tmp_path / "a.md") == {tmp_path / "a.md", tmp_path / "b.md"}


def code_blocks(text: str) -> list[list[str]]:
    """The non-empty lines of each fenced code block, in order."""
    blocks: list[list[str]] = []
    inside = False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
            if inside:
                blocks.append([])
        elif inside and line.strip():
            blocks[-1].append(line.strip())
    return blocks


def test_the_readme_test_command_is_what_ci_runs() -> None:
    ci = [
        line.strip()
        for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert [ci[-1]] in code_blocks(README.read_text(encoding="utf-8")), ci[-1]


def test_the_readme_main_job_is_one_line_of_its_own() -> None:
    # tests/run/test_driver.py runs this line; here: it stands alone, set-up first.
    mains = [b for b in code_blocks(README.read_text(encoding="utf-8")) if "&&" in " ".join(b)]
    assert len(mains) == 1 and len(mains[0]) == 1, mains
    setup, job = mains[0][0].split(" && ", 1)
    assert setup.startswith("python -m pip install") and job.startswith("deep-research run "), job


# --- the command reference -----------------------------------------------------------------------

COMMANDS_PAGE = REPO / "docs" / "commands.md"


def undocumented(commands: set[str], page: str) -> set[str]:
    """Commands ``page`` neither heads a section with nor shows in code (`` `name …``)."""
    return {
        name
        for name in commands
        if not re.search(rf"^#+ {re.escape(name)}$|`{re.escape(name)}[ `]", page, re.MULTILINE)
    }


def test_the_command_reference_describes_every_command() -> None:
    missing = undocumented(subcommands(), COMMANDS_PAGE.read_text(encoding="utf-8"))
    assert not missing, f"docs/commands.md does not describe: {sorted(missing)}"


def test_an_undescribed_command_is_reported() -> None:
    page = "### run\n\n| `verify BRIEF` | … |\n\nmentions trace in passing, and `mcp-gatekeeper`\n"
    assert undocumented({"run", "verify", "trace", "mcp-gate"}, page) == {"trace", "mcp-gate"}


#: How a text names a command: in code, after a shell's `&&` or prompt.
COMMAND = re.compile(r"(?:`|&& |\$ )deep-research ([a-z][a-z-]*)")


def test_every_command_a_page_names_exists() -> None:
    known = subcommands()
    found = [
        f"{path.relative_to(REPO)}: deep-research {name}"
        for path in markdown_pages()
        for name in COMMAND.findall(path.read_text(encoding="utf-8"))
        if name not in known
    ]
    assert not found, found


# --- the layout ----------------------------------------------------------------------------------

ARCHITECTURE = REPO / "docs" / "architecture.md"
PACKAGE = REPO / "src" / "deep_research"


def package_parts() -> set[str]:
    """The core's modules (``brief.py``) and the wings (``gates/``), as the layout names them."""
    modules = {p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}
    wings = {f"{p.name}/" for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    return modules | wings


def unlisted(parts: set[str], page: str) -> set[str]:
    """Parts a page's layout never names as a word of its own (``brief.py``, ``  gates/``)."""
    return {part for part in parts if not re.search(rf"(?<![\w./]){re.escape(part)}", page)}


def test_the_layout_names_every_module_and_wing_as_the_tree_stands() -> None:
    missing = unlisted(package_parts(), ARCHITECTURE.read_text(encoding="utf-8"))
    assert not missing, f"docs/architecture.md's layout does not name: {sorted(missing)}"


def stale(parts: set[str], page: str) -> set[str]:
    """Bare module names (``verdicts.py``) the first code block of ``page`` gives that ``parts``
    does not hold: a layout still naming what was renamed or removed."""
    layout = next(iter(code_blocks(page)), [])
    named = {m for line in layout for m in re.findall(r"(?<![\w./])\w+\.py\b", line)}
    return named - parts


def test_the_layout_names_no_module_the_tree_lacks() -> None:
    gone = stale(package_parts(), ARCHITECTURE.read_text(encoding="utf-8"))
    assert not gone, f"docs/architecture.md's layout names modules that do not exist: {gone}"


def test_a_stale_layout_name_is_reported() -> None:
    page = "```\nsrc/\n  models.py verdicts.py cli.py\n  tests/plugin/test_x.py\n```\n"
    assert stale({"models.py", "cli.py", "verdict_meanings.py"}, page) == {"verdicts.py"}


def test_a_renamed_module_is_reported() -> None:
    page = "  gates/   …\n  models.py verdicts.py cli.py\n  see decide/verdict.py\n"
    found = unlisted({"gates/", "models.py", "verdict_meanings.py", "verdict.py", "cli.py"}, page)
    assert found == {"verdict_meanings.py", "verdict.py"}
