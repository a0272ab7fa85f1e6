"""Rooms by concept, as a checked rule: which part of the package may import which.

From the bottom up: the shared core (the top-level modules — models, urls, settings, render
and the rest, all but cli.py — and the brief/ package) is what every wing stands on; ``fetch``
reads and keeps what was read; ``gates`` judge retained text against a claim; ``decide`` turns
verdicts into a brief's decisions; ``normalize`` turns agent output into canonical rows; ``run``
(the headless driver) and ``plugin`` (the Claude Code side) drive them all, and ``cli.py`` wires
everything to commands. Each room's rule names the rooms it may never import.

An import is every ``import x`` and ``from x import y`` in a module, absolute or relative, at the
top, inside a function or under ``if TYPE_CHECKING:`` (a type-only import ties the rooms
together just the same), plus ``importlib.import_module``/``__import__`` of a constant name.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "deep_research"

CORE = "core"
CLI = "cli"
WINGS = ("fetch", "gates", "decide", "normalize", "run", "plugin", "check")
#: Packages that are part of the core: the brief on disk (its layout, readers, writers, records).
CORE_PACKAGES = ("brief",)


@dataclass(frozen=True)
class Rule:
    room: str
    never: frozenset[str]
    why: str


RULES = {
    rule.room: rule
    for rule in (
        Rule(
            CORE,
            frozenset(WINGS),
            "every wing stands on the core: a core module importing a wing ties all of them to "
            "it (render reads decided artifacts; it needs nothing from decide)",
        ),
        Rule(
            "fetch",
            frozenset({"gates", "decide", "run", "plugin"}),
            "fetching returns what was read; whether a quote is in it is a gate's question",
        ),
        Rule(
            "gates",
            frozenset({"decide", "run", "plugin"}),
            "a gate judges one text against one claim; what follows from its verdict is decided "
            "above it",
        ),
        Rule(
            "decide",
            frozenset({"run", "plugin"}),
            "a decision is made from the brief's artifacts, the same for every runner; what a "
            "runner recorded reaches it as data",
        ),
        Rule(
            "normalize",
            frozenset({"decide", "run", "plugin"}),
            "canonical rows come before anything is decided about them",
        ),
        Rule("run", frozenset(), "the headless driver: it drives every wing"),
        Rule(
            "check",
            frozenset({"plugin"}),
            "checking another tool's report reuses the fetcher, the gates and the Claude "
            "client; it runs outside any plugin run",
        ),
        Rule("plugin", frozenset(), "the Claude Code side: it drives every wing"),
        Rule(CLI, frozenset(), "the commands: each one wires wings together"),
    )
}

#: (importing module, imported room) pairs a rule would forbid, each allowed for its reason.
ALLOWED: dict[tuple[str, str], str] = {
    ("deep_research", "gates"): (
        "the public API (`import deep_research`) re-exports the gates' entry points; they load "
        "on first use, so the import itself stays cheap"
    ),
    ("deep_research", "normalize"): "the public API re-exports normalize_payload, loaded on use",
}


@dataclass(frozen=True)
class Import:
    path: str  # relative to the folder holding the package, e.g. deep_research/render.py
    line: int
    importer: str  # dotted module name
    target: str  # dotted module name as resolved


@dataclass(frozen=True)
class Violation:
    found: Import
    room: str
    target_room: str
    why: str

    def __str__(self) -> str:
        return (
            f"{self.found.path}:{self.found.line}: {self.room} imports {self.found.target} "
            f"({self.target_room}) — {self.why}"
        )


def module_name(package: Path, file: Path) -> str:
    parts = list(file.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def room_of(module: str, package: Path) -> str | None:
    """The room a dotted module name of ``package`` belongs to; None outside the package."""
    parts = module.split(".")
    if parts[0] != package.name:
        return None
    if len(parts) == 1:
        return CORE  # the package's own __init__
    if (package / parts[1]).is_dir() and parts[1] not in CORE_PACKAGES:
        return parts[1]
    return CLI if parts[1] == "cli" else CORE


def _is_module(package: Path, dotted: str) -> bool:
    relative = Path(*dotted.split(".")[1:])
    base = package / relative
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _resolve_from(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    parts = importer.split(".")
    if not is_package:
        parts.pop()  # a module's relative imports start at its package
    anchor = parts[: len(parts) - (node.level - 1)]
    return ".".join([*anchor, *([node.module] if node.module else [])])


def _dynamic_target(node: ast.Call) -> str | None:
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    if name not in ("import_module", "__import__") or not node.args:
        return None
    first = node.args[0]
    if isinstance(first, ast.Constant) and isinstance(first.value, str):
        return first.value
    return None


def imports_of(package: Path, file: Path) -> Iterator[Import]:
    importer = module_name(package, file)
    path = file.relative_to(package.parent).as_posix()
    tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(path, node.lineno, importer, alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_from(node, importer, file.name == "__init__.py")
            # `from pkg import sub` imports the submodule when there is one, else names of pkg.
            candidates = (f"{base}.{alias.name}" for alias in node.names)
            named = [c if _is_module(package, c) else base for c in candidates]
            for each in dict.fromkeys(named):
                yield Import(path, node.lineno, importer, each)
        elif isinstance(node, ast.Call) and (target := _dynamic_target(node)) is not None:
            yield Import(path, node.lineno, importer, target)


def check(package: Path) -> list[Violation]:
    """Every import in ``package`` that its room's rule forbids (and no allowance excuses)."""
    found = []
    for file in sorted(package.rglob("*.py")):
        room = room_of(module_name(package, file), package)
        assert room is not None
        rule = RULES.get(room)
        if rule is None:
            raise AssertionError(f"{file}: room {room!r} has no rule; add it to RULES")
        for item in imports_of(package, file):
            target = room_of(item.target, package)
            if target is None or target == room or target not in rule.never:
                continue
            if (item.importer, target) in ALLOWED:
                continue
            found.append(Violation(item, room, target, rule.why))
    return found


