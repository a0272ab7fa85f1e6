"""The role contracts: the one reader of every instruction a model is given, for both drivers.

A contract is a Markdown file installed with the package: ``agents/<name>.md`` for the roles the
plugin dispatches as Claude Code subagents (the frontmatter is the subagent's definition), and
``roles/<name>.md`` for the roles the plugin's own session plays when ``deep-research next``
asks it to write a file — the planner and the synthesizer. Those two are not under ``agents/``:
Claude Code registers every Markdown file there as a subagent any session may dispatch, and
these are never dispatched. The headless driver sends contracts as system prompts; ``next``
prints a contract's steps as the rules of a write. Neither builds an instruction of its own:
what code adds to a request is data.

A contract's text is what every reader of it follows, then ``## <heading>`` sections that a
driver picks by name (what differs in a headless call, the skeptic's vote angles). A numbered
list in a section (``1. …``, continuation lines indented) is read item by item: the one parser
of every list code takes from a contract.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

from deep_research.errors import InputError

#: Where contracts live, in the repository and in the installed package.
FOLDERS = ("agents", "roles")

_HEADING = re.compile(r"^## (.+?)\s*$", re.MULTILINE)
_ITEM = re.compile(r"^\d+\.\s+")


@dataclass(frozen=True)
class Contract:
    """One contract's body (frontmatter stripped), split at its ``##`` headings."""

    name: str
    body: str
    shared: str
    sections: dict[str, str]  # heading → the section, its heading line included

    def section(self, heading: str) -> str:
        if heading not in self.sections:
            raise InputError(f"the role contract {self.name}.md has no section '## {heading}'")
        return self.sections[heading]

    def items(self, heading: str) -> list[str]:
        """The numbered items of section ``heading``, each on one line, numbers dropped."""
        found: list[str] = []
        inside = False
        for line in self.section(heading).splitlines()[1:]:
            if _ITEM.match(line):
                found.append(_ITEM.sub("", line).strip())
                inside = True
            elif inside and line.startswith((" ", "\t")) and line.strip():
                found[-1] += " " + line.strip()
            else:
                inside = False
        if not found:
            raise InputError(f"the role contract {self.name}.md lists nothing under '## {heading}'")
        return found


def _strip_frontmatter(text: str) -> str:
    if text.startswith("---"):
        end = text.find("\n---", 3)
        if end != -1:
            return text[end + 4 :].lstrip("\n")
    return text


def parse(name: str, text: str) -> Contract:
    """Contract ``name`` from the text of its file."""
    body = _strip_frontmatter(text)
    found = list(_HEADING.finditer(body))
    shared = body[: found[0].start()] if found else body
    sections = {}
    ends = [match.start() for match in found[1:]] + [len(body)]
    for match, end in zip(found, ends[: len(found)], strict=True):
        sections[match.group(1)] = body[match.start() : end].strip()
    return Contract(name, body, shared.strip(), sections)


@cache
def contract(name: str) -> Contract:
    """Contract ``name`` as installed with the package."""
    root = resources.files("deep_research")
    for folder in FOLDERS:
        path = root.joinpath(folder, f"{name}.md")
        if path.is_file():
            return parse(name, path.read_text(encoding="utf-8"))
    raise InputError(
        f"the role contract {name}.md is missing from the installed package "
        f"(looked in {', '.join(FOLDERS)}); reinstall deep-research"
    )


def items(name: str, heading: str) -> list[str]:
    """The numbered items of section ``## heading`` of contract ``name``."""
    return contract(name).items(heading)


def instructions(name: str, *headings: str) -> str:
    """A system prompt: the contract's shared text, then the named sections in that order."""
    read = contract(name)
    return "\n\n".join([read.shared, *(read.section(heading) for heading in headings)])
