"""A page's title and headings stay apart from the text under them."""

from __future__ import annotations

import pytest

from deep_research.fetch.extract import extract_here, title_apart
from deep_research.gates.vocabulary import sentences

PAGE = (
    b"<html><head><title>Carrick Point</title></head><body><article>"
    b"<h1>The lighthouse</h1><p>The lighthouse stands on the headland of the northern bay.</p>"
    b"<h2>Keepers</h2><p>Three keepers lived there for many years at the station.</p>"
    b"</article></body></html>"
)


def test_html_headings_are_not_glued_onto_the_first_sentence() -> None:
    extracted = extract_here(PAGE, "text/html", "utf-8")
    assert extracted is not None
    found = [s.text for s in sentences(extracted.text)]
    assert "The lighthouse stands on the headland of the northern bay." in found
    assert "Three keepers lived there for many years at the station." in found


@pytest.mark.parametrize(
    ("page", "apart"),
    [
        ("Carrick Point Lighthouse\nThe tower was completed in 1891 by the board.", True),
        ("A History of the Light: 1850 to 1950\nIt was lit in 1892.", True),
        ("The tower was completed in 1891 by the\nboard of the northern lights.", False),
        ("The tower stands on the headland.\nIt is forty metres tall.", False),
        ("Only a title", False),
        ("", False),
    ],
)
def test_a_pdf_page_s_title_line_is_set_apart(page: str, apart: bool) -> None:
    result = title_apart(page)
    assert ("\n\n" in result) is apart
    assert " ".join(result.split()) == " ".join(page.split())  # no text gained or lost
