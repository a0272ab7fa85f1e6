"""The trace gate on real brief directories, including the acceptance cases."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from pydantic import ValidationError

from briefs import PageSpec, page, read_claims, write_brief
from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.gates import trace as trace_module
from deep_research.gates.literals import Derivation, DocumentContext, SourceFacts, check
from deep_research.gates.overlap import shared_tokens
from deep_research.gates.trace import (
    Resolution,
    SourceIndex,
    StepMemo,
    TraceOptions,
    emitted_claims,
    run_trace,
    split_dossier,
    trace_claims,
)
from deep_research.models import ClaimsFile
from deep_research.schemas import validate_brief

AGENCY = "https://www.northern-energy.example/reports/heat-pumps-2024"
TRADE = "https://trade-heating.example/news/installers-struggle"
CITY = "https://harbourton-news.example/council-budget-2025"
FABRICATED = "https://www.northern-energy.example/reports/heat-pumps-2024-annex"

SALES_QUOTE = (
    "Sales of heat pumps across the twelve member states rose to 2.9 million units in 2023, "
    "up from 2.4 million units in 2022."
)
INSTALLERS_QUOTE = (
    "it counted 68,000 certified installers in 2023 and estimates that at least 110,000 will "
    "be needed by 2030 to meet national targets."
)
TRADE_QUOTE = (
    "member companies shipped just under 2.9 million units in 2023, compared with 2.4 million "
    "the year before, a rise of about 21 percent."
)
BUDGET_QUOTE = (
    "voted 9 to 4 on Tuesday, 10 December 2024, to approve a budget of $1.82 billion for the "
    "2025 fiscal year"
)


def _pages(**overrides: PageSpec) -> list[PageSpec]:
    pages = {
        "agency": PageSpec(
            AGENCY,
            page("heat-pumps-agency.txt"),
            [
                ("Heat pump sales rose to 2.9 million", SALES_QUOTE),
                ("Installers", INSTALLERS_QUOTE),
            ],
            source_type="government",
        ),
        "trade": PageSpec(TRADE, page("heat-pumps-trade.txt"), [("Shipments", TRADE_QUOTE)]),
        "city": PageSpec(CITY, page("city-budget.txt"), [("Budget", BUDGET_QUOTE)]),
    }
    pages.update(overrides)
    return list(pages.values())


def _trace(root: Path, **options: object) -> dict[str, object]:
    report = run_trace(TraceOptions(brief=root, **options))  # type: ignore[arg-type]
    return report.as_dict()


def _claim(root: Path, claim_id: str) -> dict[str, object]:
    return next(c for c in read_claims(root)["claims"] if c["id"] == claim_id)


def test_supported_claim_gets_evidence_with_exact_span(tmp_path: Path) -> None:
    write_brief(
        tmp_path,
        _pages(),
        [{"claim": "Heat pump sales rose to 2.9 million units in 2023.", "supporting": ["S1"]}],
    )
    report = _trace(tmp_path)
    assert report["total_cites_checked"] == 1 and report["pass_rate"] == 1.0
    claim = _claim(tmp_path, "C1")
    assert claim["support_class"] == "Supported" and claim["verify_passed"] is True
    evidence = claim["evidence"][0]
    text = page("heat-pumps-agency.txt")
    start, end = evidence["span"]["start"], evidence["span"]["end"]
    assert text[start:end] == SALES_QUOTE
    assert evidence["checks"]["method"] == "exact"


def test_fabricated_url_is_unresolvable_and_absent_from_emitted_claims(tmp_path: Path) -> None:
    # The fabricated source even carries a quote that is really on the agency page: a URL
    # that this brief never fetched still cannot support anything.
    fabricated = PageSpec(
        FABRICATED, None, [("Sales", SALES_QUOTE)], fetch="never", source_type="government"
    )
    write_brief(
        tmp_path,
        [*_pages(), fabricated],
        [
            {"claim": "Heat pump sales rose to 2.9 million units in 2023.", "supporting": ["S4"]},
            {
                "claim": "Heat pump sales rose to 2.9 million units in 2023.",
                "supporting": ["S1", "S4"],
            },
        ],
    )
    report = _trace(tmp_path)
    reasons = {(v["claim"], v["source"]): v["reason"] for v in report["violations"]}  # type: ignore[attr-defined]
    assert reasons == {("C1", "S4"): "not_fetched", ("C2", "S4"): "not_fetched"}
    document = ClaimsFile.model_validate(read_claims(tmp_path))
    assert document.claims[0].support_class == "Unsupported"
    emitted = emitted_claims(document)
    assert [claim.id for claim in emitted] == ["C2"]
    for claim in emitted:
        assert "S4" not in claim.supporting
        assert all(item.source != "S4" for item in claim.evidence)
    assert FABRICATED not in json.dumps([c.model_dump(mode="json") for c in emitted])


def test_source_fetched_with_another_hash_is_unresolvable(tmp_path: Path) -> None:
    write_brief(
        tmp_path,
        _pages(),
        [{"claim": "Sales rose to 2.9 million units in 2023", "supporting": ["S1"]}],
    )
    rows = [json.loads(line) for line in (tmp_path / "sources.jsonl").read_text().splitlines()]
    other = rows[1]["content_hash"]
    rows[0]["content_hash"] = other  # points at a real corpus file the agency URL never produced
    (tmp_path / "sources.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = _trace(tmp_path)
    assert report["violations"][0]["reason"] == "hash_not_from_fetch"  # type: ignore[index]


def test_topically_related_quote_that_does_not_support_is_not_supported(tmp_path: Path) -> None:
    # Same page, same topic, right quote location — but the quote does not say what the claim
    # says: the installer shortage quote cited for a claim about prices.
    write_brief(
        tmp_path,
        _pages(),
        [
            {
                "claim": "Certified heat pump installers earned 110,000 euros on average in 2023.",
                "findings": ["S1.F2"],
                "supporting": ["S1"],
            },
            {
                "claim": "Heat pump installed prices fell by 12% in 2023.",
                "supporting": ["S1"],
            },
        ],
    )
    _trace(tmp_path)
    assert _claim(tmp_path, "C1")["support_class"] != "Supported"
    assert _claim(tmp_path, "C2")["support_class"] != "Supported"


@pytest.mark.parametrize(
    ("claim", "supported"),
    [
        ("Heat pump sales rose to 2.9 million units in 2023.", True),
        ("Heat pump sales rose to 2.8 million units in 2023.", False),
        ("Heat pump sales rose to 2.9 million units in 2024.", False),
        ("Heat pump sales rose to 3.9 million units in 2023.", False),
        ("Heat pump sales rose from 2.4 million units in 2022.", True),
        ("Heat pump sales rose from 2.5 million units in 2022.", False),
    ],
)
def test_one_perturbed_digit_flips_supported(tmp_path: Path, claim: str, supported: bool) -> None:
    write_brief(tmp_path, _pages(), [{"claim": claim, "supporting": ["S1"]}])
    _trace(tmp_path)
    assert (_claim(tmp_path, "C1")["support_class"] == "Supported") is supported


def test_summary_substituted_for_corpus_text_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_brief(
        tmp_path,
        _pages(),
        [{"claim": "Heat pump sales rose to 2.9 million units in 2023.", "supporting": ["S1"]}],
    )
    summary = tmp_path / "summary.txt"
    summary.write_text("Heat pump sales rose to 2.9 million units in 2023, the agency says.")
    before = (tmp_path / "claims.json").read_bytes()
    assert main(["trace", str(tmp_path), "--corpus-file", str(summary)]) == 2
    err = capsys.readouterr().err
    assert "not a corpus file" in err and err.count("\n") == 1
    assert (tmp_path / "claims.json").read_bytes() == before


def test_corpus_file_replaced_by_summary_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_brief(
        tmp_path,
        _pages(),
        [{"claim": "Heat pump sales rose to 2.9 million units in 2023.", "supporting": ["S1"]}],
    )
    corpus = next(p for p in (tmp_path / "corpus").iterdir() if "Market Review" in p.read_text())
    corpus.write_text("Summary: heat pump sales rose to 2.9 million units in 2023 per the agency.")
    before = (tmp_path / "claims.json").read_bytes()
    assert main(["trace", str(tmp_path)]) == 2
    assert "does not hash" in capsys.readouterr().err
    assert (tmp_path / "claims.json").read_bytes() == before


def test_failed_fetch_is_uncertain_not_unsupported(tmp_path: Path) -> None:
    pages = _pages(
        trade=PageSpec(TRADE, None, [("Shipments", TRADE_QUOTE)], fetch="error", status=503)
    )
    write_brief(
        tmp_path,
        pages,
        [{"claim": "Shipments reached 2.9 million units in 2023", "supporting": ["S2"]}],
    )
    _trace(tmp_path)
    claim = _claim(tmp_path, "C1")
    assert claim["support_class"] == "Uncertain"
    assert claim["violations"][0]["reason"] == "fetch_failed"


def test_refused_fetch_is_unresolvable(tmp_path: Path) -> None:
    pages = _pages(trade=PageSpec(TRADE, None, [("Shipments", TRADE_QUOTE)], fetch="refused"))
    write_brief(
        tmp_path,
        pages,
        [{"claim": "Shipments reached 2.9 million units in 2023", "supporting": ["S2"]}],
    )
    _trace(tmp_path)
    assert _claim(tmp_path, "C1")["support_class"] == "Unsupported"


def test_short_span_cannot_support_alone(tmp_path: Path) -> None:
    pages = _pages(
        agency=PageSpec(AGENCY, page("heat-pumps-agency.txt"), [("Share", "roughly 63%")])
    )
    write_brief(
        tmp_path,
        pages,
        [{"claim": "Air-to-water heat pumps hold roughly 63% of the market", "supporting": ["S1"]}],
    )
    report = _trace(tmp_path)
    assert report["violations"][0]["reason"] == "span_too_short"  # type: ignore[index]


def test_invented_quote_is_not_in_source(tmp_path: Path) -> None:
    pages = _pages(
        agency=PageSpec(
            AGENCY,
            page("heat-pumps-agency.txt"),
            [
                (
                    "Sales",
                    "Heat pump sales tripled in 2023 as gas prices soared across member states.",
                )
            ],
        )
    )
    write_brief(
        tmp_path, pages, [{"claim": "Heat pump sales tripled in 2023.", "supporting": ["S1"]}]
    )
    report = _trace(tmp_path)
    assert report["violations"][0]["reason"] == "quote_not_in_source"  # type: ignore[index]


def test_unknown_source_and_no_citation(tmp_path: Path) -> None:
    write_brief(
        tmp_path,
        _pages(),
        [
            {"claim": "Heat pump sales rose to 2.9 million units in 2023.", "supporting": ["S9"]},
            {"claim": "Heat pumps are popular.", "supporting": []},
        ],
    )
    report = _trace(tmp_path)
    assert [v["reason"] for v in report["violations"]] == ["unknown_source", "no_citation"]  # type: ignore[attr-defined]
    assert report["coverage"] == 0.5


def test_two_sources_one_supports(tmp_path: Path) -> None:
    write_brief(
        tmp_path,
        _pages(),
        [
            {
                "claim": "Heat pump sales rose to 2.9 million units in 2023.",
                "supporting": ["S1", "S2", "S3"],
            }
        ],
    )
    report = _trace(tmp_path)
    claim = _claim(tmp_path, "C1")
    assert claim["support_class"] == "Supported"
    outcomes = {item["source"]: item["checks"]["outcome"] for item in claim["evidence"]}
    # "just under 2.9 million" is not "2.9 million": the trade page is at best partial.
    assert outcomes["S1"] == "supported" and outcomes["S2"] != "supported"
    assert outcomes["S3"] == "unsupported"
    assert report["pass_rate"] == round(1 / 3, 4)


def test_trace_is_deterministic_and_idempotent(tmp_path: Path) -> None:
    write_brief(
        tmp_path,
        _pages(),
        [
            {
                "claim": "Heat pump sales rose to 2.9 million units in 2023.",
                "supporting": ["S1", "S2"],
            }
        ],
    )
    first = _trace(tmp_path)
    written = (tmp_path / "claims.json").read_bytes()
    copy = tmp_path.parent / "copy"
    shutil.copytree(tmp_path, copy)
    assert _trace(copy) == first
    assert (copy / "claims.json").read_bytes() == written


def test_no_write_leaves_claims_untouched(tmp_path: Path) -> None:
    write_brief(
        tmp_path,
        _pages(),
        [{"claim": "Heat pump sales rose to 2.9 million units in 2023.", "supporting": ["S1"]}],
    )
    before = (tmp_path / "claims.json").read_bytes()
    assert main(["trace", str(tmp_path), "--no-write"]) == 0
    assert (tmp_path / "claims.json").read_bytes() == before


def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_brief(
        tmp_path,
        _pages(),
        [{"claim": "Heat pump sales rose to 2.8 million units in 2023.", "supporting": ["S1"]}],
    )
    assert main(["trace", str(tmp_path)]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["violations"][0]["reason"] == "literal_missing"
    assert main(["trace", str(tmp_path / "missing")]) == 2


# --- dossier mode ---------------------------------------------------------------------------

DOSSIER = f"""# Heat pumps

