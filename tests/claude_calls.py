"""A scripted question with 25 claims to verify, for counting model calls against the bundled
workflow's formula: 1 scope + 5 search angles + 15 sources + 3 × 25 votes + 1 synthesis = 97.

The question has five angles (sub-questions); each has three pages on three publishers (15
sources), and each page states the angle's five facts in its own words (25 facts). The scripted
model extracts one candidate claim per fact it reads — 25 in all — and gets five of them wrong
in a way a mechanical gate catches (a figure the quote does not say). The skeptics refute two
more. The bundled workflow would send all 25 to three skeptics each; ours sends the 20 the gates
passed, and stops a panel as soon as its outcome is settled. Both end with the same 18 verified
claims. Used by ``benchmarks/claude_calls.py`` (prints the figures) and its test.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from claude_world import asked_claims, role_of, vote, votes_reply
from fakeapi import Block, FakeAnthropic, cited, document_text, text, user_text, web_search
from localhttp import LocalServer, Route, article
from scripted_run import filler

QUESTION = "What did the 2024 Larkmere reservoir survey find?"
BUNDLED = 1 + 5 + 15 + 3 * 25 + 1
ANGLES = ("water", "wildlife", "shoreline", "visitors", "infrastructure")
NOUNS = (
    ("gauging stations", "monitoring buoys", "sampling points", "inflow streams", "outlet weirs"),
    ("heron nests", "otter holts", "eel passes", "bat roosts", "newt ponds"),
    ("eroded banks", "reed beds", "fishing pegs", "boat slips", "footbridges"),
    ("car parks", "picnic sites", "guided walks", "school visits", "camping pitches"),
    ("pumping sets", "valve chambers", "spillway gates", "access roads", "telemetry masts"),
)
#: Facts the scripted model misreads (claims a figure the page does not give) …
MISREAD = {(0, 2), (1, 4), (2, 1), (3, 3), (4, 0)}
#: … and facts the skeptics refute.
REFUTED = {(1, 1), (3, 0)}
FLOORS = (
    "quick_sub_questions=5",
    "quick_queries_per_sub_question=1",
    "full_sub_questions=5",
    "full_queries_per_sub_question=1",
    "full_round1_fetches=15",
    "full_distinct_sources=15",
    "full_counter_queries_per_sub_question=1",
    "full_round2_fetches=0",
)


def count(a: int, f: int) -> int:
    return 11 + 7 * a + 3 * f


def claim(a: int, f: int) -> str:
    return f"The 2024 Larkmere survey counted {count(a, f)} {NOUNS[a][f]} around the reservoir."


def variants(a: int, f: int) -> list[str]:
    n, noun = count(a, f), NOUNS[a][f]
    return [
        f"The 2024 Larkmere survey counted {n} {noun} around the reservoir.",
        f"Around the reservoir, the 2024 Larkmere survey counted {n} {noun} in all.",
        f"In all, {n} {noun} around the reservoir were counted by the 2024 Larkmere survey.",
    ]


@dataclass
class Counting:
    """The pages and the model; ``seen`` counts the requests by role."""

    server: LocalServer
    pages: dict[int, list[str]] = field(default_factory=dict)
    hosts: dict[str, str] = field(default_factory=dict)
    seen: Counter[str] = field(default_factory=Counter)

    def build(self) -> None:
        for a, angle in enumerate(ANGLES):
            for k in range(3):
                host = f"www.{angle}-desk-{k}.example"
                path = f"/{angle}/{k}"
                body = " ".join(
                    part
                    for f in range(5)
                    for part in (variants(a, f)[k], filler(f"{a}{f}{k}", 120))
                )
                self.server.routes[path] = Route(body=article(body, f"Larkmere {angle} {k}"))
                url = f"http://{host}:{self.server.port}{path}"
                self.pages.setdefault(a, []).append(url)
                self.hosts[host] = "127.0.0.1"

    def __call__(self, body: dict[str, Any]) -> list[Block]:
        role = role_of(body)
        self.seen[role] += 1
        asked = user_text(body)
        if role == "search":
            if asked.startswith("Topic: "):
                return [*web_search(QUESTION, *self.pages[0][:2]), text("done")]
            found = re.search(r"larkmere (\w+)$", asked.strip())
            angle = ANGLES.index(found.group(1)) if found and found.group(1) in ANGLES else None
            urls = self.pages[angle] if angle is not None else []
            return [*web_search(asked, *urls), text("done")]
        if role == "plan":
            plan = {
                "depth": "full",
                "depth_reason": "a survey with five separate findings",
                "sub_questions": [
                    {
                        "id": f"sq{a + 1}",
                        "question": f"What did the survey find about {angle}?",
                        "scope": f"only {angle}",
                        "queries": [f"larkmere {angle}"],
                        "max_searches": 1,
                    }
                    for a, angle in enumerate(ANGLES)
                ],
            }
            return [text(json.dumps(plan))]
        if role == "extract":
            return self._extract(document_text(body))
        if role == "triangulate":
            wanted = re.findall(r"^(sq\d+): ", asked, re.MULTILINE)
            queries = [{"sq": sq, "queries": [f"larkmere {sq} disputed"]} for sq in wanted]
            return [text(json.dumps({"queries": queries}))]
        if role == "skeptic":
            refuted = {claim(*r) for r in REFUTED}
            return votes_reply(
                {cid: vote(said in refuted) for cid, said in asked_claims(body).items()}
            )
        if role == "ciber":
            return [text(json.dumps({"ciber_passed": True, "consistency_failures": []}))]
        if role == "synthesize":
            return [text(" ".join(line[2:] for line in asked.splitlines() if line[:2] == "- "))]
        return [text("ok")]

    def _extract(self, document: str) -> list[Block]:
        blocks: list[Block] = []
        for a in range(len(ANGLES)):
            for f in range(5):
                quote = next((v for v in variants(a, f) if v in document), None)
                if quote is None:
                    continue
                said = claim(a, f)
                if (a, f) in MISREAD:
                    said = said.replace(str(count(a, f)), str(count(a, f) + 40))
                blocks += [text("\n\n")] if blocks else []
                blocks.append(cited(f"[central] {said}", document, quote))
        return blocks


def measure(state: Path, depth: str, monkeypatch_env: Callable[[str, str], None]) -> dict[str, Any]:
    """One run at ``depth``; the calls by role, the verified claims, the dollars."""
    from deep_research.cli import main

    with ExitStack() as stack:
        server = stack.enter_context(LocalServer())
        world = Counting(server)
        world.build()
        api = stack.enter_context(FakeAnthropic(world, usage="measured", strict=True))
        monkeypatch_env("ANTHROPIC_API_KEY", "test-key-not-secret")
        monkeypatch_env("DEEP_RESEARCH_TEST_RETRY_SCALE", "0.001")
        monkeypatch_env("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch_env(
            "DEEP_RESEARCH_TEST_RESOLVE", ",".join(f"{h}={a}" for h, a in world.hosts.items())
        )
        monkeypatch_env("DEEP_RESEARCH_TEST_PRIVATE_CIDRS", "127.0.0.1/32")
        monkeypatch_env("DEEP_RESEARCH_TEST_PORTS", str(server.port))
        sets = [word for item in FLOORS for word in ("--set", item)]
        args = ["run", QUESTION, "--reasoner", "claude", "--search", "web", "--depth", depth]
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(io.StringIO()):
            code = main([*args, "--state", str(state), "--json", *sets])
    summary = json.loads(printed.getvalue())
    return {
        "depth": depth,
        "exit": code,
        "verdict": summary["verdict"],
        "calls": sum(world.seen.values()),
        "billed": len(api.billed),
        "by_role": dict(world.seen),
        "verified": summary["claims"],
        "stripped": summary["stripped"],
        "usd": summary["spend"]["usd"],
        "usd_by_model": summary["spend_by"]["model"],
        "brief": summary["brief"],
    }
