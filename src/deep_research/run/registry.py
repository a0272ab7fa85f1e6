"""Sources and reasoners by name: the built-ins, plus any installed through entry points.

A backend is one module and one registration. An installed package adds one by declaring an
entry point in the group ``deep_research.sources`` or ``deep_research.reasoners`` whose object
is a :class:`SourcePlugin` or :class:`ReasonerPlugin` (or a callable returning one)::

    [project.entry-points."deep_research.reasoners"]
    mine = "my_package.reasoner:PLUGIN"

Only what is installed *and* available here is offered: a plugin reports why it cannot run
(a missing key, a missing package) instead of failing later, and ``--help`` lists the rest.
Entry points are read only when a run asks for a backend or for its help — the hook guard, which
starts a process per tool call, never pays for the scan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TypeVar

from deep_research.errors import InputError
from deep_research.run.interface import Reasoner, SearchAdapter

SOURCES_GROUP = "deep_research.sources"
REASONERS_GROUP = "deep_research.reasoners"
AUTO = "auto"


def _ready() -> str | None:
    return None


@dataclass(frozen=True)
class Options:
    """What a run asks of a model-backed backend: models per role, Message Batches."""

    models: Mapping[str, str] = field(default_factory=dict)
    batch: bool = False

    def given(self) -> bool:
        return bool(self.models) or self.batch


@dataclass(frozen=True)
class ReasonerPlugin:
    """A reasoner by name. ``rank`` orders ``auto``: the highest available one is chosen.
    ``configure``, when set, builds it with the run's :class:`Options`."""

    name: str
    summary: str
    create: Callable[[], Reasoner]
    unavailable: Callable[[], str | None] = _ready
    rank: int = 0
    configure: Callable[[Options], Reasoner] | None = None


@dataclass(frozen=True)
class SourcePlugin:
    """A named source for ``--corpus NAME`` (or ``--search NAME`` when ``search``); anything
    else given to ``--corpus`` is a folder. ``configure`` builds it with the run's options."""

    name: str
    summary: str
    open: Callable[[Path], SearchAdapter]
    unavailable: Callable[[], str | None] = _ready
    search: bool = False
    configure: Callable[[Path, Options], SearchAdapter] | None = None


def _extractive() -> Reasoner:
    from deep_research.run.reasoners import ExtractiveReasoner

    return ExtractiveReasoner()


def _python_docs(state: Path) -> SearchAdapter:
    from deep_research.run.localcorpus import PYTHON_DOCS, open_corpus

    return open_corpus(PYTHON_DOCS, state)


def _claude_missing() -> str | None:
    from deep_research.run.claude.client import key_problem

    return key_problem()


def _claude(options: Options) -> Reasoner:
    from deep_research.run.claude import open_reasoner as claude

    return claude(options.models, options.batch)


def _web(state: Path, options: Options) -> SearchAdapter:
    from deep_research.run.claude import open_web

    return open_web(state, options.models)


BUILTIN_REASONERS = (
    ReasonerPlugin(
        "extractive",
        "quotes sentences verbatim from the retained text; no model, no key",
        _extractive,
    ),
    ReasonerPlugin(
        "claude",
        "Claude models per role (ANTHROPIC_API_KEY; priced, capped by --max-usd)",
        lambda: _claude(Options()),
        _claude_missing,
        configure=_claude,
    ),
)
BUILTIN_SOURCES = (
    SourcePlugin(
        "python-docs",
        "the documentation that ships with Python: language reference and standard library",
        _python_docs,
    ),
    SourcePlugin(
        "web",
        "the web, through Claude's web search tool; pages read by our fetcher (ANTHROPIC_API_KEY)",
        lambda state: _web(state, Options()),
        _claude_missing,
        search=True,
        configure=_web,
    ),
)