## Findings

Heat pump sales rose to 2.9 million units in 2023 [S1]. The agency counted 68,000 certified
installers in 2023 [S1]. Harbourton approved a $1.82 billion budget for 2025 ([source]({CITY})).

- Heat pump shipments reached 3.4 million units in 2023 [S2].
- Heat pumps were invented long ago.

```
Code blocks are skipped [S9].
```

| claim | source |
|---|---|
| Sales rose to 2.9 million units in 2023. [S1] | agency |

The annex says sales tripled in 2023 ({FABRICATED}).
"""


def test_split_dossier_finds_cited_sentences() -> None:
    cited, total = split_dossier(DOSSIER)
    assert [s.sources for s in cited] == [
        ("S1",),
        ("S1",),
        (CITY,),
        ("S2",),
        ("S1",),
        (FABRICATED,),
    ]
    assert cited[0].text == "Heat pump sales rose to 2.9 million units in 2023."
    assert cited[1].text == "The agency counted 68,000 certified installers in 2023."
    assert total == 7


#: Dossier shapes the report reader shares with ``check``: (markdown, cited (text, sources),
#: prose sentences in all).
DOSSIER_SHAPES: list[tuple[str, list[tuple[str, tuple[str, ...]]], int]] = [
    (  # a marker after the stop closes its sentence; a footnote-style marker is one too
        "Sales rose to 2.9 million units in 2023. [S1] The agency counted 68,000 installers "
        "[^S2].\n",
        [
            ("Sales rose to 2.9 million units in 2023.", ("S1",)),
            ("The agency counted 68,000 installers.", ("S2",)),
        ],
        2,
    ),
    (  # a setext heading and a sources list are no prose, though the list holds URLs
        "Title of the whole report\n===\n\nPrices fell by **12%** in 2024 [S3].\n\n"
        "## Sources\n\n- S3 Agency report https://example.org/agency\n",
        [("Prices fell by 12% in 2024.", ("S3",))],
        1,
    ),
    (  # a link to a file or an anchor cites nothing a source could hold
        "The register lists 214 colonies ([notes](./notes.md)) on the island ([top](#top)).\n",
        [],
        1,
    ),
]


@pytest.mark.parametrize(("markdown", "cited", "total"), DOSSIER_SHAPES)
def test_split_dossier_reads_reports_as_check_does(
    markdown: str, cited: list[tuple[str, tuple[str, ...]]], total: int
) -> None:
    found, counted = split_dossier(markdown)
    assert [(s.text, s.sources) for s in found] == cited
    assert counted == total


def test_dossier_mode(tmp_path: Path) -> None:
    write_brief(tmp_path, _pages(), [])
    dossier = tmp_path / "report.md"
    dossier.write_text(DOSSIER)
    report = _trace(tmp_path, dossier=dossier)
    assert report["mode"] == "dossier"
    assert report["total_cites_checked"] == 6
    reasons = sorted(v["reason"] for v in report["violations"])  # type: ignore[attr-defined]
    assert reasons == ["literal_missing", "url_not_in_sources"]
    assert report["coverage"] == round(6 / 7, 4)


@pytest.mark.parametrize(
    ("derived", "supported"),
    [
        ({"operation": "difference", "inputs": [2_900_000, 2_400_000], "result": 500_000}, True),
        ({"operation": "difference", "inputs": [2_900_000, 2_300_000], "result": 500_000}, False),
        (None, False),
    ],
    ids=["declared", "wrong-inputs", "undeclared"],
)
def test_derived_figure_only_when_declared(
    tmp_path: Path, derived: dict[str, object] | None, supported: bool
) -> None:
    claim: dict[str, object] = {
        "claim": "Heat pump sales grew by 0.5 million units from 2022 to 2023.",
        "supporting": ["S1"],
    }
    if derived is not None:
        claim["derived"] = derived
    write_brief(tmp_path, _pages(), [claim])
    _trace(tmp_path)
    assert (_claim(tmp_path, "C1")["support_class"] == "Supported") is supported


def test_the_source_title_is_context_the_trace_reports(tmp_path: Path) -> None:
    quote = (
        "Councillor Ana Reyes, who chairs the finance committee, said the budget keeps property "
        "tax rates unchanged for the third consecutive year."
    )
    for title, city_name, passage in (
        ("Harbourton council budget", "Harbourton", "title"),
        ("Council budget", "Harbourton", "lead"),  # the page's lead names the city
        ("Council budget", "Eastport", None),  # a city the page never names
    ):
        claim = f"Ana Reyes chairs the finance committee of {city_name}."
        city = PageSpec(CITY, page("city-budget.txt"), [("Reyes", quote)], title=title)
        write_brief(tmp_path, _pages(city=city), [{"claim": claim, "supporting": ["S3"]}])
        _trace(tmp_path)
        checks = _claim(tmp_path, "C1")["evidence"][0]["checks"]
        assert (checks["outcome"] == "supported") is (passage is not None), checks
        established = {"literal": city_name, "established_by": "context", "passage": passage}
        assert checks["literals"]["context"] == ([established] if passage else [])
        shutil.rmtree(tmp_path)
        tmp_path.mkdir()


def test_a_brief_that_recorded_context_as_text_still_reads_and_validates(tmp_path: Path) -> None:
    """Briefs written before ``established_by`` recorded "Harbourton (title)"; they still load,
    as the same record, and pass validation. A passage the contract does not name does not."""
    quote = (
        "Councillor Ana Reyes, who chairs the finance committee, said the budget keeps property "
        "tax rates unchanged for the third consecutive year."
    )
    city = PageSpec(CITY, page("city-budget.txt"), [("Reyes", quote)], title="Harbourton budget")
    claim = "Ana Reyes chairs the finance committee of Harbourton."
    write_brief(tmp_path, _pages(city=city), [{"claim": claim, "supporting": ["S3"]}])
    _trace(tmp_path)
    path = tmp_path / "claims.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    written = document["claims"][0]["evidence"][0]["checks"]["literals"]
    current = written["context"]
    written["context"] = ["Harbourton (title)"]
    path.write_text(json.dumps(document), encoding="utf-8")
    assert validate_brief(tmp_path).ok
    read = Brief(tmp_path).load_claims().claims[0].evidence[0].checks.literals.context
    assert [item.model_dump() for item in read] == current
    written["context"] = ["Harbourton (footnote)"]
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(ValidationError):
        ClaimsFile.model_validate(document)


# --- one document at a time -------------------------------------------------------------------


class _CountingIndex(SourceIndex):
    """Counts how often each source's text is read and the most documents held at once."""

    def __init__(self, brief: Brief) -> None:
        super().__init__(brief, brief.load_sources(), brief.load_fetch_log())
        self.reads: dict[str, int] = {}
        self.most_held = 0

    def _resolve(self, source_id: str) -> Resolution:
        self.reads[source_id] = self.reads.get(source_id, 0) + 1
        return super()._resolve(source_id)

    def resolve(self, source_id: str) -> Resolution:
        found = super().resolve(source_id)
        self.most_held = max(self.most_held, len(self._held))
        return found


