"""Offline re-verification: re-run the mechanical gates on a stored brief, compare verdicts.

``deep-research verify BRIEF --offline`` switches the network off for the whole process (every
fetch is refused before a socket exists; see :func:`deep_research.fetch.netpolicy.offline`),
validates
every artifact against its schema, re-runs the trace gate from sources.jsonl, fetch-log.jsonl and
the retained corpus alone, and compares each claim's stored verdict — support class, pass flag,
per-evidence outcome and span, violations — with the recomputed one. When the brief carries a
verdict, the verdict precedence is decided again under the settings recorded in trace.json and
compared too. Nothing is written. A brief whose stored verdicts cannot be reproduced from its
files is not auditable, and says where.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deep_research.brief import Brief
from deep_research.decide.verdict import decide
from deep_research.errors import InputError, MissingArtifact
from deep_research.fetch.netpolicy import offline as network_off
from deep_research.gates.trace import retrace_mismatches
from deep_research.models import ClaimsFile, TraceFile
from deep_research.schemas import validate_brief
from deep_research.settings import Settings


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
    decided = decide(
        document, trace, brief.load_sources(), brief.load_fetch_log(), settings, retraced
    )
    found = []
    if decided.verdict != document.verdict:
        found.append(f"verdict: stored {document.verdict}, recomputed {decided.verdict}")
    if decided.reasons != document.verdict_reasons:
        found.append(
            f"verdict_reasons: stored {document.verdict_reasons!r}, recomputed {decided.reasons!r}"
        )
    return found
