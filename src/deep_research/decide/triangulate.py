"""Triangulation: how many independent voices stand behind each claim (docs/contracts.md §6).

Only sources whose evidence passed the trace gate for a claim are counted for it. Two of them are
one voice when any of these holds (checked pairwise, then closed transitively):

* ``same_domain`` — they share a registrable domain (bundled public-suffix list, no network);
* ``same_owner`` — they declare the same owner;
* ``near_copy`` — their retained texts share most word 5-grams (syndication), or the quote one
  of them was cited for is located in the other's text;
* ``cites`` — one lists the other in ``cites``, or the other's URL (or paper id) is in its text;
* ``same_paper`` — the same arXiv id or DOI, from the URL or, for academic sources, the text.

From the groups follow ``independent_count``, τ, ``dissemination_score`` and ``confidence``. At
full depth a load-bearing claim is ``high`` only once the skeptic panel has upheld it: breadth of
sources says nothing about whether the quotes, read in context, say what the claim says. The
command also moves claims that may not be emitted (unsupported, uncertain, refuted by the skeptic
panel) to ``stripped``, drops citations that failed from kept claims, flags vendor monocultures
and logs URL-set overlap between sub-question workers.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations
from pathlib import Path
from typing import Any

from deep_research.brief import Brief
from deep_research.decide.freshness import evidence_freshness
from deep_research.errors import InputError
from deep_research.gaps import VENDOR_MONOCULTURE
from deep_research.gates.locate import Document, locate
from deep_research.models import (
    PRIMARY_TYPES,
    Claim,
    ClaimsFile,
    Confidence,
    Depth,
    FetchLogEntry,
    SourceRow,
    StrippedClaim,
    TraceFile,
)
from deep_research.record import load_trace_or_empty, open_brief, record_phase, save, writes_brief
from deep_research.settings import Settings, require_run_settings
from deep_research.urls import canonical_or_none, registrable_domain, source_urls

#: Tiers whose text is the page itself (or its archived copy), as ``high`` requires.
FULL_TEXT_TIERS = frozenset({"raw", "degraded"})
SHINGLE = 5
#: The shortest quote that may join two sources as near-copies (as short spans support nothing).
MIN_SHARED_QUOTE = 40
GAP_PREFIX = VENDOR_MONOCULTURE

_WORD = re.compile(r"\w+")
_URL_IN_TEXT = re.compile(r"https?://[^\s<>\"'()\[\]]+[^\s<>\"'()\[\].,;:!?]")
_ARXIV_URL = re.compile(r"arxiv\.org/abs/((?:\d{4}\.\d{4,5})|(?:[a-z\-]+(?:\.[A-Z]{2})?/\d{7}))")
_ARXIV_TEXT = re.compile(r"arXiv:\s*(\d{4}\.\d{4,5})", re.IGNORECASE)
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)")
_VERSION = re.compile(r"v\d+$")


def _paper_ids(text: str, *, in_url: bool) -> set[str]:
    ids = set()
    if in_url:
        ids |= {"arxiv:" + _VERSION.sub("", m) for m in _ARXIV_URL.findall(text)}
    else:
        ids |= {"arxiv:" + m for m in _ARXIV_TEXT.findall(text)}
    ids |= {"doi:" + m.rstrip(".,;:)").lower() for m in _DOI.findall(text)}
    return ids


@dataclass
class SourceFacts:
    """What independence needs to know about one source, computed once."""

    source: SourceRow
    text: str | None

    @cached_property
    def urls(self) -> set[str]:
        return source_urls(self.source)

    @cached_property
    def domains(self) -> set[str]:
        return {domain for url in self.urls if (domain := registrable_domain(url)) is not None}

    @cached_property
    def owner(self) -> str | None:
        declared = self.source.owner
        return declared.strip().casefold() if declared and declared.strip() else None

    @cached_property
    def document(self) -> Document | None:
        return Document(self.text, self.source.content_hash) if self.text is not None else None

    @cached_property
    def shingles(self) -> frozenset[int]:
        words = [w.casefold() for w in _WORD.findall(self.text or "")]
        return frozenset(hash(tuple(words[i : i + SHINGLE])) for i in range(len(words) - 4))

    @cached_property
    def papers(self) -> set[str]:
        """Paper ids this source *is* (not ones it merely mentions)."""
        ids = set().union(*(_paper_ids(url, in_url=True) for url in self.urls))
        if self.source.source_type == "academic" and self.text:
            ids |= _paper_ids(self.text[:4000], in_url=False)
        return ids

    @cached_property
    def mentions(self) -> set[str]:
        """Canonical URLs and paper ids this source points to."""
        found = {url for raw in self.source.cites if (url := canonical_or_none(raw)) is not None}
        if self.text:
            found |= {
                url for raw in _URL_IN_TEXT.findall(self.text) if (url := canonical_or_none(raw))
            }
            found |= _paper_ids(self.text, in_url=False)
        return found


def overlap_coefficient(a: frozenset[int], b: frozenset[int]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def static_link(a: SourceFacts, b: SourceFacts, settings: Settings) -> str | None:
    """Why two sources are one voice regardless of the claim, or None if they are independent."""
    if a.domains & b.domains:
        return "same_domain"
    if a.owner is not None and a.owner == b.owner:
        return "same_owner"
    if a.papers & b.papers:
        return "same_paper"
    if a.mentions & (b.urls | b.papers) or b.mentions & (a.urls | a.papers):
        return "cites"
    if overlap_coefficient(a.shingles, b.shingles) >= settings.near_copy_overlap:
        return "near_copy"
    return None


def quote_link(a: SourceFacts, b: SourceFacts, quotes: dict[str, list[str]]) -> str | None:
    """``near_copy`` when a quote one source was cited for is located in the other's text."""
    for first, second in ((a, b), (b, a)):
        document = second.document
        if document is None:
            continue
        for quote in quotes.get(first.source.id, []):
            found = locate(quote, document)
            if found is not None and found.matched_chars >= MIN_SHARED_QUOTE:
                return "near_copy"
    return None


