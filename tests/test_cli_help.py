"""``deep-research --help``: every command once, under the heading of who runs it."""

from __future__ import annotations

import re

import pytest

from cli_commands import registered
from deep_research import cli
from deep_research.cli import COMMAND_GROUPS, build_parser, main

#: A listing line: two spaces, the command, then its help (a wrapped line starts deeper).
ENTRY = re.compile(r"  (?P<name>[a-z][a-z-]*)  +\S")


def listed(help_text: str) -> list[tuple[str, str]]:
    """(heading, command) for every command the help lists, in order."""
    headings = {heading for heading, _ in COMMAND_GROUPS}
    found: list[tuple[str, str]] = []
    heading = None
    for line in help_text.splitlines():
        if line.endswith(":") and line[:-1] in headings:
            heading = line[:-1]
        elif not line:
            heading = None
        elif heading is not None and (entry := ENTRY.match(line)):
            found.append((heading, entry["name"]))
    return found


def test_help_lists_every_command_once_under_its_heading(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    found = listed(capsys.readouterr().out)
    names = [name for _, name in found]
    assert sorted(names) == sorted(registered()), "a command is missing from --help"
    assert len(names) == len(set(names)), "a command is listed twice"
    groups = {heading: {name for h, name in found if h == heading} for heading, _ in COMMAND_GROUPS}
    using, plugin, steps = groups.values()
    assert {"run", "verify", "render", "gate"} <= using
    assert {"start", "next", "ingest", "finish", "guard", "fetch", "hosts"} <= plugin
    assert {"mcp-gate", "mcp-fetch"} <= plugin
    assert {"trace", "votes", "entail", "ciber", "counters", "verdict"} <= steps
    assert names[0] == "run"  # the command the README starts with


def test_a_command_left_out_or_listed_twice_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    # The check above has teeth: drop the pipeline steps and list run twice.
    (using, members), plugin, _ = COMMAND_GROUPS
    monkeypatch.setattr(cli, "COMMAND_GROUPS", ((using, (*members, "run")), plugin))
    names = [name for _, name in listed(build_parser().format_help())]
    assert names.count("run") == 2
    assert {"trace", "verdict"} <= set(registered()) - set(names)


def test_each_command_still_has_its_own_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["verdict", "--help"])
    assert "decide the verdict (exit 1 on HOLD or FAIL)" in capsys.readouterr().out
