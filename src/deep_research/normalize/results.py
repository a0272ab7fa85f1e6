"""What a normalization gives back: the rows, and each rejection and warning on the way."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from deep_research.models import SourceRow
from deep_research.normalize.describe import excerpt


@dataclass(frozen=True)
class Rejection:
    """Something in the input that could not become a row or a finding, and why."""

    where: str
    reason: str
    excerpt: str = ""

    def describe(self) -> str:
        tail = f" — {json.dumps(self.excerpt, ensure_ascii=False)}" if self.excerpt else ""
        return f"{self.where}: {self.reason}{tail}"

    def as_dict(self) -> dict[str, str]:
        return {"where": self.where, "reason": self.reason, "excerpt": self.excerpt}


@dataclass
class NormalizeResult:
    """The rows to write (existing rows first when merging into a brief) and what was refused.

    ``new_rows`` counts rows this input created; ``merged`` counts input sources folded into an
    existing row or into an earlier source of the same input.
    """

    rows: list[SourceRow]
    rejections: list[Rejection] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    new_rows: int = 0
    merged: int = 0

    def summary(self) -> str:
        return (
            f"normalize: kept {self.new_rows} new row(s) ({len(self.rows)} in total), "
            f"merged {self.merged} duplicate(s), {len(self.rejections)} rejection(s), "
            f"{len(self.warnings)} warning(s)"
        )

    def report(self) -> dict[str, Any]:
        return {
            "rows": self.new_rows,
            "merged": self.merged,
            "total_rows": len(self.rows),
            "rejections": [rejection.as_dict() for rejection in self.rejections],
            "warnings": list(self.warnings),
        }


class Log:
    """Collects rejections and warnings in input order."""

    def __init__(self) -> None:
        self.rejections: list[Rejection] = []
        self.warnings: list[str] = []

    def reject(self, where: str, reason: str, item: Any = None) -> None:
        self.rejections.append(Rejection(where, reason, excerpt(item)))

    def warn(self, where: str, message: str) -> None:
        self.warnings.append(f"{where}: {message}")
