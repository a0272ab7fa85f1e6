"""What every command shares: its exit codes, its JSON on stdout, its capped lines and one-line
warnings on stderr, the settings it was given. The mapping of errors to exit codes is the CLI's
(:func:`deep_research.cli.exit_code_for`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from deep_research.errors import InputError

EXIT_OK = 0
EXIT_VIOLATIONS = 1
EXIT_INPUT = 2
EXIT_BUSY = 3
EXIT_INTERRUPTED = 130


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")


#: Lines of one kind a command prints on stderr, and characters of each: a file whose every
#: line is rejected gets a sample and a count, not its own size again on the terminal.
MAX_REPORTED_LINES = 20


MAX_REPORTED_CHARS = 300


def print_capped(kind: str, lines: Sequence[str]) -> None:
    for line in lines[:MAX_REPORTED_LINES]:
        cut = line if len(line) <= MAX_REPORTED_CHARS else line[: MAX_REPORTED_CHARS - 1] + "…"
        print(f"{kind}: {cut}", file=sys.stderr)
    if len(lines) > MAX_REPORTED_LINES:
        print(
            f"{kind}: … and {len(lines) - MAX_REPORTED_LINES:,} more (--report FILE lists all)",
            file=sys.stderr,
        )


def settings_from(args: argparse.Namespace) -> Any:
    from deep_research.settings import settings_for

    # A plugin run's brief carries the settings `start` fixed; an override there is refused.
    brief = getattr(args, "brief", None)
    return settings_for(Path(brief) if brief else None, args.set or ())


def verdict_exit(verdict: str | None) -> int:
    """The exit code of a command that reports a verdict: 0 when the brief is usable."""
    from deep_research.verdict_meanings import is_usable

    return EXIT_OK if is_usable(verdict) else EXIT_VIOLATIONS


@contextlib.contextmanager
def one_line_warnings(command: str) -> Iterator[None]:
    """A warning on the command line is one line naming the command; Python's default shows
    the library's source line under it, which says nothing to the person reading it."""
    import warnings

    def show(message: Warning | str, *_: object, **__: object) -> None:
        print(f"deep-research {command}: warning: {message}", file=sys.stderr)

    previous, warnings.showwarning = warnings.showwarning, show
    try:
        yield
    finally:
        warnings.showwarning = previous


def made_folder(path: Path, *, option: str, what: str) -> Path:
    """``path`` (given as ``option``) as a folder, made when missing; a file there, or a folder
    that cannot be made, is an input error before anything is written."""
    if path.exists() and not path.is_dir():
        raise InputError(
            f"{option} {path} is a file, not a folder; pass a folder (made if missing)"
        )
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(
            f"cannot make {what} {path} ({exc.strerror or exc}); pass {option} DIR, a folder you "
            "can write"
        ) from None
    return path
