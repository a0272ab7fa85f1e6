"""Literal fidelity: extraction, matching rules with their adversarial twins, eval targets."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from datetime import date
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES
from deep_research.gates.literals import (
    Derivation,
    DocumentContext,
    LiteralCheck,
    LiteralToken,
    SourceFacts,
    check,
    extract,
)
from deep_research.gates.literals.tokens import TakenSpans

CASES: list[dict[str, Any]] = json.loads(
    (FIXTURES / "literals_cases.json").read_text(encoding="utf-8")
)["cases"]


def _derivation(raw: dict[str, Any] | None) -> Derivation | None:
    if raw is None:
        return None
    return Derivation(
        operation=raw["operation"],
        inputs=tuple(Decimal(value) for value in raw["inputs"]),
        result=Decimal(raw["result"]),
    )


def _only(text: str) -> LiteralToken:
    numeric = [token for token in extract(text) if token.numeric]
    assert len(numeric) == 1, numeric
    return numeric[0]


# --------------------------------------------------------------------------------------------
# The table: every rule with an adversarial case next to each happy one


def _context(case: dict[str, Any]) -> DocumentContext | None:
    if not any(key in case for key in ("title", "published", "document")):
        return None
    text = case.get("document", case["quotes"][0])
    start = text.index(case["quotes"][0])
    published = date.fromisoformat(case["published"]) if "published" in case else None
    return DocumentContext(
        text,
        [(start, start + len(case["quotes"][0]))],
        SourceFacts(title=case.get("title"), published=published),
    )


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_case_table(case: dict[str, Any]) -> None:
    result = check(
        case["claim"],
        case["quotes"],
        derived=_derivation(case.get("derived")),
        context=_context(case),
    )
    missing = sorted(token.kind for token in result.missing)
    assert missing == sorted(case["missing"]), [
        (token.kind, token.text, token.qualifier) for token in result.missing
    ]
    assert result.ok is (not case["missing"])
    assert [use.where for use in result.context] == case.get("context", [])


def test_table_pairs_every_happy_case_with_an_adversarial_one() -> None:
    rules = {case["rule"] for case in CASES}
    for rule in rules:
        outcomes = {bool(case["missing"]) for case in CASES if case["rule"] == rule}
        assert outcomes == {True, False}, rule


# --------------------------------------------------------------------------------------------
# Extraction


@pytest.mark.parametrize(
    ("text", "kind", "value", "unit", "qualifier"),
    [
        ("it has 1,234,567 rows", "number", "1234567", None, "eq"),
        ("it has 1\u2009234\u2009567 rows", "number", "1234567", None, "eq"),
        ("it has 1\u00a0234 rows", "number", "1234", None, "eq"),
        ("a rate of 3,5 units", "number", "3.5", None, "eq"),
        ("a total of 1.234,5 units", "number", "1234.5", None, "eq"),
        ("a stock of 4 096 000 units", "number", "4096000", None, "eq"),
        ("a total of 1.5 units", "number", "1.5", None, "eq"),
        ("a total of 12,34,567 rupees", "money", "1234567", "INR", "eq"),
        ("grew by 7%", "percent", "7", None, "eq"),
        ("grew by 7 per cent", "percent", "7", None, "eq"),
        ("an 80-percent rise", "percent", "80", None, "eq"),
        ("scored 84/100 overall", "percent", "84", None, "eq"),
        ("raised $35 million", "money", "35000000", "USD", "eq"),
        ("raised US $ 7.42 billion", "money", "7420000000", "USD", "eq"),
        ("raised £60m", "money", "60000000", "GBP", "eq"),
        ("raised €4.28bn", "money", "4280000000", "EUR", "eq"),
        ("raised 35,000,000 USD", "money", "35000000", "USD", "eq"),
        ("raised 20 euros", "money", "20", "EUR", "eq"),
        ("raised $2.4M", "money", "2400000", "USD", "eq"),
        ("earned 33 crore", "number", "330000000", None, "eq"),
        ("earned 33 Crore", "number", "330000000", None, "eq"),
        ("it sold 5 Million copies", "number", "5000000", None, "eq"),
        ("a striker of 1m80", "number", "1", None, "eq"),
        ("rated 7.5/10 overall", "number", "7.5", None, "eq"),
        ("over 4.1+ million subscribers", "number", "4100000", "", "gt"),
        ("it has 4.1+ million subscribers", "number", "4100000", None, "ge"),
        ("more than 16 cases", "number", "16", None, "gt"),
        ("no fewer than 16 cases", "number", "16", None, "ge"),
        ("fewer than 16 cases", "number", "16", None, "lt"),
        ("at most 16 cases", "number", "16", None, "le"),
        ("roughly 16 cases", "number", "16", None, "approx"),
        ("~16 cases", "number", "16", None, "approx"),
        ("almost 16 cases", "number", "16", None, "nearly"),
        ("16 or more cases", "number", "16", None, "ge"),
        ("costs exceeded 16 units", "number", "16", None, "gt"),
        ("costs exceed 16 units", "number", "16", None, "gt"),
        ("costs surpassing 16 units", "number", "16", None, "gt"),
        ("costs averaged over 16 sites", "number", "16", None, "eq"),
        ("rain spread over 16 hours", "number", "16", None, "eq"),
        ("more than, 16 cases", "number", "16", None, "eq"),
        ("two hundred and five seats", "number", "205", None, "eq"),
        ("a dozen seats", "number", "12", None, "eq"),
        ("three dozen seats", "number", "36", None, "eq"),
        ("a three-week tour", "number", "3", None, "eq"),
        ("finished 3rd", "ordinal", "3", None, "eq"),
        ("the twenty-first race", "ordinal", "21", None, "eq"),
        ("before the 71st minute", "ordinal", "71", None, "lt"),
        ("a temperature of −5 degrees", "number", "-5", None, "eq"),
        ("hundreds of gulls", "number", "100", None, "approx"),
        ("Tens of thousands marched", "number", "10000", None, "approx"),
        ("hundreds of millions of viewers", "number", "100000000", None, "approx"),
        ("a few dozen gulls", "number", "12", None, "approx"),
        ("it cost billions of dollars", "money", "1000000000", "USD", "approx"),
        ("the line was hit twice", "number", "2", None, "eq"),
        ("the line was hit more than once", "number", "1", None, "gt"),
        ("the line floods once a year", "number", "1", None, "eq"),
    ],
)
def test_extract_figures(
    text: str, kind: str, value: str, unit: str | None, qualifier: str
) -> None:
    token = _only(text)
    assert token.kind == kind
    assert token.value == Decimal(value)
    if unit != "":
        assert token.unit == unit
    assert token.qualifier == qualifier
    assert text[token.start : token.end] == token.text


@pytest.mark.parametrize(
    ("text", "kind", "date", "qualifier"),
    [
        ("on 2024-03-05 it began", "date", (2024, 3, 5), "eq"),
        ("in 2024-03 it began", "date", (2024, 3, None), "eq"),
        ("on 5 March 2024 it began", "date", (2024, 3, 5), "eq"),
        ("on March 5, 2024 it began", "date", (2024, 3, 5), "eq"),
        ("on March 5th , 2024 it began", "date", (2024, 3, 5), "eq"),
        ("on 22 march 2020 it began", "date", (2020, 3, 22), "eq"),
        ("in March 2024 it began", "date", (2024, 3, None), "eq"),
        ("before June 27 it began", "date", (0, 6, 27), "lt"),
        ("in 2020 it began", "year", (2020, None, None), "eq"),
        ("after 1998 it began", "year", (1998, None, None), "gt"),
        ("since 1998 it grew", "year", (1998, None, None), "eq"),
        ("no earlier than 1998 it grew", "year", (1998, None, None), "ge"),
        ("on or before 1998 it grew", "year", (1998, None, None), "le"),
        ("by 2017 it grew", "year", (2017, None, None), "eq"),
        ("until 2017 it grew", "year", (2017, None, None), "eq"),
        ("common in the 1960s", "year", (1960, None, None), "eq"),
        ("before the end of 2020", "year", (2020, None, None), "lt"),
        ("after the start of 2020", "year", (2020, None, None), "gt"),
        ("rose from 1450 to", "number", None, "eq"),
        ("topping 2003 's record", "year", (2003, None, None), "eq"),
    ],
)
def test_extract_dates(
    text: str, kind: str, date: tuple[int, int | None, int | None] | None, qualifier: str
) -> None:
    token = _only(text)
    assert (token.kind, token.date, token.qualifier) == (kind, date, qualifier)


@pytest.mark.parametrize(
    ("text", "edge"),
    [
        ("by the end of March 2019 ,", "last"),
        ("after the start of 2020", "first"),
        ("in 2020", None),
    ],
)
def test_date_edges(text: str, edge: str | None) -> None:
    assert _only(text).edge == edge


def test_dot_thousands_is_read_both_ways() -> None:
    token = _only("a crowd of 45.000 people")
    assert token.value == Decimal("45.000")
    assert [reading.value for reading in token.readings()] == [Decimal("45.000"), Decimal(45000)]
    assert _only("a crowd of 45.5 people").alternatives == ()
    assert _only("sales of 2.750 million").alternatives == ()  # an English scale word: decimal


def test_yearless_date_takes_the_year_stated_earlier() -> None:
    tokens = [t for t in extract("Work began on 9 January 2017. By 2 March, 40 had signed.")]
    assert [t.date for t in tokens if t.kind == "date"] == [(2017, 1, 9), (2017, 3, 2)]


@pytest.mark.parametrize("text", ["during the 2014-15 season", "during the 2014/15 season"])
def test_season_span_is_two_years(text: str) -> None:
    years = [t.date for t in extract(text) if t.kind == "year"]
    assert years == [(2014, None, None), (2015, None, None)]


def test_bare_four_digit_count_is_a_number_not_a_year() -> None:
    assert _only("the tally of ballots reached 2251 today").kind == "number"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Moonfall Rising was staged after March 2004 .", ["Moonfall Rising"]),
        ("Fewer than 15 boats were lost .", []),
        ("On Weather Watch , the storm scored 5 .", ["Weather Watch"]),
        (
            "It was backed by the Bank of Ireland and the Max Planck Society .",
            ["Bank of Ireland", "Max Planck Society"],
        ),
        ("NOAA was founded after 1969 .", ["NOAA"]),
        ("The sequel Paddington 2 has 160 reviews .", ["Paddington 2"]),
        ("Paddington 2 has 160 reviews .", []),
        ("the FIFA Women's 2015 final", ["FIFA Women's 2015"]),
        ("Mega Racer Bros. 3 sold well", ["Mega Racer Bros. 3"]),
        ("cases of H1N1 rose", ["H1N1"]),
        ("in the 2014-15 Premier League season", ["2014-15 Premier League"]),
        ("before the 1998 Winter Olympics", ["1998 Winter Olympics"]),
        ("In 2011 Nokia released it", ["Nokia"]),
        ("It closed on Monday , 5 May .", []),
        ("Harbour Pier # 7 opened", ["Harbour Pier", "# 7"]),
        ("The box set Vol. 2 came out", ["Vol. 2"]),
        ("Op. 27 was written in 1801", ["Op. 27"]),
        ("Along 310 kilometres of coast the sea rose .", []),
        ("Today 42 tide gauges report hourly .", []),
        ("John Adams : Chapter 3 aired", ["John Adams", "Chapter 3"]),
    ],
)
def test_extract_names(text: str, names: list[str]) -> None:
    assert [t.text for t in extract(text) if t.kind == "name"] == names


def test_title_number_is_not_a_figure() -> None:
    assert [t.kind for t in extract("The sequel Paddington 2 has 160 reviews")] == [
        "name",
        "number",
    ]
    assert [t.kind for t in extract("In 2079 , a courier")] == ["year"]


@pytest.mark.parametrize(
    "text", ["Along 310 kilometres of coast", "Today 42 tide gauges", "Paddington 2 opened"]
)
def test_number_after_a_sentence_opening_word_is_a_figure(text: str) -> None:
    assert [t.kind for t in extract(text)] == ["number"]


@pytest.mark.parametrize(
    "text",
    ["The hall was once a school.", "Once the vote closed, the hall emptied.", "a hundredsfold"],
)
def test_once_meaning_formerly_and_words_inside_words_are_no_count(text: str) -> None:
    assert not [token for token in extract(text) if token.numeric]


def test_pronoun_one_is_not_a_count() -> None:
    assert not [t for t in extract("one of the longest bridges") if t.numeric]
    assert [t.value for t in extract("one recorded sighting") if t.numeric] == [Decimal(1)]


# --------------------------------------------------------------------------------------------
# Document context: which passages, bounded


def _passages(text: str, quote: str, **facts: Any) -> list[tuple[str, str]]:
    start = text.index(quote)
    context = DocumentContext(text, [(start, start + len(quote))], SourceFacts(**facts))
    return [(passage.where, passage.text) for passage in context.passages]


def test_context_reads_the_heading_path_and_the_paragraphs_above() -> None:
    text = (
        "# Riverside FC\n\n## History\n\nFounded in 1901.\n\n## 2021 season\n\n"
        "A new coach arrived in June.\n\nThe club won 14 matches. Its ground was rebuilt.\n"
    )
    assert _passages(text, "Its ground was rebuilt.", title="Riverside FC", published=None) == [
        ("paragraph", "The club won 14 matches."),
        ("paragraph before", "A new coach arrived in June."),
        ("heading", "2021 season"),
        ("heading", "Riverside FC"),
        ("title", "Riverside FC"),
    ]


def test_context_finds_a_plain_heading_and_never_crosses_into_another_section() -> None:
    text = (
        "The 2019 harvest began late in the valley.\nYields by farm\n"
        "Growers picked 40 tonnes. Most of it came from the east bank.\n"
    )
    assert _passages(text, "Growers picked 40 tonnes.") == [("heading", "Yields by farm")]


def test_context_is_bounded() -> None:
    far = "# 2019 report\n\n" + "Long prose without any heading at all. " * 600 + "\n\nIt rose."
    assert [where for where, _ in _passages(far, "It rose.")] == ["paragraph before"]
    long_line = "x" * 5000 + " It rose."
    ((where, text),) = _passages(long_line, "It rose.")
    assert where == "paragraph" and len(text) == 1000


def test_context_reports_the_publication_date_last() -> None:
    assert _passages("It rose.", "It rose.", published=date(2021, 5, 10)) == [
        ("publication date", "2021-05-10")
    ]


def _name_passages(text: str, quote: str, **facts: Any) -> list[tuple[str, str]]:
    start = text.index(quote)
    context = DocumentContext(text, [(start, start + len(quote))], SourceFacts(**facts))
    return [(passage.where, passage.text) for passage in context.name_passages]


LEAD_PAGE = (
    "Harbour ferry timetable\n\nBy Ana Reyes\n\n"
    "The Harbourton ferry will run every 20 minutes from May. Eastport keeps its hourly boat.\n\n"
    "We expect crossings to rise by a third."
)


@pytest.mark.parametrize(
    ("quote", "facts", "expected"),
    [
        # unquoted "we": the publisher's own voice, so the byline and the record's publisher
        (
            "We expect crossings to rise by a third.",
            {"publisher": "harbour-ferries.example"},
            [
                ("paragraph before", LEAD_PAGE.split("\n\n")[2]),
                ("heading", "Harbour ferry timetable"),  # a byline is no heading
                ("title", "Harbour ferry timetable"),
                ("lead", "The Harbourton ferry will run every 20 minutes from May."),
                ("byline", "harbour ferries"),
                ("byline", "Ana Reyes"),
            ],
        ),
        # a domain under a second-level suffix is read by its name
        (
            "We expect crossings to rise by a third.",
            {"publisher": "harbour-post.co.uk"},
            [
                ("paragraph before", LEAD_PAGE.split("\n\n")[2]),
                ("heading", "Harbour ferry timetable"),
                ("title", "Harbour ferry timetable"),
                ("lead", "The Harbourton ferry will run every 20 minutes from May."),
                ("byline", "harbour post"),
                ("byline", "Ana Reyes"),
            ],
        ),
        # the same page, no first person: no byline; the lead is only its first sentence
        (
            "crossings to rise by a third.",
            {"title": "Ferries | Harbour Post"},
            [
                ("paragraph", "We expect"),
                ("paragraph before", LEAD_PAGE.split("\n\n")[2]),
                ("heading", "Harbour ferry timetable"),
                ("title", "Ferries | Harbour Post"),
                ("title", "Harbour ferry timetable"),
                ("lead", "The Harbourton ferry will run every 20 minutes from May."),
            ],
        ),
    ],
)
def test_name_passages(quote: str, facts: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert _name_passages(LEAD_PAGE, quote, **facts) == expected


@pytest.mark.parametrize(
    ("paragraph", "quote", "speaker", "addressees"),
    [
        ('"We will open in May," said Ana Reyes, the ferry manager.', "We will open in May",
         "Ana Reyes, the ferry manager", ()),
        ('"We will open in May," Ana Reyes told the Harbour Post.', "We will open in May",
         "Ana Reyes", ("the Harbour Post",)),
        ("Ana Reyes told the Harbour Post: \u201cWe will open in May.\u201d", "We will open",
         "Ana Reyes", ("the Harbour Post",)),
        ("According to Ana Reyes, \u201cwe will open in May.\u201d", "we will open",
         "Ana Reyes", ()),
        # no attribution: a quotation of unknown voice, or no quotation at all
        ('"We will open in May." The ferry is new.', "We will open in May", None, ()),
        ("We will open in May, said Ana Reyes.", "We will open in May", None, ()),
    ],
)  # fmt: skip
def test_a_quotation_speaks_for_its_attributed_speaker(
    paragraph: str, quote: str, speaker: str | None, addressees: tuple[str, ...]
) -> None:
    start = paragraph.index(quote)
    context = DocumentContext(paragraph, [(start, start + len(quote))])
    speakers = [p.text for p in context.name_passages if p.where == "speaker"]
    assert speakers == ([speaker] if speaker else [])
    assert context.quoted is (speaker is not None)
    assert context.addressees == addressees


@pytest.mark.parametrize(
    ("quote", "claim", "ok"),
    [
        ("The ferry opened today.", "The ferry opened on 10 May 2021.", True),
        ("The ferry opened today.", "The ferry opened on 11 May 2021.", False),
        ("The ferry opened today.", "The ferry opened on 10 May.", True),  # the page's year
        ("The ferry opened yesterday.", "The ferry opened on 9 May 2021.", True),
        ("The ferry opened yesterday.", "The ferry opened on 10 May 2021.", False),
        ("The ferry opens tomorrow.", "The ferry opens on 11 May 2021.", True),
        ("The ferry opened this week.", "The ferry opened in May 2021.", True),
        ("The ferry opened this week.", "The ferry opened on 10 May 2021.", False),  # one day
        ("The ferry opened last week.", "The ferry opened in May 2021.", True),  # 3–9 May
        ("The ferry opened last month.", "The ferry opened in April 2021.", True),
        ("The ferry opened last month.", "The ferry opened in May 2021.", False),
        ("The ferry opens next month.", "The ferry opens in June 2021.", True),
        ("The ferry opened this year.", "The ferry opened in 2021.", True),
        ("The ferry opened this year.", "The ferry opened in March 2021.", False),  # a year
        ("The ferry opened last year.", "The ferry opened in 2020.", True),
        ("The ferry opens next year.", "The ferry opens in 2021.", False),
        ("The ferry opens by the end of next month.", "The ferry opens before July 2021.", True),
        ("The ferry opens by the end of next month.", "The ferry opens before June 2021.", False),
    ],
)
def test_relative_dates_read_from_the_publication_date(quote: str, claim: str, ok: bool) -> None:
    page = f"Harbour ferry news\n\n{quote}"  # published Monday 10 May 2021
    start = page.index(quote)
    context = DocumentContext(page, [(start, len(page))], SourceFacts(published=date(2021, 5, 10)))
    result = check(claim, [quote], context=context)
    assert result.ok is ok, result
    if ok:
        assert [(use.where, use.relative) for use in result.context] == [
            ("publication date", quote.split(" opens " if " opens " in quote else " opened ")[1]
             .removesuffix(".").removeprefix("by the end of "))
        ]  # fmt: skip
    # without the publication date the words state no date
    assert not check(claim, [quote], context=DocumentContext(page, [(start, len(page))])).ok


@pytest.mark.parametrize(
    ("quote", "claim", "relative"),
    [
        # published Monday 10 May 2021
        ("The ferry opened last Friday.", "The ferry opened on 7 May 2021.", "last Friday"),
        ("The ferry opened last Friday.", "The ferry opened on 14 May 2021.", None),
        ("The ferry opens next Monday.", "The ferry opens on 17 May 2021.", "next Monday"),
        ("The ferry opens this Friday.", "The ferry opens on 14 May 2021.", "this Friday"),
        # "next Friday" on a Monday: this week's Friday or next week's — not resolved
        ("The ferry opens next Friday.", "The ferry opens on 21 May 2021.", None),
        ("The ferry opens next Friday.", "The ferry opens on 14 May 2021.", None),
        ("The ferry opened on Saturday.", "The ferry opened on 8 May 2021.", "Saturday"),
        ("The ferry opened on Saturday.", "The ferry opened on 15 May 2021.", None),
        ("The ferry will open on Saturday.", "The ferry opens on 15 May 2021.", "Saturday"),
        ("The ferry will open on Saturday.", "The ferry opens on 8 May 2021.", None),
        ("Ferries on Saturday: four sailings.", "Ferries sail on 8 May 2021.", None),  # no tense
        ("The ferry opens on Monday.", "The ferry opens on 10 May 2021.", "Monday"),  # that day
        ("The ferry opened on Monday, 3 May.", "The ferry opened on 10 May 2021.", None),
    ],
)
def test_weekdays_read_from_the_publication_date_where_unambiguous(
    quote: str, claim: str, relative: str | None
) -> None:
    page = f"Harbour ferry news\n\n{quote}"
    start = page.index(quote)
    context = DocumentContext(page, [(start, len(page))], SourceFacts(published=date(2021, 5, 10)))
    result = check(claim, [quote], context=context)
    assert result.ok is (relative is not None), result
    if relative is not None:
        assert [(use.where, use.relative) for use in result.context] == [
            ("publication date", relative)
        ]


@pytest.mark.parametrize(
    ("claim", "quote", "document", "names"),
    [
        # the spelling says so
        (
            "PowerShell now searches for the linker.",
            "Rust now searches for the linker.",
            "",
            ["PowerShell"],
        ),
        # the writers' usage: capitalized inside a sentence, more often than in lower case
        ("Rust now searches for the linker.", "It now searches.", "Built in Rust.", ["Rust"]),
        ("Rust now searches for the linker.", "It now searches.", "Rust and rust, rust.", []),
        ("Changes land in June.", "It lands.", "## Breaking Changes\nThe changes land.", []),
        # a possessive nobody writes in lower case
        ("Inkwell's release is faster.", "The release is faster.", "", ["Inkwell's"]),
        ("Today's release is faster.", "The release is faster.", "", []),
        ("Everyone's build is faster.", "The build is faster.", "", []),
        ("Here's why the build is faster.", "The build is faster.", "", []),
        ("Government's plan was delayed.", "The government's plan was delayed.", "", []),
        # ordinary openers stay openers, even when no text writes them in lower case
        ("Critics gave it 85%.", "It scored 85%.", "It scored 85%.", []),
        ("Averaged over 44 reviews, it scored 85%.", "It scored 85%.", "", []),
        ("The release is faster.", "The release is faster.", "", []),
        # a name joined to the opener by a connector: the opener is read on its own
        (
            "Builds of Rust are faster.",
            "Rust builds are faster.",
            "Rust builds are faster.",
            ["Rust"],
        ),
    ],
)
def test_a_sentence_opener_is_a_name_when_the_writing_says_so(
    claim: str, quote: str, document: str, names: list[str]
) -> None:
    context = DocumentContext(document, [(0, len(document))]) if document else None
    claim_names = [t.text for t in check(claim, [quote], context=context).claim_literals]
    assert [name for name in claim_names if not name[0].isdigit()] == names


# --------------------------------------------------------------------------------------------
# The result object


def test_check_result_shape() -> None:
    result = check("Cases in Germany reached 17 in 2020.", ["Cases in France reached 18 in 2020."])
    assert isinstance(result, LiteralCheck)
    assert [t.text for t in result.claim_literals] == ["Germany", "17", "2020"]
    assert [t.text for t in result.numeric_missing] == ["17"]
    assert [t.text for t in result.names_missing] == ["Germany"]
    assert not result.ok
    assert all(token.numeric for token in result.numeric_missing)
    assert check("nothing literal here", []).ok


def test_no_quotes_means_every_literal_is_missing() -> None:
    result = check("Cases in Germany reached 17.", [])
    assert [t.kind for t in result.missing] == ["name", "number"]


def test_quotes_are_taken_together() -> None:
    claim = "Sales were 80 units in 2019 and 100 units in 2020."
    quotes = ["In 2019 sales were 80 units.", "Sales reached 100 units in 2020."]
    assert check(claim, quotes).ok


def test_tokens_are_frozen() -> None:
    token = extract("17 cases")[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        token.text = "18"  # type: ignore[misc]


def test_derivation_requires_declaration_and_matching_precision() -> None:
    quotes = ["The tour took $30.4 million in Europe and $4.7 million in Asia."]
    claim = "The tour took a combined $35.1 million."
    assert not check(claim, quotes).ok
    declared = Derivation("sum", (Decimal("30400000"), Decimal("4700000")), Decimal("35100000"))
    assert check(claim, quotes, derived=declared).ok
    # the stated precision (0.1 million) allows rounding, not a different figure
    rounded = Derivation("sum", (Decimal("30400000"), Decimal("4700000")), Decimal("35140000"))
    assert check(claim, quotes, derived=rounded).ok
    assert check("The tour took a combined $35 million.", quotes, derived=declared).ok
    assert not check("The tour took a combined $36 million.", quotes, derived=declared).ok


def test_derivation_by_zero_is_not_a_derivation() -> None:
    declared = Derivation("ratio", (Decimal(6), Decimal(0)), Decimal(3))
    assert not check("The ratio was 3.", ["It had 6 wins and 0 losses."], derived=declared).ok


# --------------------------------------------------------------------------------------------
# Properties: formatting round trips and single-digit perturbations

_MONTH_NAMES = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]  # fmt: skip
_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen \
fifteen sixteen seventeen eighteen nineteen".split()
_TENS_WORDS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def _words(n: int) -> str:
    """English words for 0 ≤ n < 10**9, as a careful writer would spell them."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS_WORDS[tens] + (f"-{_ONES[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{_ONES[hundreds]} hundred" + (f" and {_words(rest)}" if rest else "")
    for size, name in ((10**6, "million"), (10**3, "thousand")):
        if n >= size:
            high, rest = divmod(n, size)
            return f"{_words(high)} {name}" + (f" {_words(rest)}" if rest else "")
    raise AssertionError(n)


def _ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


@st.composite
def formatted_figure(draw: st.DrawFn) -> str:
    """One literal in one of the formats the extractor reads."""
    n = draw(st.integers(min_value=0, max_value=10**9))
    small = draw(st.integers(min_value=1, max_value=999))
    cents = draw(st.integers(min_value=0, max_value=99))
    year = draw(st.integers(min_value=1000, max_value=2099))
    month = draw(st.integers(min_value=1, max_value=12))
    day = draw(st.integers(min_value=1, max_value=28))
    choices = [
        str(n),
        f"{n:,}",
        f"{small}.{cents:02d}",
        f"{n:,}.{cents:02d}",
        f"{small}%",
        f"{small}.{cents:02d} percent",
        f"${n:,}",
        f"€{small}.{cents % 10} million",
        f"{n:,} USD",
        f"{n:,}".replace(",", "\u2009"),
        f"{n:,}.{cents:02d}".translate(str.maketrans(",.", ".,")),
        f"{small}.{cents:02d} per cent",
        f"£{small}.{cents % 10}bn",
        f"{small}{_ordinal_suffix(small)}",
        f"in {year}",
        f"{year:04d}-{month:02d}-{day:02d}",
        f"{_MONTH_NAMES[month - 1]} {day}, {year}",
        f"{day} {_MONTH_NAMES[month - 1]} {year}",
        f"{_MONTH_NAMES[month - 1]} {year}",
    ]
    return draw(st.sampled_from(choices))


def _embed_claim(literal: str) -> str:
    return f"The report gives {literal} for the region."


def _embed_quote(literal: str) -> str:
    return f"According to the agency, the report gives {literal} for the region in total."


def _perturb(literal: str, position: int, replacement: int) -> str | None:
    digits = [index for index, char in enumerate(literal) if char.isdigit()]
    index = digits[position % len(digits)]
    new_digit = str(replacement)
    if literal[index] == new_digit:
        new_digit = str((replacement + 1) % 10)
    return literal[:index] + new_digit + literal[index + 1 :]


_PROPERTY = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@_PROPERTY
@given(formatted_figure())
def test_same_literal_is_established(literal: str) -> None:
    assert not check(_embed_claim(literal), [_embed_quote(literal)]).numeric_missing


@_PROPERTY
@given(formatted_figure(), st.integers(min_value=0, max_value=50), st.integers(0, 9))
def test_perturbing_one_digit_of_the_cited_figure_fails(
    literal: str, position: int, replacement: int
) -> None:
    perturbed = _perturb(literal, position, replacement)
    assert perturbed is not None and perturbed != literal
    assert check(_embed_claim(literal), [_embed_quote(perturbed)]).numeric_missing, perturbed
    assert check(_embed_claim(perturbed), [_embed_quote(literal)]).numeric_missing, perturbed


@_PROPERTY
@given(st.integers(min_value=0, max_value=10**12))
def test_grouping_round_trip(n: int) -> None:
    grouped, plain = f"{n:,}", str(n)
    thin = grouped.replace(",", "\u2009")
    for claim, quote in ((grouped, plain), (plain, grouped), (thin, grouped), (grouped, thin)):
        assert check(_embed_claim(claim), [_embed_quote(quote)]).ok, (claim, quote)


@_PROPERTY
@given(st.integers(min_value=0, max_value=10**9 - 1))
def test_number_words_round_trip(n: int) -> None:
    assert check(_embed_claim(_words(n)), [_embed_quote(f"{n:,}")]).ok, _words(n)
    assert check(_embed_claim(f"{n:,}"), [_embed_quote(_words(n))]).ok, _words(n)


@_PROPERTY
@given(
    st.integers(min_value=1, max_value=999),
    st.sampled_from(["million", "billion"]),
    st.sampled_from([("$", "USD"), ("€", "EUR"), ("£", "GBP")]),
)
def test_money_round_trip(amount: int, scale: str, currency: tuple[str, str]) -> None:
    symbol, code = currency
    units = amount * (10**6 if scale == "million" else 10**9)
    claim = _embed_claim(f"{symbol}{amount} {scale}")
    assert check(claim, [_embed_quote(f"{units:,} {code}")]).ok
    assert check(claim, [_embed_quote(f"{code} {units:,}")]).ok
    assert not check(claim, [_embed_quote(f"{units + 10**6:,} {code}")]).ok


@_PROPERTY
@given(st.decimals(min_value=0, max_value=100, places=1, allow_nan=False))
def test_percent_round_trip(value: Decimal) -> None:
    for claim, quote in ((f"{value}%", f"{value} percent"), (f"{value} per cent", f"{value} %")):
        assert check(_embed_claim(claim), [_embed_quote(quote)]).ok


@_PROPERTY
@given(st.dates())
def test_date_round_trip(day: Any) -> None:
    if not 1000 <= day.year <= 2099:
        return
    name = _MONTH_NAMES[day.month - 1]
    iso = day.isoformat()
    for claim, quote in (
        (iso, f"{name} {day.day}, {day.year}"),
        (f"{day.day} {name} {day.year}", iso),
        (f"{name} {day.year}", iso),
        (f"in {day.year}", f"{day.day} {name} {day.year}"),
    ):
        assert check(_embed_claim(claim), [_embed_quote(quote)]).ok, (claim, quote)


@_PROPERTY
@given(st.text(alphabet=st.sampled_from(list("0123456789,. $%€-/#:'MmkJanuryMch thed\u2009"))))
def test_offsets_point_at_the_text(text: str) -> None:
    for token in extract(text):
        assert text[token.start : token.end] == token.text
        assert token.numeric == (token.kind != "name")


@_PROPERTY
@given(
    st.integers(min_value=2, max_value=10**6),
    st.sampled_from(["more than", "over", "at least", "less than", "under", "at most"]),
)
def test_bounds_follow_the_comparison(x: int, phrase: str) -> None:
    claim = _embed_claim(f"{phrase} {x:,}")
    outcomes = {y: check(claim, [_embed_quote(f"{y:,}")]).ok for y in (x - 1, x, x + 1)}
    expected = {
        "more than": (False, False, True),
        "over": (False, False, True),
        "at least": (False, True, True),
        "less than": (True, False, False),
        "under": (True, False, False),
        "at most": (True, True, False),
    }[phrase]
    assert tuple(outcomes.values()) == expected


@_PROPERTY
@given(
    st.integers(min_value=11, max_value=10**6).filter(lambda x: x % 10),
    st.sampled_from([("over", "under"), ("more than", "less than"), ("at least", "at most")]),
)
def test_a_quote_bound_is_read_at_face_value_to_its_last_digit(
    x: int, phrases: tuple[str, str]
) -> None:
    """ "over X" establishes "under X + 1" (a unit of its last digit) — never "under X", a bare
    X, or a figure between X and X + 1; the mirror image holds for "under"."""
    quote, opposite = phrases
    said = _embed_quote(f"{quote} {x:,}")
    assert check(_embed_claim(f"{opposite} {x + 1:,}"), [said]).ok
    assert not check(_embed_claim(f"{opposite} {x:,}"), [said]).ok
    assert not check(_embed_claim(f"{opposite} {x}.5"), [said]).ok
    assert not check(_embed_claim(f"{x:,}"), [said]).ok
    below = _embed_quote(f"{opposite} {x:,}")
    assert check(_embed_claim(f"{quote} {x - 1:,}"), [below]).ok
    assert not check(_embed_claim(f"{quote} {x:,}"), [below]).ok


@_PROPERTY
@given(st.integers(min_value=1, max_value=999), st.integers(min_value=0, max_value=999))
def test_a_dot_before_three_digits_reads_both_ways(head: int, tail: int) -> None:
    written = f"{head}.{tail:03d}"
    quote = [_embed_quote(written)]
    assert check(_embed_claim(f"{head * 1000 + tail:,}"), quote).ok
    assert check(_embed_claim(f"{Decimal(written)}"), quote).ok
    assert not check(_embed_claim(f"{head * 1000 + (tail + 1) % 1000:,}"), quote).ok
    assert check(_embed_claim(written), [_embed_quote(f"{head * 1000 + tail:,}")]).ok


@_PROPERTY
@given(st.dates(), st.integers(min_value=1, max_value=5))
def test_a_yearless_quote_date_takes_the_year_the_title_states(day: Any, off: int) -> None:
    if not 1001 <= day.year <= 2094:
        return
    name = _MONTH_NAMES[day.month - 1]
    claim = _embed_claim(f"{name} {day.day}, {day.year}")
    quote = _embed_quote(f"{day.day} {name}")

    def titled(year: int) -> DocumentContext:
        return DocumentContext(
            quote, [(0, len(quote))], SourceFacts(title=f"The {year} harvest report")
        )

    assert not check(claim, [quote]).ok
    result = check(claim, [quote], context=titled(day.year))
    assert result.ok and [use.where for use in result.context] == ["title"]
    assert not check(claim, [quote], context=titled(day.year + off)).ok


_SCALES = {"hundreds": 100, "thousands": 1000, "millions": 10**6, "billions": 10**9}


@_PROPERTY
@given(st.sampled_from(sorted(_SCALES)), st.integers(min_value=1, max_value=10**4))
def test_a_vague_count_is_more_than_one_and_fewer_than_ten_of_its_scale(word: str, n: int) -> None:
    """ "thousands of gulls" is established by a figure strictly between one and ten thousand,
    and establishes a bound exactly when the whole range satisfies it."""
    scale = _SCALES[word]
    figure = Decimal(n) * scale / 1000  # 0.001 to 10 of the scale
    quote = _embed_quote(f"{figure.normalize():f}")
    inside = scale < figure < 10 * scale
    assert check(_embed_claim(word), [quote]).ok is inside
    said = [_embed_quote(word)]
    assert check(_embed_claim(f"more than {figure.normalize():f}"), said).ok is (figure <= scale)
    assert check(_embed_claim(f"less than {figure.normalize():f}"), said).ok is (
        figure >= 10 * scale
    )


# --------------------------------------------------------------------------------------------
# Linear time on long and hostile inputs

_HOSTILE = [
    "1," * 50_000,
    "1" + ",000" * 25_000 + "1",
    "9" * 100_000,
    "1." * 50_000,
    "Abc " * 25_000,
    "A. " * 33_000,
    "one " * 25_000,
    "twenty-" * 14_000,
    "more than " * 10_000,
    "March " * 16_000,
    "$" * 100_000,
    "US $ " * 20_000,
    " " * 100_000,
    "# 1 " * 25_000,
    "5 March 2020 " * 7_000,
]


def test_hostile_megabyte_finishes_quickly() -> None:
    text = "".join(_HOSTILE)
    assert len(text) > 1_000_000
    # CPU seconds, not wall time: a loaded machine slows the clock, not the work. The bound
    # catches catastrophic backtracking (minutes), not a slower build.
    began = time.process_time()
    tokens = extract(text)
    elapsed = time.process_time() - began
    assert tokens
    assert elapsed < 20, elapsed


class _SpanList:
    """The spans as a sorted list: the plain reading of "taken" the byte map must agree with."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int]] = []

    def free(self, start: int, end: int) -> bool:
        return not any(s <= start < e or start < s < end for s, e in self.spans)

    def take(self, start: int, end: int) -> None:
        self.spans.append((start, end))


@given(st.lists(st.tuples(st.integers(0, 60), st.integers(1, 12)), max_size=40))
def test_taken_spans_agree_with_a_plain_list(spans: list[tuple[int, int]]) -> None:
    # As the extractors use it: a pattern's match (never empty) is taken only where it is free.
    taken, plain = TakenSpans(), _SpanList()
    for start, length in spans:
        end = start + length
        assert taken.free(start, end) == plain.free(start, end), (start, end, plain.spans)
        if taken.free(start, end):
            taken.take(start, end)
            plain.take(start, end)


def test_time_grows_linearly() -> None:
    unit = "In 2020 , more than $ 35.5 million ( 7 % ) of 1,234 cases on March 5 , 2020 by Ofcom. "
    small, large = unit * 500, unit * 5_000

    def timed(text: str) -> float:
        # CPU time, not the clock: a loaded machine stretches the clock, not the work.
        began = time.process_time()
        extract(text)
        return time.process_time() - began

    small_time = min(timed(small) for _ in range(3))
    assert timed(large) < 30 * small_time + 0.5


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_extract_never_raises_and_offsets_hold(text: str) -> None:
    # Fetched text is untrusted: no input may crash extraction.
    for token in extract(text):
        assert 0 <= token.start < token.end <= len(text)


@pytest.mark.parametrize(
    "text", ["ſeptember 5, 2020", "ſix hundred", "İstanbul had 5 İ", "\u212a 5"]
)
def test_characters_that_ignorecase_folds_to_ascii(text: str) -> None:
    assert extract(text) is not None


# The scanners' patterns are written for speed; these are the plain forms they must equal.
_PLAIN_NAME_WORD = r"[^\W_](?:[\w&+]|['’\-./](?=\w))*"
_SCANNER_ALPHABET = st.sampled_from(list("aZ9_&+'’-./ \n,é1$€−USDRs%"))


@_PROPERTY
@given(st.text(alphabet=_SCANNER_ALPHABET, max_size=40))
def test_the_word_scanner_finds_the_words_its_plain_form_finds(text: str) -> None:
    from deep_research.gates.literals.names import _NAME_WORD_RE

    plain = re.compile(_PLAIN_NAME_WORD)
    assert [m.span() for m in _NAME_WORD_RE.finditer(text)] == [
        m.span() for m in plain.finditer(text)
    ]


@_PROPERTY
@given(st.text(alphabet=_SCANNER_ALPHABET, max_size=40))
def test_the_figure_scanner_finds_what_it_finds_without_its_first_character_test(
    text: str,
) -> None:
    from deep_research.gates.literals.numbers import _NUMBER_RE

    first_test, rest = _NUMBER_RE.pattern.split(")", 1)
    assert first_test.startswith("(?=[")  # the test this property is about is still first
    plain = re.compile(rest, re.VERBOSE)
    assert [m.groupdict() | {"at": m.span()} for m in _NUMBER_RE.finditer(text)] == [
        m.groupdict() | {"at": m.span()} for m in plain.finditer(text)
    ]


@_PROPERTY
@given(st.text(alphabet=_SCANNER_ALPHABET, max_size=40))
def test_the_lower_word_skip_stops_where_the_first_other_word_begins(text: str) -> None:
    # The name reader skips, in one match, the words it would only pass over; from the text's
    # start or any word's end it must stop exactly at the next word not opening with a-z.
    from deep_research.gates.literals.names import _LOWER_WORDS_RE, _NAME_WORD_RE

    for start in [0, *(m.end() for m in _NAME_WORD_RE.finditer(text))]:
        words = _NAME_WORD_RE.finditer(text, start)
        stop = next((m.start() for m in words if not "a" <= m.group(0)[0] <= "z"), len(text))
        skipped = _LOWER_WORDS_RE.match(text, start)
        assert skipped is not None and skipped.end() == stop, (text, start)


def test_every_number_word_begins_with_a_start_the_word_reader_looks_for_first() -> None:
    from deep_research.gates.literals.number_words import _WORD_NUMBERS, NUMBER_WORD_STARTS

    assert all(word.startswith(NUMBER_WORD_STARTS) for word in _WORD_NUMBERS)
    # Inside a word a start begins no number word ("network", "training"); at a word's start,
    # in any case, after any character but a word character or a hyphen, it does.
    assert not [t for t in extract("The network kept training often.") if t.kind == "number"]
    assert [t.value for t in extract("The council had FORTY-TWO members.")] == [Decimal(42)]
    assert [t.value for t in extract("Members (two) and a dozen")] == [Decimal(2), Decimal(12)]
    assert [t.value for t in extract("x_two and re-two")] == []


def test_a_label_is_read_only_where_its_mark_is() -> None:
    assert [t.text for t in extract("Vol. 2 of the report")] == ["Vol. 2"]
    assert [t.text for t in extract("Vol 2 of the report")] == ["2"]
    assert [t.text for t in extract("see #3")] == ["#3"]


_DATE_PIECES = st.sampled_from(
    ["Mar", "march", "MAY", "Sept", "sep", "ember", "k", "\u212a", "ſ", "ı", "İ", "é", ".", ",",
     " ", "\t", "0", "1990", "2010", "s", "'", "’", "-", "–", "/", "5", "of ", "_", "x", "Dec"]
)  # fmt: skip


@_PROPERTY
@given(st.lists(_DATE_PIECES, max_size=12).map("".join))
def test_the_date_pattern_runs_wherever_it_may_match(text: str) -> None:
    # The date reader runs its pattern only where may_hold_dates says it may match: a text it
    # turns away must hold no match.
    from deep_research.gates.literals.dates import _DATE_RE, may_hold_dates

    if _DATE_RE.search(text):
        assert may_hold_dates(text), text


@pytest.mark.parametrize(
    ("text", "holds"),
    [("the market fell in 2003", False), ("5 Mar 2020", True), ("in 2010 storage", False),
     ("the 1990s", True), ("2019-20 season", True), ("may rise", True), ("5 ſep 2020", True)],
)  # fmt: skip
def test_what_may_hold_a_date(text: str, holds: bool) -> None:
    from deep_research.gates.literals.dates import may_hold_dates

    assert may_hold_dates(text) is holds
