"""The standard library's module documentation as pydoc renders it, for the python-docs corpus.

Every public module of :data:`sys.stdlib_module_names` (and the public submodules of its
packages) that imports cleanly is rendered with :mod:`pydoc`'s plain-text renderer, laid out
flat: what pydoc indents by nesting level starts at the margin, a declaration is set apart from
its docstring by a blank line, and a docstring's own indented code keeps its indentation — so
the sentence splitter reads docstring prose as prose and code as code. Left out, because they
say nothing about the module or differ from machine to machine: the module reference block
(its notice, and a web address that would read as this document's), comments pydoc shows when
a definition has no docstring (licences, ``# ...`` lines that would read as headings), inherited
members (documented where they are defined), the method resolution order, data values (a value
such as ``os.environ`` is this machine's, not the library's), the package listing, version,
author and credit lines, and the source file's path.

Importing a module can do anything, so the rendering runs in a child interpreter: isolated
(``-I``: no user site, no ``PYTHON*`` variables, the working directory off ``sys.path`` so a
stray ``random.py`` cannot shadow the library), with an empty environment, in a scratch working
directory, with stdin,
stdout and stderr at the null device (results go back through a pipe of their own), warnings
silenced, each module under a per-module alarm and the whole under a deadline. A module that
fails to import, raises while rendering, or runs out of time is left out; GUI, demo, test and
side-effect modules (``antigravity`` opens a browser, ``this`` prints) are never imported.

The environment is emptied because pydoc shows a function's default arguments, and one of them
is ``os.environ`` itself (``cgi.parse(..., environ=os.environ)``): rendered with this process's
environment, every variable — an exported API key among them — was written into the index and
from there into briefs, and two machines' indexes answered one question differently. The child
starts with none and clears what the interpreter sets for itself at start-up (the C locale
coercion's ``LC_CTYPE``), so that default renders as ``environ({})`` everywhere.
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Whole trees never imported: GUI toolkits and demos, the test suites, the IDE, modules whose
#: import has a visible side effect, the codec registry (one module per codec), and the
#: deprecated build and 2to3 machinery.
SKIPPED_TREES = frozenset(
    {
        "antigravity",
        "this",
        "idlelib",
        "tkinter",
        "turtle",
        "turtledemo",
        "test",
        "lib2to3",
        "distutils",
        "encodings",
        "ensurepip",
        "pydoc_data",
        "__main__",
    }
)
#: Module name parts that mark a test or a private module anywhere in a dotted name.
_SKIPPED_PARTS = frozenset({"test", "tests", "idle_test", "__main__"})
#: Seconds one module may take to import and render before it is left out.
MODULE_SECONDS = 5
#: Seconds the whole rendering may take; modules not reached by then are left out.
TOTAL_SECONDS = 120
#: Seconds past the child's own deadline before it is stopped from outside.
GRACE_SECONDS = 15
#: Characters of one module's rendering kept (the largest, builtins, is about 300,000).
MAX_CHARS = 600_000

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


@dataclass(frozen=True)
class ModuleDoc:
    """One module's documentation: its dotted name, one-line synopsis, and rendered text."""

    name: str
    synopsis: str
    text: str


def wanted(name: str) -> bool:
    """Whether a dotted module name is one the corpus renders."""
    parts = name.split(".")
    if parts[0] in SKIPPED_TREES:
        return False
    return not any(part.startswith("_") or part in _SKIPPED_PARTS for part in parts)


def library_modules() -> list[str]:
    """The public top-level modules of this interpreter's standard library, sorted."""
    return sorted(name for name in sys.stdlib_module_names if wanted(name))