class Linker:
    """Pairwise independence links over one brief's sources, cached per pair."""

    def __init__(self, facts: dict[str, SourceFacts], settings: Settings) -> None:
        self.facts = facts
        self.settings = settings
        self._static: dict[tuple[str, str], str | None] = {}
        self.links: dict[tuple[str, str], str] = {}

    def link(self, a: str, b: str, quotes: dict[str, list[str]]) -> str | None:
        key = (a, b) if a < b else (b, a)
        if key not in self._static:
            self._static[key] = static_link(self.facts[a], self.facts[b], self.settings)
        reason = self._static[key] or quote_link(self.facts[a], self.facts[b], quotes)
        if reason is not None:
            self.links.setdefault(key, reason)
        return reason

    def groups(self, members: Sequence[str], quotes: dict[str, list[str]]) -> list[list[str]]:
        """Independence groups of ``members`` (order kept: first member names the group)."""
        parent = {member: member for member in members}

        def root(item: str) -> str:
            while parent[item] != item:
                parent[item] = parent[parent[item]]
                item = parent[item]
            return item

        for a, b in combinations(members, 2):
            if root(a) != root(b) and self.link(a, b, quotes) is not None:
                parent[root(b)] = root(a)
        grouped: dict[str, list[str]] = {}
        for member in members:
            grouped.setdefault(root(member), []).append(member)
        return list(grouped.values())


# --- per-claim figures ----------------------------------------------------------------------


def counted_sources(claim: Claim) -> list[str]:
    """Sources whose evidence reached the claim's own class; failed citations never count."""
    wanted = {"Supported": "supported", "Partially Supported": "partially_supported"}.get(
        claim.support_class
    )
    passed = {item.source for item in claim.evidence if item.checks.outcome == wanted}
    ordered = [source for source in claim.supporting if source in passed]
    return ordered + sorted(passed - set(ordered))


def dissemination(independent: int, supporting: int, ciber_failures: int, penalty: float) -> float:
    base = 1 - independent / supporting if supporting else 0.0
    return round(min(1.0, base + penalty * ciber_failures), 4)


def confidence(
    independent: int,
    supporters: Sequence[SourceRow],
    dissemination_score: float,
    contested: bool,
    settings: Settings,
) -> Confidence:
    """The confidence tier (docs/contracts.md §6.4); contest and echo come before breadth."""
    if contested or (
        len(supporters) >= 2 and dissemination_score >= settings.dissemination_contested
    ):
        return "medium-contested"
    if independent >= 2:
        if all(source.tier in FULL_TEXT_TIERS for source in supporters):
            return "high"
        return "medium"  # snippet or summarizer text caps the tier
    if independent == 1 and any(source.source_type in PRIMARY_TYPES for source in supporters):
        return "medium"
    return "low"


