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


def write_brief(root: Path, pages: list[PageSpec], claims: list[dict[str, Any]]) -> Path:
    """Write a brief; claim dicts need ``claim`` and ``supporting`` (ids S1.. in page order)."""
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
                    "tier": "raw",
                    "retrieved_at": "2024-05-01T10:00:00Z",
                }
            )
        rows.append(
            {
                "id": f"S{number}",
                "url": spec.url,
                "title": None,
                "retrieved_at": "2024-05-01T10:00:00Z",
                "source_type": spec.source_type,
                "tier": "raw" if digest else "snippet",
                "content_hash": digest,
                "status": spec.status if spec.fetch == "ok" else None,
                "findings": [
                    {"id": f"S{number}.F{index}", "claim": claim, "quote": quote}
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
    document = {
        "topic": "test-brief",
        "claims": [
            {"id": f"C{number}", "sq": "sq1", **claim} for number, claim in enumerate(claims, 1)
        ],
    }
    (root / "claims.json").write_text(json.dumps(document, indent=2), encoding="utf-8")
    return root


def read_claims(root: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((root / "claims.json").read_text(encoding="utf-8"))
    return value
