"""Build real brief directories on disk for tests: corpus files, fetch log, sources, claims.

Briefs are written the way the fetcher and normalizer write them (content-addressed corpus,
append-only log), so the gates under test read exactly what they read in production.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import ValidationError

from conftest import FIXTURES, REPO
from deep_research.brief import trace_phases as tp
from deep_research.brief.layout import Brief
from deep_research.brief.start_record import StartRecord, clamp_caps
from deep_research.brief.trace_phases import RefetchedSource, RefetchPhase
from deep_research.decide.ciber import run_ciber_apply
from deep_research.decide.triangulate import run_triangulate
from deep_research.decide.verdict import run_verdict
from deep_research.decide.votes import run_votes
from deep_research.fetch.corpus import retain
from deep_research.gates.locate import locate
from deep_research.gates.trace import TraceOptions, emitted_claims, run_trace
from deep_research.models import CorpusMeta, FetchLogEntry, PhaseRecord, TraceEntryName
from deep_research.schemas import validate_brief
from deep_research.settings import Settings

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
    round: int = 1


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
                "round": spec.round,
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


FETCHED_AT = datetime(2024, 5, 1, 10, 0, tzinfo=UTC)


def retain_page(root: Path, url: str, text: str, *, at: datetime = FETCHED_AT, **meta: Any) -> str:
    """Keep ``text`` as a page fetch does — corpus file and metadata (``meta`` adds fields such
    as the title), then its 2xx fetch-log line — and return its content hash."""
    kept = CorpusMeta(url=url, final_url=url, status=200, retrieved_at=at, tier="raw", **meta)

    def line(digest: str) -> FetchLogEntry:
        return FetchLogEntry(
            url=url,
            final_url=url,
            outcome="ok",
            status=200,
            content_hash=digest,
            tier="raw",
            retrieved_at=at,
        )

    stored, _ = retain(Brief(root), text, kept, line)
    return stored.content_hash


def read_claims(root: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((root / "claims.json").read_text(encoding="utf-8"))
    return value


# --- a brief that passes every gate at full depth ---------------------------------------------

AGENCY_URL = "https://www.northern-energy.example/reports/heat-pumps-2024"
AGENCY_SALES_QUOTE = (
    "Sales of heat pumps across the twelve member states rose to 2.9 million units in 2023, "
    "up from 2.4 million units in 2022."
)
OUTLET_URL = "https://heating-today.example/hp"
OUTLET_SENTENCE = "Heat pump sales reached 2.9 million units in 2023, a spring report says."
SUB_QUESTIONS = ["sq1", "sq2", "sq3", "sq4", "sq5"]


def read_phase(brief: Brief, name: str) -> dict[str, Any]:
    """The ``phases`` entry ``name`` exactly as trace.json holds it (empty when absent)."""
    if not brief.trace_path.exists():
        return {}
    entry: dict[str, Any] = json.loads(brief.trace_path.read_text())["phases"].get(name, {})
    return entry


def refetched(sources: int, sampled: int | None = None) -> dict[str, Any]:
    """``phases.refetch`` for a re-fetch whose sample of ``sources`` all passed (``sampled``: the
    number the record claims, which a lying record sets apart from its list)."""
    records = [
        RefetchedSource(source=f"S{n}", url=f"https://s{n}.example/", outcome="pass")
        for n in range(1, sources + 1)
    ]
    phase = RefetchPhase(
        cited_sources=sources,
        sampled=sources if sampled is None else sampled,
        passed=sources,
        failed=0,
        excluded=0,
        refetch_pass_rate=1.0,
        archive_base="",
        records=records,
    )
    return phase.entry()


def assert_phases_read_back(brief: Brief) -> set[str]:
    """Every ``phases`` entry of ``brief``'s trace.json reads as one of its phase's records and
    writes back key for key; the names of the phases seen."""
    from deep_research.run.checkpoint import PlanRecord, RoundRecord, SkipRecord

    records: dict[str, tuple[type[PhaseRecord], ...]] = {
        "run": (tp.RunRecord,),
        "plan": (PlanRecord,),
        "cast": (RoundRecord,),
        "round2": (RoundRecord,),
        "trace": (tp.TracePhase,),
        "contradictions": (tp.ContradictionsPhase,),
        "entail": (tp.EntailPhase, SkipRecord),
        "panel": (SkipRecord,),
        "votes": (tp.VotesPhase,),
        "triangulate": (tp.TriangulatePhase,),
        "refetch": (tp.RefetchPhase,),
        "run.refetch": (SkipRecord,),
        "ciber": (tp.CiberPhase,),
        "counters": (tp.CountersPhase,),
        "verdict": (tp.VerdictPhase,),
        "mcp_gate": (tp.McpGatePhase,),
        "ingest": (tp.IngestPhase,),
    }
    assert set(records) == set(get_args(TraceEntryName))
    phases = json.loads(brief.trace_path.read_text(encoding="utf-8"))["phases"]
    for name, entry in phases.items():
        written = json.dumps(entry, ensure_ascii=False)
        again = []
        for kind in records[name]:
            with contextlib.suppress(ValidationError):
                again.append(json.dumps(kind.model_validate(entry).entry(), ensure_ascii=False))
        assert written in again, (name, written, again)
    return set(phases)


def write_run_json(
    root: Path, started_at: datetime, depth: Literal["quick", "full"] = "full"
) -> None:
    """run.json as `deep-research start` writes it for a run begun at ``started_at`` (no settings
    fixed: the brief is decided under the defaults)."""
    record = StartRecord(
        topic="heat pumps",
        slug=root.name,
        depth=depth,
        started_at=started_at,
        caps=clamp_caps(depth, {})[0],
    )
    (root / "run.json").write_text(json.dumps(record.as_json()))


def full_counters(**overrides: Any) -> dict[str, Any]:
    counters: dict[str, Any] = {
        "sub_questions": 5,
        "queries_per_sub_question": {sq: 4 for sq in SUB_QUESTIONS},
        "round1_fetches": 20,
        "distinct_sources": 30,
        "rounds": 2,
        "counter_queries_per_sub_question": {sq: 1 for sq in SUB_QUESTIONS},
        "refetch_sample": 3,
        "wall_clock_seconds": 1200.0,
    }
    return counters | overrides


def ready_pages() -> list[PageSpec]:
    """Two independent supporting pages, then 28 fetched pages that support nothing (the last 5
    found in round 2)."""
    pages = [
        PageSpec(
            AGENCY_URL,
            page("heat-pumps-agency.txt"),
            [("Sales", AGENCY_SALES_QUOTE)],
            source_type="government",
            title="Heat Pump Market Review 2024",
            published_at="2024-03-14",
            sub_questions=["sq1"],
        ),
        PageSpec(
            OUTLET_URL,
            f"Heating Today.\n\n{OUTLET_SENTENCE}\n\nMore in the spring issue.",
            [("Sales", OUTLET_SENTENCE)],
            title="Spring market notes",
            sub_questions=["sq1"],
        ),
    ]
    for n in range(3, 31):
        pages.append(
            PageSpec(
                f"https://filler{n}.example/page",
                f"Background page number {n}.",
                sub_questions=[SUB_QUESTIONS[n % 5]],
                round=2 if n > 25 else 1,
            )
        )
    return pages


def ready_claims() -> list[dict[str, Any]]:
    sales = "Heat pump sales were about 2.9 million units in 2023."
    return [
        {"claim": sales, "supporting": ["S1", "S2"], "importance": "central"},
        {
            "claim": "In 2023 heat pump sales came to about 2.9 million units.",
            "supporting": ["S1", "S2"],
            "importance": "central",
            "sq": "sq2",
        },
    ]


def ready_document() -> dict[str, Any]:
    return {
        "topic": "heat-pumps-2023",
        "question": "How many heat pumps were sold in 2023?",
        "generated": "2024-05-02",
        "depth": "full",
        "sub_questions": SUB_QUESTIONS,
        "refetch_pass_rate": 0.95,
    }


def ready_trace(**counters: Any) -> dict[str, Any]:
    return {"topic": "heat-pumps-2023", "depth": "full", "counters": full_counters(**counters)}


UPHOLD = {"refuted": False, "evidence": "The quote states the claim as written.", "confidence": 0.8}


def run_gates_before_verdict(
    root: Path, settings: Any, *, ciber: bool = True, panel: bool = True
) -> Path:
    """Trace, the skeptic panel (two upholding votes per Supported claim), triangulate and
    (clean) CIBER over a written brief: what precedes the verdict."""
    run_trace(TraceOptions(brief=root))
    if panel:
        traced = Brief(root).load_claims().claims
        votes = {c.id: [UPHOLD, UPHOLD] for c in traced if c.support_class == "Supported"}
        path = root.parent / "votes-upheld.json"
        path.write_text(json.dumps(votes))
        run_votes(root, path, settings)
    run_triangulate(root, settings)
    if ciber:
        clean = root.parent / "ciber-clean.json"
        clean.write_text(json.dumps({"ciber_passed": True, "consistency_failures": []}))
        run_ciber_apply(root, clean, None, settings)
    return root


#: A brief whose fetchers misquoted: the outlet's sentence as its page has it, a fetcher's
#: misspelling of it (located fuzzily), a rewording of it (located nowhere), and a finding of a
#: page the run never fetched — what no judge may read as page text.
PAGE_WORDING = "Heat pump sales reached 2.9 million units in 2023, a spring report says."
MISSPELT = PAGE_WORDING.replace("million", "milion")
REWORDED = PAGE_WORDING.replace("sales reached", "sales had reached")
NEVER_FETCHED = "Heat pump sales collapsed to 1.1 million units in 2023."


def misquoted_brief(root: Path) -> Path:
    """The ready brief with the misquotes above, traced and judged up to the verdict: C1 and C2
    cite S1 and S2 (S2's best finding the misspelt one), C3 cites the reworded finding by id,
    and S31, never fetched, is on sq1."""
    pages = ready_pages()
    pages[1].text = f"Heating Today.\n\n{PAGE_WORDING}\n\nMore in the spring issue."
    pages[1].findings = [("Sales", MISSPELT), ("Sales, reworded", REWORDED)]
    pages.append(
        PageSpec(
            "https://never-fetched.example/sales",
            None,
            [("Sales collapsed", NEVER_FETCHED)],
            fetch="never",
            sub_questions=["sq1"],
        )
    )
    cites_reworded = {
        "claim": "Heat pump sales came to 2.9 million units in 2023.",
        "supporting": ["S1", "S2"],
        "findings": ["S1.F1", "S2.F2"],
        "importance": "central",
    }
    claims = [*ready_claims(), cites_reworded]
    write_brief(root, pages, claims, document=ready_document(), trace=ready_trace())
    plan = {
        "sub_questions": [
            {"id": f"sq{n}", "question": "q", "scope": "s", "queries": ["a"]} for n in range(1, 6)
        ]
    }
    (root / "plan.json").write_text(json.dumps(plan))
    return run_gates_before_verdict(root, SETTINGS)


# --- briefs several test modules build ----------------------------------------------------

SETTINGS = Settings()
Edit = Callable[[dict[str, Any], dict[str, Any]], None]  # (claims.json, trace.json) in place
EXAMPLE = REPO / "examples" / "heat-pumps"


def build(root: Path, *, ciber: bool = True, panel: bool = True, **document: Any) -> Path:
    """The full-depth brief that passes every gate, after trace, the panel, triangulate and
    CIBER."""
    write_brief(
        root,
        ready_pages(),
        ready_claims(),
        document=ready_document() | document,
        trace=ready_trace(),
    )
    return run_gates_before_verdict(root, SETTINGS, ciber=ciber, panel=panel)


def edit(root: Path, change: Edit) -> None:
    claims = read_claims(root)
    trace = json.loads((root / "trace.json").read_text())
    change(claims, trace)
    (root / "claims.json").write_text(json.dumps(claims))
    (root / "trace.json").write_text(json.dumps(trace))


def build_example(tmp_path: Path) -> Path:
    """The example brief through the whole chain, from its committed inputs."""
    root = tmp_path / "brief"
    shutil.copytree(EXAMPLE / "brief", root)
    run_trace(TraceOptions(brief=root))
    run_votes(root, EXAMPLE / "votes.json", SETTINGS)
    run_triangulate(root, SETTINGS)
    run_ciber_apply(root, EXAMPLE / "ciber.json", None, SETTINGS)
    run_verdict(root, SETTINGS)
    return root


def assert_verified(brief: Path) -> None:
    """A valid brief whose every emitted claim's quote is located in the retained text."""
    report = validate_brief(brief)
    assert report.ok, report.problems
    b = Brief(brief)
    document = b.load_claims()
    rows = {row.id: row for row in b.load_sources()}
    for claim in emitted_claims(document):
        assert claim.support_class == "Supported"
        assert claim.evidence
        for item in claim.evidence:
            text = b.read_corpus(rows[item.source].content_hash or "")
            found = locate(item.quote, text)
            assert found is not None and found.end - found.start >= 40


# --- a brief held by another process ----------------------------------------------------------

HOLD_LOCK = """
import sys
from pathlib import Path
from deep_research.brief.layout import Brief
with Brief(Path(sys.argv[1])).lock():
    print("held", flush=True)
    sys.stdin.read()  # hold until the test closes our stdin
"""


@contextmanager
def held_elsewhere(root: Path) -> Iterator[subprocess.Popen[str]]:
    """The brief's lock held by a real second process for the duration of the block."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        yield holder
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