def load_bearing(claims: Sequence[Claim]) -> list[Claim]:
    """The claims a brief rests on: the central ones, or every one when none is central (so
    leaving ``importance`` unset never exempts a claim from what central claims must meet)."""
    central = [claim for claim in claims if claim.importance == "central"]
    return central or list(claims)


def tau(claims: Sequence[Claim]) -> float:
    """Share of load-bearing claims with at least two independent voices (0 when none)."""
    bearing = load_bearing(claims)
    if not bearing:
        return 0.0
    return round(sum(c.independent_count >= 2 for c in bearing) / len(bearing), 4)


def awaiting_panel(claims: Sequence[Claim], depth: Depth) -> list[Claim]:
    """Full depth: the load-bearing emitted claims the skeptic panel has not upheld — no votes
    recorded, or too many abstentions (``unverified``). None of them may be ``high``, and any of
    them keeps the brief from READY (docs/contracts.md §6.4, §10.1)."""
    if depth != "full":
        return []
    emitted = [
        claim
        for claim in claims
        if claim.support_class == "Supported"
        and not (claim.votes is not None and claim.votes.outcome == "killed")
    ]
    return [
        claim
        for claim in load_bearing(emitted)
        if claim.votes is None or claim.votes.outcome != "survives"
    ]


def strip_reason(claim: Claim) -> str | None:
    """Why ``claim`` may not stay in the brief, or None if it stays."""
    if claim.votes is not None and claim.votes.outcome == "killed":
        return f"refuted by the skeptic panel ({claim.votes.tally})"
    if claim.support_class == "Uncertain":
        return "uncertain: only infrastructure failures (not evidence against the claim)"
    if claim.support_class == "Unsupported":
        reasons = sorted({v.reason for v in claim.violations}) or ["no passing citation"]
        return "unsupported: " + ", ".join(reasons)
    return None


# --- brief-level signals --------------------------------------------------------------------


def vendor_gaps(
    kept: Sequence[Claim],
    by_id: dict[str, SourceRow],
    facts: dict[str, SourceFacts],
    settings: Settings,
) -> list[str]:
    per_sq: dict[str, set[str]] = {}
    for claim in kept:
        for source_id in claim.supporting:
            for sq in {claim.sq, *by_id[source_id].sub_questions} - {None}:
                per_sq.setdefault(str(sq), set()).add(source_id)
    gaps = []
    for sq, members in sorted(per_sq.items()):
        owners: dict[str, int] = {}
        for source_id in members:
            owner = facts[source_id].owner or min(facts[source_id].domains, default=source_id)
            owners[owner] = owners.get(owner, 0) + 1
        for owner, count in sorted(owners.items()):
            if (
                count >= settings.vendor_min_sources
                and count / len(members) > settings.vendor_share
            ):
                gaps.append(f"{GAP_PREFIX}{sq}:{owner}")
    return gaps


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def worker_overlap(sources: Sequence[SourceRow], settings: Settings) -> list[dict[str, Any]]:
    """Pairs of sub-question workers whose fetched URL sets overlap above the setting."""
    fetched: dict[str, set[str]] = {}
    for source in sources:
        if source.content_hash is None:
            continue
        for sq in source.sub_questions:
            fetched.setdefault(sq, set()).update(source_urls(source))
    pairs = []
    for a, b in combinations(sorted(fetched), 2):
        value = jaccard(fetched[a], fetched[b])
        if value > settings.worker_jaccard:
            pairs.append({"a": a, "b": b, "jaccard": round(value, 4)})
    return pairs


# --- the command ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TriangulationReport:
    tau: float
    claims: int
    stripped: list[str]
    independent: dict[str, int]
    coverage_gaps: list[str]
    worker_overlap: list[dict[str, Any]]
    links: list[dict[str, str]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "triangulation_score": self.tau,
            "claims": self.claims,
            "stripped": self.stripped,
            "independent_count": self.independent,
            "coverage_gaps": self.coverage_gaps,
            "worker_overlap": self.worker_overlap,
            "links": self.links,
        }


def _ciber_failures(trace: TraceFile) -> dict[str, int]:
    record = trace.phases.get("ciber", {}).get("failures_per_claim")
    if not isinstance(record, dict):
        return {}
    return {str(k): int(v) for k, v in record.items() if isinstance(v, int) and v > 0}


def _contested_ids(document: ClaimsFile) -> set[str]:
    return {cid for entry in document.unresolved_contradictions for cid in entry.ids}


