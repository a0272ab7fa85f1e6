"""``deep-research check``: a report's cited sentences judged against real pages served on
127.0.0.1 (short public-domain PEP excerpts, tests/fixtures/check/README.md), in every shape a
report cites in; the check folder re-derived offline; bad input refused in one line."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from claude_world import asked_claims, vote, votes_reply
from conftest import REPO
from deep_research.check import folder as check_folder
from deep_research.check.folder import verify_check
from deep_research.cli import main
from deep_research.gates.citations import split_sentences
from fakeapi import FakeAnthropic, text
from localhttp import LocalServer, Route

FIXTURES = REPO / "tests" / "fixtures" / "check"
PAGES = {
    name: (FIXTURES / f"{name}.html").read_text(encoding="utf-8")
    for name in ("pep-0008", "pep-0020", "pep-0257", "pep-0572")
}
GONE = "gone"

#: (sentence, the page it cites, verdict, reasons): true sentences, and each way one goes wrong.
CASES: list[tuple[str, str, str, list[str]]] = [
    ("PEP 8 limits all lines to a maximum of 79 characters", "pep-0008", "supported", []),
    (
        "Comments and docstrings should be limited to 72 characters",
        "pep-0008",
        "supported",
        [],
    ),
    ('PEP 20 says "Readability counts."', "pep-0020", "supported", []),
    (
        "Tim Peters channelled the BDFL's guiding principles for Python's design into 20 aphorisms",
        "pep-0020",
        "supported",
        [],
    ),
    (
        "Tim Peters wrote on comp.lang.python in 2001 that a universal convention supplies "
        "maintainability, clarity and consistency",
        "pep-0257",
        "supported",
        [],
    ),
    # A reworded quote: the page never says it.
    (
        'The style guide says "Limit every line to at most 79 characters."',
        "pep-0008",
        "unsupported",
        ["quote_not_in_source"],
    ),
    # An altered quote: one word changed.
    (
        'PEP 8 says "Tabs should be used only to remain consistent with code that is already '
        'indented with tabs."',
        "pep-0008",
        "partially_supported",
        ["quote_differs"],
    ),
    # A changed count.
    (
        "Tim Peters channels the BDFL's guiding principles into 20 aphorisms, only 18 of which "
        "have been written down",
        "pep-0020",
        "partially_supported",
        ["figure_differs"],
    ),
    # A changed figure.
    (
        "For docstrings or comments, the line length should be limited to 62 characters",
        "pep-0008",
        "partially_supported",
        ["figure_differs"],
    ),
    # A changed year.
    (
        "Tim Peters wrote on comp.lang.python in 2004 that a universal convention supplies "
        "maintainability, clarity and consistency",
        "pep-0257",
        "partially_supported",
        ["date_differs"],
    ),
    # A name the page does not give for what it says.
    (
        "Barry Warsaw found that code is read much more often than it is written",
        "pep-0008",
        "partially_supported",
        ["name_not_in_source"],
    ),
    # A page about another entity: the style guide cited for the assignment-expression PEP.
    (
        "Chris Angelico proposed assignment expressions in 2018",
        "pep-0008",
        "unsupported",
        ["no_supporting_passage"],
    ),
    # A dead link.
    ("The walrus operator was renamed in a later proposal", GONE, "unreachable", ["http_404"]),
]


@pytest.fixture
def web(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalServer]:
    """The pages on 127.0.0.1, reached through the fetch policy's explicit private allow-list
    (the environment a run's fetcher reads): no other bypass."""
    with LocalServer() as server:
        for name, html in PAGES.items():
            server.routes[f"/{name}.html"] = Route(body=html)
        monkeypatch.setenv("DEEP_RESEARCH_TEST_PRIVATE_CIDRS", "127.0.0.1/32")
        monkeypatch.setenv("DEEP_RESEARCH_TEST_PORTS", str(server.port))
        yield server


def url(server: LocalServer, page: str) -> str:
    return server.url(f"/{page}.html")


def inline(server: LocalServer) -> str:
    lines = [f"{s} ([source]({url(server, page)}))." for s, page, _, _ in CASES]
    return "# Python style\n\n" + " ".join(lines) + "\n"


def numbered(server: LocalServer) -> str:
    order = list(dict.fromkeys(page for _, page, _, _ in CASES))
    lines = [f"{s} [{order.index(page) + 1}]." for s, page, _, _ in CASES]
    sources = [f"{n}. {name}: {url(server, name)}" for n, name in enumerate(order, start=1)]
    return "# Python style\n\n" + " ".join(lines) + "\n\n## Sources\n\n" + "\n".join(sources) + "\n"


def footnotes(server: LocalServer) -> str:
    lines = [f"- {s}.[^{page}]" for s, page, _, _ in CASES]
    notes = [f"[^{page}]: {url(server, page)}" for page in dict.fromkeys(p for _, p, _, _ in CASES)]
    return "# Python style\n\n" + "\n".join(lines) + "\n\n" + "\n".join(notes) + "\n"


def bare(server: LocalServer) -> str:
    return " ".join(f"{s} ({url(server, page)})." for s, page, _, _ in CASES) + "\n"


def html(server: LocalServer) -> str:
    order = list(dict.fromkeys(page for _, page, _, _ in CASES))
    body = "".join(
        f'<p>{s}.<sup><a href="#n{order.index(page)}">{order.index(page)}</a></sup></p>'
        for s, page, _, _ in CASES
    )
    notes = "".join(
        f'<li id="n{n}"><a href="{url(server, page)}">{page}</a></li>'
        for n, page in enumerate(order)
    )
    return f"<!DOCTYPE html><html><body><h1>Python style</h1>{body}<ol>{notes}</ol></body></html>"


SHAPES: dict[str, tuple[str, Callable[[LocalServer], str]]] = {
    "inline links": ("report.md", inline),
    "numbered references": ("report.md", numbered),
    "footnotes": ("report.md", footnotes),
    "bare URLs in parentheses": ("report.txt", bare),
    "HTML footnotes": ("report.html", html),
}


def check_json(report: Path, folder: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    code = main(["check", str(report), "--state", str(folder), "--json"])
    result = json.loads(capsys.readouterr().out)
    result["exit"] = code
    return result


@pytest.mark.parametrize("shape", list(SHAPES))
def test_each_sentence_gets_its_verdict_and_reason_in_every_shape(
    shape: str, web: LocalServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, build = SHAPES[shape]
    report = tmp_path / name
    report.write_text(build(web), encoding="utf-8")
    result = check_json(report, tmp_path / "check", capsys)
    got = [
        (row["text"].split(" (source)")[0].rstrip("."), row["verdict"], row["reasons"])
        for row in result["sentences"]
    ]
    expected = [(s, verdict, reasons) for s, _, verdict, reasons in CASES]
    assert got == expected
    for row, (_, page, _, _) in zip(result["sentences"], CASES, strict=True):
        assert row["cites"] == [url(web, page)]
    flagged = sum(1 for _, _, verdict, _ in CASES if verdict != "supported")
    assert result["summary"] == {
        "cited": len(CASES),
        "supported": len(CASES) - flagged,
        "flagged": flagged,
        "unreachable": 1,
        "not_checked": 0,
    }
    assert result["exit"] == 1
    # Each page was fetched once, however many sentences cite it.
    assert sorted(web.hits.count(f"/{page}.html") for page in PAGES if page != "pep-0572") == [
        1,
        1,
        1,
    ]


def test_the_evidence_is_the_pages_own_words_at_their_span(
    web: LocalServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.md"
    report.write_text(numbered(web), encoding="utf-8")
    result = check_json(report, tmp_path / "check", capsys)
    changed = result["sentences"][7]
    assert changed["evidence"]["passage"].endswith("only 19 of which have been written down.")
    folder = tmp_path / "check"
    log = [json.loads(line) for line in (folder / "fetch-log.jsonl").read_text().splitlines()]
    page = next(e for e in log if e["url"] == url(web, "pep-0020") and e["outcome"] == "ok")
    text = (folder / "corpus" / (page["content_hash"].removeprefix("sha256:") + ".txt")).read_text()
    start, end = changed["evidence"]["span"]
    assert text[start:end] == changed["evidence"]["passage"]


def test_stdout_names_each_flagged_sentence_and_what_the_page_says(
    web: LocalServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.md"
    report.write_text(numbered(web), encoding="utf-8")
    assert main(["check", str(report), "--state", str(tmp_path / "check")]) == 1
    lines = capsys.readouterr().out.splitlines()
    flagged = [case for case in CASES if case[2] != "supported"]
    assert len(lines) == len(flagged) + 1
    assert lines[2].startswith('partially_supported: "Tim Peters channels the BDFL')
    assert "figure_differs; the page says 19" in lines[2]
    assert "date_differs; the page says 2001-06-16" in lines[4]
    assert lines[-2].startswith('unreachable: "The walrus operator') and "http_404" in lines[-2]
    assert lines[-1].startswith("check: 13 cited sentences, 5 supported, 8 flagged (1 unreachable)")
    annotated = (tmp_path / "check" / "annotated.md").read_text(encoding="utf-8")
    assert annotated.count("[✓ supported]") == 5
    assert "[⚠ partially supported: figure_differs]" in annotated
    assert "only 19 of which have been written down" in annotated.split("## Checked by")[1]


def test_verify_offline_re_derives_the_check_folder(
    web: LocalServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.md"
    report.write_text(footnotes(web), encoding="utf-8")
    folder = tmp_path / "check"
    check_json(report, folder, capsys)
    assert main(["verify", str(folder), "--offline"]) == 0
    assert json.loads(capsys.readouterr().out)["identical"] is True
    # A verdict edited by hand is named.
    record = json.loads((folder / "check.json").read_text())
    record["sentences"][5]["verdict"] = "supported"
    (folder / "check.json").write_text(json.dumps(record))
    assert main(["verify", str(folder), "--offline"]) == 1
    assert "sentence 6: verdict: stored 'supported', re-derived 'unsupported'" in (
        capsys.readouterr().err
    )


def test_a_second_check_in_the_folder_fetches_nothing_again(
    web: LocalServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.md"
    report.write_text(inline(web), encoding="utf-8")
    first = check_json(report, tmp_path / "check", capsys)
    hits = len(web.hits)
    second = check_json(report, tmp_path / "check", capsys)
    assert first == second
    assert len(web.hits) == hits + 1  # only the dead link is asked again


# --- bad input -----------------------------------------------------------------------------


def test_bad_reports_are_one_line_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = tmp_path / "report.pdf"
    binary.write_bytes(b"%PDF-1.7\n\x00\x01binary")
    huge = tmp_path / "huge.md"
    with huge.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    cases = {
        tmp_path / "missing.md": "report not found",
        binary: "is a binary file",
        huge: "over the 4,194,304-byte cap",
        tmp_path: "is a folder",
    }
    for path, said in cases.items():
        folder = tmp_path / "never"
        assert main(["check", str(path), "--state", str(folder)]) == 2
        err = capsys.readouterr().err.strip()
        assert said in err and len(err.splitlines()) == 1, err
        assert not folder.exists()


def test_refused_urls_and_local_files_are_row_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEEP_RESEARCH_TEST_PRIVATE_CIDRS", raising=False)
    report = tmp_path / "report.md"
    report.write_text(
        "The router admin page holds the secret [a](http://10.0.0.1/admin).\n"
        "The metadata service holds the keys [b](http://169.254.169.254/latest/).\n"
        "My notes say the same thing [c](./notes.md).\n"
        "A file on disk says so too [d](file:///etc/passwd).\n"
        "A missing reference is cited here [9].\n"
        "This sentence cites nothing at all.\n",
        encoding="utf-8",
    )
    result = check_json(report, tmp_path / "check", capsys)
    assert [(r["verdict"], r["reasons"]) for r in result["sentences"]] == [
        ("unreachable", ["private_address"]),
        ("unreachable", ["private_address"]),
        ("unreachable", ["local_file"]),
        ("unreachable", ["local_file"]),
        ("unreachable", ["reference_not_found"]),
        ("not_checked", ["no_citation"]),
    ]
    assert result["exit"] == 1


def test_a_report_without_citations_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.md"
    report.write_text("# Notes\n\nPython is a programming language. It is popular.\n")
    assert main(["check", str(report), "--state", str(tmp_path / "check")]) == 0
    assert "no sentence of the report cites anything" in capsys.readouterr().out
    assert main(["check", str(report), "--state", str(tmp_path / "check"), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["summary"]["cited"] == 0
    assert "no sentence of the report cites anything" in err


def test_citations_past_the_cap_are_not_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("DEEP_RESEARCH_TEST_PRIVATE_CIDRS", raising=False)
    cap = check_folder.MAX_CHECKED_URLS
    report = tmp_path / "report.md"
    report.write_text(
        "\n".join(
            f"Claim number {n} is stated here [x](http://10.0.{n // 250}.{n % 250 + 1}/)."
            for n in range(2000)
        ),
        encoding="utf-8",
    )
    result = check_json(report, tmp_path / "check", capsys)
    verdicts = [(r["verdict"], r["reasons"]) for r in result["sentences"]]
    assert verdicts[:cap] == [("unreachable", ["private_address"])] * cap
    assert verdicts[cap:] == [("not_checked", ["over_citation_cap"])] * (2000 - cap)
    assert result["summary"]["cited"] == 2000
    assert result["summary"]["not_checked"] == 2000 - cap
    log = (tmp_path / "check" / "fetch-log.jsonl").read_text().splitlines()
    assert len(log) == cap  # each refused before any socket, and logged


def test_a_folder_holding_other_files_is_not_written_into(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.md"
    report.write_text("Nothing is cited in this report at all.\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "report.md").write_text("my own report\n")
    assert main(["check", str(report), "--state", str(project)]) == 2
    assert "holds other files" in capsys.readouterr().err
    assert (project / "report.md").read_text() == "my own report\n"


# --- the report's shapes, read alone -------------------------------------------------------

READING: list[tuple[str, list[tuple[str, list[str]]]]] = [
    (
        "A claim [1]. Another one.[2] A third [1, 2].\n\n## References\n\n"
        "[1] Author, Title, https://a.example/1\n[2]: https://b.example/2\n",
        [
            ("A claim.", ["https://a.example/1"]),
            ("Another one.", ["https://b.example/2"]),
            ("A third.", ["https://a.example/1", "https://b.example/2"]),
        ],
    ),
    (
        "Dr. G. van Rossum wrote it in 1991, e.g. for teaching (https://c.example/x). Next "
        "sentence cites <https://d.example/y> here.\n",
        [
            ("Dr. G. van Rossum wrote it in 1991, e.g. for teaching.", ["https://c.example/x"]),
            ("Next sentence cites here.", ["https://d.example/y"]),
        ],
    ),
    (
        "| claim | source |\n|---|---|\n"
        "| Lines stop at 79 characters. | [PEP 8](https://e.example/) |\n"
        "```\nNot prose [x](https://f.example/)\n```\n",
        [("Lines stop at 79 characters.", ["https://e.example/"])],
    ),
    # Link text that only labels a citation is no part of the claim: "source 1" is no figure.
    (
        "They were towed back by the AA ([source 1](https://g.example/1), "
        "[source 2](https://h.example/2)). It rose [3](https://i.example/3) in "
        "[the 2001 survey](https://j.example/4) ([nytimes.com](https://k.example/5)).\n",
        [
            (
                "They were towed back by the AA.",
                ["https://g.example/1", "https://h.example/2"],
            ),
            (
                "It rose in the 2001 survey.",
                ["https://i.example/3", "https://j.example/4", "https://k.example/5"],
            ),
        ],
    ),
    # Initials with stops inside a name end no sentence; a stop after a word does.
    (
        'Annie Zaleski of "The A.V. Club" praised it (https://l.example/). It sold well.\n',
        [
            ('Annie Zaleski of "The A.V. Club" praised it.', ["https://l.example/"]),
            ("It sold well.", []),
        ],
    ),
]


@pytest.mark.parametrize(("markdown", "expected"), READING)
def test_sentences_and_their_citations_are_read(
    markdown: str, expected: list[tuple[str, list[str]]]
) -> None:
    found = split_sentences(markdown)
    assert [(s.text, [c.target for c in s.cites]) for s in found] == expected
    for sentence in found:
        assert markdown[sentence.start : sentence.end].strip()


# --- a model on what the literal checks cannot decide ---------------------------------------


def test_a_model_votes_only_on_what_the_literal_checks_cannot_decide(
    web: LocalServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[dict[str, str]] = []

    def script(body: dict[str, Any]) -> Any:
        claims = asked_claims(body)
        asked.append(claims)
        return votes_reply({cid: vote("disallows" in text) for cid, text in claims.items()})

    report = tmp_path / "report.md"
    report.write_text(
        f"Python disallows mixing tabs and spaces for indentation [1]. PEP 8 limits all lines "
        f"to a maximum of 79 characters [1]. Spaces are the preferred indentation method [1]."
        f"\n\n## Sources\n\n1. {url(web, 'pep-0008')}\n",
        encoding="utf-8",
    )
    with FakeAnthropic(script) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        code = main(
            [
                "check",
                str(report),
                "--state",
                str(tmp_path / "check"),
                "--reasoner",
                "claude",
                "--json",
            ]
        )
    result = json.loads(capsys.readouterr().out)
    rows = result["sentences"]
    # The figure was decided by the literal check; the two word-only sentences went to the model.
    assert [sorted(a.values()) for a in asked] == [sorted([rows[0]["text"], rows[2]["text"]])]
    assert (rows[0]["verdict"], rows[0]["reasons"]) == ("unsupported", ["model_refuted"])
    assert rows[0]["evidence"]["vote"]["refuted"] is True
    assert rows[1]["verdict"] == "supported" and "vote" not in rows[1]["evidence"]
    assert rows[2]["verdict"] == "supported" and rows[2]["evidence"]["vote"]["refuted"] is False
    assert code == 1
    # Offline, the recorded votes are applied again without a model.
    assert verify_check(tmp_path / "check").identical


MODEL_REPLIES: list[tuple[str, Any, str, list[str], str]] = [
    ("refuted", votes_reply({"C1": vote(True)}), "unsupported", ["model_refuted"], "valid"),
    ("upheld", votes_reply({"C1": vote(False)}), "supported", [], "valid"),
    ("not JSON", [text("I think it is fine.")], "supported", [], "abstained"),
    (
        "a confidence that is no number",
        votes_reply({"C1": {"refuted": True, "evidence": "x", "confidence": "high"}}),
        "supported",
        [],
        "abstained",
    ),
]


@pytest.mark.parametrize(
    ("reply", "verdict", "reasons", "status"),
    [case[1:] for case in MODEL_REPLIES],
    ids=[case[0] for case in MODEL_REPLIES],
)
def test_the_models_vote_is_data_and_a_malformed_one_abstains(
    reply: Any,
    verdict: str,
    reasons: list[str],
    status: str,
    web: LocalServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    report = tmp_path / "report.md"
    report.write_text(
        f"Python disallows mixing tabs and spaces for indentation [1].\n\n## Sources\n\n"
        f"1. {url(web, 'pep-0008')}\n",
        encoding="utf-8",
    )
    with FakeAnthropic(lambda body: reply) as api:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        main(
            ["check", str(report), "--state", str(tmp_path / "c"), "--reasoner", "claude", "--json"]
        )
    captured = capsys.readouterr()
    (row,) = json.loads(captured.out)["sentences"]
    assert (row["verdict"], row["reasons"], row["evidence"]["vote"]["status"]) == (
        verdict,
        reasons,
        status,
    )
    assert "spend: $" in captured.err
    assert verify_check(tmp_path / "c").identical


def test_claude_without_a_key_is_refused_before_anything_is_fetched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    report = tmp_path / "report.md"
    report.write_text("A claim is made here [a](https://a.example/).\n")
    folder = tmp_path / "check"
    assert main(["check", str(report), "--state", str(folder), "--reasoner", "claude"]) == 2
    assert "ANTHROPIC_API_KEY" in capsys.readouterr().err
    assert not folder.exists()


def test_without_state_a_fresh_folder_is_made_and_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEP_RESEARCH_STATE", str(tmp_path / "state"))
    report = tmp_path / "my report.md"
    report.write_text("Nothing is cited in this report at all.\n")
    assert main(["check", str(report)]) == 0
    err = capsys.readouterr().err
    made = Path(err.split("check folder: ", 1)[1].strip())
    assert made.parent == tmp_path / "state" / "checks" and made.name.startswith("my-report-")
    assert (made / "check.json").is_file()
