"""Every threshold and floor the verdict chain uses, in one object with documented defaults.

A verdict is auditable only if the numbers it was decided under are known, so the settings in
force are written to trace.json together with :func:`settings_hash`, and the hash is copied into
claims.json. Defaults can be overridden from the environment (``DEEP_RESEARCH_<FIELD>``, e.g.
``DEEP_RESEARCH_TAU_THRESHOLD=0.8``) or from the command line (``--set tau_threshold=0.8``);
either way the override changes the recorded settings and their hash, and a brief decided under
settings that differ from the defaults says which (:func:`changed_settings`) in its verdict
reasons, its handoff and its report.

A plugin run's settings are fixed once, by ``deep-research start``, in the brief's run.json
(:func:`frozen_settings`): inside Claude Code the orchestrator is a model, and a model that can
lower a floor from inside the run can make any brief look finished. Every gate of such a brief
uses those settings, and an override there is refused (:func:`settings_for`).

Each field is bounded: a setting outside its bounds is an input error, not a silently clamped
value, because a typo in a threshold would otherwise change verdicts unnoticed.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from deep_research.brief.layout import RUN_FILE, Brief
from deep_research.errors import InputError, SchemaViolation

ENV_PREFIX = "DEEP_RESEARCH_"


class Settings(BaseModel):
    """Thresholds (docs/contracts.md §6–§11). Field descriptions document each default."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    # --- independence, τ, dissemination, confidence (docs/contracts.md §6)
    tau_threshold: float = Field(0.85, ge=0, le=1, description="τ below this → PARTIAL")
    near_copy_overlap: float = Field(
        0.5,
        gt=0,
        le=1,
        description="share of the shorter text's word 5-grams found in the "
        "other at or above which two texts are one syndicated text",
    )
    dissemination_contested: float = Field(
        0.7,
        ge=0,
        le=1,
        description="dissemination at or above this (≥2 supporters) → medium-contested",
    )
    vendor_share: float = Field(
        0.25,
        ge=0,
        le=1,
        description="an owner above this share of a sub-question's sources is a vendor monoculture",
    )
    vendor_min_sources: int = Field(
        2, ge=1, le=100, description="an owner with fewer sources than this is never a monoculture"
    )
    worker_jaccard: float = Field(
        0.3,
        ge=0,
        le=1,
        description="URL-set Jaccard between two sub-question workers above this is logged",
    )
    # --- skeptic panel (docs/contracts.md §7)
    panel_size: int = Field(3, ge=1, le=9, description="votes per claim")
    kill_votes: int = Field(2, ge=1, le=9, description="refuting votes that kill a claim")
    survive_valid_votes: int = Field(2, ge=1, le=9, description="valid votes a survivor needs")
    # --- CIBER (docs/contracts.md §9)
    ciber_penalty: float = Field(
        0.25, ge=0, le=1, description="dissemination added per consistency failure"
    )
    ciber_min_high_claims: int = Field(
        2, ge=1, le=100, description="fewer high claims than this is a valid CIBER skip"
    )
    ciber_max_failures_per_claim: int = Field(
        3, ge=1, le=20, description="failures counted per claim (one per re-framing)"
    )
    ciber_top_n: int = Field(
        10, ge=1, le=100, description="high claims CIBER re-frames, the first in claims.json"
    )
    # --- re-fetch and verdict (docs/contracts.md §8, §10)
    refetch_fail: float = Field(0.7, ge=0, le=1, description="re-fetch pass rate below → FAIL")
    refetch_ready: float = Field(
        0.9, ge=0, le=1, description="re-fetch pass rate below (and ≥ refetch_fail) → PARTIAL"
    )
    refetch_min_sample: int = Field(3, ge=0, le=1000, description="re-fetch sample floor")
    refetch_sample_fraction: float = Field(
        0.1, ge=0, le=1, description="re-fetch sample floor as a fraction of cited sources"
    )
    # --- work-budget floors (docs/contracts.md §10.2), full depth then quick depth
    full_sub_questions: int = Field(5, ge=0, le=1000)
    full_queries_per_sub_question: int = Field(4, ge=0, le=1000)
    full_round1_fetches: int = Field(20, ge=0, le=100000)
    full_distinct_sources: int = Field(30, ge=0, le=100000)
    full_rounds: int = Field(2, ge=0, le=100)
    full_counter_queries_per_sub_question: int = Field(1, ge=0, le=1000)
    full_round2_fetches: int = Field(
        5,
        ge=0,
        le=100000,
        description="sources first found in round 2 or later that were fetched: the adversarial "
        "round's work (a floor measures work done, never time waited)",
    )
    quick_sub_questions: int = Field(3, ge=0, le=1000)
    quick_queries_per_sub_question: int = Field(2, ge=0, le=1000)
    quick_rounds: int = Field(1, ge=0, le=100)
    # --- freshness (docs/contracts.md §11)
    freshness_days: int = Field(
        30, ge=0, le=3650, description="a brief younger than this is reused"
    )

    @model_validator(mode="after")
    def _panel_can_decide(self) -> Settings:
        # A panel smaller than the votes that kill or uphold a claim can decide nothing: every
        # claim would be unverified, whatever the skeptics said.
        if self.panel_size < max(self.kill_votes, self.survive_valid_votes):
            raise ValueError(
                f"panel_size {self.panel_size} is below kill_votes ({self.kill_votes}) or "
                f"survive_valid_votes ({self.survive_valid_votes}); no claim could be decided"
            )
        return self

    def refetch_floor(self, cited: int) -> int:
        """Smallest acceptable re-fetch sample for ``cited`` cited sources."""
        return max(self.refetch_min_sample, math.ceil(self.refetch_sample_fraction * cited))

    def as_record(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def settings_hash(settings: Settings) -> str:
    """Stable hash of the settings in force: equal settings, equal hash, on any machine."""
    canonical = json.dumps(settings.as_record(), sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def load_settings(
    overrides: Sequence[str] = (), environ: Mapping[str, str] | None = None
) -> Settings:
    """Defaults, then ``DEEP_RESEARCH_<FIELD>`` variables, then ``name=value`` overrides."""
    env = os.environ if environ is None else environ
    values: dict[str, str] = {}
    for name in Settings.model_fields:
        key = ENV_PREFIX + name.upper()
        if key in env:
            values[name] = env[key]
    for item in overrides:
        name, sep, value = item.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or name not in Settings.model_fields:
            known = ", ".join(Settings.model_fields)
            raise InputError(f"bad setting {item!r}; use name=value with a name among: {known}")
        values[name] = value.strip()
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(part) for part in first["loc"]) or "panel"
        raise InputError(f"setting {name}: {first['msg']}; fix the override or unset it") from None


def changed_settings(settings: Settings) -> dict[str, tuple[Any, Any]]:
    """Each setting that differs from its default: name → (value in force, default)."""
    defaults = Settings()
    return {
        name: (getattr(settings, name), getattr(defaults, name))
        for name in Settings.model_fields
        if getattr(settings, name) != getattr(defaults, name)
    }


def describe_changes(settings: Settings) -> str | None:
    """``name=value (default d), …`` for the settings that differ from the defaults, or None."""
    changed = changed_settings(settings)
    if not changed:
        return None
    return ", ".join(
        f"{name}={value:g} (default {default:g})" for name, (value, default) in changed.items()
    )


def frozen_settings(root: Path) -> Settings | None:
    """The settings ``deep-research start`` fixed for the plugin run in ``root``, or None for a
    brief without that record (a headless run's, or one assembled by hand)."""
    brief = Brief(root)
    if not brief.run_path.exists():
        return None
    record = brief.load_run().settings
    if record is None:
        return None
    try:
        return Settings.model_validate(record)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(part) for part in first["loc"]) or "settings"
        raise SchemaViolation(
            f"settings.{name}: {first['msg']}; re-run deep-research start",
            source=str(brief.run_path),
        ) from None


