"""The one exception tree of deep-research.

Every failure the package raises on purpose is a subclass of :class:`DeepResearchError`. The CLI
maps the tree to exit codes in exactly one place (``cli.exit_code_for``); library code never calls
``sys.exit``. Messages are one line and say how to fix the problem.

::

    DeepResearchError                 base; never raised itself
    ├── BriefBusy                     exit 3 — another run holds the brief's lock
    ├── TargetRefused                 the fetcher will not contact a URL (unsafe target, robots,
    │                                 policy); recorded in the fetch log, never crashes a run
    └── InputError                    exit 2 — an input we cannot use
        ├── UnreadableInput           empty, truncated, binary or oversized input
        ├── SchemaViolation           parsed, but does not match its schema (carries json_path)
        ├── MissingArtifact           a file the command needs is absent
        ├── InconsistentArtifacts     each file is valid, but together they disagree (e.g.
        │                             trace.json counters contradict sources.jsonl)
        └── NotACorpusFile            summary-substitution guard: text that is not a corpus
                                      file of this brief was offered as evidence

Outside the tree, :class:`Stopped` — a named gate or cap that stopped some work — is caught where
that work stops (a phase marked incomplete, a gate's recorded result), never mapped to an exit
code.

Exit codes (documented in the README): 0 success, 1 the check ran and found violations,
2 input error, 3 brief busy, 130 interrupted.
"""

from __future__ import annotations


class DeepResearchError(Exception):
    """Base of every deliberate failure in deep-research."""


class Stopped(Exception):
    """A named check stopped the work: ``name`` says which (a gate, a cap), ``detail`` why, in
    one line without any secret value."""

    def __init__(self, name: str, detail: str) -> None:
        self.name = name
        self.detail = detail
        super().__init__(f"{name}: {detail}")


class BriefBusy(DeepResearchError):
    """Another live process is writing the same brief."""


class TargetRefused(DeepResearchError):
    """A URL the fetcher refuses to contact; ``reason`` is a short stable code for the log."""

    def __init__(self, reason: str, detail: str = "") -> None:
        self.reason = reason
        self.detail = detail
        super().__init__(f"{reason}: {detail}" if detail else reason)


class InputError(DeepResearchError):
    """An input (file, argument, stream) that cannot be used as given."""


class UnreadableInput(InputError):
    """The input could not be parsed at all."""


class SchemaViolation(InputError):
    """The input parsed but does not match its schema."""

    def __init__(self, message: str, *, json_path: str = "$", source: str = "") -> None:
        self.json_path = json_path
        self.source = source
        where = f"{source}: " if source else ""
        super().__init__(f"{where}{json_path}: {message}")


class MissingArtifact(InputError):
    """A file the command needs does not exist."""


class InconsistentArtifacts(InputError):
    """Artifacts that are each valid but contradict one another; deciding on them would guess."""


class NotACorpusFile(InputError):
    """Evidence text that is not a retained corpus file of this brief (e.g. a summary)."""
