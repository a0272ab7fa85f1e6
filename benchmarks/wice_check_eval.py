"""``deep-research check`` on WiCE dev claims: does it pass what the cited pages do not say?

WiCE (Kamoi et al., EMNLP 2023; annotations ODC-BY, text CC BY-SA) pairs sentences of Wikipedia
with the pages they cite, each claim labelled by people ``supported``, ``partially_supported`` or
``not_supported`` by those pages. Per claim this script serves each cited page on 127.0.0.1 as
an HTML page (its title, then its sentences as WiCE split them, one paragraph each), writes a
one-sentence Markdown report — the claim with an inline link to each page — and runs
``deep-research check REPORT --json`` on it in this process, a fresh state folder per claim.
The fetcher reaches the loopback server only through its test allow-list
(``DEEP_RESEARCH_TEST_PRIVATE_CIDRS`` and ``DEEP_RESEARCH_TEST_PORTS``), set for the run.

A claim's outcome is its sentence's verdict (a claim the command splits in two takes the worse
verdict of its parts): ``unsupported`` before ``partially_supported`` before ``unreachable``;
``supported`` only when every part is; ``not_checked`` when no row cites the pages; ``error``
when the command fails. Scored over the claims the command checked (not unreachable, not
``not_checked``, no error — those are counted apart, as the harness's failures):

* **not_supported passed**: the share of ``not_supported`` claims ``check`` calls supported
  (the error that matters: a citation that does not say what it is cited for, passed);
* **supported flagged**: the share of ``supported`` claims it flags
  (``partially_supported`` or ``unsupported``);
* every label's verdicts, ``partially_supported`` claims included (WiCE's middle label: part of
  the claim is on the page, part is not).

The data is WiCE's claim-level ``data/entailment_retrieval/claim/dev.jsonl``, read from
``--data`` (or ``$DEEP_RESEARCH_WICE``): that file, a checkout of the WiCE repository, or a bare
git directory of it (read with ``git show HEAD:…``). Nothing of WiCE is kept in this repository.

    python benchmarks/wice_check_eval.py --data /path/to/wice --limit 60 --seed 1
    python benchmarks/wice_check_eval.py --data /path/to/wice --json
    python benchmarks/wice_check_eval.py --data /path/to/wice --half even   # develop on this

Exit codes: 0 measured; 2 no data, or this ``deep-research`` has no ``check`` command.
"""

from __future__ import annotations

import argparse
import html
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from deep_research.cli import main as cli_main
from deep_research.fetch.fetcher import TEST_CIDRS_ENV, TEST_PORTS_ENV

#: The subcommand measured; a module constant so a test can ask for one the CLI lacks.
COMMAND = "check"
DATA_ENV = "DEEP_RESEARCH_WICE"
#: Where the claim-level dev split sits in the WiCE repository.
CLAIMS = "data/entailment_retrieval/claim/dev.jsonl"
LABELS = ("supported", "partially_supported", "not_supported")
#: The command's verdicts, then the harness's own outcome for a command that failed.
VERDICTS = ("supported", "partially_supported", "unsupported", "unreachable", "not_checked")
FLAGGED = ("partially_supported", "unsupported")
#: A claim's outcome from its rows' verdicts: the first of these any row has.
_WORST_FIRST = ("unsupported", "partially_supported", "unreachable")
#: How WiCE marks the first line of each cited page in a claim's evidence.
PAGE_MARK = "(meta data) TITLE:"
#: WiCE's other metadata lines, and the meta tag each is declared in by a page.
META_TAGS = {
    "(meta data) AUTHOR:": 'name="author" content',
    "(meta data) PUBLISHED DATETIME:": 'property="article:published_time" content',
    "(meta data) PUBLISHER:": 'property="og:site_name" content',
    "(meta data) COPYRIGHT:": 'name="copyright" content',
}


#: A fixed split of the claims by their id's number ("dev00016" is even): one half to develop
#: the check on, the other held out to measure it.
HALVES = ("even", "odd")


def half_of(claim_id: str) -> str:
    digits = "".join(ch for ch in claim_id if ch.isdigit())
    return HALVES[int(digits or "0") % 2]


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    label: str
    pages: tuple[tuple[str, ...], ...]  # each cited page's lines, its title line first


@dataclass
class Outcome:
    id: str
    label: str
    claim: str
    verdict: str  # one of VERDICTS, or "error"
    reasons: list[str]


def claim_of(row: Mapping[str, Any]) -> Claim:
    """One WiCE row as a claim and its cited pages (the evidence split at each page's mark)."""
    pages: list[list[str]] = []
    for line in row["evidence"]:
        if line.startswith(PAGE_MARK) or not pages:
            pages.append([])
        pages[-1].append(line)
    return Claim(row["meta"]["id"], row["claim"], row["label"], tuple(tuple(p) for p in pages))


