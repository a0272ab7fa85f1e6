"""Where a plugin run's agent returns and orchestrator texts are saved, named by what they are.

``deep-research next`` tells the orchestrator to save each dispatched agent's reply to a file
under ``<brief>/returns/``; the name carries what code needs to consume it (which agent, which
sub-question or claim, which round, which attempt), so nothing is parsed out of the reply's
prose and nothing the model writes about itself is trusted. One definition of the names, read by
``next`` (what is still missing) and by ``ingest`` (what each file feeds).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

RETURNS = "returns"
SYNTHESIS = "synthesis.md"
REFUSED_SYNTHESIS = "synthesis.refused.md"

Kind = Literal["fetcher", "skeptic", "verifier", "triangulator", "ciber"]

_FETCHER = re.compile(
    r"^fetcher-(?P<sq>[A-Za-z0-9_.-]+?)-r(?P<round>[1-9])(?P<retry>-retry|-more)?(?P<mcp>-mcp)?"
    r"\.json$"
)
_SKEPTIC = re.compile(r"^skeptic-(?P<claim>C[0-9]+)-(?P<vote>[1-9])\.json$")
_VERIFIER = re.compile(r"^verifier-(?P<claim>C[0-9]+)(?P<sources>(?:-S[0-9]+)+)\.json$")


@dataclass(frozen=True)
class Return:
    kind: Kind
    path: Path
    sub_question: str | None = None
    round: int | None = None
    retry: bool = False
    claim: str | None = None
    vote: int | None = None
    #: A verifier's: the sources its claim is judged against, one judgement each.
    sources: tuple[str, ...] = ()


def returns_dir(brief: Path) -> Path:
    return brief / RETURNS


def fetcher_path(
    brief: Path,
    sub_question: str,
    round_: int,
    *,
    retry: bool = False,
    more: bool = False,
    mcp: bool = False,
) -> Path:
    """A fetcher's reply; ``retry`` for the one retry of an incomplete fetcher, ``more`` for the
    round's top-up fetcher (new queries when the round fell short of its floor), ``mcp`` for the
    mcp-fetcher beside the sub-question's fetcher."""
    suffix = "-retry" if retry else "-more" if more else ""
    suffix += "-mcp" if mcp else ""
    return returns_dir(brief) / f"fetcher-{sub_question}-r{round_}{suffix}.json"


def skeptic_path(brief: Path, claim: str, vote: int) -> Path:
    return returns_dir(brief) / f"skeptic-{claim}-{vote}.json"


def verifier_path(brief: Path, claim: str, sources: Sequence[str]) -> Path:
    """A verifier's reply: ``claim`` judged against each of ``sources`` (the name carries them
    all, so ingest knows every pair asked whatever the reply names)."""
    return returns_dir(brief) / f"verifier-{'-'.join([claim, *sources])}.json"


def triangulator_path(brief: Path) -> Path:
    return returns_dir(brief) / "triangulator.json"


def ciber_path(brief: Path, *, retry: bool = False) -> Path:
    return returns_dir(brief) / ("ciber-retry.json" if retry else "ciber.json")


def synthesis_path(brief: Path, *, refused: bool = False) -> Path:
    """The answer ``next`` asks for; with ``refused``, where ingest keeps an answer the answer
    gate refused, so ``next`` asks once more and says why."""
    return returns_dir(brief) / (REFUSED_SYNTHESIS if refused else SYNTHESIS)


def parse_name(path: Path) -> Return | None:
    """What a saved file is, from its name alone; None for a name ``next`` never asks for."""
    name = path.name
    if m := _FETCHER.match(name):
        return Return(
            "fetcher",
            path,
            sub_question=m["sq"],
            round=int(m["round"]),
            retry=m["retry"] == "-retry",
        )
    if m := _SKEPTIC.match(name):
        return Return("skeptic", path, claim=m["claim"], vote=int(m["vote"]))
    if m := _VERIFIER.match(name):
        sources = tuple(m["sources"].removeprefix("-").split("-"))
        return Return("verifier", path, claim=m["claim"], sources=sources)
    if name == "triangulator.json":
        return Return("triangulator", path)
    if name in ("ciber.json", "ciber-retry.json"):
        return Return("ciber", path, retry=name == "ciber-retry.json")
    return None


def saved(brief: Path) -> list[Return]:
    """Every recognised return in the brief, in name order (stable across runs)."""
    folder = returns_dir(brief)
    if not folder.is_dir():
        return []
    found = (parse_name(path) for path in sorted(folder.iterdir()) if path.is_file())
    return [item for item in found if item is not None]


def read_reply(path: Path) -> Any:
    """A saved agent reply as JSON: its first JSON object, whatever surrounds it.

    Claude Code appends the subagent's id to every Agent result and a model saving the reply
    "exactly as returned" may copy it, or keep a fence around the JSON; neither is the reply.
    None when the file holds no JSON object at all (an abstention, never a crash).
    """
    from deep_research.normalize.json_recovery import NotJSON, extract_json

    try:
        found = extract_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, NotJSON):
        return None
    return next((value for _, value in found.docs if isinstance(value, dict)), None)
