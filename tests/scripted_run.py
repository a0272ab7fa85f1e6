"""A scripted research run: the web it searches, and what an orchestrator that does only what
``deep-research next`` prints writes and hears back.

Shared by the in-process run (tests/plugin/test_next.py) and the one inside the real Claude Code
CLI (tests/plugin/test_plugin_live_run.py), so both drive the same run: thirty pages on thirty
publisher hosts, five sub-questions of one central fact each, stated in other words by every
publisher. The orchestrator has no judgement of its own: it writes exactly the fields an action
shows, within its bounds, and every agent answers exactly as its contract in agents/ shows.
The contested world's brief is checked by one function, whichever driver made it.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from deep_research.brief.layout import Brief
from deep_research.cli import main
from deep_research.fetch.fetcher import FetchPolicy
from deep_research.plugin import runstate
from deep_research.plugin.next import Action, next_action
from deep_research.plugin.tasks import FetchTask, Task, VerifyTask, parse
from localhttp import LocalServer, Route, article, loopback_policy

TaskT = TypeVar("TaskT", bound=Task)

TOPIC = "How does the Harbourton tide-gauge network measure sea level?"
#: Five sub-questions, one central fact each, stated in other words by every publisher.
FACTS = {
    "sq1": (
        "How many gauges does the network run?",
        [
            "The Harbourton network operates 42 tide gauges along 310 kilometres of coast.",
            "Along its 310 kilometres of coast, the Harbourton network operates 42 tide gauges.",
            "In all, 42 tide gauges are run by the Harbourton network on 310 kilometres of coast.",
        ],
        "The Harbourton network operates 42 tide gauges along 310 kilometres of coast.",
    ),
    "sq2": (
        "How often is sea level sampled?",
        [
            "Each Harbourton gauge records the water level every 6 minutes, day and night.",
            "Day and night, each Harbourton gauge records the water level every 6 minutes.",
            "Once every 6 minutes, each Harbourton gauge records the water level, day and night.",
        ],
        "Each Harbourton gauge records the water level every 6 minutes.",
    ),
    "sq3": (
        "How accurate are the readings?",
        [
            "Radar sensors at Harbourton measure the water surface to within 5 millimetres.",
            "Radar sensors at Harbourton measure the water surface to within 5 millimetres, often.",
            "The water surface is measured by radar sensors at Harbourton to within 5 millimetres.",
        ],
        "Radar sensors at Harbourton measure the water surface to within 5 millimetres.",
    ),
    "sq4": (
        "Since when does the record run?",
        [
            "The Harbourton sea-level record runs without a break since 1931 at the main harbour.",
            "At the main harbour, the Harbourton sea-level record runs without a break since 1931.",
            "Without a break since 1931, the Harbourton sea-level record runs at the main harbour.",
        ],
        "The Harbourton sea-level record runs without a break since 1931.",
    ),
    "sq5": (
        "What trend does the record show?",
        [
            "Harbourton sea level rose by 3.1 millimetres per year between 1993 and 2023.",
            "Between 1993 and 2023, Harbourton sea level rose by 3.1 millimetres per year.",
            "From 1993 to 2023, Harbourton sea level rose by 3.1 millimetres per year.",
        ],
        "Harbourton sea level rose by 3.1 millimetres per year between 1993 and 2023.",
    ),
}
PAGES_PER_ROUND = {1: 4, 2: 2}  # per sub-question: 20 round-1 pages, 30 in all

#: The contested world (``Web(contested=True)``): sq5's pages disagree on a date. Two publishers
#: give March 2026, two September 2026 (one of them in a table); one March page is syndicated
#: word for word on another host. Each position is its own claim. One page of sq2 is short.
MARCH = "The main harbour gauge returns to service in March 2026, the harbour authority said."
SEPTEMBER = (
    "The contractor's programme returns the main harbour gauge to service in September 2026."
)
#: The contractor's page states its date in a table only: a fetcher quotes the row with the
#: table's header (the row alone is too short to stand as a quote), from here to there.
TABLE = ("| Milestone", "September 2026 |")
MARCH_CLAIM = "The main harbour gauge returns to service in March 2026."
SEPTEMBER_CLAIM = (
    "The contractor's programme returns the main harbour gauge to service in September 2026."
)
#: sq5's pages in the contested world, by (round, page): what each states, and how.
CONTESTED = {
    (1, 0): ("march", "prose"),
    (1, 1): ("march", "prose"),
    (1, 2): ("september", "prose"),
    (1, 3): ("september", "table"),
    (2, 0): ("march", "syndicated"),  # round 1's page 0, word for word, on another host
    (2, 1): ("march", "prose"),
}
#: The contested world's short page (under 100 words): one the re-fetch sample draws — the
#: sample is ordered by a hash of the brief and source ids, so it is the same every run.
SHORT_PAGE = ("sq2", 1, 0)
#: The judged world (``Web(judged=True)``): sq4's pages also say, beside the fact, something on
#: its topic — its words are the sub-question's own — that does not answer it.
OFF_QUESTION = (
    "The Harbourton sea-level record has been published online since the harbour authority "
    "opened its data portal."
)
#: What the judged world's skeptics say of each claim's evidence, vote by vote: whether it
#: answers the claim's sub-question (``None``: the vote errored; anything but yes/partly/no is
#: malformed). A claim not listed: "yes" every time.
JUDGED: dict[str, tuple[str | None, ...]] = {
    OFF_QUESTION: ("no", "no", "no"),
    FACTS["sq1"][2]: ("no", "maybe", "yes"),  # one no and a malformed word: no majority
    FACTS["sq3"][2]: (None, "no", "yes"),  # an errored vote abstains: neither saves nor drops
}
#: What the plan's queries and counter-queries look like: the sub-question they serve is in them.
_QUERY = re.compile(r"harbourton (sq\d+) (query \d+|query more|evidence against)")


def filler(seed: str, count: int = 160) -> str:
    """Distinct prose per page, so no two pages are near-copies of each other."""
    rng = random.Random(seed)
    stems = [
        "tide",
        "quay",
        "basin",
        "survey",
        "datum",
        "buoy",
        "estuary",
        "sensor",
        "pier",
        "chart",
        "storm",
        "surge",
        "levee",
        "marsh",
        "dredge",
        "beacon",
        "jetty",
        "reef",
        "ferry",
        "dock",
        "inlet",
        "lagoon",
        "shoal",
        "cove",
        "harbour",
        "keel",
        "mooring",
    ]
    words = [
        rng.choice(stems) + rng.choice(["", "s", "ed", "ing", "er", "ward"]) for _ in range(count)
    ]
    sentences = [" ".join(words[i : i + 12]).capitalize() + "." for i in range(0, count, 12)]
    return " ".join(sentences)


@dataclass
class Web:
    """Thirty pages on thirty publishers, found by the queries that name their sub-question.

    Every host name resolves to ``address``, the one the server listens on."""

    server: LocalServer
    address: str = "127.0.0.1"
    pages: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    hosts: dict[str, list[str]] = field(default_factory=dict)
    contested: bool = False
    #: A world round 1 reads whole: no page of its own for round 2, whose counter-queries list
    #: round 1's pages again.
    closed: bool = False
    #: The judged world: sq4's pages also state :data:`OFF_QUESTION`.
    judged: bool = False

    def build(self) -> None:
        number = 0
        for sq, (_, sentences, _) in FACTS.items():
            for round_, count in PAGES_PER_ROUND.items():
                if self.closed and round_ > 1:
                    continue
                for k in range(count):
                    number += 1
                    host = f"www.publisher-{number}.example"
                    path = f"/{sq}/r{round_}/{k}"
                    said = [sentences[number % 3]]
                    if self.judged and sq == "sq4":
                        said.append(OFF_QUESTION)
                    body = " ".join(
                        [filler(f"{sq}{round_}{k}a", 276), *said, filler(f"{sq}{round_}{k}b", 276)]
                    )
                    page = article(body, f"Gauges {number}")
                    if self.contested and sq == "sq5":
                        page = self._contested_page(round_, k, number)
                    elif self.contested and (sq, round_, k) == SHORT_PAGE:
                        short = f"{filler('short', 40)} {sentences[number % 3]}"
                        page = article(short, f"Gauges {number}")
                    self.server.routes[path] = Route(body=page)
                    self.pages.setdefault((sq, round_), []).append(self.url(host, path))
                    self.hosts[host] = [self.address]

    def _contested_page(self, round_: int, k: int, number: int) -> str:
        position, shape = CONTESTED[(round_, k)]
        said = MARCH if position == "march" else SEPTEMBER
        if shape == "syndicated":  # the same page as round 1's first, on this host
            round_, k = 1, 0
        before, after = filler(f"sq5{round_}{k}a", 276), filler(f"sq5{round_}{k}b", 276)
        if shape == "table":
            when = said.split(" in ", 1)[1].split(".")[0]
            table = (
                "<table><tr><th>Milestone</th><th>Programme</th></tr>"
                f"<tr><td>Gauge back in service</td><td>{when}</td></tr></table>"
            )
            body = f"{before}</p>{table}<p>{after}"
            return article(body, "Contractor programme")
        title = "Gauges 1" if shape == "syndicated" else f"Gauges {number}"
        return article(f"{before} {said} {after}", title)

    blanked: bool = False

    def blank(self) -> None:
        """Every page loses the text it was fetched with (a site rewritten after the fetch)."""
        for url in [url for urls in self.pages.values() for url in urls]:
            path = urlsplit(url).path
            self.server.routes[path] = Route(body=article(filler(path, 500), "Moved"))
        self.blanked = True

    def url(self, host: str, path: str) -> str:
        # A page on the default port carries none, as a search engine would list it.
        port = "" if self.server.port == 80 else f":{self.server.port}"
        return f"{self.server.scheme}://{host}{port}{path}"

    def policy(self, **limits: Any) -> FetchPolicy:
        port, hosts = self.server.port, self.hosts
        return loopback_policy(port, resolver=hosts, address=self.address, **limits)

    def found(self, query: str) -> list[str]:
        """The pages a search for ``query`` lists: those of the sub-question and round it is
        for (a counter-query looks for round 2's evidence)."""
        matched = _QUERY.fullmatch(query)
        if matched is None:
            return []
        round_ = 2 if matched.group(2) == "evidence against" and not self.closed else 1
        return list(self.pages.get((matched.group(1), round_), []))

    def fetched(self, brief: Path, sub_question: str, round_: int) -> list[tuple[str, str]]:
        """A fetcher's pages for one sub-question and round, read by our real fetcher: each URL
        with its kept text (none for round 2 of a closed world: its pages were read)."""
        return self.fetch(brief, self.pages.get((sub_question, round_), []))

    def fetch(self, brief: Path, urls: list[str]) -> list[tuple[str, str]]:
        """``urls`` read into ``brief`` by our real fetcher: each URL with its kept text."""
        from deep_research.fetch.fetcher import Fetcher

        pages = []
        with Fetcher(Brief(brief), self.policy(), use_brief_hosts=False) as fetcher:
            for url in urls:
                result = fetcher.fetch(url)
                assert result.ok, result.entry
                pages.append((url, result.text or ""))
        return pages

    def resolve_env(self) -> str:
        """The names as ``DEEP_RESEARCH_TEST_RESOLVE`` lists them."""
        return ",".join(f"{host}={address}" for host, (address,) in self.hosts.items())


def query_in(asked: str) -> str:
    """The plan's query a search request carries (its client words the prompt around it)."""
    matched = _QUERY.search(asked)
    return matched.group(0) if matched else asked


def task(prompt: str, kind: type[TaskT]) -> TaskT:
    """The task a dispatch prompt states, read as the guard reads it (a workflow's prompt adds
    how to answer on the lines after it)."""
    found = parse(prompt.split("\n", 1)[0])
    assert isinstance(found, kind), f"not a {kind.agent} task: {prompt}"
    return found


# --- the orchestrator's own writes ------------------------------------------------------------


def written(action: Action, brief: Path, current: str | None = None) -> str:
    """The content a ``write`` action asks for, built from its example, rules and bounds.
    ``current`` is the file as it stands, for an action that adds to it."""
    if action.phase == "plan":
        wanted = min(len(FACTS), action.bounds["max_sub_questions"])
        plan = {
            "sub_questions": [
                {
                    "id": sq,
                    "question": question,
                    "scope": f"only {question.lower()}",
                    "queries": [f"harbourton {sq} query {n}" for n in range(1, 5)],
                }
                for sq, (question, _, _) in list(FACTS.items())[:wanted]
            ]
        }
        return json.dumps(plan)
    if _top_up_field(action):  # a top-up: new queries for every sub-question
        assert current is not None, "a top-up adds to the plan as it stands"
        plan = json.loads(current)
        field_name = _top_up_field(action)
        for sq in plan["sub_questions"]:
            sq[field_name] = [f"harbourton {sq['id']} query more"]
        return json.dumps(plan)
    if action.phase == "round2":
        assert current is not None, "round 2 adds to the plan as it stands"
        plan = json.loads(current)
        for sq in plan["sub_questions"]:
            sq["counter_queries"] = [f"harbourton {sq['id']} evidence against"]
        return json.dumps(plan)
    if action.phase == "claims":
        return json.dumps(_claims(action, brief))
    if action.phase == "synthesize":
        lines = [rule for rule in action.rules if re.match(r"C\d+ \[", rule)]
        sentences = []
        for line in lines:
            ids, claim = line.split(" [", 1)[1].split("]: ", 1)
            cites = "".join(f"[{s.strip()}]" for s in ids.split(","))
            sentences.append(f"{claim.rstrip('.')} {cites}.")
        return " ".join(sentences)
    raise AssertionError(f"unexpected write: {action}")


def _top_up_field(action: Action) -> str | None:
    """The plan field a top-up write asks for (its example shows the plan's fields, the one to
    fill ending in "…"), or None."""
    if action.phase not in ("cast", "round2") or not isinstance(action.example, dict):
        return None
    shown = action.example.get("sub_questions") or [{}]
    return next(
        (
            name
            for name, value in shown[0].items()
            if name.startswith("more_") and value[-1:] == ["…"]
        ),
        None,
    )


def _claims(action: Action, brief: Path) -> dict[str, Any]:
    document = dict(action.example)
    document["question"] = TOPIC
    document["generated"] = "2026-12-01"
    rows = Brief(brief).load_sources()
    claims: list[dict[str, Any]] = []
    planned = [sq["id"] for sq in document["sub_questions"]]
    for sq in (sq for sq in FACTS if sq in planned):
        stating: dict[str, list[tuple[str, str]]] = {}  # claim → (source, finding) stating it
        for row in (r for r in rows if sq in r.sub_questions):
            for finding in row.findings:
                stating.setdefault(finding.claim, []).append((row.id, finding.id))
        contested = len({claim for claim in stating if claim != OFF_QUESTION}) > 1
        for claim, support in stating.items():
            cited = support if contested else support[:3]  # a contested fact: every page
            claims.append(
                {
                    "id": f"C{len(claims) + 1}",
                    "claim": claim,
                    "sq": sq,
                    "supporting": [source for source, _ in cited],
                    "findings": [finding for _, finding in cited],
                    "importance": "central",
                }
            )
    if any(c["claim"] == SEPTEMBER_CLAIM for c in claims):
        # A claim merged from one cite too many: a source of another sub-question, which does
        # not state it. The cites that hold keep it.
        other = next(r for r in rows if "sq2" in r.sub_questions)
        claims[0]["supporting"].append(other.id)
        claims[0]["findings"].append(other.findings[0].id)
    document["claims"] = claims
    return document


# --- agents, answering exactly as their contracts show ----------------------------------------


def fetcher_reply(prompt: str, fetched: list[tuple[str, str]]) -> dict[str, Any]:
    """agents/fetcher.md's output for the pages it fetched (URL passed to fetch, page text):
    per page the sub-question's fact, quoted as the page words it."""
    f = task(prompt, FetchTask)
    sq = f.sub_question
    sources = []
    for url, text in fetched:
        if TABLE[0] in text:  # the table, header to row, as the extracted text lays it out
            start, end = text.index(TABLE[0]), text.index(TABLE[1]) + len(TABLE[1])
            quote, claim = text[start:end], SEPTEMBER_CLAIM
        else:
            quote, claim = next((s, c) for s, c in _stated(sq) if s in text)
        findings = [{"claim": claim, "quote": quote, "importance": "central"}]
        if OFF_QUESTION in text:
            findings.append({"claim": OFF_QUESTION, "quote": OFF_QUESTION, "importance": "central"})
        sources.append({"url": url, "source_type": "government", "findings": findings})
    return {"sub_question": sq, "query": f.queries[0], "complete": True, "sources": sources}


def _stated(sq: str) -> list[tuple[str, str]]:
    """Each sentence a page of ``sq`` may say (in either world), with the claim it states."""
    _, sentences, claim = FACTS[sq]
    stated = [(sentence, claim) for sentence in sentences]
    if sq == "sq5":
        stated += [(MARCH, MARCH_CLAIM), (SEPTEMBER, SEPTEMBER_CLAIM)]
    return stated


def triangulator_reply(prompt: str) -> dict[str, Any]:
    return {"claims": [], "contradictions": [], "coverage_gaps": [], "negation_queries": []}


def skeptic_reply(prompt: str, answers: str = "yes") -> dict[str, Any]:
    return {
        "refuted": False,
        "evidence": "each quote states the figure exactly as claimed",
        "confidence": 0.8,
        "counterSource": None,
        "answers": answers,
    }


def judged_answers(claim: str, vote: int) -> str | None:
    """What the judged world's skeptic casting vote ``vote`` (from 1) of ``claim`` says of
    whether its evidence answers its sub-question; None: that vote errored."""
    return JUDGED.get(claim, ("yes",) * 3)[vote - 1]


def verifier_reply(prompt: str) -> dict[str, Any]:
    """agents/verifier.md: for each source the task names, its located evidence copied verbatim
    from the task's input file (between « and », inside the page text around it), then the
    verdict — one judgement per source."""
    f = task(prompt, VerifyTask)
    text = Path(f.input).read_text(encoding="utf-8")
    judgements = []
    for source in f.source_ids:
        section = text.split(f"\n## Source {source}\n", 1)[1].split("\n## Source ", 1)[0]
        quote = re.search(r"<untrusted_source [^>\n]*>\n[^«]*«(.+?)»", section, re.DOTALL)
        assert quote is not None, f"no located evidence of {source} in {f.input}"
        judgements.append(
            {
                "source_id": source,
                "quoted_span": quote.group(1),
                "verdict": "entails",
                "rationale": "the located quote states the claim's figure",
            }
        )
    return {"claim_id": f.claim_id, "judgements": judgements}


def ciber_reply(prompt: str) -> dict[str, Any]:
    return {"ciber_passed": True, "consistency_failures": []}


class Orchestrator:
    """Does exactly what ``next`` prints; every agent answers as its contract shows."""

    def __init__(self, web: Web, brief: Path, depth: str, trailer: str = "") -> None:
        self.web, self.brief, self.depth = web, brief, depth
        self.trailer = trailer  # what Claude Code appends to an Agent result, copied along
        self.actions: list[Action] = []
        self.agent_calls = 0

    def run(self, limit: int = 200, *, until: str | None = None) -> Action:
        """Until ``next`` says done, or (``until``) asks for that phase first: that action,
        not done."""
        for _ in range(limit):
            action = next_action(self.brief)
            if action.action == "done" or action.phase == until:
                self.actions.append(action)
                return action
            self.actions.append(action)
            self.about_to(action)
            getattr(self, f"do_{action.action}")(action)
        raise AssertionError(f"no verdict after {limit} actions: {self.actions[-3:]}")

    def about_to(self, action: Action) -> None:
        """Called before each action is done; a subclass may look at the brief then."""

    def do_write(self, action: Action) -> None:
        path = Path(action.path or "")
        current = path.read_text() if path.exists() else None
        path.write_text(written(action, self.brief, current))

    def do_dispatch(self, action: Action) -> None:
        assert action.tasks and len(action.tasks) <= 6  # the fan-out ceiling of a full run
        for job in action.tasks:
            self.agent_calls += 1
            if action.agent == "deep-research:fetcher":  # the ledger the guard keeps
                fetch = task(job.prompt, FetchTask)
                row: dict[str, Any] = {
                    "event": "dispatch",
                    "fetcher": True,
                    "id": f"d{self.agent_calls}",
                    "round": fetch.round,
                    **fetch.ledger_marks(),
                }
                runstate.append_ledger(Brief(self.brief), row)
                self.search(fetch)
            reply = getattr(self, "agent_" + (action.agent or "").split(":")[1])(job.prompt)
            tail = self.trailer
            shown = reply if isinstance(reply, str) else json.dumps(reply)
            Path(job.save_to).write_text(shown + tail)

    def listed(self, fetch: FetchTask, query: str) -> list[str]:
        """The pages one search of a fetcher lists (a subclass may list others)."""
        return self.web.found(query)

    def search(self, fetch: FetchTask) -> None:
        """A fetcher's searches, as the guard records them: each search, and the hosts its
        results listed."""
        from deep_research.plugin.guard.posttool import listed_row
        from deep_research.urls import host_of

        brief = Brief(self.brief)
        for n, query in enumerate(fetch.queries):
            search = f"s{self.agent_calls}-{n}"
            runstate.append_ledger(brief, {"event": "search", "id": search})
            hosts = sorted({host_of(url) or "" for url in self.listed(fetch, query)})
            runstate.append_ledger(brief, listed_row(search, hosts))

    def agent_fetcher(self, prompt: str) -> Any:
        f = task(prompt, FetchTask)
        fetched = self.web.fetched(self.brief, f.sub_question, f.round)
        return fetcher_reply(prompt, fetched)

    agent_triangulator = staticmethod(triangulator_reply)
    agent_skeptic = staticmethod(skeptic_reply)
    agent_verifier = staticmethod(verifier_reply)
    agent_ciber = staticmethod(ciber_reply)

    # --- commands, run exactly as printed ---

    def do_run(self, action: Action) -> None:
        words = shlex.split(action.command or "")
        assert words[0] == "deep-research"
        code = main(words[1:])
        assert code in (0, 1), (action.command, code)


# --- what the ledger shows of the dispatches ---------------------------------------------------


def futile_dispatches(brief: Path) -> list[dict[str, Any]]:
    """The fetcher dispatches in the run's guard ledger told to leave aside every host their
    searches listed: work that could only fail. A scripted run dispatches one agent at a time,
    so a dispatch's searches are the ledger's rows up to the next dispatch."""
    rows = runstate.read_ledger(Brief(brief))
    futile = []
    for index, row in enumerate(rows):
        if row.get("event") != "dispatch" or not row.get("fetcher"):
            continue
        after = rows[index + 1 :]
        end = next((n for n, r in enumerate(after) if r.get("event") == "dispatch"), len(after))
        listed = {h for r in after[:end] if r.get("event") == "listed" for h in r["hosts"]}
        if listed and listed <= set(row.get("exclude_hosts") or []):
            futile.append({**row, "listed": sorted(listed)})
    return futile


# --- what a reader of the contested world's brief gets ----------------------------------------


def assert_both_positions_reach_the_reader(
    brief: Path, handoff: dict[str, Any] | None = None, see: str = ""
) -> None:
    """The contested world's brief, as a reader gets it, whichever driver made it: PARTIAL for
    the open contradiction, re-derived offline to the same values; the answer states both dates,
    each with its own sources; the report's Contradictions lists them; the handoff carries both;
    the syndicated copy is one voice; the short page was re-fetched; the merged claim kept the
    cites that hold it. ``handoff`` is the one the caller was given (else it is asked for here);
    ``see`` goes with every failure (where the run's whole story is)."""
    document = Brief(brief).load_claims()
    reasons = document.verdict_reasons
    assert document.verdict == "PARTIAL", (document.verdict, reasons, see)
    assert any("[contradictions-unresolved]" in reason for reason in reasons), (reasons, see)
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        code = main(["verify", str(brief), "--offline"])
    checked = json.loads(printed.getvalue())
    assert code == 0 and checked["identical"], (checked, see)

    by_claim = {c.claim: c for c in document.claims}
    march, september = by_claim[MARCH_CLAIM], by_claim[SEPTEMBER_CLAIM]
    cites = {c.id: "".join(f"[{s}]" for s in c.supporting) for c in (march, september)}
    report = (brief / "report.md").read_text(encoding="utf-8")
    answer = report.split("## Answer", 1)[1].split("\n## ", 1)[0]
    assert f"March 2026 {cites[march.id]}" in answer, (answer, see)
    assert f"September 2026 {cites[september.id]}" in answer, (answer, see)
    # The table's row, quoted with its header, holds.
    assert len(september.supporting) == 2, (september, see)
    contradictions = report.split("## Contradictions", 1)[1].split("\n## ", 1)[0]
    assert march.id in contradictions and september.id in contradictions, (contradictions, see)
    assert march.confidence == september.confidence == "medium-contested", see

    if handoff is None:
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            assert main(["handoff", str(brief)]) == 0
        handoff = json.loads(printed.getvalue())
    assert handoff["verdict"] == "PARTIAL", (handoff, see)
    contested = {c["id"]: c for c in handoff["constraints"]}
    assert {march.id, september.id} <= set(contested), (handoff, see)
    assert [p["id"] for p in contested[march.id]["positions"]] == [september.id], see
    assert [p["id"] for p in contested[september.id]["positions"]] == [march.id], see
    assert contested[september.id]["votes"]["outcome"] == "survives", see

    trace = json.loads((brief / "trace.json").read_text(encoding="utf-8"))["phases"]
    links = {(link["a"], link["b"]) for link in trace["triangulate"]["links"]}
    syndicated = [s for s in march.supporting if (march.supporting[0], s) in links]
    assert syndicated and march.independent_count < len(march.supporting), (march, see)
    short = [r for r in trace["refetch"]["records"] if r["words"] < 100]
    assert [r["outcome"] for r in short] == ["pass"], (trace["refetch"]["records"], see)

    merged = document.claims[0]  # written with a fourth cite, of another sub-question
    dropped = [e for e in merged.evidence if e.source not in merged.supporting]
    assert len(dropped) == 1 and dropped[0].checks is not None, (merged, see)
    # It shares the gauge's name and "gauge" with the claim, never the claim's figures.
    assert dropped[0].checks.outcome == "partially_supported", (dropped, see)
    assert dropped[0].checks.literals is not None, see
    assert dropped[0].checks.literals.missing == ["42", "310"], (dropped, see)
    assert len(merged.supporting) == 3, (merged, see)
    assert merged.id not in {s.claim for s in document.stripped}, (document.stripped, see)


# --- what a reader of the judged world's brief gets --------------------------------------------


def judged_outcome(brief: Path) -> dict[str, Any]:
    """What the judged world's brief decided, as plain data both drivers' briefs compare by:
    the claims emitted, the claims stripped with why, each voted claim's ``answers`` in order."""
    from deep_research.gates.trace import emitted_claims

    document = Brief(brief).load_claims()
    return {
        "emitted": sorted(claim.claim for claim in emitted_claims(document)),
        "stripped": sorted((entry.claim, entry.reason) for entry in document.stripped),
        "answers": {
            claim.claim: [record.answers for record in claim.votes.records]
            for claim in document.claims
            if claim.votes is not None
        },
    }


def assert_the_judges_decide_relevance(brief: Path, see: str = "") -> None:
    """The judged world's brief, whichever driver made it: every true claim is emitted — three
    of them share almost no word with their sub-question — because the judges say each answers
    it; the claim on sq4's topic that does not answer it is stripped, its reason the tally, and
    is neither in the answer nor under Key findings; a malformed word and an errored vote
    abstain (a third judge was asked, and the claims stay). Re-derived offline, the brief's
    decisions are the same."""
    decided = judged_outcome(brief)
    assert decided["emitted"] == sorted(claim for _, _, claim in FACTS.values()), (decided, see)
    reason = "does not answer its sub-question sq4, the judges voted (yes 0, partly 0, no 2)"
    assert decided["stripped"] == [(OFF_QUESTION, reason)], (decided, see)
    assert decided["answers"][FACTS["sq1"][2]] == ["no", None, "yes"], (decided, see)
    assert decided["answers"][FACTS["sq3"][2]] == [None, "no", "yes"], (decided, see)
    report = (brief / "report.md").read_text(encoding="utf-8")
    shown, stripped = report.split("## Stripped", 1)
    assert OFF_QUESTION not in shown, see  # neither the answer nor the findings
    assert OFF_QUESTION in stripped and reason in stripped, see
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        code = main(["verify", str(brief), "--offline"])
    checked = json.loads(printed.getvalue())
    assert code == 0 and checked["identical"], (checked, see)
