"""Our CLI's arguments, read by the CLI's own parser (one parser, one definition)."""

from __future__ import annotations

import argparse
from typing import Any

from deep_research.cli import build_parser


class CliParseError(Exception):
    """The CLI would refuse these arguments (it exits 2 and runs nothing)."""


class _CliExit(Exception):  # not an error: --help or --version, nothing else runs
    pass


class _GuardParser(argparse.ArgumentParser):
    """The CLI's parser, raising where the CLI would print and exit."""

    def error(self, message: str) -> Any:
        raise CliParseError(message)

    def exit(self, status: int = 0, message: str | None = None) -> Any:
        if status:
            raise CliParseError(message or f"exit {status}")
        raise _CliExit

    def _print_message(self, message: str, file: Any = None) -> None:
        return None

    def print_help(self, file: Any = None) -> None:
        return None  # formatting help would load the backend registry: not on the hook path

    def print_usage(self, file: Any = None) -> None:
        return None


_PARSER: argparse.ArgumentParser | None = None


def parse_cli(arguments: list[str]) -> argparse.Namespace | None:
    """``deep-research ARGUMENTS`` as the CLI reads them; None for ``--help``/``--version``
    (which print and exit before any command runs). Raises :class:`CliParseError`."""
    global _PARSER
    if _PARSER is None:
        _PARSER = build_parser(_GuardParser)
    try:
        return _PARSER.parse_args(arguments)
    except _CliExit:
        return None
