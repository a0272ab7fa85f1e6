"""Build real brief directories on disk for tests: corpus files, fetch log, sources, claims.

Briefs are written the way the fetcher and normalizer write them (content-addressed corpus,
append-only log), so the gates under test read exactly what they read in production.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from conftest import FIXTURES

FetchOutcome = Literal["ok", "error", "refused", "never"]


def page(name: str) -> str:
    return (FIXTURES / "pages" / name).read_text(encoding="utf-8")


def content_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass
class PageSpec:
    """One source: the text we fetched (or not) and the findings extracted from it."""

    url: str
    text: str | None
    findings: list[tuple[str, str]] = field(default_factory=list)  # (claim, quote)
    fetch: FetchOutcome = "ok"
    status: int = 200
    source_type: str = "news"
    owner: str | None = None
    cites: list[str] = field(default_factory=list)
    sub_questions: list[str] = field(default_factory=list)
    tier: str | None = None  # default: raw when text was kept, snippet otherwise
    retrieved_at: str = "2024-05-01T10:00:00Z"
    title: str | None = None
    published_at: str | None = None
    importance: list[str] = field(default_factory=list)  # per finding, default "supporting"


def write_brief(
    root: Path,
    pages: list[PageSpec],
    claims: list[dict[str, Any]],
    document: dict[str, Any] | None = None,
    trace: dict[str, Any] | None = None,
) -> Path:
    """Write a brief; claim dicts need ``claim`` and ``supporting`` (ids S1.. in page order).

    ``document`` adds top-level claims.json fields; ``trace`` is written as trace.json.
    """
    (root / "corpus").mkdir(parents=True, exist_ok=True)
    log_lines = []
    rows = []
    for number, spec in enumerate(pages, start=1):
        digest = None
        if spec.text is not None:
            digest = content_hash(spec.text)
            (root / "corpus" / f"{digest.removeprefix('sha256:')}.txt").write_text(
                spec.text, encoding="utf-8"
            )
        if spec.fetch != "never":
            log_lines.append(
                {
                    "url": spec.url,
                    "final_url": spec.url,
                    "outcome": spec.fetch,
                    "status": spec.status if spec.fetch == "ok" else None,
                    "reason": None if spec.fetch == "ok" else f"{spec.fetch} in test",
                    "content_hash": digest if spec.fetch == "ok" else None,
                    "tier": spec.tier or "raw",
                    "retrieved_at": spec.retrieved_at,
                }
            )
        rows.append(
            {
                "id": f"S{number}",
                "url": spec.url,
                "title": spec.title,
                "published_at": spec.published_at,
                "retrieved_at": spec.retrieved_at,
                "source_type": spec.source_type,
                "owner": spec.owner,
                "tier": spec.tier or ("raw" if digest else "snippet"),
                "content_hash": digest,
                "status": spec.status if spec.fetch == "ok" else None,
                "sub_questions": spec.sub_questions,
                "cites": spec.cites,
                "findings": [
                    {
                        "id": f"S{number}.F{index}",
                        "claim": claim,
                        "quote": quote,
                        "importance": (spec.importance[index - 1 : index] or ["supporting"])[0],
                    }
                    for index, (claim, quote) in enumerate(spec.findings, start=1)
                ],
            }
        )
    (root / "fetch-log.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in log_lines), encoding="utf-8"
    )
    (root / "sources.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )
    body = {
        "topic": "test-brief",
        "claims": [
            {"id": f"C{number}", "sq": "sq1", **claim} for number, claim in enumerate(claims, 1)
        ],
        **(document or {}),
    }
    (root / "claims.json").write_text(json.dumps(body, indent=2), encoding="utf-8")
    if trace is not None:
        (root / "trace.json").write_text(json.dumps(trace, indent=2), encoding="utf-8")
    return root


def read_claims(root: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((root / "claims.json").read_text(encoding="utf-8"))
    return value
