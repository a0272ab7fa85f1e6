"""Measure the gate on labelled data: the figures benchmarks/RESULTS.md reports.

Two kinds of labelled rows, both in the gate's batch-input shape plus labels:

* **quote location** (``expected`` located/not_located, ``span``, ``kind``): the share of true
  quotes the gate locates at exactly the labelled span, per kind, and how many foreign quotes it
  locates at all (the target is none);
* **literal fidelity** (``expected`` supported/not_supported, ``kind`` numeric/non_numeric): on
  numeric rows, the share of ``not_supported`` rows the gate rejects *on a number or date*, and
  the share of ``supported`` rows it wrongly rejects on a number or date. A missing proper name is
  a separate signal and is reported separately, never folded into either figure; so is the whole
  gate's verdict on the numeric rows (rejected for any reason: a number, a name, low overlap), so
  that a number rule and a name rule are never confused.

Both run the gate's own steps (:func:`deep_research.gates.support.check_support`), not a
re-creation. A row's ``title`` (the page its sentence comes from) is the document context the
gate may read, as a brief's source title is; the name figure is also reported without it.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deep_research.brief.readers import iter_jsonl, read_text
from deep_research.errors import SchemaViolation, UnreadableInput
from deep_research.gates.literals import SourceFacts
from deep_research.gates.locate import Document
from deep_research.gates.support import Support, check_support

Row = dict[str, Any]

#: Where the labelled development rows ship with the repository (benchmarks/data/README.md names
#: their sources and licences).
DEFAULT_EVAL_DIR = Path(__file__).resolve().parents[3] / "benchmarks" / "data"


_REQUIRED = ("id", "claim", "quote", "source_text", "expected", "kind")


def load_rows(path: Path) -> list[Row]:
    """Labelled rows of one JSONL file, each checked for the keys the measures read."""
    rows = []
    for number, value in iter_jsonl(read_text(path, what="eval file"), what=str(path)):
        missing = [key for key in _REQUIRED if not isinstance(value, dict) or key not in value]
        if missing:
            raise SchemaViolation(
                f"missing {', '.join(missing)}", json_path=f"line {number}: $", source=str(path)
            )
        if not all(isinstance(value[key], str) for key in _REQUIRED[1:]):
            raise SchemaViolation(
                "claim, quote, source_text, expected and kind must be strings",
                json_path=f"line {number}: $",
                source=str(path),
            )
        rows.append(value)
    if not rows:
        raise UnreadableInput(f"{path} has no rows; expected labelled JSONL")
    return rows


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


@dataclass
class LocationFigures:
    total: Counter[str] = field(default_factory=Counter)
    exact: Counter[str] = field(default_factory=Counter)
    foreign: int = 0
    foreign_located: int = 0
    seconds: float = 0.0
    misses: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        true_total = sum(self.total.values())
        return {
            "exact_span_share": _share(sum(self.exact.values()), true_total),
            "true_quotes": true_total,
            "by_kind": {
                kind: _share(self.exact[kind], self.total[kind]) for kind in sorted(self.total)
            },
            "foreign_quotes": self.foreign,
            "foreign_accepted": self.foreign_located,
            "seconds": round(self.seconds, 2),
        }


#: The Penn Treebank escapes VitaminC writes titles with, read back to the characters they stand
#: for ("Men in Black-COLON- International").
_TREEBANK_ESCAPES = {
    "-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}",
    "-COLON-": ":",
}  # fmt: skip


def row_title(row: Row) -> str | None:
    """A row's page title as the page writes it, or None."""
    title = row.get("title")
    if not isinstance(title, str) or not title.strip():
        return None
    for escape, character in _TREEBANK_ESCAPES.items():
        title = title.replace(escape, character)
    return title


def _support(row: Row, documents: dict[str, Document], *, titled: bool = True) -> Support:
    text = row["source_text"]
    document = documents.get(text)
    if document is None:
        document = documents[text] = Document(text)
    facts = SourceFacts(title=row_title(row)) if titled else None
    return check_support(row["claim"], [row["quote"]], document, facts=facts)


