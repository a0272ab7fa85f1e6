"""Triangulation on real brief directories: independence groups, τ, dissemination, confidence."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from briefs import PageSpec, page, read_claims, write_brief
from deep_research.brief.layout import Brief
from deep_research.decide.triangulate import (
    SKETCH_SIZE,
    Corpus,
    _smallest,
    confidence,
    dissemination,
    dois,
    run_triangulate,
    shared_share,
    shingles,
    sketch_of,
    tau,
    triangulate_claims,
)
from deep_research.decide.votes import run_votes
from deep_research.errors import InputError
from deep_research.gates.trace import TraceOptions, run_trace
from deep_research.models import ClaimsFile, SourceRow, TraceFile
from deep_research.settings import Settings

SETTINGS = Settings()
SALES_CLAIM = "Heat pump sales were about 2.9 million units in 2023."
AGENCY_QUOTE = (
    "Sales of heat pumps across the twelve member states rose to 2.9 million units in 2023, "
    "up from 2.4 million units in 2022."
)
TRADE_QUOTE = (
    "member companies shipped just under 2.9 million units in 2023, compared with 2.4 million "
    "the year before, a rise of about 21 percent."
)
AGENCY = "https://www.northern-energy.example/reports/heat-pumps-2024"
TRADE = "https://trade-heating.example/news/installers-struggle"


def _agency(**kw: Any) -> PageSpec:
    return PageSpec(
        AGENCY,
        page("heat-pumps-agency.txt"),
        [("Sales", AGENCY_QUOTE)],
        source_type="government",
        **kw,
    )


def _trade(url: str = TRADE, text: str | None = None, **kw: Any) -> PageSpec:
    return PageSpec(url, text or page("heat-pumps-trade.txt"), [("Shipments", TRADE_QUOTE)], **kw)


def _own_page(sentence: str, filler: str) -> str:
    # A page in its own words around one sentence, so only the tested link can join it.
    return f"{filler}\n\n{sentence}\n\nThe figures were published this spring."


BLOG_SENTENCE = (
    "A regional blogger noted that heat pump sales hit 2.9 million units in 2023 across the bloc."
)


def _triangulate(
    root: Path,
    pages: list[PageSpec],
    claims: list[dict[str, Any]],
    *,
    votes: dict[str, list[object]] | None = None,
    **document: Any,
) -> ClaimsFile:
    """Trace, record the skeptic panel's ``votes`` (if any), triangulate."""
    write_brief(root, pages, claims, document=document or None)
    run_trace(TraceOptions(brief=root))
    if votes is not None:
        path = root.parent / "votes.json"
        path.write_text(json.dumps(votes))
        run_votes(root, path, SETTINGS)
    run_triangulate(root, SETTINGS)
    return ClaimsFile.model_validate(read_claims(root))


UPHOLD = {"refuted": False, "evidence": "the quote says it", "confidence": 0.8}


def _sales(*sources: str) -> dict[str, Any]:
    return {"claim": SALES_CLAIM, "supporting": list(sources), "importance": "central"}


# --- independence: each dependent pair is one voice, two independent sources are two ----------

SYNDICATED = "Regional Daily — wire copy\n\n" + page("heat-pumps-trade.txt")


TRADE_CLAIM = "Heat pump makers shipped just under 2.9 million units in 2023."
OTHER_SENTENCE = "Heat pump sales reached 2.9 million units in 2023, a spring report says."


