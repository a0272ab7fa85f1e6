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

_METRE = Decimal(1)
#: Unit as written → (dimension, size in the dimension's base unit).
UNITS: dict[str, tuple[str, Decimal]] = {
    # length, in metres
    "mm": ("length", Decimal("0.001")),
    "millimetre": ("length", Decimal("0.001")),
    "millimeter": ("length", Decimal("0.001")),
    "cm": ("length", Decimal("0.01")),
    "centimetre": ("length", Decimal("0.01")),
    "centimeter": ("length", Decimal("0.01")),
    "m": ("length", _METRE),
    "metre": ("length", _METRE),
    "meter": ("length", _METRE),
    "km": ("length", Decimal(1000)),
    "kilometre": ("length", Decimal(1000)),
    "kilometer": ("length", Decimal(1000)),
    "inch": ("length", Decimal("0.0254")),
    "ft": ("length", Decimal("0.3048")),
    "foot": ("length", Decimal("0.3048")),
    "feet": ("length", Decimal("0.3048")),
    "yd": ("length", Decimal("0.9144")),
    "yard": ("length", Decimal("0.9144")),
    "mi": ("length", Decimal("1609.344")),
    "mile": ("length", Decimal("1609.344")),
    # mass, in kilograms
    "mg": ("mass", Decimal("0.000001")),
    "g": ("mass", Decimal("0.001")),
    "gram": ("mass", Decimal("0.001")),
    "kg": ("mass", Decimal(1)),
    "kilogram": ("mass", Decimal(1)),
    "t": ("mass", Decimal(1000)),
    "tonne": ("mass", Decimal(1000)),
    "lb": ("mass", Decimal("0.45359237")),
    "lbs": ("mass", Decimal("0.45359237")),
    # area, in square metres
    "m²": ("area", Decimal(1)),
    "m2": ("area", Decimal(1)),
    "square metre": ("area", Decimal(1)),
    "square meter": ("area", Decimal(1)),
    "km²": ("area", Decimal(1000000)),
    "km2": ("area", Decimal(1000000)),
    "square kilometre": ("area", Decimal(1000000)),
    "square kilometer": ("area", Decimal(1000000)),
    "ha": ("area", Decimal(10000)),
    "hectare": ("area", Decimal(10000)),
    "acre": ("area", Decimal("4046.8564224")),
    # volume, in litres
    "ml": ("volume", Decimal("0.001")),
    "l": ("volume", Decimal(1)),
    "litre": ("volume", Decimal(1)),
    "liter": ("volume", Decimal(1)),
    "m³": ("volume", Decimal(1000)),
    "m3": ("volume", Decimal(1000)),
    "cubic metre": ("volume", Decimal(1000)),
    "cubic meter": ("volume", Decimal(1000)),
    # speed, in km/h
    "km/h": ("speed", Decimal(1)),
    "kph": ("speed", Decimal(1)),
    "mph": ("speed", Decimal("1.609344")),
    "m/s": ("speed", Decimal("3.6")),
    "knot": ("speed", Decimal("1.852")),
    # power, in watts
    "w": ("power", Decimal(1)),
    "watt": ("power", Decimal(1)),
    "kw": ("power", Decimal(1000)),
    "kilowatt": ("power", Decimal(1000)),
    "mw": ("power", Decimal(1000000)),
    "megawatt": ("power", Decimal(1000000)),
    "gw": ("power", Decimal(1000000000)),
    "gigawatt": ("power", Decimal(1000000000)),
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
