"""Every agent, skill, conduct file, schema and `deep-research` command that the plugin's texts
and the README name exists; the CLI's commands are read from ``build_parser()``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli_commands import subcommands
from conftest import REPO

TEXTS = sorted(
    [
        *REPO.glob("skills/*/SKILL.md"),
        *REPO.glob("agents/*.md"),
        *REPO.glob("roles/*.md"),
        *REPO.glob("conduct/*.md"),
        REPO / "README.md",
    ]
)
COMMAND = re.compile(r"(?:`|&& |\$ )deep-research ([a-z][a-z-]*)")
AGENT = re.compile(r"deep-research:([a-z][a-z-]*)")
CONDUCT = re.compile(r"conduct/([a-z-]+\.md)")
SCHEMA = re.compile(r"schemas/([a-z-]+\.schema\.json)")


def test_the_plugin_has_its_parts() -> None:
    assert {p.parent.name for p in REPO.glob("skills/*/SKILL.md")} == {
        "deep-research",
        "research-render",
        "check",  # a cited report from any tool, against its pages
    }
    assert {p.stem for p in REPO.glob("agents/*.md")} == {
        "fetcher",
        "mcp-fetcher",
        "triangulator",
        "skeptic",
        "verifier",
        "ciber",
        "stepper",  # the workflow's: code's next step
        "writer",  # the workflow's: the files the loop's orchestrator writes
    }
    assert [p.name for p in REPO.glob("workflows/*")] == ["research-run.js"]
    # The steps the orchestrator follows itself: not subagents, so not under agents/.
    assert {p.stem for p in REPO.glob("roles/*.md")} == {"orchestrator", "planner", "synthesizer"}
    assert {p.stem for p in REPO.glob("conduct/*.md")} == {
        "research-pipeline",
        "source-discipline",
        "citation-verification",
        "web-fetch",
        "mcp-research-discipline",
    }


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_name_a_text_uses_exists(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    known = subcommands()
    missing = [f"command {c}" for c in COMMAND.findall(text) if c not in known]
    for name in AGENT.findall(text):
        if not (
            (REPO / "agents" / f"{name}.md").is_file()
            or (REPO / "skills" / name / "SKILL.md").is_file()
            or (REPO / "workflows" / f"{name}.js").is_file()
        ):
            missing.append(f"agent, skill or workflow {name}")
    missing += [
        f"conduct/{n}" for n in CONDUCT.findall(text) if not (REPO / "conduct" / n).is_file()
    ]
    missing += [
        f"schemas/{n}" for n in SCHEMA.findall(text) if not (REPO / "schemas" / n).is_file()
    ]
    assert not missing, missing


def test_the_skill_is_a_loop_around_next_and_names_no_phase_itself() -> None:
    """The phase order lives in the pipeline definition; prose that lists phases drifts from it."""
    from deep_research.run.pipeline import PIPELINE

    body = (REPO / "skills" / "deep-research" / "SKILL.md").read_text(encoding="utf-8")
    named = set(COMMAND.findall(body))
    assert {"start", "next", "finish"} <= named
    phase_commands = {
        "normalize",
        "trace",
        "votes",
        "triangulate",
        "refetch",
        "ciber",
        "counters",
        "verdict",
        "render",
        "ingest",
    }
    assert not named & phase_commands, named & phase_commands
    assert not [p.name for p in PIPELINE if f"## {p.name}" in body.lower()]


def test_orchestrator_pre_approves_the_cli() -> None:
    head = (REPO / "skills" / "deep-research" / "SKILL.md").read_text(encoding="utf-8")
    assert "allowed-tools: Bash(deep-research *)" in head


def test_the_conduct_table_lists_the_pipeline_phases_in_its_order() -> None:
    """Prose about the phase order is checked against the one definition, so it cannot drift."""
    from deep_research.run.pipeline import PIPELINE

    text = (REPO / "conduct" / "research-pipeline.md").read_text(encoding="utf-8")
    rows = [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| ")]
    assert rows[1:] == [phase.name for phase in PIPELINE]  # rows[0] is the header


def description(agent: str) -> str:
    """The frontmatter ``description`` of ``agents/<agent>.md``."""
    head = (REPO / "agents" / f"{agent}.md").read_text(encoding="utf-8").split("\n---", 1)[0]
    return next(line for line in head.splitlines() if line.startswith("description:"))


PHASES_NAMED = re.compile(r"\b([a-z0-9]+)(?: and ([a-z0-9]+))? phases?\b")
PHASE_NUMBER = re.compile(r"\b[Pp]hases? \d")
#: Every agent's description opens so: each session reads it, and it says whose agent this is.
OWNER = "For deep-research's "


def description_problems(text: str) -> list[str]:
    """What keeps a description from saying whose agent it is and its phases, in the pipeline's
    names."""
    from deep_research.run.pipeline import BY_NAME

    problems = [f"numbers a phase: {n!r}" for n in PHASE_NUMBER.findall(text)]
    if OWNER not in text:
        problems.append("does not say it is deep-research's")
    named = {name for pair in PHASES_NAMED.findall(text) for name in pair if name}
    if not named:
        problems.append("names no phase")
    problems += [f"no pipeline phase is named {name!r}" for name in sorted(named - set(BY_NAME))]
    return problems


@pytest.mark.parametrize("agent", sorted(p.stem for p in REPO.glob("agents/*.md")))
def test_an_agents_description_says_when_it_is_used_naming_pipeline_phases(agent: str) -> None:
    """Claude Code shows the description to every session (the always-on cost, docs/plugin.md):
    it says whose agent this is and its phases, named as the one pipeline definition
    (run/pipeline.py) names them — nothing more."""
    assert description_problems(description(agent)) == []


def test_a_description_that_numbers_or_misnames_a_phase_is_named() -> None:
    assert description_problems('description: "Phase 6 skeptic vote."') == [
        "numbers a phase: 'Phase 6'",
        "does not say it is deep-research's",
        "names no phase",
    ]
    misnamed = "For deep-research's cast and verify phases only."
    assert description_problems(misnamed) == ["no pipeline phase is named 'verify'"]


@pytest.mark.parametrize(
    "path", [p for p in TEXTS if p.name != "README.md"], ids=lambda p: str(p.relative_to(REPO))
)
def test_no_contract_or_rule_numbers_a_phase(path: Path) -> None:
    """Phases have names (run/pipeline.py); a number like "Phase 6c" names none of them."""
    assert PHASE_NUMBER.findall(path.read_text(encoding="utf-8")) == []


#: A path an agent cannot Read: an expansion (the guard denies `$` in Bash, and Read expands
#: nothing) or a file of the plugin named relative to it (the agent's working directory is the
#: user's project). An agent is given what it needs in its prompt, its input file or its text.
UNREADABLE = re.compile(r"\$\{?[A-Z_]+\}?/|(?<![\w/<>.-])(?:schemas|conduct)/[\w-]+(?:\.[\w-]+)*")
#: Where a judging agent's task was read from before it had its own input file.
SHARED_FILES = re.compile(r"<brief>/(?:claims\.json|corpus|sources\.jsonl|plan\.json)")
JUDGES = ("triangulator", "verifier", "skeptic", "ciber")


def unreadable_paths(text: str) -> list[str]:
    return UNREADABLE.findall(text)


@pytest.mark.parametrize(
    "agent",
    sorted(p.stem for p in REPO.glob("agents/*.md")),
)
def test_an_agents_contract_cites_only_paths_the_agent_can_read(agent: str) -> None:
    text = (REPO / "agents" / f"{agent}.md").read_text(encoding="utf-8")
    assert unreadable_paths(text) == []
    if agent in JUDGES:
        assert SHARED_FILES.findall(text) == []
        assert "Read `input`" in text and "read no other file" in text.casefold()


def test_an_unreadable_path_in_a_contract_is_named() -> None:
    text = (
        "Rules: `${CLAUDE_PLUGIN_ROOT}/conduct/citation-verification.md`; valid against "
        "`schemas/skeptic-vote.schema.json`; see $HOME/notes and conduct/web-fetch.md."
    )
    assert unreadable_paths(text) == [
        "${CLAUDE_PLUGIN_ROOT}/",
        "schemas/skeptic-vote.schema.json",
        "$HOME/",
        "conduct/web-fetch.md",
    ]
    assert (
        unreadable_paths("read `<brief>/inputs/skeptic-C1.md`; the src/deep_research/schemas/x")
        == []
    )
