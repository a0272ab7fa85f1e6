"""The brief's verdict: its rules in precedence plus work-budget floors (docs/contracts.md §10).

Every rule is evaluated, not just the first that fires: ``verdict_reasons`` starts with the rule
that decided and lists every other rule that would have fired, so a reader sees all that is
wrong at once. Each reason is one line, ``<VERDICT>: <what happened, in plain words> [<rule id>]``
(:func:`reason_line`, read back by :func:`read_reason`): the sentence is for whoever reads the
brief, the id for code and for searching. Precedence, highest first:

``refetch-failed``
   ``refetch_pass_rate`` < refetch_fail → FAIL
``verifier-violation``, ``trace-not-reproduced``
   a kept Supported claim still cites a source that failed, or a claim was never traced; or
   claims.json's trace verdicts do not reproduce from the retained text (an edit after the
   trace gate ran) → HOLD
``ciber-missing``
   full depth and CIBER neither ran nor was validly skipped → HOLD
``sources-unread``
   a floor counting sources or rounds unmet while the run's searches listed publishers it
   never read nor tried (``counters.unread_hosts``) → HOLD, naming them: evidence is missing
``floor-unmet:<floor>``
   a work-budget floor unmet → HOLD, with what would meet it; a floor that counts documents
   asks no more than a local corpus holds
``no-verified-claim``
   no claim can be emitted → HOLD: the sources did not answer the question (the brief's
   coverage gaps say what was not found); an empty brief never reads as a usable answer
``searches-exhausted``
   full depth and every host the run's searches listed was read or tried (trace.json
   ``counters.searches_exhausted``): the floors counting sources and fetches ask no more
   than the run found, and the brief is PARTIAL, with the counts, rather than HOLD
   because the world is smaller than a quota
``reasoner-unable``
   full depth and the headless run's reasoner declared it cannot sit the skeptic panel or
   re-frame claims for CIBER → PARTIAL, one plain line saying what READY would need (it
   replaces ``ciber-missing``'s HOLD for a CIBER the reasoner cannot run, and
   ``panel-not-upheld``'s per-claim "no votes": re-running would change neither)
``ciber-inconsistent``
   ``ciber_passed`` is false → PARTIAL
``refetch-below-ready``
   refetch_fail ≤ ``refetch_pass_rate`` < refetch_ready → PARTIAL
``tau-below-threshold``, ``contradictions-unresolved``
   τ < tau_threshold; unresolved contradictions → PARTIAL
``panel-not-upheld``
   full depth and a load-bearing claim the skeptic panel has not upheld (no votes, or
   ``unverified``) → PARTIAL, naming each such claim: a panel that never sat upheld nothing
``run-incomplete``
   the run was stopped by a cap (trace.json ``phases.run.incomplete``) → PARTIAL, one line
   per cap
``all-gates-passed``
   full depth, every gate passed, CIBER passed → READY
``ciber-skipped``
   full depth, every gate passed, CIBER validly skipped for too few high claims → PARTIAL,
   since READY requires a CIBER pass
``quick-depth``
   quick depth: every available gate passed, or the brief would be PARTIAL → PARTIAL_QUICK

A capped run is PARTIAL at best because its floors and gates judge only what it gathered: the
gates prove every emitted claim, not that the question was covered. ``run-incomplete`` keeps
such a run from ever reading READY (at quick depth it is listed beside PARTIAL_QUICK).

After the rules come three notes without a verdict, when they apply: ``floors-scaled-to-corpus``,
``links-withheld`` (where claims.json holds a link withheld by :mod:`deep_research.shown_urls`)
and ``non-default-settings``.

Counters come from trace.json. Counters that contradict the other artifacts (more distinct
sources than sources.jsonl holds, a re-fetch rate without a re-fetch sample, …) are an input
error: deciding on them would be guessing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, cast

from deep_research.brief.record import (
    load_trace_or_empty,
    open_brief,
    record_phase,
    save,
    writes_brief,
)
from deep_research.brief.trace_phases import RefetchPhase, RunRecord, TriangulatePhase, VerdictPhase
from deep_research.decide.audit import (
    bodies_of,
    build_audit,
    prove_audit,
    urls_quoting_text,
    write_audit,
)
from deep_research.decide.ciber import skip_problem
from deep_research.decide.counters import fetched_sources
from deep_research.decide.relevance_votes import is_off_question
from deep_research.decide.seal import seal
from deep_research.decide.triangulate import awaiting_panel
from deep_research.errors import InconsistentArtifacts, InputError
from deep_research.gates.trace import emitted_claims, retrace_mismatches
from deep_research.models import (
    ClaimsFile,
    Counters,
    FetchLogEntry,
    Floor,
    SettingChange,
    SourceRow,
    TraceFile,
    Verdict,
)
from deep_research.settings import (
    Settings,
    changed_settings,
    describe_changes,
    require_run_settings,
    settings_hash,
)
from deep_research.shown_urls import may_show, withheld_places, withhold_all
from deep_research.urls import is_web

RANK: dict[str, int] = {"FAIL": 0, "HOLD": 1, "PARTIAL": 2, "READY": 3, "PARTIAL_QUICK": 3}


#: Every rule's id, in precedence order (docs/contracts.md §10.1): each names what happened.
#: ``floor-unmet`` is followed by the floor's name (``floor-unmet:distinct_sources``).
RULES: tuple[str, ...] = (
    "refetch-failed",
    "verifier-violation",
    "trace-not-reproduced",
    "ciber-missing",
    "sources-unread",
    "floor-unmet",
    "no-verified-claim",
    "searches-exhausted",
    "reasoner-unable",
    "ciber-inconsistent",
    "refetch-below-ready",
    "tau-below-threshold",
    "contradictions-unresolved",
    "panel-not-upheld",
    "run-incomplete",
    "all-gates-passed",
    "ciber-skipped",
    "quick-depth",
)
#: The lines that follow the rules and force no verdict.
NOTES: tuple[str, ...] = ("floors-scaled-to-corpus", "links-withheld", "non-default-settings")

_REASON = re.compile(
    r"(?:(?P<verdict>FAIL|HOLD|PARTIAL_QUICK|PARTIAL|READY): )?(?P<text>.+) "
    r"\[(?P<rule>[a-z][a-z0-9-]*(?::[a-z0-9_]+)?)\]"
)


def reason_line(verdict: Verdict | None, text: str, rule: str) -> str:
    """One line of ``verdict_reasons``: the verdict a rule forces (None for a note), what
    happened in plain words, then the rule's id in brackets — the words lead, since a newcomer
    reads them first; the id closes the line, where :func:`read_reason` finds it."""
    return f"{verdict}: {text} [{rule}]" if verdict is not None else f"{text} [{rule}]"


@dataclass(frozen=True)
class Reason:
    """A line of ``verdict_reasons`` read back: the verdict it forces (None for a note), its
    words, and its rule id."""

    verdict: Verdict | None
    text: str
    rule: str


def read_reason(line: str) -> Reason | None:
    """The parts of a line :func:`reason_line` wrote; None for any other line (a brief decided
    before rules had ids)."""
    found = _REASON.fullmatch(line)
    if found is None:
        return None
    verdict = cast(Verdict | None, found["verdict"])
    return Reason(verdict, found["text"], found["rule"])


@dataclass(frozen=True)
class Fired:
    """One rule that fires: its id, the verdict it forces, and what happened in plain words."""

    rule: str
    verdict: Verdict
    why: str

    def line(self) -> str:
        return reason_line(self.verdict, self.why, self.rule)


# --- floors ---------------------------------------------------------------------------------


def _per_sub_question(values: dict[str, int], expected: int) -> int:
    # A sub-question absent from the map ran no query at all.
    counts = list(values.values()) + [0] * max(0, expected - len(values))
    return min(counts) if counts else 0


def cited_sources(document: ClaimsFile) -> set[str]:
    return {
        s
        for claim in document.claims
        if claim.support_class == "Supported"
        for s in claim.supporting
    }


def refetch_required(document: ClaimsFile, sources: Sequence[SourceRow], settings: Settings) -> int:
    """The re-fetch sample floor: over cited *web* sources only (a local document cannot be
    re-fetched), and never more than there are to sample."""
    web = {row.id for row in sources if is_web(row.url)}
    cited = len(cited_sources(document) & web)
    return min(cited, settings.refetch_floor(cited))


#: Each floor in plain words, as a count of it reads ("25 distinct sources").
FLOOR_WORDS = {
    "sub_questions": "sub-questions",
    "queries_per_sub_question": "searches per sub-question",
    "round1_fetches": "sources fetched in round 1",
    "distinct_sources": "distinct sources",
    "rounds": "research rounds",
    "counter_queries_per_sub_question": "searches for counter-evidence per sub-question",
    "refetch_sample": "cited pages re-fetched to check their quotes again",
    "round2_fetches": "sources new in round 2",
}

#: What would meet each floor, as an action still open to whoever re-runs the phase.
FLOOR_ACTIONS = {
    "sub_questions": "plan more sub-questions",
    "queries_per_sub_question": "run more searches for each sub-question",
    "round1_fetches": "fetch more sources in round 1, from publishers not yet read",
    "distinct_sources": "fetch sources from publishers not yet read, or search another corpus",
    "rounds": "search round 2's counter-queries and fetch every page they list",
    "counter_queries_per_sub_question": "write a counter-query for every sub-question",
    "refetch_sample": "run deep-research refetch BRIEF",
    "round2_fetches": "fetch the pages round 2's counter-queries list, on hosts not yet read",
}

#: The floors that count documents: a corpus of N documents caps each of them.
DOCUMENT_FLOORS = ("round1_fetches", "distinct_sources", "round2_fetches")
#: The floors a source left unread could still meet: the documents, and a round's work.
SEARCH_FLOORS = (*DOCUMENT_FLOORS, "rounds")


def corpus_caps(counters: Counters, sources: Sequence[SourceRow]) -> dict[str, int]:
    """The most each document-counting floor can ask of a run whose source declared how many
    documents it holds (none for the web): N documents give at most N sources and N fetched
    in round 1, and round 2 can find only those round 1 did not."""
    held = counters.corpus_documents
    if held is None:
        return {}
    first = sum(1 for source in sources if source.round == 1)
    return {
        "round1_fetches": held,
        "distinct_sources": held,
        "round2_fetches": max(0, held - first),
    }


def _fetched_in_later_rounds(sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]) -> int:
    return sum(1 for s in fetched_sources(sources, log) if s.round >= 2)


def exhausted_caps(
    counters: Counters, sources: Sequence[SourceRow], log: Sequence[FetchLogEntry]
) -> dict[str, int]:
    """The most each document-counting floor can ask of a run whose searches listed no
    publisher it left unread (``counters.searches_exhausted``; none otherwise): what it found.
    The rounds floor needs no cap: a round counts by its searches, not by new pages."""
    if counters.searches_exhausted is None:
        return {}
    return {
        "round1_fetches": counters.round1_fetches,
        "distinct_sources": len(sources),
        "round2_fetches": _fetched_in_later_rounds(sources, log),
    }


def _cap(name: str, *caps: dict[str, int]) -> float:
    return min((cap[name] for cap in caps if name in cap), default=math.inf)


def searches_exhausted(
    document: ClaimsFile,
    counters: Counters,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    settings: Settings,
) -> str | None:
    """``searches-exhausted``'s sentence — what the searches offered, each floor it lowered
    with the counts, and where more could come from — or None when it lowered none."""
    record = counters.searches_exhausted
    if document.depth != "full" or record is None:
        return None
    caps = exhausted_caps(counters, sources, log)
    corpus = corpus_caps(counters, sources)
    lowered = []
    for name in DOCUMENT_FLOORS:
        asked = min(getattr(settings, "full_" + name), _cap(name, corpus))
        if caps[name] < asked:
            lowered.append(f"{caps[name]} {FLOOR_WORDS[name]} (the floor is {asked:g})")
    if not lowered:
        return None
    return (
        f"the searches found no more to read: {_plural(record.searches, 'search')} by "
        f"{_plural(record.fetchers, 'fetcher')} in {_plural(record.round, 'round')} listed "
        f"{_plural(record.publishers, 'publisher')}, every one read or tried, so the floors ask "
        f"no more than the run found: {', '.join(lowered)}; for more sources, search another "
        "corpus or name other hosts"
    )


def scaled_floors(
    document: ClaimsFile, counters: Counters, sources: Sequence[SourceRow], settings: Settings
) -> str | None:
    """The verdict's line saying which floors the corpus lowered, and to what (None: none)."""
    if document.depth != "full":
        return None
    caps = corpus_caps(counters, sources)
    lowered = [
        f"{caps[name]} {FLOOR_WORDS[name]} (not {getattr(settings, 'full_' + name)})"
        for name in DOCUMENT_FLOORS
        if caps.get(name, math.inf) < getattr(settings, "full_" + name)
    ]
    if not lowered:
        return None
    return reason_line(
        None,
        f"the corpus holds only {counters.corpus_documents} document(s), so the work asked "
        f"of the run was lowered to fit it: {', '.join(lowered)}",
        "floors-scaled-to-corpus",
    )


