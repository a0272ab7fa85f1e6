"""Our CLI's arguments, read by the CLI's own parser (one parser, one definition).

The CLI hands its parser's builder in (:class:`CliReader`), so the plugin never imports the
CLI: ``deep-research guard`` passes ``build_parser`` to :func:`.protocol.run_guard`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

#: The CLI's ``build_parser``: the command line, built by the parser class it is given.
ParserBuilder = Callable[[type[argparse.ArgumentParser]], argparse.ArgumentParser]


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


class CliReader:
    """Reads ``deep-research ARGUMENTS`` as the CLI does, with the parser ``build`` makes (built
    on first use: most hook calls read no command line)."""

    def __init__(self, build: ParserBuilder) -> None:
        self._build = build
        self._parser: argparse.ArgumentParser | None = None

    def parse(self, arguments: list[str]) -> argparse.Namespace | None:
        """The arguments as the CLI reads them; None for ``--help``/``--version`` (which print
        and exit before any command runs). Raises :class:`CliParseError`."""
        if self._parser is None:
            self._parser = self._build(_GuardParser)
        try:
            return self._parser.parse_args(arguments)
        except _CliExit:
            return None