def measure_location(rows: Iterable[Row]) -> LocationFigures:
    figures = LocationFigures()
    documents: dict[str, Document] = {}
    started = time.perf_counter()
    for row in rows:
        located = _support(row, documents).quotes[0].located
        if row["expected"] == "not_located":
            figures.foreign += 1
            if located is not None:
                figures.foreign_located += 1
                figures.misses.append(f"{row['id']}: foreign quote located ({located.method})")
            continue
        figures.total[row["kind"]] += 1
        span = [located.start, located.end] if located is not None else None
        if span == list(row.get("span") or []):
            figures.exact[row["kind"]] += 1
        else:
            figures.misses.append(f"{row['id']}: expected {row['span']}, got {span}")
    figures.seconds = time.perf_counter() - started
    return figures


@dataclass
class LiteralFigures:
    counts: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    misses: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        c = self.counts
        return {
            "numeric_not_supported_rejected_on_number_or_date": _share(
                c["refute_flagged"], c["refute"]
            ),
            "numeric_supported_rejected_on_number_or_date": _share(
                c["support_flagged"], c["support"]
            ),
            "numeric_supported_missing_a_name": _share(c["support_name"], c["support"]),
            "numeric_supported_missing_a_name_without_title": _share(
                c["support_name_untitled"], c["support"]
            ),
            "numeric_rows_using_context": _share(c["context_used"], c["refute"] + c["support"]),
            "numeric_not_supported_gate_rejected": _share(c["refute_rejected"], c["refute"]),
            "numeric_supported_gate_rejected": _share(c["support_rejected"], c["support"]),
            "numeric_not_supported_rows": c["refute"],
            "numeric_supported_rows": c["support"],
            "non_numeric_not_supported_gate_rejected": _share(
                c["nn_refute_rejected"], c["nn_refute"]
            ),
            "non_numeric_supported_gate_rejected": _share(
                c["nn_support_rejected"], c["nn_support"]
            ),
            "seconds": round(self.seconds, 2),
        }


def measure_literals(rows: Iterable[Row]) -> LiteralFigures:
    figures = LiteralFigures()
    documents: dict[str, Document] = {}
    started = time.perf_counter()
    for row in rows:
        support = _support(row, documents)
        refute = row["expected"] == "not_supported"
        if row["kind"] != "numeric":
            key = "nn_refute" if refute else "nn_support"
            figures.counts[key] += 1
            figures.counts[f"{key}_rejected"] += support.outcome != "supported"
            continue
        literals = support.literals
        flagged = bool(literals and literals.numeric_missing)
        figures.counts["context_used"] += bool(literals and literals.context)
        figures.counts["refute_rejected" if refute else "support_rejected"] += (
            support.outcome != "supported"
        )
        if refute:
            figures.counts["refute"] += 1
            figures.counts["refute_flagged"] += flagged
            if not flagged:
                figures.misses.append(f"{row['id']}: not_supported row passed the number check")
        else:
            figures.counts["support"] += 1
            figures.counts["support_flagged"] += flagged
            figures.counts["support_name"] += bool(literals and literals.names_missing)
            untitled = _support(row, documents, titled=False).literals
            figures.counts["support_name_untitled"] += bool(untitled and untitled.names_missing)
            if flagged and literals is not None:
                missing = ", ".join(token.text for token in literals.numeric_missing)
                figures.misses.append(f"{row['id']}: supported row rejected on {missing}")
    figures.seconds = time.perf_counter() - started
    return figures


def format_figures(name: str, figures: dict[str, Any]) -> list[str]:
    lines = [f"{name}:"]
    for key, value in figures.items():
        if isinstance(value, dict):
            inner = ", ".join(f"{k} {v}" for k, v in value.items())
            lines.append(f"  {key}: {inner}")
        else:
            lines.append(f"  {key}: {value}")
    return lines


def report_lines(
    location: LocationFigures | None, literals: LiteralFigures | None, show: int = 0
) -> Sequence[str]:
    lines: list[str] = []
    for name, figures in (("quote location", location), ("literal fidelity", literals)):
        if figures is None:
            continue
        lines.extend(format_figures(name, figures.as_dict()))
        lines.extend(f"  miss: {miss}" for miss in figures.misses[:show])
    return lines
