"""What a check says: the JSON a program reads, the lines a person reads, the annotated copy.

JSON: ``{"sentences": [{"text", "cites", "verdict", "reasons", "evidence"}], "summary":
{"cited", "supported", "flagged", "unreachable", "not_checked"}}`` — ``evidence`` is ``{"url",
"span", "passage"}`` (the span in the page's retained text) or null, with the model's ``vote``
in it when one was cast. ``flagged`` counts the sentences a reader must look at (partially
supported, unsupported, unreachable), ``unreachable`` those of them with no page read;
``cited`` every sentence that cites something, ``not_checked`` every sentence left unjudged
(no citation, or past a cap).

stdout: one line per flagged sentence — its opening words, its verdict and reasons, what the
page says instead when a figure or a date differs, and the page — then one summary line. The
annotated copy is the report's Markdown with a mark after each checked sentence and a table of
the flagged ones with the page's own words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from deep_research.check.judge import FLAGGED, Row, page_says

#: Characters of a sentence's opening shown on its line.
OPENING_CHARS = 72
#: Characters of a passage shown in the annotated table.
PASSAGE_CHARS = 400
MARKS = {
    "supported": "✓ supported",
    "partially_supported": "⚠ partially supported",
    "unsupported": "✗ unsupported",
    "unreachable": "⊘ unreachable",
}


def row_json(row: Row) -> dict[str, Any]:
    evidence: dict[str, Any] | None = None
    if row.evidence is not None:
        evidence = {
            "url": row.evidence.url,
            "span": list(row.evidence.span),
            "passage": row.evidence.passage,
        }
    if row.vote is not None:
        evidence = evidence or {}
        evidence["vote"] = row.vote.model_dump(mode="json", exclude_none=True)
    return {
        "text": row.sentence.text,
        "cites": [cite.target for cite in row.sentence.cites],
        "verdict": row.verdict,
        "reasons": list(row.reasons),
        "evidence": evidence,
    }


def summary(rows: Sequence[Row]) -> dict[str, int]:
    counts = Counter(row.verdict for row in rows)
    return {
        "cited": sum(1 for row in rows if row.sentence.cites or row.sentence.unresolved),
        "supported": counts["supported"],
        "flagged": sum(counts[verdict] for verdict in FLAGGED),
        "unreachable": counts["unreachable"],
        "not_checked": counts["not_checked"],
    }


def result_json(rows: Sequence[Row]) -> dict[str, Any]:
    return {"sentences": [row_json(row) for row in rows], "summary": summary(rows)}


def opening(text: str, limit: int = OPENING_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def flagged_line(row: Row) -> str:
    """``unsupported: "Opening words…" — quote_not_in_source; the page says "79" <url>``"""
    line = f'{row.verdict}: "{opening(row.sentence.text)}" — {", ".join(row.reasons)}'
    said = page_says(row)
    if said:
        line += f"; the page says {', '.join(said)}"
    if row.evidence is not None:
        line += f" <{row.evidence.url}>"
    elif row.sentence.cites:
        line += f" <{row.sentence.cites[0].target}>"
    return line


def summary_line(counts: dict[str, int], folder: str) -> str:
    if not counts["cited"]:
        return f"check: no sentence of the report cites anything; nothing to check · {folder}"
    return (
        f"check: {counts['cited']} cited sentences, {counts['supported']} supported, "
        f"{counts['flagged']} flagged ({counts['unreachable']} unreachable), "
        f"{counts['not_checked']} not checked · {folder}"
    )


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def annotate(markdown: str, rows: Sequence[Row]) -> str:
    """The report's Markdown with a mark after each checked sentence, and the flagged table."""
    marked = markdown
    for row in sorted(rows, key=lambda r: r.sentence.end, reverse=True):
        if row.verdict not in MARKS:
            continue
        why = f": {', '.join(row.reasons)}" if row.reasons else ""
        mark = f" [{MARKS[row.verdict]}{why}]"
        end = row.sentence.end
        marked = marked[:end] + mark + marked[end:]
    flagged = [row for row in rows if row.flagged]
    lines = [marked.rstrip("\n"), "", "---", "", "## Checked by deep-research check", ""]
    if not flagged:
        lines.append("No sentence was flagged.")
        return "\n".join(lines) + "\n"
    lines += [
        "| # | sentence | verdict | reasons | the page's own words | page |",
        "|---|---|---|---|---|---|",
    ]
    for row in flagged:
        words = row.evidence.passage if row.evidence is not None else ""
        if len(words) > PASSAGE_CHARS:
            words = words[: PASSAGE_CHARS - 1] + "…"
        page = row.evidence.url if row.evidence is not None else ""
        if not page and row.sentence.cites:
            page = row.sentence.cites[0].target
        lines.append(
            f"| {row.sentence.number} | {_cell(opening(row.sentence.text))} | {row.verdict} | "
            f"{_cell(', '.join(row.reasons))} | {_cell(words)} | {_cell(page)} |"
        )
    return "\n".join(lines) + "\n"