def floors(
    document: ClaimsFile,
    counters: Counters,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    settings: Settings,
) -> dict[str, Floor]:
    """Each floor for the brief's depth: required, actual, met. Every floor counts work done —
    queries, fetches, sources, rounds — never time spent, which waiting alone would meet; a
    floor that counts documents never asks for more than the corpus holds (:func:`corpus_caps`)
    nor, once the searches stopped returning new publishers, than the run found
    (:func:`exhausted_caps`)."""
    sq = counters.sub_questions
    # An extractive plan has one sub-question per part the question asks, never more.
    parts = math.inf if counters.question_parts is None else counters.question_parts
    corpus = corpus_caps(counters, sources)
    found = exhausted_caps(counters, sources, log) if document.depth == "full" else {}
    caps = {name: _cap(name, corpus, found) for name in DOCUMENT_FLOORS}
    rows: dict[str, tuple[float, float]]
    if document.depth == "quick":
        rows = {
            "sub_questions": (min(settings.quick_sub_questions, parts), sq),
            "queries_per_sub_question": (
                settings.quick_queries_per_sub_question,
                _per_sub_question(counters.queries_per_sub_question, sq),
            ),
            "rounds": (settings.quick_rounds, counters.rounds),
        }
    else:
        rows = {
            "sub_questions": (min(settings.full_sub_questions, parts), sq),
            "queries_per_sub_question": (
                settings.full_queries_per_sub_question,
                _per_sub_question(counters.queries_per_sub_question, sq),
            ),
            "round1_fetches": (
                min(settings.full_round1_fetches, caps.get("round1_fetches", math.inf)),
                counters.round1_fetches,
            ),
            "distinct_sources": (
                min(settings.full_distinct_sources, caps.get("distinct_sources", math.inf)),
                len(sources),
            ),
            "rounds": (settings.full_rounds, counters.rounds),
            "counter_queries_per_sub_question": (
                settings.full_counter_queries_per_sub_question,
                _per_sub_question(counters.counter_queries_per_sub_question, sq),
            ),
            "refetch_sample": (
                refetch_required(document, sources, settings),
                counters.refetch_sample,
            ),
            "round2_fetches": (
                min(settings.full_round2_fetches, caps.get("round2_fetches", math.inf)),
                sum(1 for s in fetched_sources(sources, log) if s.round >= 2),
            ),
        }
    return {
        name: Floor(required=float(required), actual=float(actual), met=actual >= required)
        for name, (required, actual) in rows.items()
    }