def _interleaved(tmp_path: Path) -> Brief:
    # Claims that cite the three pages in turns, so claim order and source order differ.
    claims = [
        {"claim": "Heat pump sales rose to 2.9 million units in 2023.", "supporting": ["S1", "S2"]},
        {"claim": "The council approved a $1.82 billion budget.", "supporting": ["S3", "S1"]},
        {"claim": "Makers shipped just under 2.9 million units in 2023.", "supporting": ["S2"]},
        {"claim": "The council voted 9 to 4 on the budget.", "supporting": ["S3", "S4"]},
    ]
    write_brief(tmp_path, _pages(), claims)
    return Brief(tmp_path)


def test_pairs_run_by_source_with_one_document_held(tmp_path: Path) -> None:
    brief = _interleaved(tmp_path)
    claims = brief.load_claims().claims
    index = _CountingIndex(brief)
    together = trace_claims(index, claims)
    assert index.reads == {"S1": 1, "S2": 1, "S3": 1, "S4": 1}  # each text read once
    assert index.most_held == 1
    # The same answers as tracing each claim on its own, in claim order.
    alone = [trace_claims(_CountingIndex(brief), [claim])[0] for claim in claims]
    assert [claim for claim, _ in together] == [claim for claim, _ in alone]
    assert [pairs for _, pairs in together] == [pairs for _, pairs in alone]
    assert [[p.outcome for p in pairs] for _, pairs in together] == [
        ["supported", "partially_supported"],
        ["supported", "unsupported"],
        ["supported"],
        ["supported", "unresolvable"],
    ]


