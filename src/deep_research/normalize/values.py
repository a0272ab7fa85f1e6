"""Small value coercions shared by the walk, the coercion and the merge."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def collapsed(text: str) -> str | None:
    """``text`` with every run of whitespace made one space; None when nothing is left."""
    return " ".join(text.split()) or None


def text_or_none(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def string_list(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return unique(text for item in items if (text := text_or_none(item)) is not None)


def round_or_none(value: Any) -> int | None:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    return None


def unique(items: Iterable[str], *, exclude: str | None = None) -> list[str]:
    seen: set[str] = set() if exclude is None else {exclude}
    out: list[str] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out