def check_consistency(
    document: ClaimsFile,
    trace: TraceFile,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
) -> None:
    """Raise on artifacts that contradict one another (one line, saying which and how)."""
    c = trace.counters
    problems = []
    if trace.depth != document.depth:
        problems.append(f"trace.json depth {trace.depth} ≠ claims.json depth {document.depth}")
    if c.distinct_sources > len(sources):
        problems.append(
            f"counters.distinct_sources {c.distinct_sources} > {len(sources)} rows in sources.jsonl"
        )
    for name in ("queries_per_sub_question", "counter_queries_per_sub_question"):
        if len(getattr(c, name)) > c.sub_questions:
            problems.append(
                f"counters.{name} names {len(getattr(c, name))} sub-questions, "
                f"counters.sub_questions is {c.sub_questions}"
            )
    if document.sub_questions and len(document.sub_questions) != c.sub_questions:
        problems.append(
            f"claims.json lists {len(document.sub_questions)} sub-questions, "
            f"counters.sub_questions is {c.sub_questions}"
        )
    found = c.searches_exhausted
    if found is not None and found.distinct_sources > len(sources):
        problems.append(
            f"counters.searches_exhausted says {found.distinct_sources} distinct sources, "
            f"sources.jsonl has {len(sources)} rows"
        )
    if c.corpus_documents is not None and len(sources) > c.corpus_documents:
        problems.append(
            f"sources.jsonl has {len(sources)} rows but counters.corpus_documents says the "
            f"corpus holds {c.corpus_documents}"
        )
    if c.round1_fetches > len(log):
        problems.append(f"counters.round1_fetches {c.round1_fetches} > {len(log)} fetch-log lines")
    top_round = max((source.round for source in sources), default=0)
    if top_round > c.rounds:
        problems.append(f"sources.jsonl has round {top_round} rows, counters.rounds is {c.rounds}")
    if document.refetch_pass_rate is not None and c.refetch_sample == 0:
        problems.append("refetch_pass_rate is set but counters.refetch_sample is 0")
    refetched = trace.phase("refetch", RefetchPhase)
    # A sample whose every page was unreachable (short, gone) has no rate (docs/contracts.md §8).
    all_excluded = refetched is not None and refetched.excluded == c.refetch_sample
    if document.refetch_pass_rate is None and c.refetch_sample > 0 and not all_excluded:
        problems.append(
            f"counters.refetch_sample is {c.refetch_sample} but refetch_pass_rate is missing"
        )
    if document.ciber_passed is not None and document.ciber_skipped is not None:
        problems.append("claims.json has both ciber_passed and ciber_skipped")
    refuted = [c.id for c in document.claims if c.votes is not None and c.votes.outcome == "killed"]
    if refuted:
        # Votes recorded after triangulate: the refuted claims were never stripped.
        problems.append(
            f"{', '.join(refuted)} refuted by the skeptic panel but still in claims "
            "(votes recorded after triangulate: re-run triangulate)"
        )
    off = [c.id for c in document.claims if is_off_question(c)]
    if off:
        problems.append(
            f"{', '.join(off)} judged not to answer their sub-question but still in claims "
            "(votes recorded after triangulate: re-run triangulate)"
        )
    if problems:
        raise InconsistentArtifacts(
            "; ".join(problems) + " — re-run the phase that wrote the wrong value"
        )


