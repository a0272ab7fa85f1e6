"""Sources and findings before they are rows: the typed drafts, and what the merge takes.

:class:`SourceDraft` and :class:`FindingDraft` are what typed code hands to ``merge_sources``.
:class:`CanonicalSource` is what both entry points hand to the merge: a source with its URL
canonical, its place in the input and the :class:`SourceFields` it states.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from deep_research.models import Importance, SourceType, Tier, Via
from deep_research.normalize.results import Log
from deep_research.normalize.values import unique
from deep_research.urls import InvalidURL, canonicalize


class FindingDraft(BaseModel):
    """One (claim, verbatim quote) pair before it is numbered; no importance means "supporting"."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    claim: str
    quote: str
    importance: Importance | None = None


class SourceDraft(BaseModel):
    """One source as typed code states it, before merging; fields left None get the defaults."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    title: str | None = None
    tier: Tier | None = None
    status: int | None = None
    content_hash: str | None = None
    source_type: SourceType | None = None
    retrieved_at: datetime | None = None
    published_at: date | None = None
    via: Via | None = None
    findings: list[FindingDraft] = Field(default_factory=list)


_T = TypeVar("_T")


@dataclass
class SourceFields:
    """The row fields one input source states: None (or an empty list) means "not stated"."""

    title: str | None = None
    published_at: date | None = None
    retrieved_at: datetime | None = None
    source_type: SourceType | None = None
    tier: Tier | None = None
    content_hash: str | None = None
    status: int | None = None
    final_url: str | None = None
    cites: list[str] = field(default_factory=list)
    sub_questions: list[str] = field(default_factory=list)
    round: int | None = None
    via: Via = field(default_factory=Via)

    def stated(self) -> dict[str, Any]:
        """The stated fields, as keywords of a row (whose defaults fill in the rest)."""
        values = {spec.name: getattr(self, spec.name) for spec in dataclasses.fields(self)}
        return {name: value for name, value in values.items() if value is not None}

    def merged(self, later: SourceFields) -> SourceFields:
        """The first statement of a field wins; lists are united; via is merged part by part."""
        return SourceFields(
            title=_first_stated(self.title, later.title),
            published_at=_first_stated(self.published_at, later.published_at),
            retrieved_at=_first_stated(self.retrieved_at, later.retrieved_at),
            source_type=_first_stated(self.source_type, later.source_type),
            tier=_first_stated(self.tier, later.tier),
            content_hash=_first_stated(self.content_hash, later.content_hash),
            status=_first_stated(self.status, later.status),
            final_url=_first_stated(self.final_url, later.final_url),
            cites=unique([*self.cites, *later.cites]),
            sub_questions=unique([*self.sub_questions, *later.sub_questions]),
            round=_first_stated(self.round, later.round),
            via=Via(
                query=self.via.query or later.via.query,
                adapter=self.via.adapter or later.via.adapter,
                mcp=self.via.mcp or later.via.mcp,
            ),
        )


def _first_stated(first: _T | None, later: _T | None) -> _T | None:
    return first if first is not None else later


@dataclass(frozen=True)
class CanonicalSource:
    """One input source ready to merge: its URL canonical, its fields typed, its place known."""

    where: str
    given_url: str
    url: str
    aliases: list[str]
    fields: SourceFields
    findings: list[FindingDraft]


@dataclass(frozen=True)
class RowOptions:
    """What the caller states for every new row; it overrides what the input says."""

    sub_question: str | None
    round: int | None

    def apply(self, stated: SourceFields) -> SourceFields:
        if self.sub_question is not None:
            stated = replace(stated, sub_questions=[self.sub_question])
        if self.round is not None:
            stated = replace(stated, round=self.round)
        return stated


def canonical_url(value: str, where: str, log: Log, item: Any) -> tuple[str, str] | None:
    """(the URL as given, stripped; its canonical form), or None after a rejection."""
    if not value.strip():
        log.reject(where, "source has an empty url", item)
        return None
    given = value.strip()
    try:
        return given, canonicalize(given)
    except InvalidURL as exc:
        log.reject(where, f"invalid url: {exc}", given)
        return None