def test_the_index_keeps_a_bounded_amount_of_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brief = _interleaved(tmp_path)
    monkeypatch.setattr(trace_module, "DOCUMENT_CACHE_CHARS", 1)
    index = _CountingIndex(brief)
    for source in ("S1", "S2", "S3", "S1"):
        assert index.resolve(source).document is not None
    assert index.most_held == 1 and index.reads["S1"] == 2  # evicted, then read again
    index.release("S1")
    assert not index._held


def test_the_step_memo_answers_as_the_steps_do() -> None:
    memo = StepMemo()
    claim = "Sales rose to 2.9 million units in 2023."
    spans = ["Sales rose to 2.9 million units in 2023, up from 2.4 million."]
    other = ["Sales rose to 2.8 million units in 2023."]
    derived = Derivation("difference", (Decimal("2.9"), Decimal("2.4")), Decimal("0.5"))
    for quotes, derivation in [(spans, None), (other, None), (other, derived), (spans, None)]:
        got = memo.literals(claim, quotes, derived=derivation)
        assert got == check(claim, quotes, derived=derivation)
        assert memo.overlap(claim, quotes[0]) == tuple(shared_tokens(claim, quotes[0]))
    assert memo.literals(claim, other).missing and not memo.literals(claim, spans).missing
    # Only the answer the located text gave alone is kept; the overlap of each text once.
    assert list(memo._literals) == [(claim, tuple(spans), None)] and len(memo._overlap) == 2