# --- the rules ------------------------------------------------------------------------------


def standing_violations(document: ClaimsFile) -> list[str]:
    """Violations the brief still asserts: a kept Supported claim citing a failed source."""
    found = []
    for claim in document.claims:
        if claim.verify_passed is None:
            found.append(f"{claim.id} was never traced")
            continue
        if claim.support_class != "Supported":
            continue
        for violation in claim.violations:
            if violation.source in claim.supporting:
                found.append(f"{claim.id} cites {violation.source} ({violation.reason})")
    return found


def run_incomplete(trace: TraceFile) -> list[str]:
    """The caps that stopped the run early, as the runner recorded them (none for a brief
    built without the runner)."""
    run = trace.phase("run", RunRecord)
    return list(run.incomplete) if run is not None else []


def reasoner_unable(trace: TraceFile) -> dict[str, str]:
    """The steps the headless run's reasoner declared it cannot do (``panel``, ``ciber``) and
    its reason for each, as the runner recorded them (none for a plugin run: there a model sits
    both, and CIBER not run is ``ciber-missing``'s HOLD)."""
    run = trace.phase("run", RunRecord)
    unable = run.unable if run is not None else {}
    return {step: why for step, why in unable.items() if step in ("panel", "ciber")}


def _reasoner_line(unable: dict[str, str]) -> str:
    """``reasoner-unable``'s one plain sentence: what READY would need that this run's
    reasoner lacks."""
    needs = []
    if "panel" in unable:
        needs.append("sit the skeptic panel")
    if "panel" in unable or "ciber" in unable:
        needs.append("re-frame claims for CIBER")
    said = "; ".join(dict.fromkeys(unable.values()))
    return (
        f"this run's reasoner cannot {' and '.join(needs)} ({said}), which READY needs; "
        "run again with a model reasoner (--reasoner) to reach READY"
    )


