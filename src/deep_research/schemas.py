"""JSON Schemas generated from the models, compiled validators, and ``validate`` for a brief.

The models in :mod:`deep_research.models` are the source of truth; ``schemas/*.schema.json`` are
generated from them (``deep-research schemas``) so tools in other languages can validate our
artifacts, and a test fails when the committed files drift from the models.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from pydantic import BaseModel

from deep_research import models
from deep_research.brief.layout import Brief
from deep_research.brief.readers import acyclic_build, iter_jsonl, parse_json, read_text
from deep_research.brief.writers import atomic_write_text
from deep_research.console import EXIT_OK, EXIT_VIOLATIONS, made_folder, print_json
from deep_research.errors import InputError, MissingArtifact

DRAFT = "https://json-schema.org/draft/2020-12/schema"

#: Schema file stem → model. Artifacts first, then every agent return shape.
SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "claims": models.ClaimsFile,
    "source-row": models.SourceRow,
    "trace": models.TraceFile,
    "fetch-log-entry": models.FetchLogEntry,
    "corpus-meta": models.CorpusMeta,
    "audit": models.AuditFile,
    "handoff": models.Handoff,
    "fetcher-output": models.FetcherOutput,
    "triangulator-output": models.TriangulatorOutput,
    "verifier-verdict": models.VerifierVerdict,
    "verifier-output": models.VerifierOutput,
    "skeptic-vote": models.SkepticVote,
    "ciber-output": models.CiberOutput,
    "gate-input": models.GateInput,
    "gate-result": models.GateResult,
}


def schema_for(name: str) -> dict[str, Any]:
    model = SCHEMA_MODELS[name]
    body = model.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": DRAFT, "$id": f"{name}.schema.json", **body}


def render_schema(name: str) -> str:
    return json.dumps(schema_for(name), indent=2, sort_keys=True) + "\n"


def write_schemas(directory: Path) -> list[Path]:
    made_folder(directory, option="--dir", what="the schemas folder")
    written = []
    for name in SCHEMA_MODELS:
        path = directory / f"{name}.schema.json"
        atomic_write_text(path, render_schema(name))
        written.append(path)
    return written


def check_schemas(directory: Path) -> list[str]:
    """File names under ``directory`` that are missing or differ from the models."""
    stale = []
    for name in SCHEMA_MODELS:
        path = directory / f"{name}.schema.json"
        if not path.is_file() or path.read_text(encoding="utf-8") != render_schema(name):
            stale.append(path.name)
    return stale


@cache
def validator(name: str) -> Draft202012Validator:
    """A compiled validator; compiling once is ~40× cheaper than ``jsonschema.validate``."""
    schema = schema_for(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)


def best_error(name: str, value: Any) -> ValidationError | None:
    error: ValidationError | None = best_match(validator(name).iter_errors(value))
    return error


# --- validate a brief -----------------------------------------------------------------------


@dataclass
class ValidationReport:
    """What ``deep-research validate`` found: counts per artifact and every problem."""

    brief: Path
    checked: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict[str, Any]:
        return {
            "brief": str(self.brief),
            "ok": self.ok,
            "checked": self.checked,
            "problems": self.problems,
        }


def validate_brief(root: Path) -> ValidationReport:
    """Validate every artifact present in ``root``; a missing brief directory is an input error."""
    if not root.is_dir():
        raise MissingArtifact(f"brief directory not found: {root}")
    brief = Brief(root)
    artifacts = (brief.claims_path, brief.sources_path, brief.trace_path, brief.fetch_log_path)
    if not any(path.exists() for path in artifacts):
        raise MissingArtifact(
            f"{root} is not a brief: it holds none of claims.json, sources.jsonl, trace.json, "
            "fetch-log.jsonl; pass a brief directory (state/briefs/<name>)"
        )
    report = ValidationReport(brief=root)
    claims = _validate_document(report, brief.claims_path, "claims")
    trace = _validate_document(report, brief.trace_path, "trace")
    source_ids, hashes = _validate_lines(report, brief.sources_path, "source-row")
    _, fetched = _validate_lines(
        report, brief.fetch_log_path, "fetch-log-entry", tolerate_torn_tail=True
    )
    _validate_corpus(report, brief)
    for content_hash in sorted(fetched):
        # A successful fetch stores its text before it is logged: a line naming absent text
        # was not written by a fetch.
        if not brief.corpus_path(content_hash).is_file():
            report.problems.append(
                f"fetch-log.jsonl logs a fetch of {content_hash} but corpus/ has no such file"
            )
    _cross_check(report, brief, claims, source_ids, hashes)
    report.problems.extend(_missing_artifacts(brief, claims, trace))
    return report


def _describe(error: ValidationError, prefix: str) -> str:
    path = error.json_path.replace("$", prefix, 1)
    return f"{path}: {error.message}"


def _validate_document(report: ValidationReport, path: Path, name: str) -> Any:
    """The document as parsed (None if absent or not JSON), its problems in ``report``."""
    if not path.exists():
        return None
    try:
        value = parse_json(read_text(path, what=path.name), what=str(path))
    except InputError as exc:
        report.problems.append(str(exc))
        return None
    report.checked[path.name] = 1
    error = best_error(name, value)
    if error is not None:
        report.problems.append(f"{path.name} {_describe(error, '$')}")
    return value


def _validate_lines(
    report: ValidationReport, path: Path, name: str, *, tolerate_torn_tail: bool = False
) -> tuple[set[str], set[str]]:
    ids: set[str] = set()
    hashes: set[str] = set()
    if not path.exists():
        return ids, hashes
    try:
        text = read_text(path, what=path.name)
        if tolerate_torn_tail and text and not text.endswith("\n"):
            # An append-only log may lose its last line in a crash; earlier lines stand.
            text = text[: text.rfind("\n") + 1]
        with acyclic_build():
            rows = list(iter_jsonl(text, what=str(path)))
    except InputError as exc:
        report.problems.append(str(exc))
        return ids, hashes
    report.checked[path.name] = len(rows)
    for number, value in rows:
        error = best_error(name, value)
        if error is not None:
            report.problems.append(f"{path.name} {_describe(error, f'line {number}: $')}")
            continue
        if name == "fetch-log-entry" and _fetched(value):
            hashes.add(value["content_hash"])
        if name == "source-row":
            if value["id"] in ids:
                report.problems.append(f"{path.name} line {number}: duplicate id {value['id']}")
            ids.add(value["id"])
            if value.get("content_hash"):
                hashes.add(value["content_hash"])
    return ids, hashes


def _fetched(entry: dict[str, Any]) -> bool:
    """The line claims a page fetch that stored text: ok, 2xx, with a content hash."""
    status = entry.get("status")
    return (
        entry.get("outcome") == "ok"
        and isinstance(status, int)
        and 200 <= status < 300
        and bool(entry.get("content_hash"))
    )


def _validate_corpus(report: ValidationReport, brief: Brief) -> None:
    if not brief.corpus_dir.is_dir():
        return
    texts = 0
    for path in sorted(brief.corpus_dir.iterdir()):
        if path.name.endswith(".meta.json"):
            _validate_document(report, path, "corpus-meta")
            report.checked.pop(path.name, None)
            continue
        if path.suffix != ".txt":
            continue
        texts += 1
        try:
            brief.read_corpus("sha256:" + path.stem)
        except InputError as exc:
            report.problems.append(str(exc))
    report.checked["corpus"] = texts


def _cross_check(
    report: ValidationReport, brief: Brief, claims: Any, source_ids: set[str], hashes: set[str]
) -> None:
    for content_hash in sorted(hashes):
        if not brief.corpus_path(content_hash).is_file():
            report.problems.append(
                f"sources.jsonl cites {content_hash} but corpus/ has no such file"
            )
    if claims is None or not source_ids:
        return
    for index, claim in enumerate(_claims(claims)):
        for position, source in enumerate(claim.get("supporting") or []):
            if isinstance(source, str) and source not in source_ids:
                report.problems.append(
                    f"claims.json $.claims[{index}].supporting[{position}]: "
                    f"{source} is not in sources.jsonl"
                )


# --- what a brief at its stage must hold ------------------------------------------------------

#: Gates that read claims.json, in pipeline order: a brief whose trace.json records one of them
#: had a claims.json.
_CLAIMS_PHASES = (
    "trace", "contradictions", "entail", "votes", "triangulate", "refetch", "ciber", "verdict",
)  # fmt: skip
#: Trace reasons a pair gets without any fetch-log entry for its source; every other outcome
#: was decided from a logged attempt (docs/contracts.md §4.1 step 1).
_LOGLESS_REASONS = frozenset({"unknown_source", "not_fetched"})


def _missing_artifacts(brief: Brief, claims: Any, trace: Any) -> list[str]:
    """One problem per artifact the brief's own records say was written but is absent
    (docs/contracts.md §1).

    A brief is built in stages, and one stopped between them (a headless run killed after any
    phase, a plugin run mid-way, a fetch with nothing else yet) validates as it stands: an
    artifact is required only when another one records a step that wrote it or read it. So a
    deleted claims.json is found through trace.json, audit.json or report.md, a deleted
    fetch-log.jsonl through the trace results decided from it, and so on.
    """
    phases = _phases(trace)
    completed = phases.get("run", {}).get("completed")
    claims_read = [name for name in _CLAIMS_PHASES if name in phases]
    audit = _audit_summary(brief)
    document = claims if isinstance(claims, dict) else {}
    traced = document.get("verify_passed") is not None
    decided = document.get("verdict") is not None
    audit_path = brief.root / "audit.json"
    # (artifact, the record that says it was written, whether that record says so), first
    # reason per artifact shown.
    rules = [
        (brief.claims_path, f"trace.json records the {(claims_read or [''])[0]} phase",
         bool(claims_read)),
        (brief.claims_path, "trace.json records the run's claims phase",
         isinstance(completed, list) and "claims" in completed),
        (brief.claims_path, "audit.json records a verdict", audit is not None),
        (brief.claims_path, "report.md was rendered from it", (brief.root / "report.md").exists()),
        (brief.trace_path, "claims.json holds trace results", traced),
        (brief.trace_path, "claims.json holds a verdict", decided),
        (brief.trace_path, "audit.json records a verdict", audit is not None),
        (brief.sources_path, "claims.json cites sources", _cites(document)),
        (brief.sources_path, "audit.json records sources", audit is not None and audit[0]),
        (brief.fetch_log_path, "claims.json holds trace results decided from fetched text",
         _decided_from_the_log(document)),
        (brief.fetch_log_path, "audit.json records fetch attempts",
         audit is not None and audit[1]),
        (audit_path, "claims.json holds a verdict", decided),
        (audit_path, "trace.json records the verdict phase", "verdict" in phases),
    ]  # fmt: skip
    why: dict[Path, str] = {}
    for path, reason, holds in rules:
        if holds and not path.exists():
            why.setdefault(path, reason)
    return [f"{path.name}: missing, but {reason}" for path, reason in why.items()]


def _phases(trace: Any) -> dict[str, dict[str, Any]]:
    phases = trace.get("phases") if isinstance(trace, dict) else None
    if not isinstance(phases, dict):
        return {}
    return {name: value for name, value in phases.items() if isinstance(value, dict)}


def _audit_summary(brief: Brief) -> tuple[bool, bool] | None:
    """Whether audit.json (if it reads as JSON at all) lists sources, and fetch attempts."""
    path = brief.root / "audit.json"
    if not path.exists():
        return None
    try:
        value = parse_json(read_text(path, what=path.name), what=str(path))
    except InputError:
        return (False, False)
    if not isinstance(value, dict):
        return (False, False)
    return (bool(value.get("sources")), bool(value.get("fetches")))


def _cites(document: dict[str, Any]) -> bool:
    return any(claim.get("supporting") or claim.get("findings") for claim in _claims(document))


def _decided_from_the_log(document: dict[str, Any]) -> bool:
    """A trace result only a fetch-log entry could have produced: any outcome but
    ``unresolvable``, or one for a reason other than the source never being fetched."""
    units = [*_claims(document)]
    stripped = document.get("stripped")
    if isinstance(stripped, list):
        units += [item for item in stripped if isinstance(item, dict)]
    for unit in units:
        evidence = unit.get("evidence")
        for item in evidence if isinstance(evidence, list) else []:
            checks = item.get("checks") if isinstance(item, dict) else None
            if not isinstance(checks, dict):
                continue
            reasons = checks.get("reasons")
            if checks.get("outcome") != "unresolvable" or not (
                isinstance(reasons, list) and set(reasons) <= _LOGLESS_REASONS
            ):
                return True
    return False


def _claims(document: Any) -> Iterator[dict[str, Any]]:
    if isinstance(document, dict) and isinstance(document.get("claims"), list):
        yield from (claim for claim in document["claims"] if isinstance(claim, dict))


# --- the commands ---------------------------------------------------------------------------


def cmd_validate(args: argparse.Namespace) -> int:
    report = validate_brief(Path(args.brief))
    print_json(report.as_dict())
    for problem in report.problems:
        print(f"invalid: {problem}", file=sys.stderr)
    return EXIT_OK if report.ok else EXIT_VIOLATIONS


def cmd_schemas(args: argparse.Namespace) -> int:
    target = Path(args.dir)
    if args.check:
        stale = check_schemas(target)
        for name in stale:
            print(f"stale: {target / name} (run: deep-research schemas)", file=sys.stderr)
        return EXIT_VIOLATIONS if stale else EXIT_OK
    for path in write_schemas(target):
        print(path)
    return EXIT_OK


__all__ = [
    "SCHEMA_MODELS",
    "ValidationReport",
    "best_error",
    "check_schemas",
    "render_schema",
    "validate_brief",
    "validator",
    "write_schemas",
]