def source_facts(brief: Brief, sources: Sequence[SourceRow]) -> dict[str, SourceFacts]:
    facts = {}
    for source in sources:
        text = None
        if source.content_hash is not None and brief.corpus_path(source.content_hash).is_file():
            text = brief.read_corpus(source.content_hash)
        facts[source.id] = SourceFacts(source, text)
    return facts


def triangulate_claims(
    document: ClaimsFile,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    facts: dict[str, SourceFacts],
    trace: TraceFile,
    settings: Settings,
) -> tuple[ClaimsFile, TriangulationReport]:
    """Pure: the triangulated claims.json and what was decided, from already-read artifacts."""
    by_id = {source.id: source for source in sources}
    untraced = [claim.id for claim in document.claims if claim.verify_passed is None]
    if untraced:
        raise InputError(
            f"claims {', '.join(untraced[:5])} were never traced; run deep-research trace first"
        )
    linker = Linker(facts, settings)
    ciber = _ciber_failures(trace)
    contested_ids = _contested_ids(document)
    kept: list[Claim] = []
    stripped = list(document.stripped)
    for claim in document.claims:
        reason = strip_reason(claim)
        if reason is not None:
            stripped.append(
                StrippedClaim(
                    id=claim.id, claim=claim.claim, reason=reason, evidence=claim.evidence
                )
            )
            continue
        members = [source for source in counted_sources(claim) if source in by_id]
        quotes: dict[str, list[str]] = {}
        for item in claim.evidence:
            if item.source in members and len(item.quote) >= MIN_SHARED_QUOTE:
                quotes.setdefault(item.source, []).append(item.quote)
        groups = linker.groups(members, quotes)
        failures = min(ciber.get(claim.id, 0), settings.ciber_max_failures_per_claim)
        score = dissemination(len(groups), len(members), failures, settings.ciber_penalty)
        contested = bool(claim.contests or claim.contradicts) or claim.id in contested_ids
        tier = confidence(
            len(groups), [by_id[m] for m in members], score, contested or failures > 0, settings
        )
        if tier == "high" and claim.support_class != "Supported":
            tier = "medium"  # a claim whose figures are not all on the page is never high
        kept.append(
            claim.model_copy(
                update={
                    "supporting": members,
                    "independent_count": len(groups),
                    "independence_groups": groups,
                    "dissemination_score": score,
                    "confidence": tier,
                }
            )
        )
    unheard = {claim.id for claim in awaiting_panel(kept, document.depth)}
    kept = [
        claim.model_copy(update={"confidence": "medium"})
        if claim.id in unheard and claim.confidence == "high"
        else claim
        for claim in kept
    ]
    emitted = [claim for claim in kept if claim.support_class == "Supported"]
    gaps = [gap for gap in document.coverage_gaps if not gap.startswith(GAP_PREFIX)]
    new_gaps = vendor_gaps(kept, by_id, facts, settings)
    score_tau = tau(emitted)
    cited = {source for claim in emitted for source in claim.supporting}
    updated = document.model_copy(
        update={
            "claims": kept,
            "stripped": stripped,
            "triangulation_score": score_tau,
            "coverage_gaps": gaps + [gap for gap in new_gaps if gap not in gaps],
            "source_count": len(cited),
            "freshness": evidence_freshness(cited, sources, log),
        }
    )
    report = TriangulationReport(
        tau=score_tau,
        claims=len(kept),
        stripped=[entry.id for entry in stripped],
        independent={claim.id: claim.independent_count for claim in kept},
        coverage_gaps=new_gaps,
        worker_overlap=worker_overlap(sources, settings),
        links=[{"a": a, "b": b, "reason": why} for (a, b), why in sorted(linker.links.items())],
    )
    return updated, report


@writes_brief
def run_triangulate(root: Path, settings: Settings) -> TriangulationReport:
    brief = open_brief(root)
    require_run_settings(brief.root, settings)
    sources = brief.load_sources()
    document = brief.load_claims()
    trace = load_trace_or_empty(brief)
    log = brief.load_fetch_log()
    updated, report = triangulate_claims(
        document, sources, log, source_facts(brief, sources), trace, settings
    )
    entry = report.as_dict()
    save(brief, updated, record_phase(trace, "triangulate", entry, settings))
    return report


def independence_groups(
    brief: Brief, source_ids: Iterable[str], settings: Settings
) -> list[list[str]]:
    """Independence groups of any set of sources of ``brief`` (no claim quotes considered)."""
    sources = brief.load_sources()
    members = [sid for sid in source_ids if sid in {s.id for s in sources}]
    return Linker(source_facts(brief, sources), settings).groups(members, {})