def _dependent_cases() -> dict[str, tuple[list[PageSpec], str, str]]:
    """case → (the two pages, the claim both support, the link expected between them)."""
    subdomain_text = page("heat-pumps-trade.txt").replace("Installers struggle", "Installers wait")
    return {
        "syndicated copy on another domain": (
            [_trade(), _trade("https://regional-daily.example/wire/hp", SYNDICATED)],
            TRADE_CLAIM,
            "near_copy",
        ),
        "subdomains of one owner": (
            [_trade(), _trade("https://news.trade-heating.example/hp-2023", subdomain_text)],
            TRADE_CLAIM,
            "same_domain",
        ),
        "a page that cites the other": (
            [
                _agency(),
                PageSpec(
                    "https://heatblog.example/posts/sales",
                    _own_page(BLOG_SENTENCE, f"Source: {AGENCY} (agency review)."),
                    [("Sales", BLOG_SENTENCE)],
                    source_type="blog",
                ),
            ],
            SALES_CLAIM,
            "cites",
        ),
        "declared common owner": (
            [
                PageSpec(
                    "https://installer-news.example/hp",
                    _own_page(BLOG_SENTENCE, "Installer News, a Contoso Media title."),
                    [("Sales", BLOG_SENTENCE)],
                    owner="Contoso Media",
                ),
                PageSpec(
                    "https://heating-today.example/hp",
                    _own_page(OTHER_SENTENCE, "Heating Today, part of Contoso Media."),
                    [("Sales", OTHER_SENTENCE)],
                    owner="contoso media",
                ),
            ],
            SALES_CLAIM,
            "same_owner",
        ),
    }


@pytest.mark.parametrize("case", list(_dependent_cases()))
def test_dependent_sources_count_as_one(tmp_path: Path, case: str) -> None:
    pages, claim_text, reason = _dependent_cases()[case]
    claim_row = {"claim": claim_text, "supporting": ["S1", "S2"], "importance": "central"}
    document = _triangulate(tmp_path, pages, [claim_row])
    claim = document.claims[0]
    assert claim.support_class == "Supported"
    assert claim.supporting == ["S1", "S2"]
    assert claim.independent_count == 1
    assert claim.independence_groups == [["S1", "S2"]]
    assert claim.dissemination_score == 0.5
    assert document.triangulation_score == 0.0
    trace = json.loads((tmp_path / "trace.json").read_text())
    assert trace["phases"]["triangulate"]["links"] == [{"a": "S1", "b": "S2", "reason": reason}]


def test_two_independent_sources_count_as_two(tmp_path: Path) -> None:
    other = PageSpec(
        "https://heating-today.example/hp",
        _own_page(OTHER_SENTENCE, "Heating Today, spring market notes."),
        [("Sales", OTHER_SENTENCE)],
    )
    document = _triangulate(
        tmp_path, [_agency(), other], [_sales("S1", "S2")], votes={"C1": [UPHOLD, UPHOLD]}
    )
    claim = document.claims[0]
    assert claim.independent_count == 2 and claim.independence_groups == [["S1"], ["S2"]]
    assert claim.dissemination_score == 0.0
    assert claim.confidence == "high"
    assert document.triangulation_score == 1.0


def _two_voices() -> list[PageSpec]:
    other = PageSpec(
        "https://heating-today.example/hp",
        _own_page(OTHER_SENTENCE, "Heating Today, spring market notes."),
        [("Sales", OTHER_SENTENCE)],
    )
    return [_agency(), other]


@pytest.mark.parametrize(
    ("votes", "depth", "expected"),
    [
        ({"C1": [UPHOLD, UPHOLD]}, "full", "high"),
        (None, "full", "medium"),  # the panel never sat
        ({"C1": [UPHOLD, None, {"error": "timeout"}]}, "full", "medium"),  # unverified
        (None, "quick", "high"),  # the rule is a full-depth one
    ],
    ids=["upheld", "no-panel", "unverified", "quick"],
)
def test_a_central_claim_is_high_only_once_the_panel_upholds_it(
    tmp_path: Path, votes: dict[str, list[object]] | None, depth: str, expected: str
) -> None:
    document = _triangulate(tmp_path, _two_voices(), [_sales("S1", "S2")], votes=votes, depth=depth)
    assert document.claims[0].independent_count == 2
    assert document.claims[0].confidence == expected


def test_without_central_claims_every_claim_needs_the_panel(tmp_path: Path) -> None:
    # Leaving importance unset must not exempt a claim from the panel.
    supporting = {"claim": SALES_CLAIM, "supporting": ["S1", "S2"], "importance": "supporting"}
    assert _triangulate(tmp_path / "a", _two_voices(), [supporting]).claims[0].confidence == (
        "medium"
    )
    upheld = _triangulate(
        tmp_path / "b", _two_voices(), [supporting], votes={"C1": [UPHOLD, UPHOLD]}
    )
    assert upheld.claims[0].confidence == "high"