def _unmet(name: str, floor: Floor, depth: str) -> Fired:
    todo = FLOOR_ACTIONS.get(name, "re-run the phase that fell short")
    return Fired(
        f"floor-unmet:{name}",
        "HOLD",
        f"the run did less work than a {depth}-depth brief needs: {floor.actual:g} "
        f"{FLOOR_WORDS.get(name, name)}, needs {floor.required:g}; {todo}",
    )


def _unread(hosts: Sequence[str]) -> Fired:
    return Fired(
        "sources-unread",
        "HOLD",
        f"the searches listed publishers the run never read: {_first(hosts, 3, ', ')}; "
        "fetch their pages (deep-research next BRIEF dispatches a top-up while any are left)",
    )


def _first(items: Sequence[str], shown: int, separator: str = "; ") -> str:
    """The first ``shown`` items and how many more there are: a reason names a few, not all."""
    more = f" (+{len(items) - shown} more)" if len(items) > shown else ""
    return separator.join(items[:shown]) + more


def _plural(count: int, noun: str) -> str:
    ending = "es" if noun.endswith(("s", "ch", "sh")) else "s"
    return f"{count} {noun}" + ("" if count == 1 else ending)


def evaluate(
    document: ClaimsFile,
    floor_table: dict[str, Floor],
    settings: Settings,
    incomplete: Sequence[str] = (),
    retraced: Sequence[str] = (),
    unable: dict[str, str] | None = None,
    exhausted: str | None = None,
    unread: Sequence[str] = (),
) -> list[Fired]:
    """Every rule that fires, highest precedence first. ``incomplete``: the caps that stopped
    the run (see :func:`run_incomplete`); ``retraced``: where a fresh trace of the retained text
    disagrees with claims.json (:func:`deep_research.gates.trace.retrace_mismatches`);
    ``unable``: the steps the run's reasoner declared it cannot do (:func:`reasoner_unable`);
    ``exhausted``: :func:`searches_exhausted`'s sentence; ``unread``: the hosts the searches
    listed and the run never looked at (``counters.unread_hosts``)."""
    fired: list[Fired] = []
    unable = (unable or {}) if document.depth == "full" else {}
    rate = document.refetch_pass_rate
    full = document.depth == "full"
    if rate is not None and rate < settings.refetch_fail:
        fired.append(
            Fired(
                "refetch-failed",
                "FAIL",
                "the cited pages, fetched again, no longer say what was quoted from them "
                f"(re-fetch pass rate {rate}, needs {settings.refetch_fail}); regenerate the "
                "brief from the pages as they now stand (a new run)",
            )
        )
    violations = standing_violations(document)
    if violations:
        fired.append(
            Fired(
                "verifier-violation",
                "HOLD",
                "a kept claim cites a source the check rejected, or was never checked: "
                + _first(violations, 3)
                + "; re-run deep-research trace, then triangulate and verdict",
            )
        )
    if retraced:
        fired.append(
            Fired(
                "trace-not-reproduced",
                "HOLD",
                "claims.json changed after its citations were checked and no longer matches "
                f"the retained text: {_first(retraced, 1)}; re-run deep-research trace",
            )
        )
    if full and document.ciber_passed is None:
        problem = (
            "CIBER neither ran nor was skipped"
            if document.ciber_skipped is None
            else skip_problem(document.ciber_skipped, document, settings)
        )
        # A reasoner that declared it cannot re-frame: re-running changes nothing, so this is
        # reasoner-unable's PARTIAL with what READY needs, not a HOLD the user cannot act on.
        if problem is not None and "ciber" not in unable:
            fired.append(
                Fired(
                    "ciber-missing",
                    "HOLD",
                    f"the consistency check a full-depth brief needs did not run ({problem}); "
                    "run CIBER or record a valid skip (deep-research ciber apply)",
                )
            )
    short = [name for name, floor in floor_table.items() if not floor.met]
    if unread and set(short) & set(SEARCH_FLOORS):
        # Evidence missing, not a quota: sources the searches offered that nobody read.
        fired.append(_unread(unread))
    fired += [_unmet(name, floor_table[name], document.depth) for name in short]
    if not emitted_claims(document):
        fired.append(
            Fired(
                "no-verified-claim",
                "HOLD",
                "no claim survived the checks: the sources found do not answer the question; "
                "search with other queries, another corpus or other hosts",
            )
        )
    if exhausted is not None:
        fired.append(Fired("searches-exhausted", "PARTIAL", exhausted))
    if unable:
        # First among the PARTIAL reasons: the one a re-run with this reasoner cannot change.
        fired.append(Fired("reasoner-unable", "PARTIAL", _reasoner_line(unable)))
    if document.ciber_passed is False:
        fired.append(
            Fired(
                "ciber-inconsistent",
                "PARTIAL",
                "some findings did not hold when negated or reworded (the CIBER consistency "
                "check failed); use the findings it flagged only with that caveat",
            )
        )
    if rate is not None and settings.refetch_fail <= rate < settings.refetch_ready:
        fired.append(
            Fired(
                "refetch-below-ready",
                "PARTIAL",
                "some cited pages, fetched again, no longer say what was quoted from them "
                f"(re-fetch pass rate {rate}, needs {settings.refetch_ready}); a new run reads "
                "the pages as they now stand",
            )
        )
    tau = document.triangulation_score
    if tau is not None and tau < settings.tau_threshold:
        fired.append(
            Fired(
                "tau-below-threshold",
                "PARTIAL",
                "too few findings are confirmed by two independent sources "
                f"(τ {tau}, needs {settings.tau_threshold}); a second publisher for each "
                "finding, from another corpus or host, would raise it",
            )
        )
    if document.unresolved_contradictions:
        count = len(document.unresolved_contradictions)
        fired.append(
            Fired(
                "contradictions-unresolved",
                "PARTIAL",
                "the sources contradict each other and nothing settles it "
                f"({_plural(count, 'unresolved contradiction')}); the report gives each "
                "position with its sources: weigh them, or find a source that settles it",
            )
        )
    awaiting = awaiting_panel(document.claims, document.depth)
    if "panel" in unable:
        # Said once by reasoner-unable rather than once per claim.
        awaiting = [c for c in awaiting if c.votes is not None]
    if awaiting:
        named = ", ".join(
            f"{c.id} ({'no votes' if c.votes is None else f'{c.votes.outcome} {c.votes.tally}'})"
            for c in awaiting
        )
        fired.append(
            Fired(
                "panel-not-upheld",
                "PARTIAL",
                f"the skeptic panel has not upheld findings the answer rests on: {named}; "
                "rely on them only with their quoted sources in view",
            )
        )
    for reason in incomplete:
        fired.append(
            Fired(
                "run-incomplete",
                "PARTIAL",
                f"a cap stopped the run early, so it researched only part of the question: "
                f"{reason}; raise that cap and run again for the rest",
            )
        )
    if not fired:
        if full and document.ciber_passed:
            fired.append(Fired("all-gates-passed", "READY", "every check passed at full depth"))
        elif full:
            fired.append(
                Fired(
                    "ciber-skipped",
                    "PARTIAL",
                    "every check that ran passed, but READY also needs the CIBER consistency "
                    f"check to pass, and it was skipped ({document.ciber_skipped}); "
                    "more independent sources per finding give it claims to check",
                )
            )
        else:
            fired.append(
                Fired(
                    "quick-depth",
                    "PARTIAL_QUICK",
                    "a quick first look whose every check passed; only a full-depth run "
                    "(--depth full) can be READY",
                )
            )
    ranked = sorted(fired, key=lambda item: RANK[item.verdict])
    if not full and ranked[0].verdict == "PARTIAL":
        # PARTIAL is a full-depth verdict (it presumes the adversarial second round). A quick
        # brief that would be PARTIAL stays PARTIAL_QUICK, never reused, with the reasons listed.
        ranked.insert(
            0,
            Fired(
                "quick-depth",
                "PARTIAL_QUICK",
                "a quick first look, usable within the limits listed below; only a full-depth "
                "run (--depth full) can be READY",
            ),
        )
    return ranked