def test_an_answer_the_document_helped_with_is_not_reused_elsewhere() -> None:
    memo = StepMemo()
    span = "Councillor Ana Reyes, who chairs the finance committee, kept tax rates unchanged."
    claim = "Ana Reyes chairs the finance committee of Harbourton."
    text = f"Some page.\n\n{span}\n"
    where = [(text.index(span), text.index(span) + len(span))]
    titled = DocumentContext(text, where, SourceFacts(title="Harbourton council budget"))
    untitled = DocumentContext(text, where, SourceFacts(title="Council budget"))
    first = memo.literals(claim, [span], context=titled)
    assert not first.missing and first.context  # the title established Harbourton
    again = memo.literals(claim, [span], context=untitled)
    assert again == check(claim, [span], context=untitled) and again.missing


def test_pairs_a_kept_answer_serves_share_its_report_and_only_checks_that_read_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One claim's quote, placed exactly in two pages and only after normalization in a third:
    # the three items share one literals report; the two exact ones share their checks, the
    # normalized one keeps its own (its method differs), and each reads as built alone.
    text = f"Heat pumps.\n\n{SALES_QUOTE}\n"
    spaced = SALES_QUOTE.replace(" ", "  ", 2)
    pages = [
        PageSpec(f"https://site{n}.example/page", text, [("Sales", quote)])
        for n, quote in enumerate([SALES_QUOTE, SALES_QUOTE, spaced], start=1)
    ]
    claim = "Heat pump sales rose to 2.9 million units in 2023."
    write_brief(tmp_path, pages, [{"claim": claim, "supporting": ["S1", "S2", "S3"]}])
    brief = Brief(tmp_path)
    [(traced, _)] = trace_claims(_CountingIndex(brief), brief.load_claims().claims)
    first, second, third = (item.checks for item in traced.evidence)
    assert [c.method for c in (first, second, third)] == ["exact", "exact", "normalized"]
    assert first is second and third is not first
    assert first.literals is third.literals
    # Built with nothing shared, every item reads the same.
    monkeypatch.setattr(
        StepMemo, "report", lambda self, support: (trace_module._literals_report(support), False)
    )
    [(unshared, _)] = trace_claims(_CountingIndex(brief), brief.load_claims().claims)
    assert unshared.evidence == traced.evidence
    assert unshared.evidence[0].checks is not unshared.evidence[1].checks
