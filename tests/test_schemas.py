"""Committed schemas match the models; validate reports the best error with its JSON path."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from briefs import PageSpec, page, write_brief
from conftest import REPO
from deep_research.cli import main
from deep_research.schemas import SCHEMA_MODELS, check_schemas, validate_brief, validator


def test_committed_schemas_match_the_models() -> None:
    stale = check_schemas(REPO / "schemas")
    assert not stale, f"schemas drifted from the models: {stale}; run `deep-research schemas`"


def test_drift_is_detected(tmp_path: Path) -> None:
    assert main(["schemas", "--dir", str(tmp_path)]) == 0
    assert check_schemas(tmp_path) == []
    target = tmp_path / "skeptic-vote.schema.json"
    schema = json.loads(target.read_text())
    del schema["properties"]["refuted"]
    target.write_text(json.dumps(schema))
    assert check_schemas(tmp_path) == ["skeptic-vote.schema.json"]
    assert main(["schemas", "--dir", str(tmp_path), "--check"]) == 1


@pytest.mark.parametrize("name", sorted(SCHEMA_MODELS))
def test_every_schema_compiles_as_draft_2020_12(name: str) -> None:
    assert validator(name).schema["$schema"].endswith("2020-12/schema")


@pytest.mark.parametrize(
    ("name", "value", "valid"),
    [
        ("skeptic-vote", {"refuted": True, "evidence": "x", "confidence": 0.9}, True),
        ("skeptic-vote", {"refuted": "yes", "evidence": "x", "confidence": 0.9}, False),
        ("skeptic-vote", {"refuted": True, "evidence": "x", "confidence": 1.5}, False),
        (
            "verifier-verdict",
            {"claim_id": "C1", "source_id": "S2", "quoted_span": "q", "verdict": "entails"},
            True,
        ),
        (
            "verifier-verdict",
            {"claim_id": "C1", "source_id": "S2", "quoted_span": "q", "verdict": "maybe"},
            False,
        ),
        (
            "verifier-output",
            {
                "claim_id": "C1",
                "judgements": [{"source_id": "S2", "quoted_span": "q", "verdict": "entails"}],
            },
            True,
        ),
        ("verifier-output", {"claim_id": "C1", "judgements": []}, False),
        (
            "verifier-output",
            {
                "claim_id": "C1",
                "judgements": [{"source_id": "S2", "quoted_span": "q", "verdict": "maybe"}],
            },
            False,
        ),
        ("ciber-output", {"ciber_passed": True, "consistency_failures": []}, True),
        (
            "ciber-output",
            {"ciber_passed": True, "consistency_failures": [{"claim_id": "C1"}]},
            False,
        ),
        ("source-row", {"id": "S1", "url": "https://a.example/"}, True),
        ("source-row", {"id": "S0", "url": "https://a.example/"}, False),
        ("source-row", {"id": "S1", "url": "https://a.example/", "tier": "gold"}, False),
        (
            "gate-input",
            {"id": 1, "claim": "c", "quote": "q", "source_text": "t", "label": "x"},
            True,
        ),
    ],
)
def test_validators_accept_and_reject(name: str, value: object, valid: bool) -> None:
    assert validator(name).is_valid(value) is valid


def _brief(tmp_path: Path) -> Path:
    text = page("city-budget.txt")
    quote = "approve a budget of $1.82 billion for the 2025 fiscal year"
    return write_brief(
        tmp_path,
        [PageSpec("https://harbourton-news.example/budget", text, [("Budget", quote)])],
        [{"claim": "Harbourton approved a $1.82 billion budget", "supporting": ["S1"]}],
    )


def test_validate_clean_brief(tmp_path: Path) -> None:
    report = validate_brief(_brief(tmp_path))
    assert report.ok, report.problems
    assert report.checked == {
        "claims.json": 1,
        "sources.jsonl": 1,
        "fetch-log.jsonl": 1,
        "corpus": 1,
    }


def test_validate_reports_json_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _brief(tmp_path)
    claims = json.loads((root / "claims.json").read_text())
    claims["claims"][0]["confidence"] = "certain"
    claims["claims"][0]["supporting"].append("S7")
    (root / "claims.json").write_text(json.dumps(claims))
    assert main(["validate", str(root)]) == 1
    err = capsys.readouterr().err
    assert "$.claims[0].confidence" in err
    assert "$.claims[0].supporting[1]: S7 is not in sources.jsonl" in err


def test_validate_detects_edited_corpus_and_missing_file(tmp_path: Path) -> None:
    root = _brief(tmp_path)
    corpus = next((root / "corpus").glob("*.txt"))
    corpus.write_text("a summary")
    problems = validate_brief(root).problems
    assert any("does not hash" in p for p in problems)
    corpus.unlink()
    problems = validate_brief(root).problems
    assert any("corpus/ has no such file" in p for p in problems)


def test_validate_tolerates_a_torn_last_log_line(tmp_path: Path) -> None:
    root = _brief(tmp_path)
    with (root / "fetch-log.jsonl").open("a") as log:
        log.write('{"url": "https://x.example/", "outc')
    assert validate_brief(root).ok


def test_validate_missing_brief_is_input_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(tmp_path / "nope")]) == 2
    assert "brief directory not found" in capsys.readouterr().err


def test_a_logged_fetch_whose_text_is_not_in_the_corpus_is_a_problem(tmp_path: Path) -> None:
    forged = {
        "url": "https://a.example/",
        "outcome": "ok",
        "status": 200,
        "content_hash": "sha256:" + "0" * 64,
    }
    (tmp_path / "fetch-log.jsonl").write_text(json.dumps(forged) + "\n")
    problems = validate_brief(tmp_path).problems
    assert problems == [
        f"fetch-log.jsonl logs a fetch of {forged['content_hash']} but corpus/ has no such file"
    ]


# --- an artifact the brief's stage requires --------------------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example brief through the whole chain, its report rendered."""
    from briefs import build_example

    root = build_example(tmp_path_factory.mktemp("finished"))
    assert main(["render", str(root)]) == 0
    return root