def test_same_paper_in_two_places_is_one_source(tmp_path: Path) -> None:
    sentence = "We find that heat pump sales reached 2.9 million units in 2023 in the panel."
    preprint = PageSpec(
        "https://arxiv.org/pdf/2401.01234v2",
        _own_page(sentence, "Preprint. Heat pump diffusion in twelve member states."),
        [("Sales", sentence)],
        source_type="academic",
    )
    journal = PageSpec(
        "https://journal-of-energy.example/articles/hp-diffusion",
        _own_page(
            sentence.replace("We find", "The study finds"),
            "Journal of Energy Markets. Also available as arXiv:2401.01234.",
        ),
        [("Sales", sentence.replace("We find", "The study finds"))],
        source_type="academic",
    )
    document = _triangulate(tmp_path, [preprint, journal], [_sales("S1", "S2")])
    assert document.claims[0].independent_count == 1


def test_news_items_mentioning_one_paper_stay_independent(tmp_path: Path) -> None:
    # Mentioning a DOI is a citation of that paper, not being it: two outlets reporting on the
    # same study are joined only if the study itself is among the supporters.
    mention = "Researchers (doi:10.5555/hp.2024.7) say heat pump sales hit 2.9 million in 2023."
    first = PageSpec(
        "https://daily-one.example/a",
        _own_page(mention, "Daily One science desk."),
        [("Sales", mention)],
    )
    other = (
        "A new study, doi:10.5555/hp.2024.7, puts 2023 heat pump sales at about 2.9 million units."
    )
    second = PageSpec(
        "https://daily-two.example/b",
        _own_page(other, "Daily Two, energy section, spring edition."),
        [("Sales", other)],
    )
    document = _triangulate(tmp_path, [first, second], [_sales("S1", "S2")])
    assert document.claims[0].independent_count == 2


def test_only_sources_that_passed_the_trace_gate_count(tmp_path: Path) -> None:
    fabricated = PageSpec(
        "https://fabricated.example/x", None, [("Sales", AGENCY_QUOTE)], fetch="never"
    )
    wrong_quote = PageSpec(
        "https://third.example/y",
        page("city-budget.txt"),
        [("Budget", "approve a budget of $1.82 billion for the 2025 fiscal")],
    )
    document = _triangulate(
        tmp_path, [_agency(), fabricated, wrong_quote], [_sales("S1", "S2", "S3")]
    )
    claim = document.claims[0]
    assert claim.supporting == ["S1"] and claim.independent_count == 1
    assert claim.confidence == "medium"  # one government source
    assert document.source_count == 1


def test_unsupported_claims_are_stripped_with_reason(tmp_path: Path) -> None:
    fabricated = PageSpec(
        "https://fabricated.example/x", None, [("Sales", AGENCY_QUOTE)], fetch="never"
    )
    failed = PageSpec("https://down.example/z", None, [("Sales", AGENCY_QUOTE)], fetch="error")
    document = _triangulate(
        tmp_path,
        [_agency(), fabricated, failed],
        [_sales("S1"), _sales("S2"), _sales("S3")],
    )
    assert [claim.id for claim in document.claims] == ["C1"]
    reasons = {entry.id: entry.reason for entry in document.stripped}
    assert reasons["C2"] == "unsupported: not_fetched"
    assert reasons["C3"].startswith("uncertain:")


def test_triangulate_refuses_an_untraced_brief(tmp_path: Path) -> None:
    write_brief(tmp_path, [_agency()], [_sales("S1")])
    before = (tmp_path / "claims.json").read_bytes()
    with pytest.raises(InputError, match="run deep-research trace first"):
        run_triangulate(tmp_path, SETTINGS)
    assert (tmp_path / "claims.json").read_bytes() == before


