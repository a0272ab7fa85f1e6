"""The check folder: what a check fetched and decided, and its offline re-derivation.

``<folder>/`` holds a copy of the report as read (``report.md`` or ``report.html``), the pages
fetched for it (``corpus/``, ``fetch-log.jsonl``: the fetcher's own files, as in a brief),
``check.json`` (the result, with the settings it was made under and every model vote) and
``annotated.md``. Verdicts are derived from these files alone (:func:`derive`), both when a check
runs — after its fetches — and when ``deep-research verify --offline FOLDER`` re-derives them
with the network switched off, so an untouched folder re-derives to exactly what it holds.

Caps: at most :data:`MAX_CHECKED_URLS` distinct URLs are fetched and
:data:`MAX_CHECKED_SENTENCES` sentences judged, in reading order; a cited sentence past either is
``not_checked`` (``over_citation_cap``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from deep_research.brief.layout import Brief
from deep_research.brief.readers import parse_json, read_text
from deep_research.brief.writers import atomic_write_json, atomic_write_text
from deep_research.check.judge import OVER_CITATION_CAP, Row, judge, not_checked, with_vote
from deep_research.check.output import annotate, result_json
from deep_research.check.pages import Page, fetch_missing, read_pages
from deep_research.check.reading import Report, parse_report, read_report
from deep_research.console import made_folder
from deep_research.decide.verify import VerifyReport
from deep_research.errors import InputError, MissingArtifact
from deep_research.fetch.fetcher import FetchPolicy
from deep_research.fetch.netpolicy import offline as network_off
from deep_research.gates.citations import Sentence, split_sentences
from deep_research.models import VoteRecord

RESULT_FILE = "check.json"
ANNOTATED_FILE = "annotated.md"
REPORT_COPIES = {"markdown": "report.md", "html": "report.html"}
#: Distinct URLs one check fetches at most (each up to the fetcher's 15 s).
MAX_CHECKED_URLS = 100
#: Sentences one check judges at most.
MAX_CHECKED_SENTENCES = 2000

Progress = Callable[[str], None]
Voter = Callable[[Sequence[Row], dict[str, Page]], dict[int, VoteRecord]]


@dataclass(frozen=True)
class Checked:
    folder: Path
    rows: list[Row]
    result: dict[str, Any]


def plan(sentences: Sequence[Sentence]) -> tuple[list[str], set[int]]:
    """The URLs to fetch and the sentences to judge, within the caps, in reading order."""
    urls: list[str] = []
    judged: set[int] = set()
    for sentence in sentences[:MAX_CHECKED_SENTENCES]:
        wanted = [c.target for c in sentence.cites if not c.local]
        new = [url for url in dict.fromkeys(wanted) if url not in urls]
        if len(urls) + len(new) > MAX_CHECKED_URLS:
            continue
        urls.extend(new)
        judged.add(sentence.number)
    return urls, judged


def derive(
    folder: Brief, report: Report, votes: Mapping[int, VoteRecord]
) -> tuple[list[Row], dict[str, Page]]:
    """Every sentence's row, from the report and the folder's fetched pages alone, with the
    recorded votes applied; and the pages read."""
    sentences = split_sentences(report.markdown)
    urls, judged = plan(sentences)
    fetched = read_pages(folder, urls)
    rows = []
    for sentence in sentences:
        cited = bool(sentence.cites or sentence.unresolved)
        if cited and sentence.number not in judged:
            row = not_checked(sentence, OVER_CITATION_CAP)
        else:
            row = judge(sentence, fetched)
        if sentence.number in votes:
            row = with_vote(row, votes[sentence.number])
        rows.append(row)
    pages = {url: page for url, page in fetched.items() if isinstance(page, Page)}
    return rows, pages


def default_folder(report: Path) -> Path:
    """A fresh folder under the state folder: ``<state>/checks/<report name>-<UTC stamp>``."""
    from deep_research.run.driver import state_root

    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", report.stem).strip("-")[:40] or "report"
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    return state_root(None) / "checks" / f"{stem}-{stamp}"


def _open_folder(folder: Path) -> Brief:
    if (folder / "claims.json").exists():
        raise InputError(f"--state {folder} is a research brief; give a folder of its own")
    ours = (folder / RESULT_FILE).exists() or (folder / "fetch-log.jsonl").exists()
    if folder.is_dir() and not ours and any(folder.iterdir()):
        # The check writes report.md and annotated.md: never over someone's own files.
        raise InputError(
            f"--state {folder} holds other files; give a new or empty folder, or a check folder"
        )
    return Brief(made_folder(folder, option="--state", what="the check folder"))


def run_check(
    path: Path,
    folder: Path | None = None,
    *,
    reasoner: str = "extractive",
    voter: Voter | None = None,
    policy: FetchPolicy | None = None,
    progress: Progress | None = None,
) -> Checked:
    """Read the report, fetch what it cites into ``folder`` (default: :func:`default_folder`),
    judge every sentence (``voter`` casting the model's votes with ``--reasoner claude``), and
    write the result and the annotated copy. A bad report is refused before anything is
    written."""
    report = read_report(path)
    folder = folder if folder is not None else default_folder(path)
    brief = _open_folder(folder)
    with brief.lock():
        copy = REPORT_COPIES[report.format]
        atomic_write_text(folder / copy, report.data.decode("utf-8-sig"))
        sentences = split_sentences(report.markdown)
        urls, _ = plan(sentences)
        fetch_missing(brief, urls, policy=policy, progress=progress)
        rows, pages = derive(brief, report, {})
        if voter is not None:
            votes = voter(rows, pages)
            rows = [
                with_vote(row, votes[row.sentence.number]) if row.sentence.number in votes else row
                for row in rows
            ]
        result = result_json(rows)
        record = {
            "check": {
                "report": copy,
                "format": report.format,
                "reasoner": reasoner,
                "caps": {"urls": MAX_CHECKED_URLS, "sentences": MAX_CHECKED_SENTENCES},
            },
            **result,
        }
        atomic_write_json(folder / RESULT_FILE, record)
        atomic_write_text(folder / ANNOTATED_FILE, annotate(report.markdown, rows))
    return Checked(folder, rows, result)


def is_check_folder(root: Path) -> bool:
    return (root / RESULT_FILE).is_file() and not (root / "claims.json").exists()


def verify_check(root: Path) -> VerifyReport:
    """``verify --offline`` on a check folder: every verdict, reason and passage, the summary and
    the annotated copy re-derived from the folder's files with the network off, and compared."""
    with network_off():
        path = root / RESULT_FILE
        stored = parse_json(read_text(path, what=RESULT_FILE), what=str(path))
        if not isinstance(stored, dict) or not isinstance(stored.get("sentences"), list):
            raise InputError(f"{path} is not a check result; run deep-research check again")
        copy = str((stored.get("check") or {}).get("report") or "")
        if copy not in REPORT_COPIES.values():
            raise InputError(f"{path} names no report copy of this folder; run the check again")
        if not (root / copy).is_file():
            raise MissingArtifact(f"the report copy {root / copy} is gone; run the check again")
        report = parse_report((root / copy).read_bytes(), Path(copy).suffix, where=str(root / copy))
        votes = _recorded_votes(stored["sentences"])
        rows, _ = derive(Brief(root), report, votes)
        again = result_json(rows)
        mismatches = _compare(stored, again)
        annotated = root / ANNOTATED_FILE
        if not annotated.is_file() or read_text(annotated, what=ANNOTATED_FILE) != annotate(
            report.markdown, rows
        ):
            mismatches.append(f"{ANNOTATED_FILE}: differs from the copy re-derived from the folder")
    return VerifyReport(claims=len(rows), offline=True, mismatches=mismatches)


def _recorded_votes(sentences: list[Any]) -> dict[int, VoteRecord]:
    votes: dict[int, VoteRecord] = {}
    for number, row in enumerate(sentences, start=1):
        evidence = row.get("evidence") if isinstance(row, dict) else None
        if isinstance(evidence, dict) and isinstance(evidence.get("vote"), dict):
            try:
                votes[number] = VoteRecord.model_validate(evidence["vote"])
            except ValueError:
                raise InputError(f"{RESULT_FILE}: sentence {number}'s vote is malformed") from None
    return votes


def _compare(stored: dict[str, Any], again: dict[str, Any]) -> list[str]:
    found: list[str] = []
    old, new = stored["sentences"], again["sentences"]
    if len(old) != len(new):
        found.append(f"sentences: {len(old)} stored, {len(new)} re-derived")
    for number, (was, now) in enumerate(zip(old, new, strict=False), start=1):
        for key in ("text", "cites", "verdict", "reasons", "evidence"):
            if not isinstance(was, dict) or was.get(key) != now[key]:
                stored_value = was.get(key) if isinstance(was, dict) else was
                found.append(
                    f"sentence {number}: {key}: stored {stored_value!r:.120}, "
                    f"re-derived {now[key]!r:.120}"
                )
    if stored.get("summary") != again["summary"]:
        found.append(f"summary: stored {stored.get('summary')}, re-derived {again['summary']}")
    return found
