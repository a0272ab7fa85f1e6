"""The headless runner on Claude: a metered client, the roles as a reasoner, web search as a
source. Nothing here decides what a claim is worth; the gates do."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from deep_research.run.claude.client import ClaudeClient, key_problem
from deep_research.run.claude.reasoner import ClaudeReasoner
from deep_research.run.claude.roles import choose_models
from deep_research.run.claude.search import WebSearchAdapter


def open_reasoner(models: Mapping[str, str] | None = None, batch: bool = False) -> ClaudeReasoner:
    return ClaudeReasoner(ClaudeClient(choose_models(models)), batch=batch)


def open_web(state: Path, models: Mapping[str, str] | None = None) -> WebSearchAdapter:
    return WebSearchAdapter(ClaudeClient(choose_models(models)))


__all__ = ["ClaudeClient", "ClaudeReasoner", "WebSearchAdapter", "key_problem"]
