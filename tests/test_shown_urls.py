"""Links the brief shows: what is withheld, where the reason is shown, and a brief a run left
behind (claims.json holding a link no source has) finished by ``verdict`` and ``render``."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from briefs import AGENCY_URL, build, edit
from deep_research.cli import main
from deep_research.decide.audit import missing_urls
from deep_research.models import AuditFetch, AuditFile, FetchLogEntry
from deep_research.shown_urls import WITHHELD, fetched_urls, withhold, without_links
from deep_research.urls import URL_PATTERN, excerpt, urls_in

KNOWN = "https://docs.example/guide/page"
INVENTED = "https://invented.example/heat-pumps/2023-sales-report"
ALLOWED = frozenset(urls_in(KNOWN))


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        # A link no fetch or quote has is withheld where it stood; the sentence stays.
        (f"Sales rose, see {INVENTED}.", f"Sales rose, see {WITHHELD}."),
        # A known one stays linked, under any spelling with the same canonical form.
        (f"Sales rose, see {KNOWN}.", f"Sales rose, see {KNOWN}."),
        ("See HTTPS://docs.example/guide/page#top", "See HTTPS://docs.example/guide/page#top"),
        ("See https://DOCS.example/guide/page#top.", "See https://DOCS.example/guide/page#top."),
        # A known page's other path is another page.
        ("See https://docs.example/guide/other.", f"See {WITHHELD}."),
        # Text that is no URL (nothing shows it as one) is left as written.
        ("Written as http:// and nothing else.", "Written as http:// and nothing else."),
    ],
)
def test_withhold(text: str, shown: str) -> None:
    assert withhold(text, ALLOWED) == shown
    assert not urls_in(withhold(text, ALLOWED)) - ALLOWED


@pytest.mark.parametrize(
    ("fetched", "written", "kept"),
    [
        # Prose ends a URL at a bracket or a closing full stop: read so, it is still the
        # fetched page's link, in the text and in the audit record alike.
        (
            "https://wiki.example/wiki/Bridge_(Harbour)",
            "https://wiki.example/wiki/Bridge_(Harbour)",
            True,
        ),
        ("https://site.example/a.", "https://site.example/a.", True),
        ("https://site.example/x?utm_source=feed&q=1", "https://site.example/x?q=1", True),
        # Another page of the same site was never fetched.
        ("https://site.example/a", "https://site.example/b", False),
    ],
)
def test_a_fetched_link_is_kept_as_prose_reads_it_and_the_audit_holds_it(
    fetched: str, written: str, kept: bool
) -> None:
    log = [FetchLogEntry(url=fetched, outcome="ok")]
    text = f"The page {written} says so."
    shown = withhold(text, frozenset(fetched_urls(log)))
    assert (shown == text) is kept and (WITHHELD in shown) is not kept
    audit = AuditFile(
        topic="t",
        verdict="READY",
        settings_hash="sha256:" + "0" * 64,
        fetches=[AuditFetch(url=fetched, outcome="ok")],
    )
    assert missing_urls(audit, [shown]) == []


@pytest.mark.parametrize(
    ("text", "limit", "cut"),
    [
        # The cut falls inside the URL: the URL is left out whole.
        (f"The report at {INVENTED} lists every sale.", 30, "The report at…"),
        # The cut falls right after it: "…" would run on into it, so it is left out too.
        (f"The report at {INVENTED} lists every sale.", 14 + len(INVENTED) + 1, "The report at…"),
        # A URL wholly before the cut, with words between, stays.
        (f"See {KNOWN} for the sales of every year.", 40, f"See {KNOWN} for…"),
        # No URL: cut where asked.
        ("Heat pump sales rose in every member state.", 15, "Heat pump sales…"),
        ("short", 15, "short"),
    ],
)
def test_an_excerpt_never_ends_inside_a_url(text: str, limit: int, cut: str) -> None:
    assert excerpt(text, limit) == cut
    # Whatever the cut, no URL appears that the text did not hold.
    for size in range(1, len(text) + 1):
        assert urls_in(excerpt(text, size)) <= urls_in(text), size


def test_a_claim_is_read_without_its_links() -> None:
    claim = f"Sales reached 2.9 million units in 2023, see {INVENTED}"
    assert without_links(claim) == "Sales reached 2.9 million units in 2023, see"
    assert without_links(withhold(claim, ALLOWED)) == without_links(claim)
    assert not URL_PATTERN.search(without_links(claim))


# --- a brief a run left behind ------------------------------------------------------------

SALES = "Heat pump sales were about 2.9 million units in 2023."


def _synthesis(text: str) -> Any:
    def change(claims: dict[str, Any], trace: dict[str, Any]) -> None:
        claims["synthesis"] = text

    return change


def _stripped(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    claims["stripped"].append(
        {"id": "C9", "claim": f"Sales doubled, says {INVENTED}", "reason": "unsupported"}
    )


def _contradiction(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    claims["unresolved_contradictions"].append(
        {"ids": ["C1"], "topic": "sales", "description": f"a rival figure at {INVENTED}"}
    )


def _gap(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    claims["coverage_gaps"].append(f'not_found:sq3: nearest passage: "see {INVENTED[:30]}…"')


def _kept_claim(claims: dict[str, Any], trace: dict[str, Any]) -> None:
    claims["claims"][0]["claim"] = f"{SALES} ({INVENTED})"


#: What a run of an earlier version left in claims.json: the place, where the verdict names it,
#: and the verdict — the one the brief earns without the link (an open contradiction makes it
#: PARTIAL): withheld, a link changes no trace result, so a kept claim still stands.
LEFT_BEHIND = {
    "synthesis": (
        _synthesis(f"{SALES} [S1] The full table is at {INVENTED}."),
        "the answer",
        "READY",
    ),
    "stripped claim": (_stripped, "C9 (stripped)", "READY"),
    "contradiction note": (_contradiction, "contradiction 1", "PARTIAL"),
    "gap excerpt cut mid-URL": (_gap, "coverage gaps", "READY"),
    "kept claim": (_kept_claim, "C1", "READY"),
}


def _run(*argv: str) -> tuple[int, str]:
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        code = main(list(argv))
    return code, printed.getvalue()


@pytest.mark.parametrize("case", list(LEFT_BEHIND))
def test_verdict_and_render_finish_a_brief_holding_a_link_no_source_has(
    tmp_path: Path, case: str
) -> None:
    root = build(tmp_path / "brief")
    change, where, verdict = LEFT_BEHIND[case]
    edit(root, change)
    code, _ = _run("verdict", str(root))
    assert code in (0, 1)
    document = json.loads((root / "claims.json").read_text())
    text = (root / "claims.json").read_text()
    assert "invented.example" not in text and WITHHELD in text
    (note,) = [r for r in document["verdict_reasons"] if r.endswith("[links-withheld]")]
    assert note.endswith(f"were withheld where they stood: {where} [links-withheld]"), note
    trace = json.loads((root / "trace.json").read_text())
    assert note in trace["phases"]["verdict"]["verdict_reasons"]
    assert (root / "audit.json").exists()
    assert _run("render", str(root))[0] == 0
    report = (root / "report.md").read_text()
    assert "invented.example" not in report and WITHHELD in report
    assert f"are shown as {WITHHELD}." in report
    assert document["verdict"] == verdict, document["verdict_reasons"]


def test_a_fetched_link_stays_linked_and_nothing_is_noted(tmp_path: Path) -> None:
    root = build(tmp_path / "brief")
    answer = f"{SALES} [S1] The agency's review is at {AGENCY_URL}."
    edit(root, _synthesis(answer))
    assert _run("verdict", str(root))[0] == 0
    document = json.loads((root / "claims.json").read_text())
    assert document["synthesis"] == answer
    assert not [r for r in document["verdict_reasons"] if "links-withheld" in r]
    assert _run("render", str(root))[0] == 0
    report = (root / "report.md").read_text()
    assert AGENCY_URL in report and WITHHELD not in report
