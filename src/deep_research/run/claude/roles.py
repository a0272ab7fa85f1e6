"""The roles a Claude run plays, the model each runs on, and the instructions each follows.

The tier map (strongest model for judgement, the small one for execution):

=============  ========================================  =================  ====================
role           what it does                              default model      contract
=============  ========================================  =================  ====================
plan           proportionality + sub-questions           strongest          roles/planner.md
synthesize     the digest of the verified claims         strongest          roles/synthesizer.md
triangulate    gap-fill and negation queries             middle             triangulator.md
extract        findings cited into one retained page     small              fetcher.md
search         one web search (server tool)              small              fetcher.md
skeptic        one vote on each claim of the call        small              skeptic.md
ciber          re-framings of the high claims            small              ciber.md
=============  ========================================  =================  ====================

Every instruction a role is given is read from its contract (:mod:`deep_research.role_contracts`:
``agents/*.md``, the very files the plugin's subagents run, and ``roles/*.md``, the steps the
plugin's session follows when ``deep-research next`` asks it to plan or to write the answer):
the shared text, then the sections a headless call needs — what differs when the inputs arrive
in the message instead of as file paths, and the answer's channel (a JSON schema, or
citations). So there is one statement of each role, and code adds only data.
Every model is overridable per role (``--model ROLE=ID`` or ``DEEP_RESEARCH_MODEL_<ROLE>``),
and a model the table of :mod:`deep_research.run.claude.catalog` does not hold is refused before
the run starts. The judging roles (plan, synthesize, triangulate) think; the execution roles do
not, where their model lets thinking be turned off (:data:`THINKS`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from deep_research import role_contracts
from deep_research.errors import InputError
from deep_research.run.claude.catalog import (
    BATCH_FACTOR,
    MIDDLE,
    SMALL,
    STRONGEST,
    WEB_SEARCH_USD,
    model,
    thinking_for,
)
from deep_research.run.claude.prices import worst_usd
from deep_research.run.interface import CallPrice

Role = Literal["plan", "synthesize", "triangulate", "extract", "search", "skeptic", "ciber"]
ROLES: tuple[Role, ...] = get_args(Role)

DEFAULT_MODELS: dict[Role, str] = {
    "plan": STRONGEST,
    "synthesize": STRONGEST,
    "triangulate": MIDDLE,
    "extract": SMALL,
    "search": SMALL,
    "skeptic": SMALL,
    "ciber": SMALL,
}
MODEL_ENV = "DEEP_RESEARCH_MODEL_"
#: Whether a role's calls think: judgement does; reading, searching and voting on located text
#: do not need to, and a think would only spend their ``max_tokens``.
THINKS: dict[Role, bool] = {
    "plan": True,
    "synthesize": True,
    "triangulate": True,
    "extract": False,
    "search": False,
    "skeptic": False,
    "ciber": False,
}

#: Output tokens a call of the role may answer with (``max_tokens`` before any thinking
#: headroom, :func:`~deep_research.run.claude.catalog.thinking_for`), and the input tokens its worst
#: case assumes for preflight — what this module sends is bounded so these hold (characters
#: sent / 2, a conservative tokens-per-character ratio, plus the instructions). A skeptic call
#: judges several claims: its figures are per claim it carries (one vote's share of the call).
MAX_OUTPUT_TOKENS: dict[Role, int] = {
    "plan": 4096,
    "synthesize": 4096,
    "triangulate": 2048,
    "extract": 2048,
    "search": 1024,
    "skeptic": 1024,
    "ciber": 4096,
}
PREFLIGHT_INPUT_TOKENS: dict[Role, int] = {
    "plan": 8_000,
    "synthesize": 16_000,
    "triangulate": 8_000,
    "extract": 16_000,
    "search": 12_000,
    "skeptic": 6_000,
    "ciber": 16_000,
}
#: Server-side searches one search call may run (the tool's ``max_uses``), and how many input
#: tokens of results each may add to the call.
SEARCH_USES = 1
SCOUT_USES = 2
SEARCH_RESULT_TOKENS = 10_000

#: Each role's contract, and the sections of it a headless call sends after its shared text.
CONTRACTS: dict[Role, tuple[str, tuple[str, ...]]] = {
    "plan": ("planner", ("Steps", "Headless run")),
    "synthesize": ("synthesizer", ("Rules", "Headless run")),
    "triangulate": ("triangulator", ("Headless run",)),
    "extract": ("fetcher", ("Headless extraction",)),
    "search": ("fetcher", ("Headless search",)),
    "skeptic": ("skeptic", ("Vote angles", "Headless run")),
    "ciber": ("ciber", ("Headless run",)),
}


def instructions(role: Role) -> str:
    """The system prompt of ``role``, read from its contract."""
    name, headings = CONTRACTS[role]
    return role_contracts.instructions(name, *headings)


@dataclass(frozen=True)
class Models:
    """The model of every role; unknown roles and models outside the table are refused."""

    by_role: Mapping[Role, str]

    def __getitem__(self, role: Role) -> str:
        return self.by_role[role]

    def worst(self, role: Role, *, batch: bool = False) -> CallPrice:
        """One call of ``role`` at its preflight worst case."""
        chosen = self.by_role[role]
        inputs = PREFLIGHT_INPUT_TOKENS[role]
        _, outputs = thinking_for(chosen, THINKS[role], MAX_OUTPUT_TOKENS[role])
        searches = SEARCH_USES if role == "search" else 0
        tokens = worst_usd(chosen, inputs, outputs) * (BATCH_FACTOR if batch else 1.0)
        return CallPrice(tokens=inputs + outputs, usd=tokens + searches * WEB_SEARCH_USD)


def choose_models(
    overrides: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None
) -> Models:
    """Defaults, then ``DEEP_RESEARCH_MODEL_<ROLE>``, then explicit overrides (``--model``)."""
    env = os.environ if environ is None else environ
    chosen: dict[Role, str] = dict(DEFAULT_MODELS)
    for role in ROLES:
        if value := env.get(MODEL_ENV + role.upper(), "").strip():
            chosen[role] = value
    for name, given in (overrides or {}).items():
        if name not in ROLES:
            raise InputError(f"--model {name}=…: unknown role; roles: {', '.join(ROLES)}")
        chosen[name] = given.strip()
    for role, chosen_id in chosen.items():
        try:
            model(chosen_id)
        except InputError as exc:
            raise InputError(f"the {role} role's {exc}") from None
    return Models(chosen)


def parse_model_options(values: list[str] | None) -> dict[str, str]:
    """``--model ROLE=ID`` options as a mapping; a malformed one is a usage error."""
    found: dict[str, str] = {}
    for value in values or []:
        role, sep, model = value.partition("=")
        if not sep or not role.strip() or not model.strip():
            raise InputError(f"--model {value!r}: write ROLE=MODEL, e.g. --model skeptic={SMALL}")
        found[role.strip()] = model.strip()
    return found
