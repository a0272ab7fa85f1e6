"""The judge on pages built in memory: each rule's case beside the case it must still catch."""

from __future__ import annotations

import pytest

from deep_research.check.judge import clauses_of, is_title, judge
from deep_research.check.pages import Page
from deep_research.gates.citations import split_sentences

URL = "https://news.example/article"
FILLER = " ".join(
    f"Paragraph {n} of the page reports on the weather, the markets and the local sports."
    for n in range(1, 7)
)
FILM_PAGE = (
    "Philip Seymour Hoffman was found dead in New York on Sunday morning.\n\n"
    f"{FILLER}\n\n"
    "According to Lionsgate, the majority of Hoffman's scenes had been completed, with just "
    'seven days left to shoot on "Mockingjay — Part 2." The release of The Hunger Games '
    "films will not be delayed.\n"
)
COUPLE_PAGE = (
    "The actress married the director in a private ceremony in New York in December 2012.\n\n"
    f"{FILLER}\n\n"
    "Their son Bear was born in the winter of 2013, the couple's publicist confirmed.\n"
)
RACE_PAGE = (
    "The Hurricane Heat event is run as a team across the course, adding obstacles along the "
    "way.\n\n"
    f"{FILLER}\n"
)

BOARD_PAGE = (
    "Health exchange board raises chief's pay\n\n"
    "November 20, 2013 at 6:35 PM\n\n"
    f"{FILLER}\n\n"
    "The board of the health exchange raised the salary of its chief executive by 13 percent. "
    "All of the board members in attendance voted in favor of the raise except one.\n"
)


def verdict_of(claim: str, text: str) -> tuple[str, tuple[str, ...]]:
    (sentence,) = split_sentences(f"{claim} ([source]({URL})).\n")
    row = judge(sentence, {URL: Page(URL, text, title="News")})
    return row.verdict, row.reasons


@pytest.mark.parametrize(
    ("quote", "title"),
    [
        ("The Hunger Games: Mockingjay – Part 2", True),
        ("Merry Company on a Terrace", True),
        ("Brown v. Board of Education of Topeka, Kansas", True),
        # Someone's words, not a work's name: located verbatim or not at all.
        ("culturally, historically, or aesthetically significant", False),
        ("he hasn't done much", False),
        ("Every Line Should Stop Here Before The Margin Of The Page Ends", False),
    ],
)
def test_a_quoted_title_is_told_from_quoted_words(quote: str, title: bool) -> None:
    assert is_title(quote) is title


@pytest.mark.parametrize(
    ("claim", "text", "verdict", "reasons"),
    [
        # A title in Wikipedia's quotation marks, typeset otherwise on the page: held by words.
        (
            'Hoffman had completed most of his scenes for "The Hunger Games: Mockingjay – Part 2"'
            " before he was found dead",
            FILM_PAGE,
            "supported",
            (),
        ),
        # A title whose number the page never gives is no title of the page.
        (
            'Hoffman had completed most of his scenes for "The Hunger Games: Mockingjay – Part 9"'
            " before he was found dead",
            FILM_PAGE,
            "unsupported",
            ("quote_not_in_source",),
        ),
        # Someone's words, reworded: still not on the page.
        (
            'Lionsgate said "the majority of his scenes were already shot" before he died',
            FILM_PAGE,
            "unsupported",
            ("quote_not_in_source",),
        ),
        # Two clauses, each supported by a passage of its own on the page.
        (
            "The actress married the director in New York in December 2012, and their son Bear "
            "was born in 2013",
            COUPLE_PAGE,
            "supported",
            (),
        ),
        # The same clauses with a changed year in the second: still flagged.
        (
            "The actress married the director in New York in December 2012, and their son Bear "
            "was born in 2015",
            COUPLE_PAGE,
            "partially_supported",
            ("date_differs",),
        ),
        # The page's dateline dates what its passage reports.
        (
            "In November 2013, one board member voted against raising the chief executive's "
            "salary by 13 percent",
            BOARD_PAGE,
            "supported",
            (),
        ),
        # A month or a year the dateline does not give is still not the page's.
        (
            "In October 2013, one board member voted against raising the chief executive's "
            "salary by 13 percent",
            BOARD_PAGE,
            "partially_supported",
            ("date_differs",),
        ),
        (
            "In 2014, one board member voted against raising the chief executive's salary by "
            "13 percent",
            BOARD_PAGE,
            "partially_supported",
            ("date_differs",),
        ),
        # The dateline holds a date, never a figure.
        (
            "In November 2013, one board member voted against raising the chief executive's "
            "salary by 20 percent",
            BOARD_PAGE,
            "partially_supported",
            ("figure_differs",),
        ),
        # A passage holding only half the sentence's words does not say what it says.
        (
            "Each Hurricane Heat event is unique to the others in terms of obstacles and location",
            RACE_PAGE,
            "unsupported",
            ("no_supporting_passage",),
        ),
        (
            "The Hurricane Heat is run as a team, adding obstacles along the course",
            RACE_PAGE,
            "supported",
            (),
        ),
    ],
)
def test_sentences_against_the_pages_passages(
    claim: str, text: str, verdict: str, reasons: tuple[str, ...]
) -> None:
    found, why = verdict_of(claim, text)
    assert (found, why[: len(reasons)] if reasons else why) == (verdict, reasons)


@pytest.mark.parametrize(
    ("sentence", "clauses"),
    [
        (
            "The couple married in New York in December 2012, and their son, Bear, was born "
            "the next year.",
            [
                "The couple married in New York in December 2012",
                "and their son, Bear, was born the next year.",
            ],
        ),
        # A clause too short to judge alone stays with the one before it.
        (
            "Smith died in Blackville, New Brunswick, on 24 January 1957.",
            ["Smith died in Blackville, New Brunswick, on 24 January 1957."],
        ),
        ("It rose, and fell.", ["It rose, and fell."]),
    ],
)
def test_a_sentence_splits_into_clauses_worth_judging(sentence: str, clauses: list[str]) -> None:
    assert clauses_of(sentence) == clauses
