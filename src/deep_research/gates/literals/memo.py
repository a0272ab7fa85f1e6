"""Memoizing the pure functions of a short text that extraction and matching repeat."""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TypeVar

#: Texts up to this length have their literals memoized: a trace checks the same claim against
#: every cited source and the same quote for several claims. Longer texts are not kept alive.
_MEMO_CHARS = 4096


_Result = TypeVar("_Result")


def memoized(function: Callable[[str], _Result]) -> Callable[[str], _Result]:
    """Memoize a pure function of a short text; results must be immutable."""
    cached = lru_cache(maxsize=4096)(function)

    def call(text: str) -> _Result:
        return cached(text) if len(text) <= _MEMO_CHARS else function(text)

    return call