def test_rerun_is_idempotent(tmp_path: Path) -> None:
    _triangulate(tmp_path, [_agency(), _trade()], [_sales("S1", "S2"), _sales("S9")])
    first = (tmp_path / "claims.json").read_text()
    run_triangulate(tmp_path, SETTINGS)
    assert (tmp_path / "claims.json").read_text() == first


# --- τ, dissemination, confidence -----------------------------------------------------------


def test_tau_counts_central_claims_only_when_marked(tmp_path: Path) -> None:
    document = _triangulate(
        tmp_path,
        [_agency(), _numbered(1, "outlet.example", "sq1")],
        [_sales("S1", "S2"), {"claim": SALES_CLAIM, "supporting": ["S1"]}],
    )
    assert document.triangulation_score == 1.0  # the single-source claim is not central
    unmarked = [c.model_copy(update={"importance": "supporting"}) for c in document.claims]
    assert tau(unmarked) == 0.5
    assert tau([]) == 0.0


@pytest.mark.parametrize(
    ("independent", "supporting", "failures", "expected"),
    [
        (2, 2, 0, 0.0),
        (1, 2, 0, 0.5),
        (1, 4, 0, 0.75),
        (2, 2, 1, 0.25),
        (1, 2, 3, 1.0),
        (0, 0, 0, 0.0),
    ],
)
def test_dissemination(independent: int, supporting: int, failures: int, expected: float) -> None:
    assert dissemination(independent, supporting, failures, 0.25) == expected


def _row(number: int, tier: str = "raw", kind: str = "news") -> SourceRow:
    return SourceRow.model_validate(
        {
            "id": f"S{number}",
            "url": f"https://s{number}.example/",
            "tier": tier,
            "source_type": kind,
        }
    )


@pytest.mark.parametrize(
    ("independent", "rows", "score", "contested", "expected"),
    [
        (2, [_row(1), _row(2, "degraded")], 0.0, False, "high"),
        (2, [_row(1), _row(2)], 0.0, True, "medium-contested"),  # a contest forbids high
        (2, [_row(1), _row(2, "snippet")], 0.0, False, "medium"),  # snippet caps at medium
        (2, [_row(1, "snippet"), _row(2, "snippet")], 0.0, False, "medium"),
        (1, [_row(1, kind="primary")], 0.0, False, "medium"),
        (1, [_row(1, kind="government")], 0.0, False, "medium"),
        (1, [_row(1, kind="blog")], 0.0, False, "low"),
        (1, [_row(1, kind="secondary")], 0.0, False, "low"),
        (2, [_row(n) for n in range(1, 8)], 0.71, False, "medium-contested"),  # echo chamber
        (0, [], 0.0, False, "low"),
    ],
)
def test_confidence_tiers(
    independent: int, rows: list[SourceRow], score: float, contested: bool, expected: str
) -> None:
    assert confidence(independent, rows, score, contested, SETTINGS) == expected


# --- brief-level signals --------------------------------------------------------------------


WORDINGS = [
    "Retail data show heat pump sales of 2.9 million units during 2023 across the region.",
    "Industry analysts counted heat pump sales at 2.9 million units in 2023, a record year.",
    "According to customs records, heat pump sales totalled 2.9 million units in 2023.",
    "Our tracker shows heat pump sales stood at 2.9 million units for 2023 as a whole.",
]


def _numbered(n: int, owner_host: str, sq: str) -> PageSpec:
    # Each page in its own words: only the owner (or nothing) may join them.
    sentence = WORDINGS[n - 1]
    return PageSpec(
        f"https://{owner_host}/wave-{n}",
        _own_page(sentence, f"Notes {n}."),
        [("Sales", sentence)],
        sub_questions=[sq],
    )


def test_vendor_monoculture_flags_an_owner_above_a_quarter(tmp_path: Path) -> None:
    pages = [
        _numbered(1, "a.vendor.example", "sq1"),
        _numbered(2, "b.vendor.example", "sq1"),
        _numbered(3, "indep-one.example", "sq1"),
        _numbered(4, "indep-two.example", "sq1"),
    ]
    document = _triangulate(
        tmp_path,
        pages,
        [_sales("S1", "S2", "S3", "S4")],
        coverage_gaps=["no data for 2022", "vendor_monoculture:sq1:stale"],
    )
    assert document.coverage_gaps == ["no data for 2022", "vendor_monoculture:sq1:vendor.example"]