def render_library(
    names: Sequence[str] | None = None,
    *,
    module_seconds: int = MODULE_SECONDS,
    total_seconds: int = TOTAL_SECONDS,
    also_search: Sequence[Path] = (),
) -> list[ModuleDoc]:
    """Render ``names`` (default: :func:`library_modules`, with their public submodules) in
    an isolated child interpreter; whatever fails or runs out of time is left out.
    ``also_search`` names folders searched after the library's own (never before it)."""
    request = {
        "names": library_modules() if names is None else list(names),
        "module_seconds": module_seconds,
        "total_seconds": total_seconds,
        "max_chars": MAX_CHARS,
        "expand": names is None,
        "also_search": [str(folder) for folder in also_search],
    }
    read_end, write_end = os.pipe()
    with tempfile.TemporaryDirectory(prefix="deep-research-pydoc-") as scratch:
        try:
            # The child's results come back through a pipe of its own (its stdout is the null
            # device, so what an import prints goes nowhere); close_fds keeps every other
            # descriptor of this process from it.
            child = subprocess.Popen(
                [sys.executable, "-I", "-c", _CHILD, str(write_end)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=scratch,
                env={},  # see the module docstring: os.environ is a rendered default
                pass_fds=(write_end,),
            )
        finally:
            os.close(write_end)
        try:
            assert child.stdin is not None
            child.stdin.write(json.dumps(request).encode("utf-8"))
            child.stdin.close()
            # The child stops itself at its deadline; this one is for a child that hangs
            # where its alarm cannot reach (inside C code).
            received = _read_until(read_end, time.monotonic() + total_seconds + GRACE_SECONDS)
        finally:
            os.close(read_end)
            if child.poll() is None:
                child.kill()
            child.wait()
    return sorted(_records(received), key=lambda doc: doc.name)


def _read_until(fd: int, deadline: float) -> bytes:
    chunks: list[bytes] = []
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            break
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _records(received: bytes) -> Iterator[ModuleDoc]:
    for line in received.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
            doc = ModuleDoc(str(record["name"]), str(record["synopsis"]), clean(record["text"]))
        except (ValueError, TypeError, KeyError):
            continue  # not a whole record: the child was stopped mid-write
        yield doc


def clean(text: str) -> str:
    """The child's rendering without what differs from run to run (object addresses)."""
    text = _ADDRESS.sub("", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


# The child: reads its request on stdin, writes one JSON line per rendered module to the
# descriptor it is given. Kept as source (run with -I -c) so it imports nothing of this package.
_CHILD = (
    r"""
import importlib, inspect, io, json, os, pkgutil, pydoc, re, signal, sys, time, warnings

os.environ.clear()
out = os.fdopen(int(sys.argv[1]), "w", encoding="utf-8")
request = json.loads(sys.stdin.read())
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 0)
os.dup2(null, 1)
os.dup2(null, 2)
sys.stdout = sys.stderr = io.StringIO()
warnings.simplefilter("ignore")
sys.path.extend(request["also_search"])
SKIPPED = """
    + repr(sorted(SKIPPED_TREES))
    + r"""
PARTS = """
    + repr(sorted(_SKIPPED_PARTS))
    + r'''
deadline = time.monotonic() + request["total_seconds"]


def wanted(name):
    parts = name.split(".")
    return parts[0] not in SKIPPED and not any(p.startswith("_") or p in PARTS for p in parts)


class Flat(pydoc.TextDoc):
    """pydoc's plain text, every nesting level at the margin."""

    def bold(self, text):
        return text

    def indent(self, text, prefix="    "):
        return text.rstrip() if text else ""

    def section(self, title, contents):
        if title in OMITTED:
            return ""
        return title + "\n\n" + contents.strip() + "\n\n"

    def docroutine(self, *args, **kwargs):
        decl, _, doc = super().docroutine(*args, **kwargs).partition("\n")
        return decl + "\n\n" + doc if doc.strip() else decl + "\n"

    def docclass(self, *args, **kwargs):
        title, _, rest = super().docclass(*args, **kwargs).partition("\n")
        # pydoc parts a class's sections with a rule: inherited members are documented where
        # they are defined, and the resolution order is a list of names.
        kept = [INHERITED.split(MRO.sub("", part))[0] for part in rest.split("-" * 70)]
        return "\n" + title + "\n\n" + "\n".join(kept) + "\n"

    def docdata(self, *args, **kwargs):
        name, _, doc = super().docdata(*args, **kwargs).partition("\n")
        return name + "\n\n" + doc if doc.strip() else name + "\n"

    def docother(self, object, name=None, mod=None, parent=None, maxlen=None, doc=None):
        return ""


flat = Flat()
OMITTED = {
    "MODULE REFERENCE", "FILE", "DATA", "PACKAGE CONTENTS", "SUBMODULES", "VERSION", "DATE",
    "AUTHOR", "CREDITS",
}


def docstring(object):
    """pydoc.getdoc without its fallback to the comments above a definition (a licence, a
    copyright line, or '# ...' lines that would read as headings)."""
    return re.sub("^ *\n", "", (inspect.getdoc(object) or "").rstrip())


pydoc.getdoc = docstring


def first_sentence(doc):
    """pydoc's synopsis (a first line standing alone), else the docstring's first sentence."""
    synopsis = pydoc.splitdoc(doc)[0]
    if synopsis and "://" not in synopsis:
        return synopsis
    # A web address in a title would read as one the brief links to.
    address = r"\s*(?:<https?://[^>\s]*>|https?://\S*[^\s.,;)])"
    paragraph = re.sub(address, "", doc.split("\n\n", 1)[0])
    paragraph = " ".join(paragraph.split())
    match = re.match(r"(.{10,200}?[.!?])(?:\s|$)", paragraph)
    return match.group(1) if match else paragraph[:200]
INHERITED = re.compile(r"(?m)^[A-Z][A-Za-z ]+ inherited from .*:$")
MRO = re.compile(r"(?m)^Method resolution order:\n(?:    .*\n)+")


class Late(Exception):
    pass


def alarm(signum, frame):
    raise Late()


signal.signal(signal.SIGALRM, alarm)
queue = list(request["names"])
seen = set()
while queue and time.monotonic() < deadline:
    name = queue.pop(0)
    if name in seen or not wanted(name):
        continue
    seen.add(name)
    signal.alarm(request["module_seconds"])
    try:
        module = importlib.import_module(name)
        text = pydoc.render_doc(module, title="%s", renderer=flat)
        synopsis = first_sentence(pydoc.getdoc(module))
        if request["expand"] and hasattr(module, "__path__"):
            for info in pkgutil.iter_modules(module.__path__):
                queue.append(name + "." + info.name)
    except BaseException:
        continue
    finally:
        signal.alarm(0)
    record = {"name": name, "synopsis": synopsis, "text": text[: request["max_chars"]]}
    out.write(json.dumps(record) + "\n")
    out.flush()
out.close()
'''
)
