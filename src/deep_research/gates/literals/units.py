"""What a figure measures: the unit written right after it, and its value in that unit's base.

``1,240 m``, ``1.2 km`` and ``3,900 feet`` are lengths; ``980 m`` and ``1.2 km`` compare as 980
and 1,200 metres. Only units with one meaning are read (``in``, ``pounds`` and ``tons`` are
not: a preposition, a currency, three different masses), each as written after the figure with
at most one space; a unit glued to a letter or digit (``5 mph2``) is not one. The literal
readers do not need this — they compare figures by value — but two claims about one thing can
only disagree on a figure of the same kind (a length and a length), which the unit says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from deep_research.gates.literals.tokens import LiteralToken

#: Dimension → (size in the dimension's base unit, how the unit is written), each size once.
_SIZES: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "length": (  # in metres
        ("0.001", ("mm", "millimetre", "millimeter")),
        ("0.01", ("cm", "centimetre", "centimeter")),
        ("1", ("m", "metre", "meter")),
        ("1000", ("km", "kilometre", "kilometer")),
        ("0.0254", ("inch",)),
        ("0.3048", ("ft", "foot", "feet")),
        ("0.9144", ("yd", "yard")),
        ("1609.344", ("mi", "mile")),
    ),
    "mass": (  # in kilograms
        ("0.000001", ("mg",)),
        ("0.001", ("g", "gram")),
        ("1", ("kg", "kilogram")),
        ("1000", ("t", "tonne")),
        ("0.45359237", ("lb", "lbs")),
    ),
    "area": (  # in square metres
        ("1", ("m²", "m2", "square metre", "square meter")),
        ("1000000", ("km²", "km2", "square kilometre", "square kilometer")),
        ("10000", ("ha", "hectare")),
        ("4046.8564224", ("acre",)),
    ),
    "volume": (  # in litres
        ("0.001", ("ml",)),
        ("1", ("l", "litre", "liter")),
        ("1000", ("m³", "m3", "cubic metre", "cubic meter")),
    ),
    "speed": (  # in km/h
        ("1", ("km/h", "kph")),
        ("1.609344", ("mph",)),
        ("3.6", ("m/s",)),
        ("1.852", ("knot",)),
    ),
    "power": (  # in watts
        ("1", ("w", "watt")),
        ("1000", ("kw", "kilowatt")),
        ("1000000", ("mw", "megawatt")),
        ("1000000000", ("gw", "gigawatt")),
    ),
}
#: Unit as written → (dimension, size in the dimension's base unit).
UNITS: dict[str, tuple[str, Decimal]] = {
    written: (dimension, Decimal(size))
    for dimension, sizes in _SIZES.items()
    for size, spellings in sizes
    for written in spellings
}
#: Units written with a capital that matters (``MW`` is power; ``mw`` in prose is rare): the
#: symbols are matched as written, the words in any case, plural ``s`` allowed on words.
_SYMBOLS = frozenset(
    {"mm", "cm", "m", "km", "ft", "yd", "mi", "mg", "g", "kg", "t", "lb", "lbs", "ha", "ml", "l"}
    | {"m²", "m2", "km²", "km2", "m³", "m3", "km/h", "kph", "mph", "m/s"}
)
_CASED = {"W": "w", "kW": "kw", "MW": "mw", "GW": "gw", "L": "l"}


def _alternatives() -> str:
    words = [unit for unit in UNITS if unit not in _SYMBOLS and unit not in _CASED.values()]
    symbols = [*(_SYMBOLS - {"l"}), *_CASED]
    spelled = ["(?i:" + re.escape(w).replace(r"\ ", r"\s") + "(?:e?s)?)" for w in words]
    # Longest first: ``km²`` before ``km``, ``square metre`` before ``metre``.
    parts = sorted([*spelled, *map(re.escape, symbols)], key=len, reverse=True)
    return "|".join(parts)


_UNIT = re.compile(r"[ \u00a0]?(" + _alternatives() + r")(?![\w²³/])")


@dataclass(frozen=True)
class Quantity:
    """A figure with a unit: its dimension and its value in the dimension's base unit."""

    dimension: str
    value: Decimal
    unit: str


def _unit_key(written: str) -> str | None:
    if written in _CASED:
        return _CASED[written]
    lowered = " ".join(written.lower().split())
    for candidate in (lowered, lowered.removesuffix("s"), lowered.removesuffix("es")):
        if candidate in UNITS:
            return candidate
    return None


def unit_after(text: str, token: LiteralToken) -> tuple[str, int] | None:
    """The unit written right after ``token`` in ``text`` and where it ends, or None."""
    if token.kind != "number" or token.value is None:
        return None
    match = _UNIT.match(text, token.end)
    if match is None:
        return None
    key = _unit_key(match.group(1))
    return (key, match.end()) if key is not None else None


def quantity(text: str, token: LiteralToken) -> Quantity | None:
    """What ``token`` (a literal of ``text``) measures, when a known unit follows it."""
    found = unit_after(text, token)
    if found is None or token.value is None:
        return None
    dimension, size = UNITS[found[0]]
    return Quantity(dimension, token.value * size, found[0])