def test_no_monoculture_when_owners_are_spread(tmp_path: Path) -> None:
    pages = [_numbered(n, f"outlet{n}.example", "sq1") for n in range(1, 5)]
    document = _triangulate(tmp_path, pages, [_sales("S1", "S2", "S3", "S4")])
    assert document.coverage_gaps == []
    assert document.claims[0].independent_count == 4


def test_worker_url_overlap_is_logged(tmp_path: Path) -> None:
    shared = _numbered(1, "shared.example", "sq1")
    shared.sub_questions = ["sq1", "sq2"]
    pages = [shared, _numbered(2, "two.example", "sq2"), _numbered(3, "three.example", "sq3")]
    _triangulate(tmp_path, pages, [_sales("S1")])
    trace = json.loads((tmp_path / "trace.json").read_text())
    assert trace["phases"]["triangulate"]["worker_overlap"] == [
        {"a": "sq1", "b": "sq2", "jaccard": 0.5}
    ]
    assert trace["settings_hash"].startswith("sha256:")


# --- near-copies on a bounded sketch; one text at a time --------------------------------------


def _prose(seed: int, words: int) -> str:
    """Words no other seed's prose shares a 5-gram with (a vocabulary of 5,000)."""
    rng = random.Random(seed)
    return " ".join(f"w{rng.randrange(5000)}" for _ in range(words))


def _counted_share(a: str, b: str) -> float:
    """The overlap coefficient over every word 5-gram, as triangulation counted it before the
    sketch (the test's oracle)."""

    def grams(text: str) -> set[tuple[str, ...]]:
        words = [w.casefold() for w in re.findall(r"\w+", text)]
        return {tuple(words[i : i + 5]) for i in range(len(words) - 4)}

    first, second = grams(a), grams(b)
    if not first or not second:
        return 0.0
    return len(first & second) / min(len(first), len(second))


def _sketched_share(a: str, b: str) -> float:
    small, large = sorted((a, b), key=lambda text: len(shingles(text)))
    return shared_share(sketch_of(shingles(small)), shingles(large))


@settings(max_examples=150, deadline=None)
@given(
    shared=st.integers(0, 150),
    own=st.tuples(st.integers(0, 150), st.integers(0, 150)),
    seed=st.integers(0, 10_000),
)
def test_the_sketch_is_exact_while_the_smaller_text_is_short(
    shared: int, own: tuple[int, int], seed: int
) -> None:
    common = _prose(seed, shared)
    a = f"{common} {_prose(seed + 1, own[0])}".upper()  # case does not matter
    b = f"{_prose(seed + 2, own[1])}\n{common}"
    assert _sketched_share(a, b) == _counted_share(a, b)


@pytest.mark.parametrize("shared", [1500, 3000, 4500])
def test_the_sketch_estimates_long_texts_close_to_the_count(shared: int) -> None:
    common = _prose(7, shared)
    a, b = f"{common} {_prose(8, 6000 - shared)}", f"{_prose(9, 5000 - shared)} {common}"
    assert len(shingles(a)) > SKETCH_SIZE
    # A bottom-k sample of 1,024: a standard error of ~0.016 at these shares.
    assert abs(_sketched_share(a, b) - _counted_share(a, b)) < 0.06


def _pair_only_their_words_join(tmp_path: Path, first: str, second: str) -> ClaimsFile:
    # Each page carries its own sentence for the claim, which the other page does not hold: a
    # link can only come from the rest of their text.
    pages = [
        PageSpec("https://one.example/a", f"{first}\n\n{BLOG_SENTENCE}\n", [("s", BLOG_SENTENCE)]),
        PageSpec(
            "https://two.example/b", f"{second}\n\n{OTHER_SENTENCE}\n", [("s", OTHER_SENTENCE)]
        ),
    ]
    return _triangulate(tmp_path, pages, [_sales("S1", "S2")])


