"""The audit record's leak check: linear, and the same answers as the plain search it replaced."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import Any
from urllib.parse import quote, unquote_plus

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from deep_research.brief.writers import model_dump
from deep_research.decide import audit as audit_module
from deep_research.decide.audit import (
    LEAK_WINDOW,
    URL_WITHHELD,
    build_audit,
    leaks,
    urls_quoting_text,
)
from deep_research.models import AuditFile, AuditSource, ClaimsFile, FetchLogEntry, SourceRow

WORDS = ["heat", "pump", "Sales", "grid", "2,900", "in", "2023", "Norland", "units", "Ünits"]


def searched_leaks(audit: AuditFile, bodies: Iterable[str]) -> list[str]:
    """The check as it was: every window of every body searched in the record (quadratic)."""
    serialized = unquote_plus(json.dumps(model_dump(audit), ensure_ascii=False))
    record = " ".join(serialized.split()).casefold()
    found = []
    for body in bodies:
        folded = " ".join(body.split()).casefold()
        if len(folded) < LEAK_WINDOW:
            continue
        step = LEAK_WINDOW // 2
        windows = {
            folded[i : i + LEAK_WINDOW] for i in range(0, len(folded) - LEAK_WINDOW + 1, step)
        }
        hit = next((window for window in sorted(windows) if window in record), None)
        if hit is not None:
            found.append(hit)
    return found


@contextmanager
def patched(module: ModuleType, name: str, value: Any) -> Iterator[None]:
    # Hypothesis runs many examples in one test call, so pytest's function-scoped monkeypatch
    # would not restore between them; this does.
    old = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, old)


def audit_of(urls: list[str]) -> AuditFile:
    return AuditFile(
        topic="heat pumps",
        verdict="READY",
        settings_hash="sha256:" + "0" * 64,
        sources=[
            AuditSource(id=f"S{number}", url=url, tier="raw")
            for number, url in enumerate(urls, start=1)
        ],
    )


spacing = st.sampled_from([" ", "  ", "\n", "\t", " \n "])
bodies = st.lists(
    st.lists(st.tuples(st.sampled_from(WORDS), spacing), min_size=4, max_size=60).map(
        lambda parts: "".join(word + space for word, space in parts)
    ),
    min_size=0,
    max_size=5,
)
#: Stretch lengths around the window: shorter ones are never leaks, longer ones may hold one.
STRETCH = st.integers(LEAK_WINDOW - 10, 3 * LEAK_WINDOW)


@st.composite
def briefs(draw: st.DrawFn) -> tuple[AuditFile, list[str]]:
    """Bodies, and a record whose URLs may carry a stretch of one of them (a leak), as a query
    string would: escaped, with spaces as ``+``, in another case — or carry only their words."""
    texts = draw(bodies)
    urls = []
    for number in range(draw(st.integers(1, 4))):
        tail = "-".join(draw(st.lists(st.sampled_from(WORDS), max_size=6)))
        if texts and draw(st.booleans()):
            body = draw(st.sampled_from(texts))
            length = draw(STRETCH)
            start = draw(st.integers(0, max(0, len(body) - length)))
            stretch = body[start : start + length]
            if draw(st.booleans()):
                stretch = stretch.upper()
            tail = quote(stretch, safe="").replace("%20", "+")
        urls.append(f"https://site{number}.example/page?q={tail}")
    return audit_of(urls), texts


@settings(max_examples=400, deadline=None)
@given(briefs())
def test_leaks_match_the_plain_search(brief: tuple[AuditFile, list[str]]) -> None:
    audit, texts = brief
    assert leaks(audit, texts) == searched_leaks(audit, texts)


def test_a_leak_and_a_clean_record_are_told_apart() -> None:
    body = "Heat pump sales in Norland came to about 2,900 units in 2023, the agency said."
    clean = audit_of(["https://agency.example/report?id=2023"])
    leaked = audit_of(["https://agency.example/?q=" + quote(body[10:70]).replace("%20", "+")])
    assert leaks(clean, [body]) == searched_leaks(clean, [body]) == []
    found = leaks(leaked, [body])
    assert found == searched_leaks(leaked, [body]) and len(found) == 1
    assert found[0] in body.casefold()


def test_a_body_shorter_than_a_window_is_never_a_leak() -> None:
    short = "sales in 2023"
    assert leaks(audit_of(["https://x.example/?q=" + short.replace(" ", "+")]), [short]) == []


@settings(max_examples=150, deadline=None)
@given(briefs())
def test_leaks_match_the_plain_search_when_the_record_is_hashed_in_many_runs(
    brief: tuple[AuditFile, list[str]],
) -> None:
    # A large record's stretches are hashed in sorted runs that are merged; runs of 7 positions
    # make every record here several runs, and the bitmap at its smallest fills up.
    audit, texts = brief
    with patched(audit_module, "_RUN", 7), patched(audit_module, "_BITS_PER_STRETCH", 1):
        assert leaks(audit, texts) == searched_leaks(audit, texts)


# --- a fetched URL that holds page text: withheld from the record, never a failed run ----------

PAGE = (
    "Sales of heat pumps across the twelve member states rose to 2.9 million units in 2023, "
    "up from 2.4 million units in 2022."
)
QUERY = quote(PAGE[:70], safe="").replace("%20", "+")
LINKED = "https://news.example/2023/12/04/heat-pump-sales-in-the-twelve-member-states.html"


@pytest.mark.parametrize(
    ("source_url", "logged", "holding"),
    [
        # A search URL whose query quotes a page, as a search form writes it.
        (f"https://search.example/?q={QUERY}", None, True),
        # In another case, every character escaped.
        (f"https://search.example/?q={quote(PAGE[10:80].upper(), safe='')}", None, True),
        # Reached by redirect: the final URL quotes the page.
        ("https://a.example/r", f"https://search.example/?q={QUERY}", True),
        # A local document named after its own heading (a path, spaces escaped).
        (f"file://docs/{quote(PAGE[:90])}.md", None, True),
        # A few words of the page are ordinary metadata: shorter than a window.
        ("https://search.example/?q=" + quote(PAGE[:30], safe=""), None, False),
        # Words of no page.
        ("https://search.example/?q=" + "+".join(["gauge"] * 20), None, False),
        # A page links to another page the run fetched: a URL in a page is no prose of it.
        (LINKED, None, False),
    ],
)
def test_a_url_holding_page_text_is_found_and_withheld_from_the_record(
    source_url: str, logged: str | None, holding: bool
) -> None:
    sources = [SourceRow(id="S1", url=source_url, tier="raw")]
    log = [FetchLogEntry(url=source_url, final_url=logged, outcome="ok")]
    # The page as fetched text holds a link; only its prose is page text.
    page = f"{PAGE} Read more: {LINKED}"
    found = urls_quoting_text([page], sources, log)
    assert found == ([logged or source_url] if holding else [])
    document = ClaimsFile(topic="t", verdict="READY", settings_hash="sha256:" + "0" * 64)
    plain = build_audit(document, sources, log)
    withheld = build_audit(document, sources, log, found)
    assert bool(leaks(plain, [page])) is holding
    assert leaks(withheld, [page]) == []
    shown = {u for s in withheld.sources for u in (s.url, s.final_url)}
    shown |= {u for f in withheld.fetches for u in (f.url, f.final_url)}
    assert (URL_WITHHELD in shown) is holding
