"""A Bash command line read as one plain list of words, or refused.

During a research run Bash runs one call of our CLI and nothing else. The guard does not
interpret shell syntax: it admits a line only when bash reads it as exactly the words written —
nothing to expand, substitute, redirect, chain, glob or comment out — and refuses any other line,
naming the first character that could mean something to the shell. One left-to-right pass, each
character looked at once, so the time is linear in the line's length.

Admitted:

* unquoted: ASCII letters, digits and ``_ . / : , = + @ % -`` (the characters
  :func:`shlex.quote` leaves unquoted, so every command line ``deep-research next`` prints reads
  back exactly) and printable non-ASCII characters other than spaces (bash gives none of them a
  meaning);
* single quotes: bash takes everything up to the next ``'`` literally, without exception;
* double quotes holding none of ``$``, backquote, ``\\`` and ``!`` — the only characters bash
  still acts on inside them (``!`` in an interactive shell) — so what they hold is literal too;
* spaces or tabs between words; adjacent pieces (``--arguments='{"q": 1}'``) join into one word,
  as in bash.

Refused: any other ASCII character outside quotes — ``$ ` ; & | < > ( ) { } [ ] * ? ~ \\ # ! ^``
and the rest — a quote left open, and any character that is not printable (a newline starts a
second command), quoted or not.
"""

from __future__ import annotations

import string

#: Longer than any command a run issues (a long URL and a brief path fit many times over).
MAX_LINE = 16_384
#: A run's longest command has about a dozen words.
MAX_WORDS = 64

_PLAIN = frozenset(string.ascii_letters + string.digits + "_./:,=+@%-")
_IN_DOUBLE_QUOTES = frozenset("$`\\!")
_KINDS = {
    **dict.fromkeys(";&|", "a control operator"),
    **dict.fromkeys("<>", "a redirection"),
    **dict.fromkeys("$`", "an expansion or substitution"),
    **dict.fromkeys("()", "a subshell or substitution"),
    **dict.fromkeys("{}", "a brace"),
    **dict.fromkeys("*?[]", "a glob character"),
    "~": "a tilde",
    "\\": "a backslash",
    "#": "a comment",
    **dict.fromkeys("!^", "history expansion"),
    "\n": "a line break (a second command)",
}


class NotAWordList(ValueError):
    """The line holds something bash would act on; the message names the first such thing."""


def split_words(line: str) -> list[str]:
    """The words bash reads ``line`` as, when it reads it literally; else :class:`NotAWordList`."""
    if len(line) > MAX_LINE:
        raise NotAWordList(f"a line of {len(line)} characters (at most {MAX_LINE})")
    words: list[str] = []
    pieces: list[str] = []
    started = False
    index, end = 0, len(line)
    while index < end:
        char = line[index]
        if char in " \t":
            if started:
                words.append("".join(pieces))
                if len(words) > MAX_WORDS:
                    raise NotAWordList(f"more than {MAX_WORDS} words")
                pieces, started = [], False
            index += 1
            continue
        if char in "'\"":
            close = line.find(char, index + 1)
            if close < 0:
                raise NotAWordList("a quote left open")
            piece = line[index + 1 : close]
            _check_quoted(piece, double=char == '"')
            index = close + 1
        else:
            stop = index
            while stop < end and _plain(line[stop]):
                stop += 1
            if stop == index:
                raise NotAWordList(_describe(char))
            piece = line[index:stop]
            index = stop
        pieces.append(piece)
        started = True
    if started:
        words.append("".join(pieces))
        if len(words) > MAX_WORDS:
            raise NotAWordList(f"more than {MAX_WORDS} words")
    return words


def _plain(char: str) -> bool:
    if char in _PLAIN:
        return True
    return ord(char) > 127 and char.isprintable() and not char.isspace()


def _check_quoted(piece: str, *, double: bool) -> None:
    for char in piece:
        if double and char in _IN_DOUBLE_QUOTES:
            raise NotAWordList(f"{_describe(char)} inside double quotes")
        if not char.isprintable():
            raise NotAWordList(_describe(char))


def _describe(char: str) -> str:
    kind = _KINDS.get(char)
    if kind is not None:
        return f"{kind} ({char!r})" if char != "\n" else kind
    if not char.isprintable() or char.isspace():
        return f"the character U+{ord(char):04X}"
    return f"the character {char!r}"