@pytest.mark.parametrize(
    ("first", "second", "one_voice"),
    [
        # Long texts (sketched): three quarters shared, one quarter shared.
        (_prose(1, 3000) + " " + _prose(2, 1000), _prose(3, 1000) + " " + _prose(1, 3000), True),
        (_prose(1, 1000) + " " + _prose(2, 3000), _prose(3, 3000) + " " + _prose(1, 1000), False),
        # A short text (whole in its sketch) inside a long one, and one that is not.
        (_prose(4, 300), _prose(5, 3000) + " " + _prose(4, 300) + " " + _prose(6, 2000), True),
        (_prose(4, 300), _prose(5, 3000) + " " + _prose(4, 100) + " " + _prose(6, 2000), False),
    ],
    ids=["long-shared", "long-apart", "short-inside", "short-apart"],
)
def test_near_copies_by_shared_words(
    tmp_path: Path, first: str, second: str, one_voice: bool
) -> None:
    claim = _pair_only_their_words_join(tmp_path, first, second).claims[0]
    assert claim.supporting == ["S1", "S2"]
    assert claim.independent_count == (1 if one_voice else 2)
    links = json.loads((tmp_path / "trace.json").read_text())["phases"]["triangulate"]["links"]
    assert links == ([{"a": "S1", "b": "S2", "reason": "near_copy"}] if one_voice else [])


class _CountingCorpus(Corpus):
    def __init__(self, brief: Brief, sources: list[SourceRow]) -> None:
        super().__init__(brief, sources)
        self.reads: list[str] = []

    def read(self, source_id: str) -> tuple[str | None, set[int]]:
        self.reads.append(source_id)
        return super().read(source_id)


def test_each_text_is_read_once_for_every_claim_together(tmp_path: Path) -> None:
    common = _prose(1, 400)
    pages = [
        PageSpec(
            f"https://site{n}.example/p",
            f"{common if n < 3 else _prose(n, 400)}\n\n{sentence}\n",
            [("s", sentence)],
        )
        for n, sentence in enumerate([BLOG_SENTENCE, OTHER_SENTENCE, BLOG_SENTENCE], start=1)
    ]
    claims = [_sales("S1", "S2"), _sales("S2", "S3"), _sales("S1", "S3")]
    write_brief(tmp_path, pages, claims)
    run_trace(TraceOptions(brief=tmp_path))
    brief = Brief(tmp_path)
    sources = brief.load_sources()
    corpus = _CountingCorpus(brief, sources)
    document, report = triangulate_claims(
        brief.load_claims(), sources, brief.load_fetch_log(), corpus, TraceFile(), SETTINGS
    )
    assert sorted(corpus.reads) == ["S1", "S2", "S3"]
    # S1 and S2 share their words; S1 and S3 share a quote; S2 and S3 nothing.
    assert [c.independent_count for c in document.claims] == [1, 2, 1]
    assert report.entry()["links"] == [
        {"a": "S1", "b": "S2", "reason": "near_copy"},
        {"a": "S1", "b": "S3", "reason": "near_copy"},
    ]


@settings(max_examples=200, deadline=None)
@given(
    values=st.sets(st.integers(-(2**63), 2**63 - 1), max_size=3000)
    | st.sets(st.integers(2**62, 2**63 - 1), max_size=3000),  # skewed: the bound holds too few
    count=st.integers(1, 600),
)
def test_the_smallest_hashes_are_the_smallest(values: set[int], count: int) -> None:
    assert _smallest(values, count) == sorted(values)[:count]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["10.", "1234", "5", "/", "a", "_", "é", " ", '"', ".", "x10.", ")"]),
        max_size=40,
    ).map("".join)
)
@example("x10.1234/a/10.5678/b")  # a DOI inside a run that does not start one
@example("(10.1000/xyz) é10.1234/q _10.1234/r 10.12/x")
def test_dois_are_found_as_the_boundary_pattern_finds_them(text: str) -> None:
    assert dois(text) == re.findall(r"\b(10\.\d{4,9}/[^\s\"<>]+)", text)