def settings_for(
    root: Path | None, overrides: Sequence[str] = (), environ: Mapping[str, str] | None = None
) -> Settings:
    """The settings a command on the brief at ``root`` runs under: the run's own when
    ``deep-research start`` fixed them (an override is then refused), else :func:`load_settings`."""
    frozen = frozen_settings(root) if root is not None and root.is_dir() else None
    if frozen is None:
        return load_settings(overrides, environ)
    if overrides:
        raise InputError(
            f"--set {overrides[0]} refused: deep-research start fixed this run's settings "
            f"in {RUN_FILE}; drop --set"
        )
    env = os.environ if environ is None else environ
    from_env = load_settings((), env)
    for name in Settings.model_fields:
        key = ENV_PREFIX + name.upper()
        if key in env and getattr(from_env, name) != getattr(frozen, name):
            raise InputError(
                f"{key}={env[key]} refused: deep-research start fixed {name} at "
                f"{getattr(frozen, name):g} for this run; unset {key}"
            )
    return frozen


def require_run_settings(root: Path, settings: Settings) -> None:
    """Refuse to decide a plugin run's brief under settings other than the ones it started
    under (a caller that bypassed :func:`settings_for`)."""
    frozen = frozen_settings(root)
    if frozen is not None and frozen != settings:
        name = next(n for n in Settings.model_fields if getattr(frozen, n) != getattr(settings, n))
        raise InputError(
            f"setting {name} is {getattr(settings, name):g}, but deep-research start fixed it at "
            f"{getattr(frozen, name):g} for this run; decide the brief under the run's settings"
        )
