"""The curated public API stays importable and behaves as documented."""

from __future__ import annotations

import deep_research


def test_every_public_name_exists() -> None:
    for name in deep_research.__all__:
        assert hasattr(deep_research, name), name


def test_check_pair_end_to_end() -> None:
    text = "They voted 9 to 4 on Tuesday to approve a budget of $1.82 billion for 2025."
    quote = "voted 9 to 4 on Tuesday to approve a budget of $1.82 billion for 2025"
    ok = deep_research.check_pair("The council approved a $1.82 billion budget.", quote, text)
    assert ok.verdict == "supported" and ok.span == (5, 74)
    wrong = deep_research.check_pair("The council approved a $1.83 billion budget.", quote, text)
    assert wrong.verdict == "partially_supported" and wrong.literals.missing == ["$1.83 billion"]
