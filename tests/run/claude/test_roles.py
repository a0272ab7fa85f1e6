"""One statement of each role: the Claude reasoner sends the contracts the plugin reads —
agents/*.md, the plugin's own subagents, and roles/*.md, the steps its session follows — as
installed with the package, and adds no instruction of its own."""

from __future__ import annotations

import tomllib
from importlib import resources
from pathlib import Path

import pytest

from conftest import REPO
from deep_research import role_contracts
from deep_research.run.claude.roles import CONTRACTS, ROLES, Role, instructions


@pytest.mark.parametrize("name", sorted({name for name, _ in CONTRACTS.values()}))
def test_a_role_contract_is_the_plugins_own_file(name: str) -> None:
    folder = "roles" if name in ("planner", "synthesizer") else "agents"
    installed = Path(str(resources.files("deep_research").joinpath(folder, f"{name}.md")))
    assert installed.resolve() == (REPO / folder / f"{name}.md").resolve()  # the same file
    text = (REPO / folder / f"{name}.md").read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1].lstrip("\n") if folder == "agents" else text
    assert role_contracts.contract(name).body == body
    assert "name:" not in role_contracts.contract(name).body.split("\n", 1)[0]  # no frontmatter


@pytest.mark.parametrize("role", ROLES)
def test_a_roles_system_prompt_is_its_contract_and_the_sections_it_names(role: Role) -> None:
    name, headings = CONTRACTS[role]
    text = instructions(role)
    read = role_contracts.contract(name)
    assert text.startswith("Role:") and text.startswith(read.shared)
    for heading in headings:
        assert read.section(heading) in text
    # A section meant for another call of the same contract is not sent.
    others = {h for r, (n, hs) in CONTRACTS.items() if n == name and r != role for h in hs}
    assert not [h for h in others - set(headings) if f"## {h}\n" in text]


def test_the_package_ships_the_contracts() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    shipped = config["tool"]["setuptools"]["package-data"]["deep_research"]
    assert {"agents/*.md", "roles/*.md"} <= set(shipped)
