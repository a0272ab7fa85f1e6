"""``deep-research ingest BRIEF``: every saved agent return fed to the command that consumes it.

The orchestrator saves each reply where ``deep-research next`` said (:mod:`returns`); this one
call then does the mechanical part for all of them, so a round costs one tool call, not one per
fetcher:

* a fetcher's return is normalized into sources.jsonl for its sub-question and round (the names
  carry both); a return with ``"complete": false``, or one that is not a fetcher output at all,
  is an abstention: recorded as a coverage gap, never a crash and never evidence;
* the skeptics' returns are collected per claim and recorded by the votes gate;
* the CIBER agent's diagnosis is applied (an unusable one applies nothing: CIBER did not run);
* the entailment judges' returns are checked by the entail gate (docs/contracts.md §4.1): each
  judges the claim and sources its file name carries, one verdict per (claim, source) pair —
  whatever else the reply names (:func:`pair_verdicts`);
* claims.json, while it is the writer's draft (before ``trace``), keeps only the writer's own
  fields (:mod:`..normalize.own_fields`): a verdict, a confidence, a synthesis — any field code
  computes — is dropped, and the drop is noted in trace.json ``phases.ingest.dropped``;
* claims.json, as the orchestrator wrote it, gets the run's question and date from run.json
  (the overtaken-date check reads that date; a model's guess of today is not it), and the
  contradictions the triangulator recorded between its claims (the writer copies claims, not
  them): each entry naming two or more claims that claims.json holds, under the same ids;
* the orchestrator's ``synthesis.md`` is checked by the answer gate (:mod:`..gates.answer`)
  and becomes claims.json's ``synthesis`` — unless it is the first answer and the gate refused
  it (a side of an open contradiction left out, or no sentence that traces): then it is kept
  aside as ``synthesis.refused.md`` and ``next`` asks once more, saying why.

What was consumed is recorded in trace.json ``phases.ingest`` (file name → content hash), so a
second call consumes only what is new or changed, and ``next`` can tell a saved return from an
ingested one. Everything happens under the brief's one lock.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from deep_research.brief.layout import Brief, sha256_bytes
from deep_research.brief.record import load_trace_or_empty, open_brief
from deep_research.brief.trace_phases import IngestPhase
from deep_research.brief.writers import atomic_write_json, model_dump, write_claims
from deep_research.errors import DeepResearchError
from deep_research.gaps import INCOMPLETE
from deep_research.models import ClaimsFile, Contradiction, TraceEntryName
from deep_research.normalize.own_fields import Owned, claims_draft
from deep_research.plugin.replies import (
    Return,
    read_reply,
    saved,
    synthesis_path,
    triangulator_path,
)

INGEST: TraceEntryName = "ingest"
#: The name a claims.json draft's drop note goes by.
CLAIMS = "claims.json"


@dataclass
class IngestReport:
    """What one ingest call did; the fields are the keys of its JSON summary."""

    fetcher_returns: int = 0
    #: Source rows after the call.
    sources: int = 0
    votes_for: list[str] = field(default_factory=list)
    entailment: dict[str, Any] | None = None
    ciber: dict[str, Any] | None = None
    synthesis: bool = False
    #: What the answer gate asks of a refused answer (one line), when it refused one.
    answer_refused: str | None = None
    claims_dated: bool = False
    #: Contradictions of the triangulator's graph carried into claims.json by this call.
    contradictions_adopted: int = 0
    gaps: list[str] = field(default_factory=list)
    #: One line per model draft that carried fields code computes, naming the fields dropped.
    dropped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _recorded(brief: Brief) -> IngestPhase:
    recorded = load_trace_or_empty(brief).phase(INGEST, IngestPhase)
    return recorded if recorded is not None else IngestPhase(files={}, gaps=[])


def ingested(brief: Brief) -> dict[str, str]:
    """File name → content hash of every return already consumed."""
    return _recorded(brief).files


def recorded_gaps(brief: Brief) -> list[str]:
    return _recorded(brief).gaps


def digest(path: Path) -> str:
    return sha256_bytes(path.read_bytes())


def pending(brief: Brief, items: list[Return]) -> list[Return]:
    done = ingested(brief)
    return [item for item in items if done.get(item.path.name) != digest(item.path)]


def _fetcher(root: Path, item: Return, report: IngestReport) -> None:
    from deep_research.normalize import normalize_payload
    from deep_research.normalize.enrich import FillFromBrief
    from deep_research.normalize_io import NormalizeOptions, run_normalize

    value = read_reply(item.path)
    where = f"{item.sub_question} round {item.round}"
    if isinstance(value, dict) and value.get("complete") is False:
        why = str(value.get("error") or "no reason given")[:200]
        report.gaps.append(f"{INCOMPLETE}{where}: the fetcher returned complete: false ({why})")
    options = NormalizeOptions(
        input=item.path, brief=root, sub_question=item.sub_question, round=item.round
    )
    try:
        run_normalize(
            options,
            normalize_payload,
            stdin=io.BytesIO(b""),
            stdout=io.StringIO(),
            fill=FillFromBrief(root),
        )
    except DeepResearchError as error:
        # A reply that is not a fetcher output is an abstention for that task, not evidence.
        report.gaps.append(f"{INCOMPLETE}{where}: the fetcher's return was unusable ({error})")
    report.fetcher_returns += 1


def _votes(root: Path, items: list[Return]) -> list[str]:
    from deep_research.decide.votes import run_votes
    from deep_research.settings import settings_for

    ballots: dict[str, list[Any]] = {}
    for item in sorted(items, key=lambda r: (r.claim or "", r.vote or 0)):
        ballots.setdefault(item.claim or "", []).append(read_reply(item.path))
    path = root / "votes.json"
    atomic_write_json(path, ballots)
    run_votes(root, path, settings_for(root))
    return sorted(ballots)


def pair_verdicts(
    reply: Any, claim: str, sources: Sequence[str]
) -> tuple[list[dict[str, Any]], list[str]]:
    """One verifier reply read as one verdict per pair its task asked (``claim`` against each of
    ``sources``, as the file name carries them), and a line for each pair that abstains.

    A pair abstains alone — its verdict is just its ids, which the entail gate ignores as not a
    verdict — when the reply leaves it out or judges it twice; every pair abstains when the reply
    is unreadable or names another claim. A judgement of a source not asked is dropped: a
    reply never reaches a pair another task was given."""
    verdicts: list[dict[str, Any]] = []
    notes: list[str] = []
    named = reply.get("claim_id") if isinstance(reply, dict) else None
    items = reply.get("judgements") if isinstance(reply, dict) else None
    why = ""  # why every pair abstains, when one reason holds for all
    if named not in (None, claim):
        why, items = f"the reply judges {str(named)[:20]}, not {claim}", []
    elif not isinstance(items, list):
        why, items = "the reply holds no judgements", []
    given: dict[str, list[dict[str, Any]]] = {}
    for item in items:
        source = item.get("source_id") if isinstance(item, dict) else None
        if not isinstance(item, dict) or item.get("claim_id", claim) != claim:
            notes.append(f"{claim}: a judgement of no pair of this task was dropped")
        elif source not in sources:
            notes.append(f"{claim}/{str(source)[:20]}: not asked of this verifier; dropped")
        else:
            given.setdefault(str(source), []).append(item)
    for source in dict.fromkeys(sources):
        pair = {"claim_id": claim, "source_id": source}
        found = given.get(source, [])
        if len(found) == 1:
            verdicts.append({**found[0], **pair})
            continue
        verdicts.append(pair)
        reason = why or ("judged twice in one reply" if found else "left out of the reply")
        notes.append(f"{claim}/{source}: abstains — {reason}")
    return verdicts, notes


def _entail(root: Path, items: list[Return]) -> dict[str, Any]:
    from deep_research.decide.entail import entail_items

    verdicts: list[dict[str, Any]] = []
    abstained: list[str] = []
    for item in sorted(items, key=lambda r: r.path.name):
        # The pairs judged are the ones next asked about (the file's name); an unreadable or
        # partial reply is an abstention for its pairs (ignored by the gate as not a verdict),
        # never a crash and never evidence.
        found, notes = pair_verdicts(read_reply(item.path), item.claim or "", item.sources)
        verdicts += found
        abstained += notes
    report = entail_items(root, verdicts)
    return {
        "checked": len(report.checked),
        "ignored": [entry.line() for entry in report.ignored],
        "stripped": list(report.stripped),
        "abstained": abstained,
    }


def _ciber(root: Path, item: Return, report: IngestReport) -> None:
    from deep_research.decide.ciber import apply_diagnosis
    from deep_research.settings import settings_for

    reply = read_reply(item.path)
    try:
        report.ciber = apply_diagnosis(root, reply, None, settings_for(root), what=item.path.name)
    except DeepResearchError as error:
        # An unusable diagnosis applies nothing: CIBER did not run, and the verdict says so.
        report.gaps.append(f"ciber: the CIBER reply was unusable ({str(error)[:200]})")


def _synthesis(brief: Brief, path: Path, report: IngestReport) -> bool:
    """The answer checked; True when it went into claims.json, False when it was set aside."""
    from deep_research.gates.answer import check_answer

    text = path.read_text(encoding="utf-8", errors="replace").strip()
    document = brief.load_claims()
    checked = check_answer(brief, text, document)
    if not checked.accepted:
        report.answer_refused = checked.next_step()
        refused = synthesis_path(brief.root, refused=True)
        if not refused.exists():  # the first answer: asked for once more
            os.replace(path, refused)
            return False
    # Stored as the check lets it be shown: claims.json never holds a struck clause.
    updated = document.model_copy(update=checked.stored())
    write_claims(brief.claims_path, updated)
    return True


def claims_draft_of(brief: Brief) -> Owned | None:
    """claims.json reduced to the writer's own fields while it is the writer's draft (no trace
    recorded yet: from then on code writes the computed fields); None when there is no draft."""
    if not brief.claims_path.is_file() or "trace" in load_trace_or_empty(brief).phases:
        return None
    try:
        value = json.loads(brief.claims_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None  # not JSON: loading claims.json says so, as it always did
    return claims_draft(value) if isinstance(value, dict) else None


def note_dropped(brief: Brief, line: str) -> None:
    """Record in trace.json ``phases.ingest`` that a model draft lost fields code computes."""
    with brief.lock():
        trace = load_trace_or_empty(brief)
        recorded = _recorded(brief)
        dropped = list(dict.fromkeys([*recorded.dropped, line]))
        record = recorded.model_copy(update={"dropped": dropped})
        atomic_write_json(brief.trace_path, model_dump(trace.with_phase(INGEST, record)))


def _own_claims(brief: Brief, report: IngestReport) -> None:
    draft = claims_draft_of(brief)
    line = draft.note(CLAIMS) if draft is not None else None
    if draft is None or line is None:
        return
    atomic_write_json(brief.claims_path, draft.kept)
    report.dropped.append(line)


def _date_claims(brief: Brief) -> bool:
    """claims.json's question and date are the run's, as ``start`` recorded them; True when
    they were not yet."""
    if not brief.claims_path.exists() or not brief.run_path.exists():
        return False
    run = brief.load_run()
    document = brief.load_claims()
    wanted = {"question": run.topic, "generated": run.started_at.date()}
    if all(getattr(document, name) == value for name, value in wanted.items()):
        return False
    write_claims(brief.claims_path, document.model_copy(update=wanted))
    return True


def unadopted_contradictions(brief: Brief, document: ClaimsFile) -> list[Contradiction]:
    """The triangulator's recorded contradictions that claims.json does not hold yet: those
    naming two or more of its claims (a malformed entry, or one naming a claim the writer did
    not keep, is no position to show)."""
    graph = read_reply(triangulator_path(brief.root))
    entries = graph.get("contradictions") if isinstance(graph, dict) else None
    if not isinstance(entries, list):
        return []
    claims = {claim.id for claim in document.claims}
    held = {tuple(sorted(set(entry.ids))) for entry in document.unresolved_contradictions}
    found = []
    for value in entries:
        try:
            entry = Contradiction.model_validate(value)
        except ValidationError:
            continue
        ids = tuple(sorted(set(entry.ids)))
        if len(ids) >= 2 and set(ids) <= claims and ids not in held:
            held.add(ids)
            found.append(entry.model_copy(update={"ids": list(dict.fromkeys(entry.ids))}))
    return found


def _adopt_contradictions(brief: Brief) -> int:
    """claims.json with the triangulator's contradictions added; how many were."""
    if not brief.claims_path.exists():
        return 0
    document = brief.load_claims()
    new = unadopted_contradictions(brief, document)
    if new:
        held = [*document.unresolved_contradictions, *new]
        write_claims(
            brief.claims_path, document.model_copy(update={"unresolved_contradictions": held})
        )
    return len(new)


