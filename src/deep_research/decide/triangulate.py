"""Triangulation: how many independent voices stand behind each claim (docs/contracts.md §6).

Only sources whose evidence passed the trace gate for a claim are counted for it. Two of them are
one voice when any of these holds (checked pairwise, then closed transitively):

* ``same_domain`` — they share a registrable domain (bundled public-suffix list, no network);
* ``same_owner`` — they declare the same owner;
* ``near_copy`` — their retained texts share most word 5-grams (syndication; counted on a
  bounded sketch, see :class:`Sketch`), or the quote one of them was cited for is located in
  the other's text;
* ``cites`` — one lists the other in ``cites``, or the other's URL (or paper id) is in its text;
* ``same_paper`` — the same arXiv id or DOI, from the URL or, for academic sources, the text.

From the groups follow ``independent_count``, τ, ``dissemination_score`` and ``confidence``. At
full depth a load-bearing claim is ``high`` only once the skeptic panel has upheld it: breadth
of sources says nothing about whether the quotes, read in context, say what the claim says. The
command also moves claims that may not be emitted (unsupported, uncertain, refuted by the
skeptic panel, or judged by it not to answer its sub-question) to ``stripped``, drops citations
that failed from kept claims, flags vendor monocultures and logs URL-set overlap between
sub-question workers.
"""

from __future__ import annotations

import hashlib
import re
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import combinations
from pathlib import Path

from deep_research.brief.layout import Brief
from deep_research.brief.record import (
    load_trace_or_empty,
    open_brief,
    record_phase,
    save,
    writes_brief,
)
from deep_research.brief.trace_phases import CiberPhase, SourceLink, TriangulatePhase, WorkerOverlap
from deep_research.decide import relevance_votes
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
#: A DOI starts a word: ``10.`` not preceded by a word character. The pattern has no leading
#: ``\b`` so the search can skip ahead to each ``10.`` (:func:`dois` checks the boundary).
_DOI = re.compile(r"10\.\d{4,9}/[^\s\"<>]+")
_WORD_CHAR = re.compile(r"\w")
_VERSION = re.compile(r"v\d+$")


def _paper_ids(text: str, *, in_url: bool) -> set[str]:
    ids = set()
    if in_url:
        ids |= {"arxiv:" + _VERSION.sub("", m) for m in _ARXIV_URL.findall(text)}
    else:
        # "arXiv:" ends in "v:" in every case the pattern matches; most texts have none.
        if "v:" in text or "V:" in text:
            ids |= {"arxiv:" + m for m in _ARXIV_TEXT.findall(text)}
    ids |= {"doi:" + m.rstrip(".,;:)").lower() for m in dois(text)}
    return ids


def dois(text: str) -> list[str]:
    """The DOIs in ``text`` as a search for the pattern after a word boundary finds them, left
    to right without overlap, but searching only from each ``10.`` (far faster on long text)."""
    found = []
    position = 0
    while (match := _DOI.search(text, position)) is not None:
        start = match.start()
        if start == 0 or _WORD_CHAR.match(text, start - 1) is None:
            found.append(match.group())
            position = match.end()
        else:
            position = start + 1  # a DOI may still start inside this run
    return found


#: Word 5-gram hashes kept per source to judge near-copies: the smallest ones (a bottom-k sample,
#: the same 5-grams in every text); a text with no more than this many is kept whole.
SKETCH_SIZE = 1024


@dataclass(frozen=True)
class Sketch:
    """A bounded sample of a text's word 5-grams: the :data:`SKETCH_SIZE` smallest of their
    hashes (sorted), and how many distinct 5-grams the text has."""

    hashes: array[int]
    size: int

    @property
    def whole(self) -> bool:
        return len(self.hashes) == self.size


#: Words whose numbers a :class:`Corpus` keeps between texts (a vocabulary, not the corpus).
WORD_NUMBERS = 200_000


def shingles(text: str, numbers: dict[str, int] | None = None) -> set[int]:
    """The hashes of ``text``'s word 5-grams (words case-folded). A word's number comes from a
    digest, and a tuple of numbers hashes the same in every process, so a sketch is
    reproducible. ``numbers``: words already numbered (filled in as words are met)."""
    words = _WORD.findall(text)
    known = numbers if numbers is not None else {}
    for word in set(words).difference(known):
        known[word] = _word_number(word)
    ids = list(map(known.__getitem__, words))
    return set(map(hash, zip(*(ids[i:] for i in range(SHINGLE)), strict=False)))


