"""How input values are named in messages: their kind and a one-line excerpt."""

from __future__ import annotations

import json
from typing import Any

from deep_research.urls import excerpt as cut

EXCERPT_CHARS = 160


def kind(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return f"a list of {len(value)} item(s)"
    if isinstance(value, dict):
        shown = ", ".join(" ".join(str(key).split())[:30] for key in list(value)[:5])
        return f"an object with keys {shown}" if value else "an empty object"
    return "null" if value is None else type(value).__name__


def excerpt(item: Any) -> str:
    if item is None:
        return ""
    try:
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        text = kind(item)  # deeper than the encoder goes: say what it was instead
    # A lone surrogate is no text: shown escaped, so a report quoting it can still be written.
    text = " ".join(text.split()).encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= EXCERPT_CHARS else cut(text, EXCERPT_CHARS - 1)