def run_ingest(root: Path) -> IngestReport:
    brief = open_brief(root)
    report = IngestReport()
    with brief.lock():
        items = saved(root)
        new = pending(brief, items)
        for item in new:
            if item.kind == "fetcher":
                _fetcher(root, item, report)
        judges = [item for item in items if item.kind == "verifier"]
        if any(item.kind == "verifier" for item in new) and brief.claims_path.exists():
            report.entailment = _entail(root, judges)
        for item in new:
            if item.kind == "ciber" and brief.claims_path.exists():
                _ciber(root, item, report)
        skeptics = [item for item in items if item.kind == "skeptic"]
        if any(item.kind == "skeptic" for item in new) and brief.claims_path.exists():
            report.votes_for = _votes(root, skeptics)
        _own_claims(brief, report)
        report.claims_dated = _date_claims(brief)
        report.contradictions_adopted = _adopt_contradictions(brief)
        text = synthesis_path(root)
        consumed = {item.path.name: digest(item.path) for item in items}
        if text.is_file() and ingested(brief).get(text.name) != digest(text):
            written = digest(text)
            if _synthesis(brief, text, report):
                report.synthesis = True
                consumed[text.name] = written
        elif text.is_file():
            consumed[text.name] = digest(text)
        trace = load_trace_or_empty(brief)
        gaps = list(dict.fromkeys([*recorded_gaps(brief), *report.gaps]))
        dropped = list(dict.fromkeys([*_recorded(brief).dropped, *report.dropped]))
        record = IngestPhase(files=consumed, gaps=gaps, dropped=dropped)
        atomic_write_json(brief.trace_path, model_dump(trace.with_phase(INGEST, record)))
        report.gaps = gaps
        if brief.sources_path.exists():
            report.sources = len(brief.load_sources())
    return report