def _word_number(word: str) -> int:
    digest = hashlib.blake2b(word.casefold().encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def sketch_of(found: set[int]) -> Sketch:
    return Sketch(array("q", _smallest(found, SKETCH_SIZE)), len(found))


def _smallest(found: set[int], count: int) -> list[int]:
    """The ``count`` smallest of ``found``, sorted. Tuple hashes spread evenly over 64 bits, so
    on a large set those below the value expected to hold twice ``count`` are sorted instead
    of the whole set (and the whole set when, against the odds, too few are)."""
    if len(found) > 4 * count:
        bound = -(2**63) + (2**64 * 2 * count) // len(found)
        low = [value for value in found if value < bound]
        if len(low) >= count:
            return sorted(low)[:count]
    return sorted(found)[:count]


def shared_share(earlier: Sketch, later: set[int]) -> float:
    """Share of the smaller text's 5-grams the other text has (the overlap coefficient), from
    one text's sketch and the other's whole set. Exact when the sketch is whole; else the part
    of the sketched text found in the other is estimated from its sample (each sampled 5-gram
    looked up in the whole set), which a bottom-k sample of hashes makes uniform."""
    if not earlier.hashes or not later:
        return 0.0
    found = len(later.intersection(earlier.hashes))
    smaller = min(earlier.size, len(later))
    if earlier.whole:
        return found / smaller
    return min(1.0, found / len(earlier.hashes) * earlier.size / smaller)


@dataclass
class SourceFacts:
    """What independence needs to know about one source, computed once from its row and its
    retained text, which is not kept."""

    source: SourceRow
    has_text: bool
    papers: set[str]  # paper ids this source *is* (not ones it merely mentions)
    mentions: set[str]  # canonical URLs and paper ids this source points to
    sketch: Sketch

    @classmethod
    def of(cls, source: SourceRow, text: str | None, found: set[int]) -> SourceFacts:
        """``found``: the text's 5-gram hashes (:func:`shingles`)."""
        urls = source_urls(source)
        papers = set().union(*(_paper_ids(url, in_url=True) for url in urls))
        if source.source_type == "academic" and text:
            papers |= _paper_ids(text[:4000], in_url=False)
        mentions = {url for raw in source.cites if (url := canonical_or_none(raw)) is not None}
        if text:
            mentions |= {
                url for raw in _URL_IN_TEXT.findall(text) if (url := canonical_or_none(raw))
            }
            mentions |= _paper_ids(text, in_url=False)
        return cls(source, text is not None, papers, mentions, sketch_of(found))

    @cached_property
    def urls(self) -> set[str]:
        return source_urls(self.source)

    @cached_property
    def domains(self) -> set[str]:
        return domains_of(self.source)

    @cached_property
    def owner(self) -> str | None:
        return owner_of(self.source)


def domains_of(source: SourceRow) -> set[str]:
    return {d for url in source_urls(source) if (d := registrable_domain(url)) is not None}


def owner_of(source: SourceRow) -> str | None:
    declared = source.owner
    return declared.strip().casefold() if declared and declared.strip() else None


class Corpus:
    """A brief's sources and their retained texts, read one at a time; each source's facts are
    kept from the first read of its text, the text itself never."""

    def __init__(self, brief: Brief | None, sources: Sequence[SourceRow]) -> None:
        self.brief = brief
        self.rows = {source.id: source for source in sources}
        self.order = {source.id: number for number, source in enumerate(sources)}
        self._facts: dict[str, SourceFacts] = {}
        self._numbers: dict[str, int] = {}

    def _path(self, source_id: str) -> Path | None:
        source = self.rows[source_id]
        if self.brief is None or source.content_hash is None:
            return None
        path = self.brief.corpus_path(source.content_hash)
        return path if path.is_file() else None

    def has_text(self, source_id: str) -> bool:
        return self._path(source_id) is not None

    def size(self, source_id: str) -> int:
        path = self._path(source_id)
        return path.stat().st_size if path is not None else 0

    def read(self, source_id: str) -> tuple[str | None, set[int]]:
        """The source's retained text (None without one) and its 5-gram hashes; its facts are
        recorded on the way."""
        source = self.rows[source_id]
        text = None
        if self._path(source_id) is not None and source.content_hash is not None:
            assert self.brief is not None
            text = self.brief.read_corpus(source.content_hash)
        if len(self._numbers) > WORD_NUMBERS:
            self._numbers.clear()
        found = shingles(text, self._numbers) if text else set()
        if source_id not in self._facts:
            self._facts[source_id] = SourceFacts.of(source, text, found)
        return text, found

    def facts(self, source_id: str) -> SourceFacts:
        if source_id not in self._facts:
            self.read(source_id)
        return self._facts[source_id]


def metadata_link(a: SourceFacts, b: SourceFacts) -> str | None:
    """The claim-independent links that need no text comparison, cheapest first."""
    if a.domains & b.domains:
        return "same_domain"
    if a.owner is not None and a.owner == b.owner:
        return "same_owner"
    if a.papers & b.papers:
        return "same_paper"
    if a.mentions & (b.urls | b.papers) or b.mentions & (a.urls | a.papers):
        return "cites"
    return None


_Pair = tuple[str, str]


class Linker:
    """Pairwise independence links over one brief's sources.

    Why two sources are one voice regardless of the claim (:func:`metadata_link`, then the
    near-copy share of their texts) is decided once per pair; a quote cited from one being
    located in the other (``near_copy`` too) once per (text, quote). :meth:`prepare` decides
    both for every pair a set of claims will ask about, reading each text that is compared or
    searched once, in source order, so the corpus is never held.
    """

    def __init__(self, corpus: Corpus, settings: Settings) -> None:
        self.corpus = corpus
        self.settings = settings
        self._static: dict[_Pair, str | None] = {}
        self._located: dict[tuple[str, str], bool] = {}  # (source id, quote) → found there
        self.links: dict[_Pair, str] = {}

    def prepare(self, asked: Iterable[tuple[Sequence[str], dict[str, list[str]]]]) -> None:
        """Decide what :meth:`link` will need for each (members, quotes) in ``asked``.

        The texts involved are read once each, smallest file first: the near-copy share of a
        pair is measured when the second of its two texts is read, from the first one's sketch
        (the smaller text's, whole when it is short); every quote a co-cited source was cited
        for is located in the text while it is at hand (whether a pair's metadata already links
        it is known only once both texts were read).
        """
        open_pairs: dict[_Pair, None] = {}
        quotes: dict[str, set[str]] = {}  # source id → quotes to locate in its text
        for members, cited in asked:
            for a, b in combinations(members, 2):
                key = (a, b) if a < b else (b, a)
                if key not in self._static:
                    open_pairs[key] = None
                elif self._static[key] is not None:
                    continue  # linked whatever the quotes say
                for first, second in ((a, b), (b, a)):
                    if self.corpus.has_text(second):
                        wanted = quotes.setdefault(second, set())
                        wanted.update(
                            q for q in cited.get(first, []) if (second, q) not in self._located
                        )
        partners: dict[str, list[str]] = {}
        for a, b in open_pairs:
            partners.setdefault(a, []).append(b)
            partners.setdefault(b, []).append(a)
        reading = {*partners, *(source for source, wanted in quotes.items() if wanted)}
        shares: dict[_Pair, float] = {}
        done: set[str] = set()
        for source_id in sorted(reading, key=lambda s: (self.corpus.size(s), self.corpus.order[s])):
            text, found = self.corpus.read(source_id)
            for partner in partners.get(source_id, []):
                if partner in done:
                    key = (partner, source_id) if partner < source_id else (source_id, partner)
                    shares[key] = shared_share(self.corpus.facts(partner).sketch, found)
            if text is not None and quotes.get(source_id):
                document = Document(text, self.corpus.rows[source_id].content_hash)
                for quote in sorted(quotes[source_id]):
                    located = locate(quote, document)
                    self._located[(source_id, quote)] = (
                        located is not None and located.matched_chars >= MIN_SHARED_QUOTE
                    )
            done.add(source_id)
        for a, b in open_pairs:
            near = shares.get((a, b), 0.0) >= self.settings.near_copy_overlap
            reason = metadata_link(self.corpus.facts(a), self.corpus.facts(b))
            self._static[(a, b)] = reason or ("near_copy" if near else None)

    def link(self, a: str, b: str, quotes: dict[str, list[str]]) -> str | None:
        key = (a, b) if a < b else (b, a)
        if not self._decided(key, quotes):
            self.prepare([([a, b], quotes)])
        reason = self._static[key] or self._quote_link(a, b, quotes)
        if reason is not None:
            self.links.setdefault(key, reason)
        return reason

    def _decided(self, key: _Pair, quotes: dict[str, list[str]]) -> bool:
        """Whether :meth:`prepare` already decided all :meth:`link` needs for ``key``."""
        if key not in self._static:
            return False
        a, b = key
        return self._static[key] is not None or all(
            (second, q) in self._located
            for first, second in ((a, b), (b, a))
            if self.corpus.has_text(second)
            for q in quotes.get(first, [])
        )

    def _quote_link(self, a: str, b: str, quotes: dict[str, list[str]]) -> str | None:
        """``near_copy`` when a quote one source was cited for is located in the other's text."""
        for first, second in ((a, b), (b, a)):
            if any(self._located.get((second, q), False) for q in quotes.get(first, [])):
                return "near_copy"
        return None

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
    off_question = relevance_votes.strip_reason(claim)
    if off_question is not None:
        return off_question
    if claim.support_class == "Uncertain":
        return "uncertain: only infrastructure failures (not evidence against the claim)"
    if claim.support_class == "Unsupported":
        reasons = sorted({v.reason for v in claim.violations}) or ["no passing citation"]
        return "unsupported: " + ", ".join(reasons)
    return None


# --- brief-level signals --------------------------------------------------------------------


def vendor_gaps(
    kept: Sequence[Claim], by_id: dict[str, SourceRow], settings: Settings
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
            row = by_id[source_id]
            owner = owner_of(row) or min(domains_of(row), default=source_id)
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


def worker_overlap(sources: Sequence[SourceRow], settings: Settings) -> list[WorkerOverlap]:
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
            pairs.append(WorkerOverlap(a=a, b=b, jaccard=round(value, 4)))
    return pairs


# --- the command ----------------------------------------------------------------------------


def _ciber_failures(trace: TraceFile) -> dict[str, int]:
    ciber = trace.phase("ciber", CiberPhase)
    counted = (ciber.failures_per_claim if ciber is not None else None) or {}
    return {claim: failures for claim, failures in counted.items() if failures > 0}


def _contested_ids(document: ClaimsFile) -> set[str]:
    return {cid for entry in document.unresolved_contradictions for cid in entry.ids}


def triangulate_claims(
    document: ClaimsFile,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    corpus: Corpus,
    trace: TraceFile,
    settings: Settings,
) -> tuple[ClaimsFile, TriangulatePhase]:
    """The triangulated claims.json and what was decided, from already-read artifacts and the
    retained texts (``corpus``, read one at a time; nothing is written)."""
    by_id = {source.id: source for source in sources}
    untraced = [claim.id for claim in document.claims if claim.verify_passed is None]
    if untraced:
        raise InputError(
            f"claims {', '.join(untraced[:5])} were never traced; run deep-research trace first"
        )
    linker = Linker(corpus, settings)
    ciber = _ciber_failures(trace)
    contested_ids = _contested_ids(document)
    kept: list[Claim] = []
    stripped = list(document.stripped)
    asked: list[tuple[Claim, list[str], dict[str, list[str]]]] = []
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
        asked.append((claim, members, quotes))
    # Every text comparison the claims need, in one pass over the corpus.
    linker.prepare((members, quotes) for _, members, quotes in asked)
    for claim, members, quotes in asked:
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
    new_gaps = vendor_gaps(kept, by_id, settings)
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
    report = TriangulatePhase(
        triangulation_score=score_tau,
        claims=len(kept),
        stripped=[entry.id for entry in stripped],
        independent_count={claim.id: claim.independent_count for claim in kept},
        coverage_gaps=new_gaps,
        worker_overlap=worker_overlap(sources, settings),
        links=[SourceLink(a=a, b=b, reason=why) for (a, b), why in sorted(linker.links.items())],
    )
    return updated, report


@writes_brief
def run_triangulate(root: Path, settings: Settings) -> TriangulatePhase:
    brief = open_brief(root)
    require_run_settings(brief.root, settings)
    sources = brief.load_sources()
    document = brief.load_claims()
    trace = load_trace_or_empty(brief)
    log = brief.load_fetch_log()
    updated, report = triangulate_claims(
        document, sources, log, Corpus(brief, sources), trace, settings
    )
    save(brief, updated, record_phase(trace, "triangulate", report, settings))
    return report


def independence_groups(
    brief: Brief, source_ids: Iterable[str], settings: Settings
) -> list[list[str]]:
    """Independence groups of any set of sources of ``brief`` (no claim quotes considered)."""
    sources = brief.load_sources()
    members = [sid for sid in source_ids if sid in {s.id for s in sources}]
    return Linker(Corpus(brief, sources), settings).groups(members, {})
