"""What a ``--corpus`` folder holds: its files, listed and read without leaving the folder.

A corpus is whatever someone put in a folder, links included, and what is indexed ends up quoted
in briefs. So the walk reads only regular files that are inside the folder and on its file
system, and it says what it leaves out:

* a **symbolic link** is followed only to a regular file inside the folder (resolved, so
  ``../outside.md``, ``/etc/passwd`` and ``/proc/self/environ`` are left out); a link to a
  folder is never followed;
* a **hard link** cannot be traced to its other names by path: see :func:`_linked_outside`;
* a **folder on another file system** (a mount point: ``/proc`` under ``--corpus /``, a bind
  mount) is not entered, and a folder under ``/proc``, ``/sys`` or ``/dev`` is no corpus;
* a **pipe, device or socket** is never opened;
* an **unreadable** file or folder is named, never a traceback.

A file is opened by the path the walk checked, without following a link, and read only if it is
still the regular file (device and inode) that was checked, at most one byte past the size cap.

File names are bytes on POSIX. A name is stored and shown with :func:`escaped`: bytes that are
not UTF-8, control and invisible format characters (a newline, a right-to-left override), and
the three characters a ``file://`` identity would read as syntax (``%``, ``?``, ``#``) become
``%XX`` escapes of their bytes, so every file has one printable, unambiguous identity.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

#: The file types a corpus reads, by the name's suffix.
SUFFIXES = frozenset({".md", ".markdown", ".txt", ".html", ".htm", ".pdf"})
#: The kernel's pseudo file systems: their "files" are processes' memory and environment,
#: devices and kernel state, never documents.
PSEUDO_ROOTS = (Path("/proc"), Path("/sys"), Path("/dev"))
#: Names shown in one warning; the rest are counted.
SHOWN = 5

_ESCAPED_CHARACTERS = frozenset("%?#")
#: Control (newline, NEL), format (bidi overrides, zero-width), surrogate (a byte that is not
#: UTF-8, as the file system decoder keeps it) and line/paragraph separator characters.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)  # the checked path's last step is no link
    | getattr(os, "O_NONBLOCK", 0)  # a pipe swapped in after the walk does not hang the open
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def escaped(name: str) -> str:
    """``name`` (as :mod:`os` decodes it) in printable UTF-8: see the module docstring."""
    text = os.fsencode(name).decode("utf-8", "surrogateescape")
    out: list[str] = []
    for char in text:
        if char in _ESCAPED_CHARACTERS or unicodedata.category(char) in _ESCAPED_CATEGORIES:
            data = char.encode("utf-8", "surrogateescape")
            out.append("".join(f"%{byte:02X}" for byte in data))
        else:
            out.append(char)
    return "".join(out)


def pseudo_root(path: Path) -> Path | None:
    """The pseudo file system ``path`` (absolute, resolved) lies in, or None."""
    return next((root for root in PSEUDO_ROOTS if path.is_relative_to(root)), None)


@dataclass(frozen=True)
class Admitted:
    """A file the walk admitted: the path to open and the inode it must still be."""

    path: Path
    device: int
    inode: int


@dataclass(frozen=True)
class Listed:
    """One admitted file: its escaped path inside the corpus, what to open, and its stat."""

    relative: str
    file: Admitted
    mtime_ns: int
    size: int


@dataclass
class LeftOut:
    """What a walk or a read left out, by why: escaped names, each with its detail."""

    links: list[str] = field(default_factory=list)
    hard_links: list[str] = field(default_factory=list)
    special: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)
    mounts: list[str] = field(default_factory=list)

    def warn(self, where: str) -> None:
        """One warning per reason, each naming what it left out of ``where`` (the folder)."""
        for names, message in (
            (
                self.links,
                "link(s) of {where} lead outside it or not to a regular file and are not "
                "followed: {names}; copy a file in to search it",
            ),
            (
                self.hard_links,
                "file(s) of {where} are hard links to a file with names outside it and are not "
                "searched: {names}; copy each in (a copy, not a link) to search it",
            ),
            (
                self.special,
                "entr(ies) of {where} are not regular files (a pipe, device or socket) and are "
                "not read: {names}",
            ),
            (
                self.unreadable,
                "file(s) or folder(s) of {where} could not be read and are not searched: {names}",
            ),
            (
                self.mounts,
                "folder(s) of {where} are on another file system and are not searched: "
                "{names}; pass one as --corpus to search it",
            ),
        ):
            if names:
                shown = ", ".join(sorted(names)[:SHOWN])
                more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
                warnings.warn(
                    f"{len(names)} " + message.format(where=where, names=shown + more),
                    stacklevel=3,
                )


def _reason(error: OSError) -> str:
    return (error.strerror or type(error).__name__).lower()


def walk(root: Path, left: LeftOut) -> list[Listed]:
    """The corpus files of ``root`` (absolute, resolved) that may be read, in path order;
    everything left out for a reason the user should hear is recorded in ``left``.

    A name starting with ``.`` is hidden: never listed, and a hidden folder is not entered.
    """
    root_device = os.stat(root).st_dev
    names: Counter[tuple[int, int]] = Counter()  # every regular file's names seen in the walk
    found: list[tuple[tuple[str, ...], str, Path, os.stat_result]] = []
    # A stack, not recursion: a deep tree must not exhaust Python's recursion limit.
    stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]
    while stack:
        folder, parts = stack.pop()
        prefix = "".join(escaped(part) + "/" for part in parts)
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except OSError as error:
            left.unreadable.append(f"{prefix or './'} ({_reason(error)})")
            continue
        for entry in entries:
            relative, hidden = prefix + escaped(entry.name), entry.name.startswith(".")
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError as error:
                if not hidden:
                    left.unreadable.append(f"{relative} ({_reason(error)})")
                continue
            if stat.S_ISREG(info.st_mode):  # a hidden file's names count too
                names[(info.st_dev, info.st_ino)] += 1
            if hidden:
                continue
            if stat.S_ISDIR(info.st_mode):
                if info.st_dev != root_device:
                    left.mounts.append(relative)
                else:
                    stack.append((Path(entry.path), (*parts, entry.name)))
            elif Path(entry.name).suffix.lower() in SUFFIXES:
                found.append(((*parts, entry.name), relative, Path(entry.path), info))
            elif stat.S_ISLNK(info.st_mode) and Path(entry.path).is_dir():
                left.links.append(f"{relative} (a folder)")
    admitted = []
    # In path order: sorted by the names as the file system gives them, part by part.
    for _, relative, path, info in sorted(found, key=lambda item: item[0]):
        checked = _admit(root, root_device, relative, path, info, names, left)
        if checked is not None:
            file, info = checked
            admitted.append(Listed(relative, file, info.st_mtime_ns, info.st_size))
    return admitted


def _admit(
    root: Path,
    root_device: int,
    relative: str,
    path: Path,
    info: os.stat_result,
    names: Counter[tuple[int, int]],
    left: LeftOut,
) -> tuple[Admitted, os.stat_result] | None:
    """The file to read for one listed entry and its stat, or None (recorded in ``left``)."""
    if stat.S_ISLNK(info.st_mode):
        try:
            target = Path(os.path.realpath(path, strict=True))
            info = os.lstat(target)
        except OSError:
            left.links.append(f"{relative} (broken)")
            return None
        if not target.is_relative_to(root) or pseudo_root(target) is not None:
            left.links.append(f"{relative} → {escaped(os.readlink(path))}")
            return None
        if not stat.S_ISREG(info.st_mode) or info.st_dev != root_device:
            left.links.append(f"{relative} (not a regular file of the folder)")
            return None
        path = target
    elif not stat.S_ISREG(info.st_mode):
        left.special.append(relative)
        return None
    if _linked_outside(info, names):
        left.hard_links.append(relative)
        return None
    return Admitted(path, info.st_dev, info.st_ino), info


def _linked_outside(info: os.stat_result, names: Counter[tuple[int, int]]) -> bool:
    """Whether a regular file has a name the walk did not see: a hard link elsewhere.

    A hard link is the file itself under a second name, and nothing on the path says where its
    other names are; a link to ``/etc/shadow`` made where the kernel allows it, or a corpus
    copied with ``cp -al``, looks like any file. What can be counted is the names the walk met
    for the inode: when the file has more links (``st_nlink``) than that, one of its names is
    outside the folder — or in a hidden or unreadable folder, which errs toward leaving it out —
    and it is not read. A file linked only within the folder (a de-duplicated corpus) is read.
    """
    return info.st_nlink > names[(info.st_dev, info.st_ino)]


class ChangedSinceListed(OSError):
    """The path no longer names the regular file the walk admitted."""


def read_admitted(file: Admitted, limit: int) -> bytes:
    """The bytes of ``file`` — at most ``limit`` + 1, so a file that grew past the cap shows
    it — once the open file is checked to be the regular file the walk admitted."""
    descriptor = os.open(file.path, _OPEN_FLAGS)
    with open(descriptor, "rb") as handle:
        opened = os.fstat(descriptor)
        if not stat.S_ISREG(opened.st_mode) or (opened.st_dev, opened.st_ino) != (
            file.device,
            file.inode,
        ):
            raise ChangedSinceListed(errno.ESTALE, "changed since the folder was listed")
        return handle.read(limit + 1)
