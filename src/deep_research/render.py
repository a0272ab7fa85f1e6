"""report.md: the human-facing view of a decided brief (docs/contracts.md §12).

The report is built as a typed model first (``--format json`` prints it for other tools), then
written as markdown. A FAIL brief is refused unless forced, and then every section says so.
Contradictions are shown side by side with which side is better supported and on what ground
(independent sources, primary source, recency) — never averaged into a middle. Every URL in the
report is in the brief's fetch log or stated by a quote it keeps: a source never fetched is
listed without its URL, and any other link in its text is withheld where it stood
(:mod:`deep_research.shown_urls`), the report saying how many.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, Field

from deep_research.brief.layout import Brief
from deep_research.brief.record import open_brief
from deep_research.brief.trace_phases import RunRecord
from deep_research.brief.writers import atomic_write_text, printable_text
from deep_research.errors import InputError
from deep_research.gaps import NOT_FOUND, describe
from deep_research.models import (
    PRIMARY_TYPES,
    Claim,
    ClaimsFile,
    Contradiction,
    FetchLogEntry,
    SourceRow,
    StruckSentence,
    logged_urls,
)
from deep_research.shown_urls import WITHHELD, fetched_urls, may_show, withhold, withhold_all
from deep_research.urls import is_web, source_urls, urls_in

SUPPORT_RANK = {"Supported": 3, "Partially Supported": 2, "Uncertain": 1, "Unsupported": 0}
FORCED_BANNER = "**FORCED RENDER OF A FAILED BRIEF — do not rely on any statement below.**"


class SourceView(BaseModel):
    id: str
    title: str | None
    url: str | None  # None: never fetched by this brief, so not shown
    #: A local document this brief retained: its path inside the corpus (``file://`` sources).
    path: str | None = None
    published: date | None
    retrieved: date | None
    type: str
    tier: str


class ClaimView(BaseModel):
    id: str
    claim: str
    sq: str | None
    sources: list[str]
    independent_count: int
    confidence: str
    support_class: str
    checks: str
    votes: str
    ciber: str
    #: Why the claim's date no longer reads as its source wrote it, as of the report's date.
    overtaken: str | None = None


class SubQuestionView(BaseModel):
    id: str
    question: str
    findings: list[ClaimView] = Field(default_factory=list)
    constraints: list[ClaimView] = Field(default_factory=list)


class Side(BaseModel):
    label: str
    text: str
    sources: list[str]
    independent_count: int | None
    support_class: str | None
    newest_published: date | None
    primary_source: bool
    #: Why the position's date no longer reads as its source wrote it (None: it does).
    overtaken: str | None = None


class ContradictionView(BaseModel):
    topic: str
    description: str
    sides: list[Side]
    better_supported: str | None
    why: str


class StrippedView(BaseModel):
    id: str
    claim: str
    reason: str


class StrippedSentenceView(BaseModel):
    text: str
    reason: str


class AnswerSentence(Protocol):
    """One sentence of the synthesis as written, and whether the trace gate lets it be shown."""

    @property
    def text(self) -> str: ...
    @property
    def passed(self) -> bool: ...
    @property
    def reason(self) -> str: ...


class CheckedAnswer(Protocol):
    """The synthesis checked: its sentences, and why the answer as a whole is refused (one
    line; empty when it is not) — it leaves out a position of an open contradiction."""

    @property
    def sentences(self) -> Sequence[AnswerSentence]: ...
    @property
    def overtaken(self) -> dict[str, str]: ...
    def refusal(self) -> str: ...


#: The synthesis checked claim by claim against the brief (``gates.answer.check_answer``):
#: render stands below the gates, so its callers hand the check in.
AnswerCheck = Callable[[Brief, str, ClaimsFile, Sequence[StruckSentence]], CheckedAnswer]


class Report(BaseModel):
    """The render model: everything report.md shows, as data."""

    title: str
    question: str | None
    verdict: str
    verdict_reasons: list[str]
    forced: bool
    depth: str
    generated: date | None
    freshness: date | None
    answer: str | None  # the synthesis sentences that passed; None when none was written
    #: Shown instead of an answer that only repeats the key findings word for word (an
    #: extractive digest): the most direct finding and what the others add up to.
    summary: str | None = None
    answer_stripped: list[StrippedSentenceView]
    #: Why the written answer is not shown (it leaves out a position of an open
    #: contradiction); None when it is shown.
    answer_refused: str | None = None
    sub_questions: list[SubQuestionView]
    contradictions: list[ContradictionView]
    undetermined: list[str]
    verification: list[ClaimView]
    stripped: list[StrippedView]
    sources: list[SourceView]
    #: What the headless run recorded (``trace.json`` ``phases.run``): the corpus its local
    #: paths are inside, and who wrote the answer.
    corpus: str | None = None
    reasoner: str | None = None


# --- building the model ---------------------------------------------------------------------


def _sub_questions(document: ClaimsFile) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for item in document.sub_questions:
        if isinstance(item, str):
            found.append((item, item))
        elif isinstance(item, dict):
            sq_id = str(item.get("id") or item.get("sq") or f"sq{len(found) + 1}")
            text = item.get("question") or item.get("text") or sq_id
            found.append((sq_id, str(text)))
    known = {sq for sq, _ in found}
    for claim in document.claims:
        if claim.sq and claim.sq not in known:
            found.append((claim.sq, claim.sq))
            known.add(claim.sq)
    return found


def _checks(claim: Claim) -> str:
    cited = set(claim.supporting)  # failed citations were dropped; their checks are not shown
    passing = [e for e in claim.evidence if e.source in cited]
    methods = sorted({e.checks.method for e in passing if e.checks.method})
    missing = sorted({m for e in passing for m in e.checks.literals.missing})
    parts = [f"quote {'/'.join(methods)}" if methods else "no located quote"]
    parts.append(f"missing {', '.join(missing)}" if missing else "literals ok")
    # What the quote alone does not say, and which passage of which source said it instead.
    from_context = [
        f"{item.literal} ({e.source} {item.passage})"
        for e in passing
        for item in e.checks.literals.context
    ]
    if from_context:
        parts.append("established by context: " + ", ".join(dict.fromkeys(from_context)))
    return "; ".join(parts)


def _claim_view(claim: Claim, ciber_contested: set[str], other_period: set[str]) -> ClaimView:
    votes = "—"
    if claim.votes is not None:
        votes = f"{claim.votes.tally} {claim.votes.outcome}"
    ciber = "—"
    if claim.id in ciber_contested:
        ciber = "contested by " + ", ".join(claim.contests) if claim.contests else "failed"
    elif claim.id in other_period:
        ciber = "another period" + (" in " + ", ".join(claim.contests) if claim.contests else "")
    return ClaimView(
        id=claim.id,
        claim=claim.claim,
        sq=claim.sq,
        sources=list(claim.supporting),
        independent_count=claim.independent_count,
        confidence=claim.confidence,
        support_class=claim.support_class,
        checks=_checks(claim),
        votes=votes,
        ciber=ciber,
    )


def _side(
    label: str, text: str, sources: list[str], claim: Claim | None, by_id: dict[str, SourceRow]
) -> Side:
    rows = [by_id[s] for s in sources if s in by_id]
    published = [row.published_at for row in rows if row.published_at is not None]
    return Side(
        label=label,
        text=text,
        sources=sources,
        independent_count=claim.independent_count if claim is not None else None,
        support_class=claim.support_class if claim is not None else None,
        newest_published=max(published) if published else None,
        primary_source=any(row.source_type in PRIMARY_TYPES for row in rows),
    )


def better_supported(a: Side, b: Side) -> tuple[str | None, str]:
    """Which side is better supported, and the first ground that separates them."""

    def dated(side: Side) -> tuple[int, str]:
        day = side.newest_published
        return (day.toordinal(), day.isoformat()) if day else (0, "none dated")

    grounds: list[tuple[str, tuple[int, str], tuple[int, str]]] = [
        (
            "support class",
            (SUPPORT_RANK.get(a.support_class or "", -1), str(a.support_class)),
            (SUPPORT_RANK.get(b.support_class or "", -1), str(b.support_class)),
        ),
        (
            "independent sources",
            (a.independent_count or 0, str(a.independent_count or 0)),
            (b.independent_count or 0, str(b.independent_count or 0)),
        ),
        (
            "primary source",
            (int(a.primary_source), "yes" if a.primary_source else "no"),
            (int(b.primary_source), "yes" if b.primary_source else "no"),
        ),
        ("more recent source", dated(a), dated(b)),
    ]
    for ground, left, right in grounds:
        if left[0] != right[0]:
            (win, win_value), (lose, lose_value) = sorted(
                [(a, left), (b, right)], key=lambda pair: pair[1][0], reverse=True
            )
            return win.label, (
                f"{ground}: {win_value[1]} for {win.label} vs {lose_value[1]} for {lose.label}"
            )
    return None, "equally supported on every ground checked; both positions stand as written"


def _show(value: object) -> str:
    if isinstance(value, date):
        return "none dated" if value == date.min else value.isoformat()
    return str(value)


def _contradiction(
    entry: Contradiction,
    claims: dict[str, Claim],
    stripped: dict[str, str],
    by_id: dict[str, SourceRow],
    overtaken: dict[str, str],
) -> ContradictionView:
    sides = []
    for cid in entry.ids:
        claim = claims.get(cid)
        text = claim.claim if claim is not None else stripped.get(cid, "(claim not in brief)")
        side = _side(cid, text, list(claim.supporting) if claim else [], claim, by_id)
        sides.append(side.model_copy(update={"overtaken": overtaken.get(cid)}))
    if len(entry.ids) == 1 and entry.ids[0] in claims:
        claim = claims[entry.ids[0]]
        sides.append(
            _side(
                "counter-reading",
                entry.description or entry.topic,
                list(claim.contests),
                None,
                by_id,
            )
        )
    if len(sides) == 2 and sides[1].label == "counter-reading":
        return ContradictionView(
            topic=entry.topic,
            description=entry.description,
            sides=sides,
            better_supported=None,
            why="not decided by code: the counter-reading was found by re-framing the claim; "
            "the claim stays in the brief, demoted to at most medium-contested",
        )
    better, why = (None, "fewer than two sides to compare")
    if len(sides) >= 2:
        better, why = better_supported(sides[0], sides[1])
    return ContradictionView(
        topic=entry.topic,
        description=entry.description,
        sides=sides,
        better_supported=better,
        why=why,
    )


def logged_documents(log: Sequence[FetchLogEntry]) -> set[str]:
    """The local documents (``file://<corpus>/<path>``) this brief retained."""
    retained = logged_urls(log, lambda entry: entry.outcome == "ok")
    return {url for url in retained if not is_web(url)}


def _local_path(source: SourceRow, documents: set[str]) -> str | None:
    for url in (source.final_url, source.url):
        if url and url in documents and url.startswith("file://"):
            return url.removeprefix("file://").partition("/")[2] or None
    return None


def _source_view(source: SourceRow, logged: set[str], documents: set[str]) -> SourceView:
    shown = next(
        (url for url in (source.final_url, source.url) if url and urls_in(url) & logged), None
    )
    if shown is None and source_urls(source) & logged:
        shown = source.url
    return SourceView(
        id=source.id,
        title=source.title,
        url=shown,
        path=_local_path(source, documents) if shown is None else None,
        published=source.published_at,
        retrieved=source.retrieved_at.date() if source.retrieved_at else None,
        type=source.source_type,
        tier=source.tier,
    )


def build_report(
    document: ClaimsFile,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    *,
    answer: Sequence[AnswerSentence],
    refused: str = "",
    overtaken: dict[str, str] | None = None,
    force: bool = False,
    run: RunRecord | None = None,
) -> Report:
    """The render model; ``answer`` is the synthesis as checked sentence by sentence, ``run``
    the headless run's record when there is one."""
    if document.verdict is None:
        raise InputError("the brief has no verdict; run deep-research verdict first")
    if document.verdict == "FAIL" and not force:
        raise InputError(
            "the brief's verdict is FAIL; regenerate it, or pass --force to render "
            "it marked as failed"
        )
    by_id = {source.id: source for source in sources}
    claims = {claim.id: claim for claim in document.claims}
    ciber_contested = {
        cid
        for entry in document.unresolved_contradictions
        if entry.topic == "CIBER consistency failure"
        for cid in entry.ids
    }
    other_period = {note.claim for note in document.ciber_timeline}
    views = {
        claim.id: _claim_view(claim, ciber_contested, other_period).model_copy(
            update={"overtaken": (overtaken or {}).get(claim.id)}
        )
        for claim in document.claims
    }
    sqs = []
    for sq_id, question in _sub_questions(document):
        members = [views[c.id] for c in document.claims if c.sq == sq_id]
        sqs.append(
            SubQuestionView(
                id=sq_id,
                question=question,
                findings=[v for v in members if v.support_class == "Supported"],
                constraints=[v for v in members if v.support_class != "Supported"],
            )
        )
    stripped = {entry.id: entry.claim for entry in document.stripped}
    questions = dict(_sub_questions(document))
    undetermined = [describe(gap, questions) for gap in document.coverage_gaps]
    not_found = {gap.removeprefix(NOT_FOUND).partition(":")[0] for gap in document.coverage_gaps}
    undetermined += [
        f"{sq.id}: no claim could be verified"
        for sq in sqs
        if not sq.findings and sq.id not in not_found
    ]
    undetermined += [
        f"{c.id}: the skeptic panel could not reach a verdict (infrastructure)"
        for c in document.claims
        if c.votes and c.votes.outcome == "unverified"
    ]
    referenced = {s for c in document.claims for s in [*c.supporting, *c.contests]}
    referenced |= {e.source for s in document.stripped for e in s.evidence}
    logged = fetched_urls(log)
    documents = logged_documents(log)
    # A refused answer shows none of its sentences: one-sided, it would mislead.
    passed = [] if refused else [sentence for sentence in answer if sentence.passed]
    return Report(
        title=_heading(document),
        question=document.question,
        verdict=document.verdict,
        verdict_reasons=list(document.verdict_reasons),
        forced=document.verdict == "FAIL",
        depth=document.depth,
        generated=document.generated,
        freshness=document.freshness,
        answer=None
        if not (document.synthesis or document.synthesis_struck)
        else " ".join(sentence.text for sentence in passed),
        summary=_summary(passed, sqs),
        answer_stripped=[
            StrippedSentenceView(text=sentence.text, reason=sentence.reason)
            for sentence in answer
            if not sentence.passed
        ],
        answer_refused=refused or None,
        sub_questions=sqs,
        contradictions=[
            _contradiction(entry, claims, stripped, by_id, overtaken or {})
            for entry in document.unresolved_contradictions
        ],
        undetermined=undetermined,
        verification=list(views.values()),
        stripped=[StrippedView(id=e.id, claim=e.claim, reason=e.reason) for e in document.stripped],
        sources=[
            _source_view(by_id[s], logged, documents)
            for s in sorted(referenced & by_id.keys(), key=lambda s: int(s[1:]))
        ],
        corpus=(run.corpus or None) if run is not None else None,
        reasoner=(run.reasoner or None) if run is not None else None,
    )


#: A brief's name (``how-does-python-…-55726489``): a topic written so is no heading.
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


def _heading(document: ClaimsFile) -> str:
    """The report's heading: the topic when it was written as a title, else the question."""
    if document.question and (not document.topic or _SLUG.fullmatch(document.topic)):
        return document.question
    return document.topic


_MARKERS = re.compile(r"\[S\d+\]")


def _plain(text: str) -> str:
    return " ".join(_MARKERS.sub(" ", text).strip().lstrip("-*• ").split()).casefold()


def _within(sentence: str, known: Sequence[str]) -> bool:
    plain = _plain(sentence)
    return any(plain == k or k.startswith(plain) or f" {plain}" in k for k in known)


def _summary(passed: Sequence[AnswerSentence], sqs: Sequence[SubQuestionView]) -> str | None:
    """For an answer whose every sentence is a key finding word for word (an extractive
    digest), what the answer section shows instead: the finding that answers most directly —
    the first of the first sub-question that has one — and what the findings add up to. None
    when the answer says something of its own (a model's synthesis)."""
    findings = [view for sq in sqs for view in sq.findings]
    known = [_plain(view.claim) for view in findings]
    # A finding of two sentences is written with its markers after each: each is part of it.
    if not passed or not findings or any(not _within(s.text, known) for s in passed):
        return None
    # The digest lists its best finding first (the extractive reasoner orders by its score).
    first = _plain(passed[0].text)
    lead = next((v for v, k in zip(findings, known, strict=True) if k.startswith(first)), None)
    lead = lead or findings[0]
    sources = {source for view in findings for source in view.sources}
    answered = sum(1 for sq in sqs if sq.findings)
    others = len(findings) - 1
    rest = (
        f" It is one of {len(findings)} verified findings, from {len(sources)} source(s) "
        f"across {answered} sub-question(s), listed under Key findings with their sources."
        if others
        else " It is the one verified finding; Key findings shows it with its source."
    )
    return f"**Most direct finding:** {lead.claim} {_markers(lead.sources)}\n\n{rest.strip()}"


# --- markdown -------------------------------------------------------------------------------

_PIPE = re.compile(r"[|\n]")


def _cell(value: object) -> str:
    text = "—" if value is None or value == "" else str(value)
    return _PIPE.sub(lambda m: "\\|" if m.group() == "|" else " ", text)


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines


def _markers(sources: Sequence[str]) -> str:
    return "".join(f"[{s}]" for s in sources)


def to_markdown(report: Report) -> str:
    out: list[str] = [f"# {report.title}", ""]

    def section(title: str) -> None:
        out.extend(["", f"## {title}", ""])
        if report.forced:
            out.extend([FORCED_BANNER, ""])

    if report.forced:
        out.extend([FORCED_BANNER, ""])
    if report.question and report.question != report.title:
        out.extend([f"**Question:** {report.question}", ""])
    section(f"Verdict: {report.verdict}")
    out.extend(f"- {reason}" for reason in report.verdict_reasons)
    # Freshness is the newest evidence's date; a brief citing nothing has none to show.
    fresh = "" if report.freshness is None else f" · **Freshness:** {_show(report.freshness)}"
    out.extend(["", f"**Depth:** {report.depth} · **Generated:** {_show(report.generated)}{fresh}"])
    section("Answer")
    if not any(sq.findings for sq in report.sub_questions):
        out.append(
            "Not found: no verified finding in the sources answers the question; what was "
            "searched and not found is under What could not be determined."
        )
    elif report.answer_refused:
        out.append(
            f"The written answer was refused: {report.answer_refused}. The key findings below "
            "are its answer, and Contradictions lists every position."
        )
    elif report.summary:
        out.append(report.summary)
    elif report.answer:
        out.append(report.answer)
    elif report.answer is None:
        out.append(
            "No synthesis was written for this brief; the key findings below are its answer."
        )
    else:
        out.append(
            "No sentence of the synthesis passed the trace gate; the key findings below are "
            "its answer."
        )
    if report.reasoner and report.answer:
        out.extend(
            [
                "",
                f"*Written by the {report.reasoner} reasoner; every sentence shown is verified "
                "against the retained text.*",
            ]
        )
    if report.answer_stripped:
        out.extend(["", "Stripped from the answer (its citations do not pass the trace gate):", ""])
        out.extend(f"- {s.text} — {s.reason}" for s in report.answer_stripped)
    section("Key findings")
    for sq in report.sub_questions:
        out.extend([f"### {sq.id}: {sq.question}" if sq.question != sq.id else f"### {sq.id}", ""])
        if not sq.findings:
            out.append("- No verified finding.")
        for view in sq.findings:
            note = f"; {view.overtaken} (report dated {_show(report.generated)})"
            out.append(
                f"- {view.claim} {_markers(view.sources)} — confidence {view.confidence}, "
                f"{view.independent_count} independent source(s)" + (note if view.overtaken else "")
            )
        if sq.constraints:
            out.extend(["", "Constraints (partially supported; not asserted):"])
            out.extend(
                f"- {v.claim} {_markers(v.sources)} — {v.checks}"
                + (f"; {v.overtaken}" if v.overtaken else "")
                for v in sq.constraints
            )
        out.append("")
    section("Contradictions")
    if not report.contradictions:
        out.append("None unresolved.")
    for item in report.contradictions:
        out.extend([f"### {item.topic}", ""])
        if item.description:
            out.extend([item.description, ""])
        header = ["", *[side.label for side in item.sides]]
        rows: list[list[object]] = [
            ["position", *[side.text for side in item.sides]],
            ["sources", *[_markers(side.sources) for side in item.sides]],
            ["independent sources", *[side.independent_count for side in item.sides]],
            ["support", *[side.support_class for side in item.sides]],
            ["primary source", *["yes" if side.primary_source else "no" for side in item.sides]],
            ["newest published", *[side.newest_published for side in item.sides]],
        ]
        if any(side.overtaken for side in item.sides):
            rows.append(
                [
                    f"as of {_show(report.generated)}",
                    *[side.overtaken or "date still ahead or not stated" for side in item.sides],
                ]
            )
        out.extend(_table(header, rows))
        verdict = (
            f"**Better supported: {item.better_supported}** — "
            if item.better_supported
            else "**Not decided** — "
        )
        out.extend(["", verdict + item.why + ". The positions are not averaged.", ""])
    section("What could not be determined")
    out.extend(f"- {line}" for line in report.undetermined) if report.undetermined else out.append(
        "Nothing recorded."
    )
    section("Verification")
    out.extend(
        _table(
            [
                "claim",
                "text",
                "sources",
                "independent",
                "support",
                "confidence",
                "checks",
                "votes",
                "CIBER",
            ],
            [
                [
                    v.id,
                    v.claim,
                    _markers(v.sources),
                    v.independent_count,
                    v.support_class,
                    v.confidence,
                    v.checks,
                    v.votes,
                    v.ciber,
                ]
                for v in report.verification
            ],
        )
    )
    section("Stripped claims")
    if report.stripped:
        out.extend(
            _table(
                ["claim", "text", "reason"], [[s.id, s.claim, s.reason] for s in report.stripped]
            )
        )
    else:
        out.append("None.")
    section("Sources")
    out.extend(
        _table(
            ["S#", "title", "URL", "published", "retrieved", "type", "tier"],
            [
                [
                    s.id,
                    s.title,
                    s.url or s.path or "(not fetched by this brief; URL withheld)",
                    s.published,
                    s.retrieved,
                    s.type,
                    s.tier,
                ]
                for s in report.sources
            ],
        )
    )
    if any(s.path for s in report.sources):
        where = f" {report.corpus}" if report.corpus else ""
        out.extend(["", f"Local documents are shown by their path inside the corpus{where}."])
    # Whatever a source or a model wrote, nothing in the report hides or reorders text.
    return printable_text("\n".join(out).rstrip() + "\n")


# --- the command ----------------------------------------------------------------------------


def render_brief(
    brief: Brief,
    *,
    check_answer: AnswerCheck,
    force: bool = False,
    document: ClaimsFile | None = None,
) -> tuple[Report, str]:
    """``document``: claims.json as the caller already read it (a second copy of a large
    brief's claims is most of its memory); read from the brief otherwise."""
    if document is None:
        document = brief.load_claims()
    sources = brief.load_sources()
    log = brief.load_fetch_log()
    checked = check_answer(brief, document.synthesis or "", document, document.synthesis_struck)
    run = brief.load_trace().phase("run", RunRecord) if brief.trace_path.exists() else None
    report = build_report(
        document,
        sources,
        log,
        answer=checked.sentences,
        refused=checked.refusal(),
        overtaken=checked.overtaken,
        force=force,
        run=run,
    )
    # Whatever a model wrote or a source's row holds, the report links only what the brief
    # fetched or a quote states; the rest is withheld where it stood (a brief a run left
    # behind included: its claims.json may predate the verdict's withholding).
    allowed = may_show(document, sources, log)
    report = withhold_all(report, allowed)
    # Once more on the markdown itself: a character it shows as its code point (``\u000b``)
    # may have run on into the URL before it.
    markdown = withhold(to_markdown(report), allowed)
    withheld = markdown.count(WITHHELD)
    if withheld:
        markdown += (
            f"\n{withheld} link(s) in this report's text that no source of this brief has — "
            f"written by a model or cut from a passage — are shown as {WITHHELD}.\n"
        )
    return report, markdown


def run_render(
    root: Path, *, force: bool, write: bool, check_answer: AnswerCheck
) -> tuple[Report, str]:
    brief = open_brief(root)
    # Held from the first read: the report is of the claims as they are, not as a concurrent
    # writer left them half a second ago.
    with brief.lock() if write else contextlib.nullcontext():
        report, markdown = render_brief(brief, check_answer=check_answer, force=force)
        if write:
            atomic_write_text(brief.root / "report.md", markdown)
    return report, markdown
