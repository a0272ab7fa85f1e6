"""The CLI's registered subcommands, read from its own parser: one helper for every test that
checks a list of commands (the help's groups, the docs, the plugin's references)."""

from __future__ import annotations

import argparse

from deep_research.cli import build_parser


def registered() -> list[str]:
    """Every subcommand the parser accepts, in the order they are registered."""
    actions = build_parser()._subparsers._group_actions  # type: ignore[union-attr]
    return [
        name
        for action in actions
        if isinstance(action, argparse._SubParsersAction)
        for name in action.choices
    ]


def subcommands() -> set[str]:
    return set(registered())
