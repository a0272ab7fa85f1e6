"""What a figure measures: units read after a figure, and the words that look like units."""

from __future__ import annotations

from decimal import Decimal

import pytest

from deep_research.gates.literals import extract
from deep_research.gates.literals.units import Quantity, quantity


def measured(text: str) -> list[Quantity | None]:
    return [quantity(text, token) for token in extract(text) if token.kind == "number"]


@pytest.mark.parametrize(
    ("text", "dimension", "value"),
    [
        ("The bridge is 1,240 m long.", "length", Decimal(1240)),
        ("It is 1.2 km long.", "length", Decimal(1200)),
        ("It spans 3,900 feet.", "length", Decimal("1188.72")),
        ("The lake covers 12 square kilometres.", "area", Decimal(12_000_000)),
        ("A 400 MW plant.", "power", Decimal(400_000_000)),
        ("The span weighs 20 t.", "mass", Decimal(20_000)),
        ("Trains cross at 40 km/h.", "speed", Decimal(40)),
        ("The tower is 20 Metres tall.", "length", Decimal(20)),
    ],
)
def test_a_unit_after_a_figure_says_what_it_measures(
    text: str, dimension: str, value: Decimal
) -> None:
    first = measured(text)[0]
    assert first is not None
    assert (first.dimension, first.value) == (dimension, value)


@pytest.mark.parametrize(
    "text",
    [
        "It happened 5 times.",  # "t" is a unit only as a word of its own
        "Two in 3 people agree.",  # "in" is a preposition, never inches
        "The speed was 5 mph2.",  # a unit glued to more characters is not one
        "Cases rose from 3 to 5.",
        "It costs 20 pounds.",  # a currency, not a mass
    ],
)
def test_words_that_only_look_like_units_measure_nothing(text: str) -> None:
    assert all(found is None for found in measured(text))