@pytest.mark.parametrize(
    ("artifact", "because"),
    [
        ("claims.json", "trace.json records the trace phase"),
        ("fetch-log.jsonl", "claims.json holds trace results decided from fetched text"),
        ("sources.jsonl", "claims.json cites sources"),
        ("trace.json", "claims.json holds trace results"),
        ("audit.json", "claims.json holds a verdict"),
    ],
)
def test_a_finished_brief_missing_an_artifact_is_invalid(
    finished: Path, tmp_path: Path, artifact: str, because: str, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "brief"
    shutil.copytree(finished, root)
    assert main(["validate", str(root)]) == 0  # the twin: the whole brief is valid
    capsys.readouterr()
    (root / artifact).unlink()
    assert main(["validate", str(root)]) == 1
    err = capsys.readouterr().err
    assert f"invalid: {artifact}: missing, but {because}\n" in err
    assert "Traceback" not in err


def test_claims_deleted_with_their_trace_are_missed_by_no_other_record(
    finished: Path, tmp_path: Path
) -> None:
    root = tmp_path / "brief"
    shutil.copytree(finished, root)
    for name in ("claims.json", "trace.json"):
        (root / name).unlink()
    assert validate_brief(root).problems == [
        "claims.json: missing, but audit.json records a verdict",
        "trace.json: missing, but audit.json records a verdict",
    ]
    (root / "audit.json").unlink()
    assert validate_brief(root).problems == [
        "claims.json: missing, but report.md was rendered from it"
    ]


def test_a_brief_between_stages_validates_as_it_stands(tmp_path: Path) -> None:
    # Adversarial twins of the above: each artifact is absent because no step wrote it yet.
    fetched = _brief(tmp_path / "fetched")
    for name in ("claims.json", "sources.jsonl"):
        (fetched / name).unlink()
    assert validate_brief(fetched).ok  # a fetch, nothing else yet
    normalized = _brief(tmp_path / "normalized")
    for name in ("claims.json", "fetch-log.jsonl"):
        (normalized / name).unlink()
    assert validate_brief(normalized).ok  # rows written as the agent stated them
    untraced = _brief(tmp_path / "untraced")
    (untraced / "fetch-log.jsonl").unlink()
    assert validate_brief(untraced).ok  # claims not traced: nothing was decided from the log
    assert main(["trace", str(untraced)]) == 1  # S1 was never fetched: unresolvable
    assert validate_brief(untraced).ok, validate_brief(untraced).problems
    (untraced / "sources.jsonl").unlink()
    assert validate_brief(untraced).problems == [
        "sources.jsonl: missing, but claims.json cites sources"
    ]
