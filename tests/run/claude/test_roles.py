"""One statement of each role: the Claude reasoner reads the plugin's own agents/*.md, installed
with the package, and adds only what differs in a headless call."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import pytest

from conftest import REPO
from deep_research.run.claude.roles import (
    CONTRACT_FILES,
    HEADLESS_NOTES,
    ROLES,
    contract,
    instructions,
)


@pytest.mark.parametrize("name", sorted(set(CONTRACT_FILES.values())))
def test_a_role_contract_is_the_plugins_agent_file(name: str) -> None:
    installed = Path(str(resources.files("deep_research").joinpath("agents", f"{name}.md")))
    assert installed.resolve() == (REPO / "agents" / f"{name}.md").resolve()  # the same file
    body = (REPO / "agents" / f"{name}.md").read_text(encoding="utf-8")
    assert body.startswith("---") and contract(name) == body.split("\n---\n", 1)[1].lstrip("\n")
    assert "name:" not in contract(name).split("\n", 1)[0]  # the frontmatter is not sent


def test_every_role_has_instructions_and_the_package_ships_the_contracts() -> None:
    for role in ROLES:
        text = instructions(role)
        assert text.startswith("Role:")
        if role in CONTRACT_FILES:
            assert text.endswith(HEADLESS_NOTES[role])
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "agents/*.md" in config["tool"]["setuptools"]["package-data"]["deep_research"]
