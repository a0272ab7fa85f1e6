"""Offline re-verification: re-run the mechanical gates on a stored brief, compare verdicts.

``deep-research verify BRIEF --offline`` switches the network off for the whole process (every
fetch is refused before a socket exists; see :func:`deep_research.netpolicy.offline`), validates
every artifact against its schema, re-runs the trace gate from sources.jsonl, fetch-log.jsonl and
the retained corpus alone, and compares each claim's stored verdict — support class, pass flag,
per-evidence outcome and span, violations — with the recomputed one. When the brief carries a
verdict, the verdict precedence is decided again under the settings recorded in trace.json and
compared too. Nothing is written. A brief whose stored verdicts cannot be reproduced from its
files is not auditable, and says where.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deep_research.brief import Brief
from deep_research.errors import InputError, MissingArtifact
from deep_research.models import Claim, ClaimsFile, TraceFile
from deep_research.netpolicy import offline as network_off
from deep_research.schemas import validate_brief
from deep_research.settings import Settings
from deep_research.trace import SourceIndex, trace_claim
from deep_research.verdict import decide


@dataclass
class VerifyReport:
    claims: int
    offline: bool
    mismatches: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not self.mismatches and not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {
            "claims": self.claims,
            "offline": self.offline,
            "identical": self.identical,
            "mismatches": self.mismatches,
            "problems": self.problems,
        }


def verdict_of(claim: Claim) -> dict[str, Any]:
    """The parts of a claim the mechanical gates decide."""
    return {
        "support_class": claim.support_class,
        "verify_passed": claim.verify_passed,
        # A set, not a list: triangulation reorders a claim's citations, which changes nothing.
        "evidence": sorted(
            (item.source, item.finding or "", item.checks.outcome,
             json.dumps(item.span and item.span.model_dump(), sort_keys=True))
            for item in claim.evidence
        ),
        "violations": sorted((v.source or "", v.reason) for v in claim.violations),
    }


def compare(stored: Claim, recomputed: Claim) -> list[str]:
    old, new = verdict_of(stored), verdict_of(recomputed)
    return [
        f"{stored.id}: {key} stored {old[key]!r}, recomputed {new[key]!r}"
        for key in old
        if old[key] != new[key]
    ]


def retrace_mismatches(brief: Brief, document: ClaimsFile) -> list[str]:
    """Where a fresh trace of the retained text disagrees with claims.json's stored trace
    verdicts — an edit after the trace gate ran (a claim's words, a forged evidence item, a
    flipped class). Claims never traced are the verdict's own rule, not a mismatch."""
    index = SourceIndex(brief, brief.load_sources(), brief.load_fetch_log())
    return [
        mismatch
        for claim in document.claims
        if claim.verify_passed is not None
        for mismatch in compare(claim, trace_claim(index, claim)[0])
    ]


def run_verify(root: Path, *, offline: bool = True) -> VerifyReport:
    if not root.is_dir():
        raise MissingArtifact(f"brief directory not found: {root}")
    with network_off() if offline else contextlib.nullcontext():
        brief = Brief(root)
        document = brief.load_claims()
        if document.claims and all(claim.verify_passed is None for claim in document.claims):
            raise InputError(
                f"{brief.claims_path} holds no stored verdicts; run deep-research trace first"
            )
        report = VerifyReport(claims=len(document.claims), offline=offline)
        report.problems.extend(validate_brief(root).problems)
        retraced = retrace_mismatches(brief, document)
        report.mismatches.extend(retraced)
        if document.verdict is not None:
            report.mismatches.extend(_compare_verdict(brief, document, retraced))
    return report


def _compare_verdict(brief: Brief, document: ClaimsFile, retraced: list[str]) -> list[str]:
    """Decide the verdict again from the stored artifacts under the settings they record."""
    trace = brief.load_trace() if brief.trace_path.exists() else TraceFile()
    try:
        settings = Settings.model_validate(trace.settings) if trace.settings else Settings()
    except ValidationError:
        return ["trace.json records settings this version cannot read; re-run verdict"]
    decided = decide(document, trace, brief.load_sources(), brief.load_fetch_log(), settings,
                     retraced)
    found = []
    if decided.verdict != document.verdict:
        found.append(f"verdict: stored {document.verdict}, recomputed {decided.verdict}")
    if decided.reasons != document.verdict_reasons:
        found.append(
            f"verdict_reasons: stored {document.verdict_reasons!r}, recomputed {decided.reasons!r}"
        )
    return found
