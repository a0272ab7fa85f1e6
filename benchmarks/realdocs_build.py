"""Build a real-documents folder, corpora/realdocs*/documents, from its publishers' repositories.

Each folder holds public documents written by others (see its README.md); the repository keeps
where each comes from, not the documents. Each is read from a pinned commit of its repository,
trimmed to whole sections (lines kept, in order) and converted as its :data:`SETS` entry says,
and must then hash to the digest recorded here: the folder its question set was written
against, byte for byte. Nothing is written unless every document is read and matches.

Two sets: ``realdocs`` (twelve documents, ``realdocs_questions.json``) and ``realdocs2`` (eleven
documents of three other publishers, ``realdocs2_questions.json``).

``SOURCES`` holds a git clone (or bare git directory) of each repository, as ``<name>`` (what
``git clone`` names it: ``peps``, ``tomli``, ``pip``, ``rfcs``, ``blog.rust-lang.org``,
``proposal``, ``black``, ``httpx``) or as ``<owner>+<name>/repo``.

    python benchmarks/realdocs_build.py SOURCES [--set realdocs2]

Exit codes: 0 built; 1 a document does not match its digest (nothing written); 2 a repository
or its pinned commit is missing from SOURCES (nothing written).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

CORPORA = Path(__file__).resolve().parent / "corpora"
FOLDER = CORPORA / "realdocs" / "documents"
FOLDER2 = CORPORA / "realdocs2" / "documents"

PEPS = ("python/peps", "ba4deeb7969588d937da609008d05bb83a47b1ab")
TOMLI = ("hukkin/tomli", "920e20b1cf495b63f6d4a6aa3cd5e4ff25f5f5a7")
PIP = ("pypa/pip", "6d309205789d368b2749d93fd6193d584811efd5")
RFCS = ("rust-lang/rfcs", "354518a8c9025f40be6f730452c1bfe71a12dc22")
BLOG = ("rust-lang/blog.rust-lang.org", "0243724c2e50ad2b7ebd3d9dbc7cd88aed7605a3")
GO_PROPOSAL = ("golang/proposal", "f6e2e6b7f89c932d16aaa20b2aabddd599e5b468")
BLACK = ("psf/black", "8947c48ef2077c3a301b03c1e814dc2e3f78436e")
HTTPX = ("encode/httpx", "ae1b9f66238f75ced3ced5e4485408435de10768")

#: A reStructuredText inline link, `text <target>`_, whose text stays when it is unlinked.
_REST_LINK = re.compile(r"`([^`<]+?) <[^>]+>`_")
#: A blog post's TOML front matter and the two fields kept from it.
_FRONT_MATTER = re.compile(r"\A\+\+\+\n(.*?)\n\+\+\+\n", re.DOTALL)
_TITLE = re.compile(r'^title = "(.*)"$', re.MULTILINE)
_DATED_PATH = re.compile(r'^path = "(\d{4})/(\d{2})/(\d{2})/', re.MULTILINE)


@dataclass(frozen=True)
class Document:
    target: str  # publisher folder / file name
    source: tuple[str, str]  # repository, commit
    path: str
    sha256: str
    keep: tuple[tuple[int, int], ...] = ()  # 1-based inclusive line ranges; none: every line
    unlink: tuple[int, ...] = ()  # source lines whose reST links become their text
    front_matter: bool = False  # a blog post's +++ block becomes a --- block: title, date


DOCUMENTS = (
    Document(
        "python-peps/pep-0518.txt",
        PEPS,
        "peps/pep-0518.rst",
        "d0bee3a5d2dff4af9c62f18f22bc9939beeccd7d19e836fc49b91e85bdbebf9e",
        keep=((1, 502), (549, 552)),  # all but References
        unlink=(189,),  # a link to a package registry's page
    ),
    Document(
        "python-peps/pep-0660.txt",
        PEPS,
        "peps/pep-0660.rst",
        "24ce04aee496975da02ad39674aac6932376840cf38569b1aab4ce171edc47db",
        keep=((1, 237), (258, 314), (320, 324)),  # all but Prototypes and References
    ),
    Document(
        "python-peps/pep-0680.txt",
        PEPS,
        "peps/pep-0680.rst",
        "b252f8789e24fd6451e3b960b5bf6598cd06ff750f626549c3627f097acc65f9",
    ),
    Document(
        "tomli/README.md",
        TOMLI,
        "README.md",
        "4a1f9522ca4ede1f93bf84407731f0eb526233717440a5ea8b7f5e89c6f5e8fa",
        keep=((5, 8), (32, 153), (167, 243)),  # no badges, table of contents, "Why this parser?"
    ),
    Document(
        "tomli/CHANGELOG.md",
        TOMLI,
        "CHANGELOG.md",
        "01d7a2cfb15b37eab87c662074891e29485170cf6803e7d2adb3b03555369095",
    ),
    Document(
        "pip/build-system.md",
        PIP,
        "docs/html/reference/build-system.md",
        "a008d8e2724ac9a63842e9dd4c87c56e9e110944656a06a3148de0ef28c809b1",
    ),
    Document(
        "pip/local-project-installs.md",
        PIP,
        "docs/html/topics/local-project-installs.md",
        "21507c1ce46869aae4b013ecb2343fa6f6f41296a33f385797569312cc3773cc",
    ),
    Document(
        "rust-rfcs/3137-let-else.md",
        RFCS,
        "text/3137-let-else.md",
        "56a90efc552e6e7350ea9b51482ff4952627ddf738c15666d2bdb6611ef74b7c",
        keep=((1, 483), (504, 645), (647, 653)),  # all but Prior art and its link target
    ),
    Document(
        "rust-rfcs/2795-format-args-implicit-identifiers.md",
        RFCS,
        "text/2795-format-args-implicit-identifiers.md",
        "5a3bf2bc065cbdeec46c31ae23f7c824622811024c97bb252a66404bdf1d2f09",
        keep=((1, 209), (318, 487)),  # all but Rationale and alternatives
    ),
    Document(
        "rust-blog/Rust-1.58.0.md",
        BLOG,
        "content/Rust-1.58.0.md",
        "613588f0fc4510d556e63f492b886e7c81eb340c9a3621d129ad5618da207c82",
        front_matter=True,
    ),
    Document(
        "rust-blog/Rust-1.65.0.md",
        BLOG,
        "content/Rust-1.65.0.md",
        "e52fc50917a78af057ff8e2297f5739fcbb660177328aae6ca47b8c334f3d103",
        front_matter=True,
    ),
    Document(
        "rust-blog/rustfmt-supports-let-else-statements.md",
        BLOG,
        "content/rustfmt-supports-let-else-statements.md",
        "3f8ee2ebbb722f56dceca97759f0e83192c7c904fa557d7615d021a740ac4040",
        front_matter=True,
    ),
)


DOCUMENTS2 = (
    Document(
        "go-proposal/56986-godebug.md",
        GO_PROPOSAL,
        "design/56986-godebug.md",
        "0ece47e0c5521dc2fe13c8bb58cf0581303de1ba0791bc4ca4ef511acd63772c",
    ),
    Document(
        "go-proposal/57001-gotoolchain.md",
        GO_PROPOSAL,
        "design/57001-gotoolchain.md",
        "e9d58bc6993d8b1c9d073ad008e3b954560918d8fc7ad189b72a49587a32a367",
    ),
    Document(
        "go-proposal/60078-loopvar.md",
        GO_PROPOSAL,
        "design/60078-loopvar.md",
        "e794ebe239bbe910d6d5b8f3a52662f4e70616057045e3d79561854bace19068",
        # Abstract to the Rationale's opening, then Implementation to the end: the Rationale's
        # eleven argued subsections are dropped (one links to a package registry).
        keep=((1, 454), (1018, 1101)),
    ),
    Document(
        "go-proposal/go15bootstrap.md",
        GO_PROPOSAL,
        "design/go15bootstrap.md",
        "a472fd0477d4de3337f4d07b1299cfbe69294e334c7554f1ffa13072bc2b89b6",
    ),
    Document(
        "black/stability-policy.md",
        BLACK,
        "docs/the_black_code_style/index.md",
        "dcc44f60866f61bde0ba7026b79b94a0587fe74dd4f7dd75d04eb5867c71ba57",
    ),
    Document(
        "black/faq.md",
        BLACK,
        "docs/faq.md",
        "37bb6b0c4605f35ada2aa7dc979361e31f6581edbcd2c0615ddb6b5a01daf1cc",
    ),
    Document(
        "black/the-basics.md",
        BLACK,
        "docs/usage_and_configuration/the_basics.md",
        "f60d4bb5392cf8fbcdb776e59f10f5080170ff6a6592b6f1130c7cbb1fd5f2a1",
    ),
    Document(
        "httpx/compatibility.md",
        HTTPX,
        "docs/compatibility.md",
        "2a9b79a4c0fcf9f8b765e0e45792dd72114ea845ef11ad353a3582227eebf218",
    ),
    Document(
        "httpx/http2.md",
        HTTPX,
        "docs/http2.md",
        "51010101b5aff566dcdfdf94cb5e0ef644caf5411b84749753a9da79d28caaf7",
    ),
    Document(
        "httpx/timeouts.md",
        HTTPX,
        "docs/advanced/timeouts.md",
        "48959a587ecc6430f9051ab1b1c76fcebc3f3e95ec01199281aab813a2dcfaa1",
    ),
    Document(
        "httpx/environment-variables.md",
        HTTPX,
        "docs/environment_variables.md",
        "1eba9a41026ed8058802f50b4036685c205717690fcdc8b9588698671fafedaa",
    ),
)

#: Each set's folder and documents, by the name ``--set`` takes.
SETS = {"realdocs": (FOLDER, DOCUMENTS), "realdocs2": (FOLDER2, DOCUMENTS2)}


class Missing(Exception):
    """A repository or its pinned commit is not in the sources folder."""


def git_dir(sources: Path, repository: str) -> Path:
    owner, name = repository.split("/")
    for candidate in (sources / name, sources / f"{owner}+{name}" / "repo"):
        if candidate.is_dir():
            return candidate
    raise Missing(f"no clone of {repository} in {sources} (as {name} or {owner}+{name}/repo)")


def original(sources: Path, doc: Document) -> str:
    repository, commit = doc.source
    shown = subprocess.run(
        ["git", "-C", str(git_dir(sources, repository)), "show", f"{commit}:{doc.path}"],
        capture_output=True,
        check=False,
    )
    if shown.returncode != 0:
        raise Missing(f"{repository} has no {doc.path} at {commit[:12]}")
    return shown.stdout.decode("utf-8")


def converted(text: str, doc: Document) -> str:
    """The document as the folder holds it: kept lines, unlinked lines, front matter."""
    lines = text.splitlines(keepends=True)
    lines = [
        _REST_LINK.sub(r"\1", line) if n in doc.unlink else line for n, line in enumerate(lines, 1)
    ]
    if doc.keep:
        lines = [line for first, last in doc.keep for line in lines[first - 1 : last]]
    result = "".join(lines)
    if doc.front_matter:
        result = blog_front_matter(result)
    return result


def blog_front_matter(text: str) -> str:
    """A post's ``+++`` TOML block as a ``---`` block of its title and date (from its path)."""
    block = _FRONT_MATTER.match(text)
    title = _TITLE.search(block[1]) if block else None
    dated = _DATED_PATH.search(block[1]) if block else None
    if block is None or title is None or dated is None:
        raise ValueError("a blog post without its +++ block, title and dated path")
    date = "-".join(dated.groups())
    return f"---\ntitle: {title[1]}\ndate: {date}\n---\n{text[block.end() :]}"


def build(sources: Path, folder: Path, documents: tuple[Document, ...] = DOCUMENTS) -> list[str]:
    """Write every document into ``folder``, or nothing; the mismatches, if any."""
    made = {doc.target: converted(original(sources, doc), doc) for doc in documents}
    wrong = [
        f"{doc.target} does not match its digest"
        for doc in documents
        if hashlib.sha256(made[doc.target].encode("utf-8")).hexdigest() != doc.sha256
    ]
    if wrong:
        return wrong
    for target, text in made.items():
        path = folder / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("sources", type=Path, help="a folder of the repositories' clones")
    parser.add_argument("--set", choices=sorted(SETS), default="realdocs", help="which folder")
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    folder, documents = SETS[args.set]
    folder = args.folder or folder
    try:
        wrong = build(args.sources, folder, documents)
    except Missing as missing:
        print(f"realdocs_build: {missing}", file=sys.stderr)
        return 2
    for problem in wrong:
        print(f"realdocs_build: {problem}", file=sys.stderr)
    if not wrong:
        print(f"{len(documents)} documents in {folder}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