def page_html(lines: Sequence[str]) -> str:
    """A cited page as HTML: WiCE's title line as its title, its other metadata lines (author,
    publication time, publisher) as the meta tags a page declares them in, a heading line
    (``# …``) as a heading, every other line a paragraph of its own, so no two of WiCE's
    sentences run into one."""
    title = ""
    head: list[str] = []
    body: list[str] = []
    for line in lines:
        meta = next((tag for mark, tag in META_TAGS.items() if line.startswith(mark)), None)
        if line.startswith(PAGE_MARK) and not title:
            title = line[len(PAGE_MARK) :].strip()
        elif meta is not None:
            value = line.split(":", 1)[1].strip()
            head.append(f'<meta {meta}="{html.escape(value, quote=True)}">')
        elif line.startswith("# "):
            body.append(f"<h1>{html.escape(line[2:].strip())}</h1>")
        else:
            body.append(f"<p>{html.escape(line)}</p>")
    return (
        '<!doctype html>\n<html><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title>{''.join(head)}</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def report(claim: str, urls: Sequence[str]) -> str:
    """A one-sentence Markdown report: the claim, its links before its closing stop."""
    text = claim.strip()
    stop = text[-1] if text and text[-1] in ".!?" else "."
    body = text[:-1].rstrip() if text and text[-1] in ".!?" else text
    links = ", ".join(f"[source {n}]({url})" for n, url in enumerate(urls, start=1))
    return f"{body} ({links}){stop}\n"


def outcome_of(output: Mapping[str, Any], urls: Sequence[str]) -> tuple[str, list[str]]:
    """The claim's verdict from the command's ``--json`` output, and its rows' reasons."""
    wanted = set(urls)
    rows = [row for row in output.get("sentences", []) if wanted & set(row.get("cites", []))]
    verdicts = [str(row.get("verdict")) for row in rows]
    reasons = [str(reason) for row in rows for reason in row.get("reasons", [])]
    if not rows:
        return "not_checked", reasons
    for verdict in _WORST_FIRST:
        if verdict in verdicts:
            return verdict, reasons
    if all(verdict == "supported" for verdict in verdicts):
        return "supported", reasons
    return "not_checked", reasons


def figures(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """The two error rates over checked claims, and every label's verdicts."""
    by_label = {label: Counter(o.verdict for o in outcomes if o.label == label) for label in LABELS}
    checked = {
        label: sum(count for verdict, count in counts.items() if verdict in ("supported", *FLAGGED))
        for label, counts in by_label.items()
    }

    def share(part: int, whole: int) -> float | None:
        return round(part / whole, 3) if whole else None

    passed = by_label["not_supported"]["supported"]
    flagged = sum(by_label["supported"][verdict] for verdict in FLAGGED)
    return {
        "claims": len(outcomes),
        "checked": sum(checked.values()),
        "not_supported_passed": share(passed, checked["not_supported"]),
        "not_supported_passed_count": f"{passed} of {checked['not_supported']}",
        "supported_flagged": share(flagged, checked["supported"]),
        "supported_flagged_count": f"{flagged} of {checked['supported']}",
        "verdicts": {
            label: {verdict: counts[verdict] for verdict in (*VERDICTS, "error") if counts[verdict]}
            for label, counts in by_label.items()
        },
    }


def command_exists(command: str, main: Callable[[list[str]], int] = cli_main) -> bool:
    """Whether the CLI has ``command``: its ``--help`` exits 0, an unknown command exits 2."""
    sink = io.StringIO()
    try:
        with redirect_stdout(sink), redirect_stderr(sink):
            code = main([command, "--help"])
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 2
    return code == 0


def read_claims(path: Path) -> list[Claim]:
    """The claim-level dev rows from a JSONL file, a WiCE checkout, or a bare git directory of
    it; a ValueError naming what is missing otherwise."""
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    elif (path / CLAIMS).is_file():
        text = (path / CLAIMS).read_text(encoding="utf-8")
    elif path.is_dir():
        shown = subprocess.run(
            ["git", "--git-dir", str(path), "show", f"HEAD:{CLAIMS}"],
            capture_output=True,
            check=False,
        )
        if shown.returncode != 0:
            raise ValueError(f"{path} is neither {CLAIMS}, a WiCE checkout nor its git directory")
        text = shown.stdout.decode("utf-8")
    else:
        raise ValueError(f"no WiCE data at {path}")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    if not rows or any(row.get("label") not in LABELS for row in rows):
        raise ValueError(f"{path}: not WiCE's claim-level rows (label ∉ {', '.join(LABELS)})")
    return [claim_of(row) for row in rows]


class PageServer:
    """The cited pages on 127.0.0.1, by path; any other path is a 404."""

    def __init__(self) -> None:
        self.pages: dict[str, str] = {}
        pages = self.pages

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                body = pages.get(self.path.split("?")[0])
                data = (body or "not found").encode("utf-8")
                self.send_response(200 if body is not None else 404)
                kind = "text/html" if body is not None else "text/plain"
                self.send_header("Content-Type", f"{kind}; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> PageServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@contextmanager
def loopback_allowed(port: int) -> Iterator[None]:
    """The fetcher's test allow-list for the page server, for the length of the run only."""
    saved = {name: os.environ.get(name) for name in (TEST_CIDRS_ENV, TEST_PORTS_ENV)}
    os.environ[TEST_CIDRS_ENV], os.environ[TEST_PORTS_ENV] = "127.0.0.1/32", str(port)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def check_claim(claim: Claim, server: PageServer, root: Path, reasoner: str) -> Outcome:
    urls = []
    for number, lines in enumerate(claim.pages, start=1):
        path = f"/{claim.id}/{number}"
        server.pages[path] = page_html(lines)
        urls.append(server.url(path))
    folder = root / claim.id
    folder.mkdir(parents=True)
    (folder / "report.md").write_text(report(claim.text, urls), encoding="utf-8")
    argv = [COMMAND, str(folder / "report.md"), "--json", "--state", str(folder / "state")]
    out, err = io.StringIO(), io.StringIO()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = cli_main([*argv, "--reasoner", reasoner])
    except (Exception, SystemExit) as crash:  # the command's failure is this claim's outcome
        return Outcome(claim.id, claim.label, claim.text, "error", [f"crashed: {crash!r}"[:300]])
    if code not in (0, 1):
        return Outcome(claim.id, claim.label, claim.text, "error", [err.getvalue().strip()[-300:]])
    try:
        verdict, reasons = outcome_of(json.loads(out.getvalue()), urls)
    except (json.JSONDecodeError, AttributeError, TypeError) as problem:
        return Outcome(claim.id, claim.label, claim.text, "error", [f"output: {problem}"])
    return Outcome(claim.id, claim.label, claim.text, verdict, reasons)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--data",
        type=Path,
        default=os.environ.get(DATA_ENV),
        help=f"WiCE's {CLAIMS}, a checkout of WiCE, or its git directory (default: ${DATA_ENV})",
    )
    parser.add_argument("--limit", type=int, default=0, help="a seeded sample of N claims")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--half",
        choices=HALVES,
        help="only the claims whose id's number is even (the half to develop on) or odd",
    )
    parser.add_argument("--reasoner", choices=("extractive", "claude"), default="extractive")
    parser.add_argument("--json", action="store_true", help="every claim's outcome as well")
    parser.add_argument("--show", action="store_true", help="one line per claim on stderr")
    args = parser.parse_args(argv)
    if args.data is None:
        print(f"wice_check_eval: no WiCE data; pass --data or set ${DATA_ENV}", file=sys.stderr)
        return 2
    if not command_exists(COMMAND):
        print(f"wice_check_eval: this deep-research has no `{COMMAND}` command", file=sys.stderr)
        return 2
    try:
        claims = read_claims(Path(args.data))
    except (ValueError, OSError) as problem:
        print(f"wice_check_eval: {problem}", file=sys.stderr)
        return 2
    if args.half:
        claims = [claim for claim in claims if half_of(claim.id) == args.half]
    if args.limit:
        claims = random.Random(args.seed).sample(claims, min(args.limit, len(claims)))
    outcomes = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        PageServer() as server,
        loopback_allowed(server.port),
    ):
        for number, claim in enumerate(claims, start=1):
            outcome = check_claim(claim, server, Path(tmp), args.reasoner)
            outcomes.append(outcome)
            if args.show:
                print(
                    f"{claim.label:>19} → {outcome.verdict:<19} {claim.text[:90]}",
                    file=sys.stderr,
                )
            if number % 25 == 0 or number == len(claims):
                f = figures(outcomes)
                print(
                    f"{number}/{len(claims)}: not_supported passed {f['not_supported_passed']}"
                    f", supported flagged {f['supported_flagged']}",
                    file=sys.stderr,
                    flush=True,
                )
    result: dict[str, Any] = {
        "limit": args.limit,
        "seed": args.seed,
        "half": args.half,
        "reasoner": args.reasoner,
        **figures(outcomes),
    }
    if args.half is None:
        result["halves"] = {
            half: figures([o for o in outcomes if half_of(o.id) == half]) for half in HALVES
        }
    if args.json:
        result["outcomes"] = [asdict(o) for o in outcomes]
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