def _module_of(package: Path, dotted: str) -> str:
    """The package's module a dotted import target names: ``pkg.mod.Name`` → ``pkg.mod``."""
    while "." in dotted and not _is_module(package, dotted):
        dotted = dotted.rsplit(".", 1)[0]
    return dotted


def import_graph(package: Path) -> dict[str, set[str]]:
    """Every module of ``package`` and the package modules it imports, anywhere in its body."""
    graph: dict[str, set[str]] = {}
    for file in sorted(package.rglob("*.py")):
        importer = module_name(package, file)
        targets = graph.setdefault(importer, set())
        for item in imports_of(package, file):
            if room_of(item.target, package) is None:
                continue
            target = _module_of(package, item.target)
            if target != importer:
                targets.add(target)
    return graph


def _groups(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of ``graph`` (Tarjan): modules that import each other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while (member := stack.pop()) != node:
                group.add(member)
            groups.append({*group, node})

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One circle (``a → b → … → a``, shortest from its first module) through each group of
    modules that import each other, in name order."""
    found = []
    for group in _groups(graph):
        if len(group) < 2:
            continue
        start = min(group)
        came_from: dict[str, str] = {}
        queue = [start]
        while start not in came_from:
            node = queue.pop(0)
            for target in sorted(graph.get(node, set()) & group):
                if target not in came_from:
                    came_from[target] = node
                    queue.append(target)
        path = [start]
        while (step := came_from[path[-1]]) != start:
            path.append(step)
        found.append([start, *reversed(path)])
    return sorted(found)


def test_the_package_keeps_its_layers() -> None:
    violations = check(SRC)
    assert not violations, "\n".join(str(v) for v in violations)


def test_every_wing_has_a_rule() -> None:
    folders = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert folders == {*WINGS, *CORE_PACKAGES}, (
        "a new wing needs its row in RULES (and a place in WINGS)"
    )
    assert set(RULES) == {*WINGS, CORE, CLI}


def test_every_allowance_is_still_used() -> None:
    used = {
        (item.importer, room)
        for file in SRC.rglob("*.py")
        for item in imports_of(SRC, file)
        if (room := room_of(item.target, SRC)) is not None
    }
    stale = sorted(set(ALLOWED) - used)
    assert not stale, f"allowed imports nobody makes any more; remove them: {stale}"


def test_no_module_imports_itself_through_others() -> None:
    found = circles(import_graph(SRC))
    assert not found, "import circles:\n" + "\n".join(" → ".join(c) for c in found)


# --- the checker itself -------------------------------------------------------------------

#: A synthetic package: (file, source, lines the checker must report in it).
SYNTHETIC: list[tuple[str, str, list[int]]] = [
    ("__init__.py", "", []),
    ("models.py", "X = 1\n", []),
    ("errors.py", "from deep_research import decide, models\n", [1]),
    ("cli.py", "from deep_research.run import drive\nfrom deep_research import plugin\n", []),
    (
        "render.py",
        "from deep_research import models\nfrom deep_research.decide import verdict\n",
        [2],
    ),
    ("fetch/__init__.py", "", []),
    (
        "fetch/page.py",
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from deep_research.gates.judge import Verdict\n",
        [4],
    ),
    ("gates/__init__.py", "", []),
    (
        "gates/judge.py",
        "from ..fetch import page\nfrom . import rules\n\n\ndef judge() -> None:\n"
        "    from ..decide.verdict import decide\n",
        [6],
    ),
    ("gates/rules.py", "import deep_research.models\n", []),
    ("decide/__init__.py", "", []),
    (
        "decide/verdict.py",
        "import importlib\nimport deep_research.gates.judge\n"
        "import deep_research.plugin.state as state\n"
        "hook = importlib.import_module('deep_research.run.drive')\n",
        [3, 4],
    ),
    ("normalize/__init__.py", "from deep_research.fetch import page\n", []),
    ("run/__init__.py", "", []),
    ("run/drive.py", "from deep_research.decide import verdict\n", []),
    ("plugin/__init__.py", "", []),
    ("plugin/state.py", "from deep_research.cli import main\n", []),
]


@pytest.fixture
def synthetic(tmp_path: Path) -> Path:
    package = tmp_path / "deep_research"
    for name, source, _ in SYNTHETIC:
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source, encoding="utf-8")
    return package


def test_the_checker_reports_each_forbidden_import_with_file_and_line(synthetic: Path) -> None:
    reported = {(v.found.path, v.found.line) for v in check(synthetic)}
    expected = {(f"deep_research/{name}", line) for name, _, lines in SYNTHETIC for line in lines}
    assert reported == expected


def test_a_report_names_the_rooms_and_the_reason(synthetic: Path) -> None:
    by_place = {(v.found.path, v.found.line): str(v) for v in check(synthetic)}
    message = by_place[("deep_research/gates/judge.py", 6)]
    assert message.startswith("deep_research/gates/judge.py:6: gates imports ")
    assert "deep_research.decide.verdict (decide)" in message
    assert RULES["gates"].why in message


def test_a_room_without_a_rule_is_an_error(synthetic: Path) -> None:
    (synthetic / "report").mkdir()
    (synthetic / "report" / "__init__.py").write_text("", encoding="utf-8")
    with pytest.raises(AssertionError, match="room 'report' has no rule"):
        check(synthetic)


#: Synthetic import graphs and the circles the finder must report in each.
CIRCLE_CASES: list[tuple[dict[str, set[str]], list[list[str]]]] = [
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}}, [["a", "b", "a"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c", "a"]]),
    ({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}, []),  # a diamond is no circle
    ({"a": {"b"}, "b": {"a"}, "x": {"y"}, "y": {"x"}}, [["a", "b", "a"], ["x", "y", "x"]]),
]


@pytest.mark.parametrize(("graph", "expected"), CIRCLE_CASES)
def test_the_circle_finder_names_each_circle(
    graph: dict[str, set[str]], expected: list[list[str]]
) -> None:
    assert circles(graph) == expected


#: A small package (file → source) and the circles the graph of each variant must show: an
#: import inside a function and one under ``if TYPE_CHECKING:`` each close a circle.
CIRCLE_PACKAGE = {
    "__init__.py": "",
    "models.py": "X = 1\n",
    "gates/__init__.py": "",
    "gates/judge.py": "from . import rules\n",
    "gates/rules.py": "import deep_research.models\n",
}
LATE = "\n\ndef late() -> None:\n    from deep_research.gates.judge import judge\n"
TYPE_ONLY = (
    "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .gates.rules import R\n"
)
JUDGE, RULES_MODULE, MODELS = (
    "deep_research.gates.judge",
    "deep_research.gates.rules",
    "deep_research.models",
)


@pytest.mark.parametrize(
    ("changed", "expected"),
    [
        ({}, []),
        ({"gates/rules.py": "import deep_research.models" + LATE}, [[JUDGE, RULES_MODULE, JUDGE]]),
        ({"models.py": TYPE_ONLY}, [[RULES_MODULE, MODELS, RULES_MODULE]]),
    ],
)
def test_the_graph_reads_function_level_and_type_only_imports(
    tmp_path: Path, changed: dict[str, str], expected: list[list[str]]
) -> None:
    package = tmp_path / "deep_research"
    for name, source in {**CIRCLE_PACKAGE, **changed}.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(source, encoding="utf-8")
    assert circles(import_graph(package)) == expected


# --- the plugin never imports the CLI ---------------------------------------------------------


def cli_imports_in(package: Path, room: str) -> list[Import]:
    """Every import of ``deep_research.cli`` (or a name of it) by a module of ``room``."""
    return [
        item
        for file in sorted((package / room).rglob("*.py"))
        for item in imports_of(package, file)
        if item.target == f"{package.name}.cli" or item.target.startswith(f"{package.name}.cli.")
    ]


def test_the_plugin_never_imports_the_cli() -> None:
    """The CLI wires the plugin (and hands the guard its parser); the plugin importing it back
    would close an import circle through cli.py."""
    found = cli_imports_in(SRC, "plugin")
    assert not found, "\n".join(f"{i.path}:{i.line}: imports {i.target}" for i in found)


def test_the_cli_import_check_finds_one(synthetic: Path) -> None:
    (found,) = cli_imports_in(synthetic, "plugin")
    assert (found.path, found.line) == ("deep_research/plugin/state.py", 1)