# --- the command ----------------------------------------------------------------------------


@dataclass(frozen=True)
class VerdictReport:
    """The decision, its fields named as claims.json and ``phases.verdict`` record them."""

    verdict: Verdict
    verdict_reasons: list[str]
    floors: dict[str, Floor]
    settings_hash: str
    non_default_settings: dict[str, SettingChange]

    def recorded(self) -> dict[str, Any]:
        """The fields by name: the update claims.json takes and the phase record's body."""
        return {field.name: getattr(self, field.name) for field in fields(self)}

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.recorded(),
            "floors": {name: floor.model_dump() for name, floor in self.floors.items()},
            "non_default_settings": {
                name: change.model_dump() for name, change in self.non_default_settings.items()
            },
        }


def decide(
    document: ClaimsFile,
    trace: TraceFile,
    sources: Sequence[SourceRow],
    log: Sequence[FetchLogEntry],
    settings: Settings,
    retraced: Sequence[str] = (),
    quoting_text: Sequence[str] = (),
) -> VerdictReport:
    """Pure: the verdict from already-read artifacts (``retraced``: see :func:`evaluate`;
    ``quoting_text``: the fetched URLs the audit record withholds, see
    :func:`~deep_research.decide.audit.urls_quoting_text`)."""
    if document.triangulation_score is None:
        raise InputError("claims.json has no triangulation_score; run deep-research triangulate")
    digest = settings_hash(settings)
    triangulated = trace.phase("triangulate", TriangulatePhase)
    if triangulated is not None and triangulated.settings_hash not in (None, digest):
        raise InconsistentArtifacts(
            "triangulate ran under other settings than this verdict; re-run triangulate with "
            "the same settings (or the same --set overrides)"
        )
    check_consistency(document, trace, sources, log)
    table = floors(document, trace.counters, sources, log, settings)
    exhausted = searches_exhausted(document, trace.counters, sources, log, settings)
    fired = evaluate(
        document,
        table,
        settings,
        run_incomplete(trace),
        retraced,
        reasoner_unable(trace),
        exhausted,
        trace.counters.unread_hosts,
    )
    reasons = [item.line() for item in fired]
    scaled = scaled_floors(document, trace.counters, sources, settings)
    if scaled is not None:
        reasons.append(scaled)
    withheld = links_withheld(document, len(quoting_text))
    if withheld is not None:
        reasons.append(withheld)
    changed = describe_changes(settings)
    if changed is not None:
        # A lowered floor or threshold must be as visible as the verdict it allowed.
        reasons.append(
            reason_line(
                None,
                f"this verdict was decided with settings changed from their defaults: {changed}",
                "non-default-settings",
            )
        )
    non_default = {
        name: SettingChange(value=value, default=default)
        for name, (value, default) in changed_settings(settings).items()
    }
    return VerdictReport(fired[0].verdict, reasons, table, digest, non_default)


