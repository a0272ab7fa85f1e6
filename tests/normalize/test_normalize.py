"""The normalizer: every drift shape, every reject kind, ids, merging, and the CLI's refusals.

The drift corpus is table-driven: ``tests/fixtures/drift/cases.json`` lists one case per shape
(input file, expected rows, rejections and warnings); ``docs/drift-shapes.md`` documents the same
shapes and a test keeps the two in step.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

import deep_research.normalize_io as normalize_io
from conftest import FIXTURES, REPO
from deep_research.brief.writers import model_dump
from deep_research.cli import main
from deep_research.errors import InputError, SchemaViolation, UnreadableInput
from deep_research.models import SourceRow, Via
from deep_research.normalize import (
    FindingDraft,
    Rejection,
    SourceDraft,
    merge_sources,
    normalize_payload,
    parse_date,
)
from deep_research.normalize_io import NormalizeOptions, run_normalize
from deep_research.urls import registrable_domain

DRIFT = FIXTURES / "drift"
CASES: list[dict[str, Any]] = json.loads((DRIFT / "cases.json").read_text(encoding="utf-8"))[
    "cases"
]

#: Fields a case leaves out have these values (owner is checked against the URL separately).
ROW_DEFAULTS: dict[str, Any] = {
    "aliases": [],
    "final_url": None,
    "title": None,
    "published_at": None,
    "retrieved_at": None,
    "source_type": "unknown",
    "tier": "snippet",
    "content_hash": None,
    "status": None,
    "sub_questions": [],
    "round": 1,
    "via": {"query": None, "adapter": None, "mcp": None},
    "cites": [],
    "findings": [],
}


def _expected_row(row: dict[str, Any]) -> dict[str, Any]:
    findings = [{"importance": "supporting", "span": None, **f} for f in row.get("findings", [])]
    return {**ROW_DEFAULTS, **row, "findings": findings}


def _dump(rows: list[SourceRow]) -> list[dict[str, Any]]:
    dumped = [model_dump(row) for row in rows]
    for row in dumped:
        assert row.pop("owner") == registrable_domain(row["url"])
    return dumped


# --- the drift corpus ----------------------------------------------------------------------


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_drift_shape(case: dict[str, Any]) -> None:
    text = (DRIFT / case["input"]).read_text(encoding="utf-8")
    result = normalize_payload(text, **case.get("options", {}))
    assert _dump(result.rows) == [_expected_row(row) for row in case["rows"]]
    assert [[r.where, r.reason] for r in result.rejections] == case["rejections"]
    assert result.warnings == case["warnings"]


def test_corpus_covers_at_least_twenty_shapes_each_with_its_own_fixture() -> None:
    inputs = [case["input"] for case in CASES]
    assert len(CASES) >= 20
    assert len(set(inputs)) == len(inputs)
    on_disk = {path.name for path in DRIFT.iterdir() if path.name != "cases.json"}
    assert on_disk == set(inputs)


def test_every_shape_is_documented() -> None:
    doc = (REPO / "docs" / "drift-shapes.md").read_text(encoding="utf-8")
    missing = [case["name"] for case in CASES if f"`{case['name']}`" not in doc]
    assert not missing


# --- rejections ------------------------------------------------------------------------------

REJECT_KINDS = [
    (
        '{"url": "https://a.example/", "findings": [{"claim": "c"}]}',
        "$.findings[0]",
        "finding has no quote",
    ),
    (
        '{"url": "https://a.example/", "findings": [{"claim": "c", "quote": ""}]}',
        "$.findings[0].quote",
        "finding has an empty quote",
    ),
    (
        '{"url": "https://a.example/", "findings": [{"claim": "c", "quote": " \\t\\n"}]}',
        "$.findings[0].quote",
        "finding has an empty quote",
    ),
    (
        '{"url": "https://a.example/", "findings": [{"claim": "c", "quote": null}]}',
        "$.findings[0].quote",
        "finding has no quote",
    ),
    (
        '{"url": "https://a.example/", "findings": [{"claim": "c", "quotes": []}]}',
        "$.findings[0]",
        "finding has no quote (an empty list)",
    ),
    (
        '{"url": "https://a.example/", "findings": [{"quote": "q"}]}',
        "$.findings[0]",
        "finding has no claim",
    ),
    (
        '{"url": "https://a.example/", "findings": [{"claim": 7, "quote": "q"}]}',
        "$.findings[0]",
        "claim is a number, not text",
    ),
    (
        '{"url": "https://a.example/", "findings": ["just a claim"]}',
        "$.findings[0]",
        "finding has no quote (a bare string",
    ),
    (
        '{"url": "https://a.example/", "findings": [{"claim": "c", "quote": ["q", false]}]}',
        "$.findings[0].quote[1]",
        "quote is a boolean, not text",
    ),
    (
        '{"url": "https://a.example/", "findings": [["a", "b", "c", "d"]]}',
        "$.findings[0]",
        "a finding list must be [claim, quote]",
    ),
    (
        '{"url": "https://a.example/", "findings": [3]}',
        "$.findings[0]",
        "expected a finding object, got a number",
    ),
    ('[{"title": "t"}]', "$[0]", "source has no url"),
    ('[{"url": ""}]', "$[0].url", "source has an empty url"),
    ('[{"url": null, "title": "t"}]', "$[0].url", "source has no url"),
    ('[{"link": ["x"]}]', "$[0].link", "invalid url: no scheme"),
    ('[{"url": 5}]', "$[0].url", "url is a number, not text"),
    ('[{"url": "ftp://a.example/f"}]', "$[0].url", "invalid url: scheme 'ftp' is not http"),
    ('[{"url": "a.example/page"}]', "$[0].url", "invalid url: no scheme"),
    ('[{"url": "https:///path"}]', "$[0].url", "invalid url: no host"),
    ('[{"url": "https://a.example:99999/"}]', "$[0].url", "invalid url: Port out of range"),
    ('[{"url": "https://a.example/"}, 1]', "$[1]", "expected a source object, got a number"),
    ('[{"url": "https://a.example/"}, "hello"]', "$[1]", "expected a source object, got text"),
    ('[{"url": "https://a.example/"}, {"x": 1}]', "$[1]", "not a source"),
    ('{"url": "https://a.example/"}\n{"url": "https://b.exa', "line 2", "record is not valid JSON"),
    (
        '```json\n{"url": "https://a.example/"}\n```\n```json\n{"url": \n```',
        "block 2",
        "the ```json block is not valid JSON",
    ),
]


@pytest.mark.parametrize(("payload", "where", "reason"), REJECT_KINDS)
def test_each_reject_kind_is_reported_with_location_and_reason(
    payload: str, where: str, reason: str
) -> None:
    result = normalize_payload(payload)
    assert [(r.where, r.reason[: len(reason)]) for r in result.rejections] == [(where, reason)]


def test_rejection_describes_itself_on_one_line() -> None:
    rejection = Rejection("$.results[2].findings[0]", "finding has no quote", 'a\n"b"')
    line = rejection.describe()
    assert "\n" not in line
    assert line.startswith("$.results[2].findings[0]: finding has no quote")


def test_jsonl_after_a_prose_line_is_read_whole() -> None:
    lines = [json.dumps({"url": f"https://a.example/{n}"}) for n in range(40)]
    result = normalize_payload("Here are the sources:\n" + "\n".join(lines))
    assert [row.id for row in result.rows] == [f"S{n}" for n in range(1, 41)]


@pytest.mark.parametrize(
    "framed",
    [
        # Claude Code's frame around a subagent's reply opens with a bracket: prose, not JSON.
        '[Subagent hand-back] The report follows:\n  {"url": "https://a.example/1"}\nagentId: a1',
        '[note] {"url": "https://a.example/1"}',
    ],
)
def test_prose_opening_with_a_bracket_is_read_for_its_json(framed: str) -> None:
    result = normalize_payload(framed)
    assert [row.url for row in result.rows] == ["https://a.example/1"]


def test_a_leading_array_that_is_broken_and_holds_no_object_stays_refused() -> None:
    with pytest.raises(InputError, match="not valid JSON"):
        normalize_payload("[1, 2,, 3] and nothing else")


def test_a_source_whose_findings_were_all_rejected_is_kept() -> None:
    result = normalize_payload('{"url": "https://a.example/x", "findings": [{"claim": "c"}]}')
    assert [row.url for row in result.rows] == ["https://a.example/x"]
    assert result.rows[0].findings == []
    assert len(result.rejections) == 1


def test_excessive_nesting_is_reported_not_followed() -> None:
    deep = '{"data": ' * 60 + '{"url": "https://deep.example/"}' + "}" * 60
    result = normalize_payload(f'[{{"url": "https://a.example/"}}, {deep}]')
    assert [row.url for row in result.rows] == ["https://a.example/"]
    assert "nested more than" in result.rejections[0].reason
    with pytest.raises(SchemaViolation, match="no recognizable source"):
        normalize_payload(deep)


# --- options, ids and merging ------------------------------------------------------------

TWO_SOURCES = json.dumps(
    [
        {"url": "https://a.example/1", "findings": [{"claim": "A.", "quote": "a"}]},
        {"url": "https://b.example/2", "findings": [{"claim": "B.", "quote": "b"}]},
    ]
)


def _row(sid: str, url: str, *findings: tuple[str, str], **extra: Any) -> SourceRow:
    return SourceRow.model_validate(
        {
            "id": sid,
            "url": url,
            "findings": [
                {"id": f"{sid}.F{n}", "claim": c, "quote": q}
                for n, (c, q) in enumerate(findings, start=1)
            ],
            **extra,
        }
    )


def test_ids_continue_from_start_id() -> None:
    result = normalize_payload(TWO_SOURCES, start_id=7)
    assert [row.id for row in result.rows] == ["S7", "S8"]
    assert [f.id for row in result.rows for f in row.findings] == ["S7.F1", "S8.F1"]


def test_ids_continue_from_the_highest_existing_id() -> None:
    existing = [_row("S3", "https://x.example/"), _row("S9", "https://y.example/")]
    result = normalize_payload(TWO_SOURCES, existing=existing)
    assert [row.id for row in result.rows] == ["S3", "S9", "S10", "S11"]
    assert result.new_rows == 2


def test_sub_question_and_round_options_apply_to_every_new_row() -> None:
    wrapped = json.dumps({"sub_question": "sq9", "round": 3, "sources": json.loads(TWO_SOURCES)})
    result = normalize_payload(wrapped, sub_question="sq2", round=2)
    assert {(tuple(row.sub_questions), row.round) for row in result.rows} == {(("sq2",), 2)}
    unforced = normalize_payload(wrapped)
    assert {(tuple(row.sub_questions), row.round) for row in unforced.rows} == {(("sq9",), 3)}


def test_merge_into_an_existing_row_adds_only_findings_and_aliases() -> None:
    existing = [
        _row("S4", "https://a.example/1", ("Old.", "old quote"), title="Kept title", tier="raw"),
        _row("S5", "https://untouched.example/"),
    ]
    payload = json.dumps(
        {
            "url": "https://A.example/1?utm_source=feed",
            "title": "A different title",
            "tier": "snippet",
            "findings": [
                {"claim": "Old.", "quote": "old   quote"},
                {"claim": "New.", "quote": "new quote", "importance": "High"},
            ],
        }
    )
    result = normalize_payload(payload, existing=existing)
    assert result.merged == 1 and result.new_rows == 0
    merged, untouched = result.rows
    assert untouched is existing[1]
    assert merged.title == "Kept title" and merged.tier == "raw"
    assert merged.aliases == ["https://A.example/1?utm_source=feed"]
    assert [(f.id, f.claim, f.importance) for f in merged.findings] == [
        ("S4.F1", "Old.", "supporting"),
        ("S4.F2", "New.", "central"),
    ]


def test_duplicates_within_the_input_merge_fields_and_keep_every_spelling() -> None:
    payload = json.dumps(
        [
            {"url": "https://a.example/p?utm_medium=x", "sub_questions": ["sq1"]},
            {
                "url": "https://a.example/p#top",
                "title": "T",
                "sub_questions": ["sq2"],
                "cites": ["https://c.example/"],
            },
            {"url": "https://a.example/p", "findings": [{"claim": "C.", "quote": "q"}]},
        ]
    )
    result = normalize_payload(payload)
    (row,) = result.rows
    assert result.merged == 2
    assert row.aliases == ["https://a.example/p?utm_medium=x", "https://a.example/p#top"]
    assert row.title == "T"
    assert row.sub_questions == ["sq1", "sq2"]
    assert row.cites == ["https://c.example/"]
    assert [f.id for f in row.findings] == ["S1.F1"]


def test_a_source_matching_an_existing_alias_merges_into_that_row() -> None:
    existing = [_row("S1", "https://arxiv.org/abs/2401.01234", aliases=["https://doi.example/x"])]
    payload = '{"url": "https://doi.example/x", "findings": [{"claim": "C.", "quote": "q"}]}'
    result = normalize_payload(payload, existing=existing)
    assert [row.id for row in result.rows] == ["S1"]
    assert result.rows[0].findings[0].id == "S1.F1"


# --- the typed path ----------------------------------------------------------------------------

FULL_DRAFT = SourceDraft(
    url="https://A.example/report?utm_source=feed",
    title="  Annual\n report ",
    tier="raw",
    status=200,
    content_hash="sha256:" + "a" * 64,
    source_type="government",
    retrieved_at=datetime(2024, 3, 5, 10, 0, tzinfo=UTC),
    published_at=date(2024, 3, 1),
    via=Via(query="annual report", adapter="web"),
    findings=[
        FindingDraft(
            claim=" Output rose. ", quote="\u201coutput rose 4%\u201d", importance="central"
        ),
        FindingDraft(claim="Costs fell.", quote="costs fell"),
    ],
)

#: name → (drafts, options, ids of the rows); each must give the lenient path's result.
TYPED_CASES: dict[str, tuple[list[SourceDraft], dict[str, Any], list[str]]] = {
    "every field": ([FULL_DRAFT], {}, ["S1"]),
    "defaults": ([SourceDraft(url="https://b.example/")], {"start_id": 4}, ["S4"]),
    "duplicate urls": (
        [
            SourceDraft(
                url="https://a.example/p?utm_medium=x",
                findings=[FindingDraft(claim="C.", quote="q")],
            ),
            SourceDraft(
                url="https://a.example/p#top",
                title="T",
                tier="summarizer",
                findings=[
                    FindingDraft(claim="C.", quote=" q "),
                    FindingDraft(claim="D.", quote="d"),
                ],
            ),
            SourceDraft(url="https://a.example/p", tier="raw", via=Via(mcp="search")),
        ],
        {},
        ["S1"],
    ),
    "merge into existing rows": (
        [
            SourceDraft(
                url="https://A.example/1#x",
                title="A different title",
                findings=[
                    FindingDraft(claim="Old.", quote="old   quote"),
                    FindingDraft(claim="New.", quote="new quote", importance="tangential"),
                ],
            ),
            SourceDraft(
                url="https://doi.example/x", findings=[FindingDraft(claim="E.", quote="e")]
            ),
            FULL_DRAFT,
        ],
        {"existing": "rows", "sub_question": "sq2", "round": 2},
        ["S4", "S9", "S10"],
    ),
    "invalid urls are rejections": (
        [
            SourceDraft(url="ftp://a.example/f"),
            SourceDraft(url="https://ok.example/"),
            SourceDraft(url="   "),
            SourceDraft(url="a.example/page"),
        ],
        {},
        ["S1"],
    ),
    "findings without claim or quote are rejections": (
        [
            SourceDraft(
                url="https://a.example/",
                findings=[
                    FindingDraft(claim=" ", quote="q"),
                    FindingDraft(claim="c", quote=""),
                    FindingDraft(claim="kept", quote="q"),
                ],
            )
        ],
        {},
        ["S1"],
    ),
}


def _existing_rows() -> list[SourceRow]:
    return [
        _row("S4", "https://a.example/1", ("Old.", "old quote"), title="Kept title", tier="raw"),
        _row("S9", "https://arxiv.org/abs/2401.01234", aliases=["https://doi.example/x"]),
    ]


def _as_fetcher_json(drafts: list[SourceDraft]) -> str:
    return json.dumps([draft.model_dump(mode="json", exclude_none=True) for draft in drafts])


@pytest.mark.parametrize("name", list(TYPED_CASES))
def test_the_typed_path_gives_the_rows_of_the_lenient_path(name: str) -> None:
    drafts, options, ids = TYPED_CASES[name]
    if options.get("existing") == "rows":
        options = {**options, "existing": _existing_rows()}
    typed = merge_sources(drafts, **options)
    lenient = normalize_payload(_as_fetcher_json(drafts), **options)
    assert [row.id for row in typed.rows] == ids
    assert [model_dump(row) for row in typed.rows] == [model_dump(row) for row in lenient.rows]
    assert [r.as_dict() for r in typed.rejections] == [r.as_dict() for r in lenient.rejections]
    assert typed.warnings == lenient.warnings == []
    assert (typed.new_rows, typed.merged) == (lenient.new_rows, lenient.merged)


def test_typed_fields_left_none_take_the_lenient_defaults() -> None:
    result = merge_sources(
        [SourceDraft(url="https://b.example/", findings=[FindingDraft(claim="C.", quote="q")])]
    )
    expected = {
        "id": "S1",
        "url": "https://b.example/",
        "findings": [{"id": "S1.F1", "claim": "C.", "quote": "q"}],
    }
    assert _dump(result.rows) == [_expected_row(expected)]


def test_typed_drafts_are_frozen_and_refuse_unknown_values() -> None:
    with pytest.raises(ValidationError):
        SourceDraft(url="https://a.example/", tier="gold")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        FULL_DRAFT.url = "https://elsewhere.example/"  # type: ignore[misc]


def test_rows_validate_against_the_sources_schema() -> None:
    for case in CASES:
        text = (DRIFT / case["input"]).read_text(encoding="utf-8")
        for row in normalize_payload(text).rows:
            SourceRow.model_validate(model_dump(row))


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("March 5, 2024", "2024-03-05"),
        ("Mar. 5 2024", "2024-03-05"),
        ("5 Mar 2024", "2024-03-05"),
        ("05-Mar-2024", "2024-03-05"),
        ("2024/03/05", "2024-03-05"),
        ("2024.3.5", "2024-03-05"),
        ("20240305", "2024-03-05"),
        ("2024-03-05T23:30:00-08:00", "2024-03-05"),
        ("Tuesday, March 5th, 2024", "2024-03-05"),
        ("March 5, 2024 at 10:00 am EST", "2024-03-05"),
        ("13/03/2024", "2024-03-13"),
        ("03/13/2024", "2024-03-13"),
        ("03/05/2024", None),
        ("March 2024", None),
        ("2024-03", None),
        ("5 March 24", None),
        ("yesterday", None),
        ("2023-02-29", None),
    ],
)
def test_dates_are_parsed_or_refused_never_guessed(value: str, expected: str | None) -> None:
    parsed, problem = parse_date(value)
    assert (parsed.isoformat() if parsed else None) == expected
    assert (problem is None) == (expected is not None)


# --- run_normalize and the CLI -----------------------------------------------------------


@pytest.fixture
def brief(tmp_path: Path) -> Path:
    directory = tmp_path / "brief"
    directory.mkdir()
    rows = [
        # hand-written spacing: an untouched row must be written back byte for byte
        '{"id": "S1",  "url": "https://a.example/1", "findings": [{"id": "S1.F1", '
        '"claim": "Old.", "quote": "old quote"}]}',
        '{"id":"S2","url":"https://keep.example/","title":"Keep me"}',
    ]
    (directory / "sources.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return directory


def test_cli_merges_into_a_brief_atomically_and_reports(
    brief: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "fetcher.json"
    source.write_text(
        json.dumps(
            {
                "results": [
                    {
                        "url": "https://a.example/1#x",
                        "findings": [
                            {"claim": "Old.", "quote": "old quote"},
                            {"claim": "New.", "quote": "new quote"},
                        ],
                    },
                    {"url": "https://c.example/", "findings": [{"claim": "No quote."}]},
                    {"title": "no url"},
                ]
            }
        ),
        encoding="utf-8",
    )
    report = tmp_path / "report.json"
    before = (brief / "sources.jsonl").read_text(encoding="utf-8").splitlines()
    code = main(
        [
            "normalize",
            str(source),
            "--brief",
            str(brief),
            "--report",
            str(report),
            "--sub-question",
            "sq3",
            "--round",
            "2",
        ]
    )
    assert code == 0
    after = (brief / "sources.jsonl").read_text(encoding="utf-8").splitlines()
    assert after[1] == before[1]  # untouched, byte for byte
    merged, _, new = (json.loads(line) for line in after)
    assert [f["id"] for f in merged["findings"]] == ["S1.F1", "S1.F2"]
    assert merged["aliases"] == ["https://a.example/1#x"]
    assert new["id"] == "S3" and new["sub_questions"] == ["sq3"] and new["round"] == 2
    err = capsys.readouterr().err.splitlines()
    assert err[:2] == [
        "rejected: $.results[1].findings[0]: finding has no quote — "
        + json.dumps('{"claim": "No quote."}'),
        "rejected: $.results[2]: source has no url — " + json.dumps('{"title": "no url"}'),
    ]
    assert err[2].startswith("normalize: kept 1 new row(s) (3 in total), merged 1 duplicate(s)")
    written = json.loads(report.read_text(encoding="utf-8"))
    assert written["rows"] == 1 and written["merged"] == 1
    wheres = [r["where"] for r in written["rejections"]]
    assert wheres == ["$.results[1].findings[0]", "$.results[2]"]
    assert set(written["rejections"][0]) == {"where", "reason", "excerpt"}
    assert written["warnings"] == []


def test_cli_writes_stdout_or_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.json"
    source.write_text(TWO_SOURCES, encoding="utf-8")
    assert main(["normalize", str(source), "--start-id", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["S4", "S5"]
    output = tmp_path / "rows.jsonl"
    assert main(["normalize", str(source), "--output", str(output)]) == 0
    assert capsys.readouterr().out == ""
    rows = [SourceRow.model_validate_json(line) for line in output.read_text().splitlines()]
    assert [row.id for row in rows] == ["S1", "S2"]


def test_cli_reads_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(TWO_SOURCES.encode())))
    assert main(["normalize", "-"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_an_empty_sources_list_is_a_valid_answer(tmp_path: Path) -> None:
    output = tmp_path / "rows.jsonl"
    source = DRIFT / "empty-sources.json"
    assert main(["normalize", str(source), "--output", str(output)]) == 0
    assert output.read_text(encoding="utf-8") == ""


def _garbage_line(size: int) -> bytes:
    chunk = b'lorem {"ipsum": [1, 2,] }} ]], "dolor\\ sit {amet [ '
    return (chunk * (size // len(chunk) + 1))[:size] + b"\n"


UNREADABLE = {
    "empty": b"",
    "blank": b"  \n\t\n",
    "truncated": b'{"sources": [{"url": "https://a.example/", "findings": [{"claim": "c", "quo',
    "truncated-array": b'[{"url": "https://a.example/"}, {"url": "https://b.exa',
    "truncated-fence": b'Here:\n```json\n{"sources": [{"url": "https://a.example/"\n',
    "binary": bytes(range(256)) * 64,
    "nul-bytes": b'{"url": "https://a.example/"}\x00\x00',
    "garbage-line-50mb": _garbage_line(50 * 1024 * 1024),
    "open-string-50mb": b'{"url": "' + b"x" * (50 * 1024 * 1024),
    "prose": b"I could not find any sources for this query.",
    "top-level-number": b"42",
    "top-level-null": b"null",
    "top-level-string": b'"no sources today"',
    "top-level-bool": b"true",
    "list-of-numbers": b"[1, 2, 3]",
    "sources-is-a-number": b'{"sources": 5}',
    "sources-is-text": b'{"sources": "none found"}',
    "unknown-object": b'{"answer": "forty-two", "confidence": 0.9}',
    "list-of-nulls": b"[null, null]",
}


@pytest.mark.parametrize("name", list(UNREADABLE))
def test_cli_refuses_unusable_input_with_exit_2_and_writes_nothing(
    name: str, brief: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "fetcher.out"
    source.write_bytes(UNREADABLE[name])
    sources_before = (brief / "sources.jsonl").read_bytes()
    report = tmp_path / "report.json"
    output = tmp_path / "rows.jsonl"
    for extra in (["--brief", str(brief)], ["--output", str(output)], []):
        code = main(["normalize", str(source), "--report", str(report), *extra])
        captured = capfd.readouterr()
        assert code == 2
        assert captured.out == ""
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1, captured.err
        assert lines[0].startswith("deep-research normalize: ")
        assert "Traceback" not in captured.err
    assert (brief / "sources.jsonl").read_bytes() == sources_before
    assert not report.exists() and not output.exists()
    assert sorted(p.name for p in brief.iterdir()) == ["sources.jsonl"]


def test_messages_say_what_was_expected() -> None:
    with pytest.raises(UnreadableInput, match="expected fetcher JSON"):
        normalize_payload('{"sources": [')
    with pytest.raises(SchemaViolation, match="expected a source object with a url"):
        normalize_payload('{"sources": 5}')


def test_oversized_input_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(normalize_io, "MAX_INPUT_BYTES", 1000)
    source = tmp_path / "big.json"
    source.write_text(json.dumps([{"url": f"https://a.example/{n}"} for n in range(100)]))
    assert main(["normalize", str(source)]) == 2
    assert "larger than 1000 bytes" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--start-id", "2"], "would reuse an id"),
        (["--start-id", "0"], "--start-id must be 1 or more"),
        (["--round", "0"], "--round must be 1 or more"),
    ],
)
def test_bad_options_are_refused_before_anything_is_written(
    args: list[str],
    message: str,
    brief: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = tmp_path / "in.json"
    source.write_text(TWO_SOURCES)
    before = (brief / "sources.jsonl").read_bytes()
    assert main(["normalize", str(source), "--brief", str(brief), *args]) == 2
    assert message in capsys.readouterr().err
    assert (brief / "sources.jsonl").read_bytes() == before


def test_missing_input_and_missing_brief_are_input_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["normalize", str(tmp_path / "absent.json")]) == 2
    source = tmp_path / "in.json"
    source.write_text(TWO_SOURCES)
    assert main(["normalize", str(source), "--brief", str(tmp_path / "no-brief")]) == 2
    assert "brief directory not found" in capsys.readouterr().err


def test_a_brief_without_sources_gets_a_new_file(tmp_path: Path) -> None:
    source = tmp_path / "in.json"
    source.write_text(TWO_SOURCES)
    options = NormalizeOptions(input=source, brief=tmp_path)
    result = run_normalize(options, normalize_payload, stdin=io.BytesIO(b""))
    assert [row.id for row in result.rows] == ["S1", "S2"]
    assert len((tmp_path / "sources.jsonl").read_text().splitlines()) == 2


def test_model_strings_are_never_used_as_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    payload = json.dumps(
        {
            "url": "https://a.example/",
            "findings": [{"claim": "c", "quote": "q"}],
            "content_hash": "../../etc/passwd",
            "output": "written.txt",
            "brief": ".",
        }
    )
    result = normalize_payload(payload)
    assert result.rows[0].content_hash is None
    assert list(tmp_path.iterdir()) == []


def test_the_shim_script_runs_normalize(tmp_path: Path) -> None:
    source = tmp_path / "in.json"
    source.write_text(TWO_SOURCES)
    script = REPO / "shared" / "scripts" / "fetcher-normalize.py"
    assert len(script.read_text(encoding="utf-8").splitlines()) <= 15
    done = subprocess.run(
        [sys.executable, str(script), str(source), "--start-id", "3"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["id"] for line in done.stdout.splitlines()] == ["S3", "S4"]
    bad = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "absent.json")],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        timeout=60,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


# --- robustness ------------------------------------------------------------------------------

_json_leaves = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["https://a.example/x", "claim", "quote", "", "2024-03-05", "High"])
)
_json_keys = st.sampled_from(
    [
        "url",
        "link",
        "title",
        "findings",
        "claims",
        "claim",
        "quote",
        "quotes",
        "sources",
        "result",
        "data",
        "importance",
        "date",
        "tier",
        "source_type",
        "error",
        "x",
    ]
) | st.text(max_size=6)
_json_values = st.recursive(
    _json_leaves,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(_json_keys, children, max_size=5)
    ),
    max_leaves=30,
)


@settings(max_examples=300, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json_values)
def test_any_json_gives_valid_rows_or_an_input_error(value: Any) -> None:
    try:
        result = normalize_payload(json.dumps(value))
    except InputError as error:
        assert "\n" not in str(error)
        return
    for row in result.rows:
        SourceRow.model_validate(model_dump(row))
    for rejection in result.rejections:
        assert "\n" not in rejection.describe()


@settings(max_examples=200, database=None)
@given(st.text(max_size=80))
def test_any_text_gives_rows_or_an_input_error(text: str) -> None:
    with contextlib.suppress(InputError):
        normalize_payload(text)


# --- any JSON value: a reported rejection, never a traceback -----------------------------------

VALID = {
    "url": "https://a.example/x",
    "findings": [{"claim": "Sales rose", "quote": "sales rose " * 5}],
}


def test_a_lone_surrogate_rejects_its_source_and_keeps_the_rest() -> None:
    bad_title = {"url": "https://b.example/y", "title": "Heat\ud800pumps"}
    result = normalize_payload(json.dumps([VALID, bad_title]))
    assert [row.url for row in result.rows] == ["https://a.example/x"]
    assert [r.where for r in result.rejections] == ["$[1].title"]
    json.dumps(result.report()).encode("utf-8")  # the report itself is writable text


def test_a_bad_duplicate_is_rejected_without_dropping_the_valid_first_copy() -> None:
    bad = {"url": "https://a.example/x", "findings": [{"claim": "Other", "quote": "q\udc00" * 20}]}
    result = normalize_payload(json.dumps([VALID, bad]))
    assert [row.url for row in result.rows] == ["https://a.example/x"]
    assert [f.claim for f in result.rows[0].findings] == ["Sales rose"]
    assert len(result.rejections) == 1


def test_a_huge_integer_is_an_input_error_or_a_rejection_never_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw = tmp_path / "raw.json"
    raw.write_text('[{"url": "https://a.example/x", "n": ' + "9" * 5000 + "}]")
    assert main(["normalize", str(raw)]) == 2
    assert "integer too long" in capsys.readouterr().err
    lines = json.dumps(VALID) + "\n" + '{"url": "https://b.example/", "n": ' + "9" * 5000 + "}\n"
    raw.write_text(lines)
    assert main(["normalize", str(raw), "--output", str(tmp_path / "rows.jsonl")]) == 0
    assert len((tmp_path / "rows.jsonl").read_text().splitlines()) == 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats()
        | st.sampled_from(["https://a.example/x", "http://b.example/"])
        | st.text(st.characters(exclude_categories=()), max_size=20),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(["url", "title", "findings", "claim", "quote", "x"]), inner
            )
        ),
        max_leaves=12,
    )
)
@example(["https://a.example/x", "\ud800"])  # a lone surrogate in a rejection's excerpt
def test_no_json_value_raises_anything_but_an_input_error(value: object) -> None:
    try:
        result = normalize_payload(json.dumps(value))
    except InputError:
        return
    for row in result.rows:
        json.dumps(model_dump(row), ensure_ascii=False).encode("utf-8")
    json.dumps(result.report(), ensure_ascii=False).encode("utf-8")


def test_a_source_found_again_keeps_every_sub_question_it_answered() -> None:
    existing = [_row("S4", "https://a.example/1", ("Old.", "old quote"), sub_questions=["sq1"])]
    payload = json.dumps({"url": "https://a.example/1", "findings": []})
    result = normalize_payload(payload, existing=existing, sub_question="sq3")
    (row,) = result.rows
    assert row.sub_questions == ["sq1", "sq3"]
    again = normalize_payload(payload, existing=result.rows, sub_question="sq3")
    assert again.rows[0] is result.rows[0]  # nothing new: the row is untouched