@dataclass
class Registry:
    """What is installed, by name; broken plugins are kept with their error, never raised."""

    reasoners: dict[str, ReasonerPlugin] = field(default_factory=dict)
    sources: dict[str, SourcePlugin] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)

    def available_reasoners(self) -> list[ReasonerPlugin]:
        return [r for r in self.reasoners.values() if r.unavailable() is None]

    def available_sources(self) -> list[SourcePlugin]:
        return [s for s in self.sources.values() if s.unavailable() is None]

    def reasoner(self, name: str, options: Options | None = None) -> Reasoner:
        options = options or Options()
        if name == AUTO:
            ready = self.available_reasoners()
            # max keeps the first of equals: a built-in wins a tie with a plugin.
            plugin = max(ready, key=lambda r: r.rank)
        else:
            found = self.reasoners.get(name)
            if found is None:
                raise InputError(f"unknown reasoner {name!r}; {self._offer(self.broken.get(name))}")
            if (why := found.unavailable()) is not None:
                raise InputError(f"reasoner {name!r} is not available here: {why}; {self._offer()}")
            plugin = found
        if plugin.configure is not None:
            return plugin.configure(options)
        if options.given():
            raise InputError(
                f"--model and --batch need a model-backed reasoner; {plugin.name!r} has none "
                "(use --reasoner claude)"
            )
        return plugin.create()

    def source_key(self, spec: str | None, *, search: str | None = None) -> str:
        """The source as a run records it and a resumed run compares it: a search source's or
        a source's name, or a folder's absolute path. A missing or unknown one is an input
        error here, before anything is written."""
        if spec is not None and search is not None:
            raise InputError("give --corpus or --search, not both")
        if search is not None:
            plugin = self.sources.get(search)
            if plugin is None or not plugin.search:
                names = ", ".join(s.name for s in self.sources.values() if s.search)
                raise InputError(f"unknown --search {search!r}; use one of: {names}")
            return search
        if spec is None:
            names = ", ".join(s.name for s in self.available_sources() if not s.search)
            raise InputError(
                f"no source: pass --corpus DIR (a folder), --corpus NAME ({names}) or --search web"
            )
        if spec in self.sources:
            return spec
        from deep_research.run.localcorpus import corpus_folder

        return str(corpus_folder(spec))

    def source(
        self,
        spec: str | None,
        state: Path,
        report: Callable[[str, str], None] | None = None,
        *,
        options: Options | None = None,
    ) -> SearchAdapter:
        """The source a key names (:meth:`source_key`): a named one, or a folder; ``report``
        hears how far indexing a folder is."""
        spec = self.source_key(spec) if spec is None else spec
        plugin = self.sources.get(spec)
        if plugin is None:
            from deep_research.run.localcorpus import open_corpus

            return open_corpus(spec, state, report)  # a folder path
        if (why := plugin.unavailable()) is not None:
            raise InputError(f"source {plugin.name!r} is not available here: {why}")
        if plugin.configure is not None:
            return plugin.configure(state, options or Options())
        return plugin.open(state)

    def _offer(self, broken: str | None = None) -> str:
        names = ", ".join([AUTO, *(r.name for r in self.available_reasoners())])
        prefix = f"its plugin failed to load ({broken}); " if broken else ""
        return f"{prefix}use one of: {names}"


PluginT = TypeVar("PluginT", ReasonerPlugin, SourcePlugin)


def _load(group: str, kind: type[PluginT], registry: Registry) -> list[PluginT]:
    found: list[PluginT] = []
    for entry in metadata.entry_points(group=group):
        try:
            value = entry.load()
            if not isinstance(value, kind) and callable(value):
                value = value()
        except Exception as exc:  # a broken plugin must not take the built-ins down with it
            registry.broken[entry.name] = f"{type(exc).__name__}: {exc}"
            continue
        if isinstance(value, kind):
            found.append(value)
        else:
            registry.broken[entry.name] = f"{group} entry point is not a {kind.__name__}"
    return found


def load_registry(*, entry_points: bool = True) -> Registry:
    """The built-ins, then installed plugins (a plugin cannot replace a built-in's name)."""
    registry = Registry(
        reasoners={r.name: r for r in BUILTIN_REASONERS},
        sources={s.name: s for s in BUILTIN_SOURCES},
    )
    if not entry_points:
        return registry
    for reasoner in _load(REASONERS_GROUP, ReasonerPlugin, registry):
        if reasoner.name != AUTO:
            registry.reasoners.setdefault(reasoner.name, reasoner)
    for source in _load(SOURCES_GROUP, SourcePlugin, registry):
        registry.sources.setdefault(source.name, source)
    return registry


def open_reasoner(name: str, options: Options | None = None) -> Reasoner:
    return load_registry().reasoner(name, options)


def open_source(
    spec: str | None,
    state: Path,
    report: Callable[[str, str], None] | None = None,
    *,
    options: Options | None = None,
) -> SearchAdapter:
    return load_registry().source(spec, state, report, options=options)


def source_key(spec: str | None, *, search: str | None = None) -> str:
    return load_registry().source_key(spec, search=search)


def help_lines(registry: Registry) -> tuple[str, str]:
    """The ``--reasoner`` and ``--corpus`` help: only what is installed and available."""
    reasoners = ", ".join(f"{r.name} ({r.summary})" for r in registry.available_reasoners())
    sources = ", ".join(
        f"{s.name} ({s.summary})" for s in registry.available_sources() if not s.search
    )
    return (
        f"{AUTO} (the best available; default) or one of: {reasoners}",
        f"a folder of .md/.txt/.html/.pdf, or one of: {sources}",
    )


def search_help(registry: Registry) -> str:
    found = ", ".join(f"{s.name} ({s.summary})" for s in registry.sources.values() if s.search)
    return f"search instead of a corpus: {found}"
