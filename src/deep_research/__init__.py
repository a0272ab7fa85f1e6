"""deep-research: verified research briefs whose every claim traces to fetched text.

The public API — everything else is internal and may change:

* :func:`locate` — find a quote in a text: ``Located(hash, start, end, method, score, …)``;
* :func:`check_literals` — which numbers, dates and names of a claim a quote does not establish;
* :func:`check_pair` — the batch gate's verdict on one (claim, quote, source text);
* :func:`run_trace` / :class:`TraceOptions` — the trace gate over a brief directory;
* :func:`normalize_payload` — raw fetcher output → canonical sources.jsonl rows;
* :func:`canonicalize` — the canonical form of a URL;
* :class:`Brief` and the models of every artifact; :class:`DeepResearchError` and its tree.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deep_research.brief.layout import Brief
    from deep_research.errors import (
        BriefBusy,
        DeepResearchError,
        InputError,
        MissingArtifact,
        NotACorpusFile,
        SchemaViolation,
        UnreadableInput,
    )
    from deep_research.gates.batch import check_pair
    from deep_research.gates.literals import check as check_literals
    from deep_research.gates.locate import Document, Located, locate
    from deep_research.gates.trace import TraceOptions, TraceReport, run_trace
    from deep_research.models import Claim, ClaimsFile, Finding, GateResult, SourceRow, TraceFile
    from deep_research.normalize import normalize_payload
    from deep_research.urls import canonicalize

# Loaded on first use: the hook guard starts a process for every tool call and needs none of
# the gates, so `import deep_research` must stay cheap.
_WHERE: dict[str, tuple[str, str]] = {
    "Brief": ("brief.layout", "Brief"),
    **{
        name: ("errors", name)
        for name in (
            "BriefBusy",
            "DeepResearchError",
            "InputError",
            "MissingArtifact",
            "NotACorpusFile",
            "SchemaViolation",
            "UnreadableInput",
        )
    },
    "check_pair": ("gates.batch", "check_pair"),
    "check_literals": ("gates.literals", "check"),
    **{name: ("gates.locate", name) for name in ("Document", "Located", "locate")},
    **{
        name: ("models", name)
        for name in ("Claim", "ClaimsFile", "Finding", "GateResult", "SourceRow", "TraceFile")
    },
    "normalize_payload": ("normalize", "normalize_payload"),
    **{name: ("gates.trace", name) for name in ("TraceOptions", "TraceReport", "run_trace")},
    "canonicalize": ("urls", "canonicalize"),
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module 'deep_research' has no attribute {name!r}")
    value = getattr(import_module(f"deep_research.{where[0]}"), where[1])
    globals()[name] = value
    return value


__version__ = "0.1.0"

__all__ = [
    "Brief",
    "BriefBusy",
    "Claim",
    "ClaimsFile",
    "DeepResearchError",
    "Document",
    "Finding",
    "GateResult",
    "InputError",
    "Located",
    "MissingArtifact",
    "NotACorpusFile",
    "SchemaViolation",
    "SourceRow",
    "TraceFile",
    "TraceOptions",
    "TraceReport",
    "UnreadableInput",
    "__version__",
    "canonicalize",
    "check_literals",
    "check_pair",
    "locate",
    "normalize_payload",
    "run_trace",
]