def links_withheld(document: ClaimsFile, quoting_text: int = 0) -> str | None:
    """The note naming where claims.json holds a withheld link, read from the marks themselves
    (so a verdict decided again from the files says the same), and how many fetched URLs
    audit.json withholds for holding page text; None when there are neither."""
    places = withheld_places(document)
    said = []
    if places:
        total = sum(times for _, times in places)
        where = ", ".join(f"{place} ({times})" if times > 1 else place for place, times in places)
        said.append(
            f"{total} link(s) that no source of this brief has — written by a model or cut from "
            f"a passage — were withheld where they stood: {where}"
        )
    if quoting_text:
        said.append(
            f"{quoting_text} fetched URL(s) holding page text (a query quoting a page, a file "
            "named after its own heading) were withheld from audit.json"
        )
    return reason_line(None, "; ".join(said), "links-withheld") if said else None


@writes_brief
def run_verdict(root: Path, settings: Settings) -> VerdictReport:
    brief = open_brief(root)
    require_run_settings(brief.root, settings)
    trace = load_trace_or_empty(brief)
    sources = brief.load_sources()
    log = brief.load_fetch_log()
    loaded = brief.load_claims()
    # A fetched URL holding page text is withheld from the record, and so from claims.json too.
    quoting = urls_quoting_text(bodies_of(brief, loaded, sources), sources, log)
    # What a model wrote or the tool composed shows no link the brief neither fetched nor quotes.
    document = withhold_all(loaded, may_show(loaded, sources, log, quoting))
    # The verdict rests on claims.json's trace results only after they reproduce from the text.
    retraced = retrace_mismatches(brief, document)
    report = decide(document, trace, sources, log, settings, retraced, quoting)
    updated = document.model_copy(update=report.recorded())
    audit = build_audit(updated, sources, log, quoting)
    prove_audit(brief, audit, updated, sources)
    decided = VerdictPhase(**report.recorded(), sealed=seal(brief))
    save(brief, updated, record_phase(trace, "verdict", decided, settings))
    write_audit(brief, audit)
    return report
