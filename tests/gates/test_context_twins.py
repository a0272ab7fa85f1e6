"""Natural wording: claims whose subject stands outside the quoted sentence, beside false twins.

Each document below is written the way such pages are (a company's release, a project's release
notes, a newspaper report quoting the operator, an encyclopedic page). A true claim names its
subject although the quoted sentence says "we", "it" or "the plant", or dates an event the
sentence calls "today"; its twins change one thing — another entity, another speaker, a figure,
a date — and must not pass. The gate is the batch gate's: docs/contracts.md §4.1 step 3 and
docs/contracts.md §5.4.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TypedDict

import pytest

from deep_research.gates.batch import check_pair, run_gate_file


class Facts(TypedDict, total=False):
    """What a source's record says of its document (the batch gate's optional fields)."""

    title: str
    published: date
    publisher: str


RELEASE = """Brightwater Energy sets restart date for Kestrel Bay plant

Brightwater Energy today confirmed that its Kestrel Bay generating station will return to \
service in the first half of 2027, after repairs to the turbine hall flooded last autumn.

## Timeline

We are targeting the first half of 2027 for the return of the first unit, with the second \
unit to follow within six months. Inspections of the second unit begin next week.

"Our crews have already replaced the damaged transformers," said chief operating officer Dana \
Kell.

## Background

The plant supplied about 14% of the province's electricity before the flood.
"""
RELEASE_FACTS: Facts = {"published": date(2026, 3, 3), "publisher": "brightwater-energy.example"}

NOTES = """Release notes

This release makes the incremental indexer the default and drops the 3.x configuration format.

## Performance

It cuts a full rebuild of a 10,000-page site from 95 seconds to 38 seconds on the reference \
machine.

## Compatibility

We will remove the legacy plugin loader next month, as announced in the previous release.
"""
NOTES_FACTS: Facts = {"published": date(2026, 5, 14), "publisher": "quillmark.example"}

REPORT = """Kestrel Bay restart set for 2027

By Tom Alder

Brightwater Energy expects its flood-damaged Kestrel Bay generating station to run again in \
2027, its chief executive said on Monday.

Union representative Sam Okafor said crews had been told to expect overtime through the winter.

"We are targeting the first half of 2027 for the first unit," Maria Lindqvist, chief executive \
of Brightwater Energy, told the Harbour Gazette.
"""
REPORT_FACTS: Facts = {
    "title": "Kestrel Bay restart set for 2027 | Harbour Gazette",
    "published": date(2026, 3, 10),
    "publisher": "harbour-gazette.example",
}

ENCYCLOPEDIA = """Kestrel Bay Generating Station is a gas-fired power station on the eastern shore \
of Kestrel Bay, operated by Brightwater Energy. Its sister station, Marrow Point, closed in 2019.

History

Construction began in 1998. The station entered commercial service in 2001 and was the \
province's largest single source of electricity until 2015.
"""

OTHER_PLANT = """Marrow Point Generating Station

Marrow Point Generating Station was a coal-fired power station operated by Brightwater Energy \
until its closure. Brightwater also runs the Kestrel Bay station further up the coast.

History

The plant opened in 1974 and closed in 2019, when its two units were retired.
"""

RUST_POST = """Announcing Rust 1.81.0

The Rust team is happy to announce a new version of Rust, 1.81.0. Rust is a programming \
language empowering everyone to build reliable and efficient software.

## Linking on Windows

Rust now performs its own search for the MSVC linker, so builds no longer need a developer \
command prompt.

Users who set the linker path in a PowerShell profile or a Python build script can remove \
that line.
"""
RUST_FACTS: Facts = {"published": date(2024, 9, 5), "publisher": "blog.rust-lang.example"}

# The played run's page shape: another program, named in the paragraph before, does the same
# thing; the located sentence names its own subject.
RUST_SEARCH_POST = """Announcing Rust 1.58.0

The Rust team has published a new version of Rust, 1.58.0.

## Command search on Windows

PowerShell has long looked for a program in the current directory before the search path.

Rust now performs its own search without the current directory, so a program of that name left \
in it is never run by mistake.
"""
SEARCH_QUOTE = "Rust now performs its own search without the current directory"

MIGRATION = """Moving Quillmark to the Inkwell parser

Quillmark 5.0 replaces its markdown engine with Inkwell, the parser the Inkdrop project \
maintains. Thanks to everyone who tested the Quillmark betas.

## Performance

It renders a 10,000-page site in 38 seconds on the reference machine, down from 95 seconds.

## Compatibility

We will remove the legacy plugin loader next month, once Inkwell covers its last extension point.
"""
MIGRATION_FACTS: Facts = {"published": date(2026, 5, 14), "publisher": "quillmark.example"}

FERRY = """Harbour ferry to call at Kestrel Bay

The council approved the new ferry route last Friday, after a year of consultation.

Services will begin next Monday, the operator said, with four sailings a day.
"""
FERRY_FACTS: Facts = {"published": date(2026, 3, 12), "publisher": "harbour-gazette.example"}

TARGET_QUOTE = (
    "We are targeting the first half of 2027 for the return of the first unit, with the second "
    "unit to follow within six months."
)
TODAY_QUOTE = (
    "Brightwater Energy today confirmed that its Kestrel Bay generating station will return to "
    "service in the first half of 2027"
)
NEXT_WEEK_QUOTE = "Inspections of the second unit begin next week."
CREWS_QUOTE = "Our crews have already replaced the damaged transformers,"
SHARE_QUOTE = "The plant supplied about 14% of the province's electricity before the flood."
REBUILD_QUOTE = (
    "It cuts a full rebuild of a 10,000-page site from 95 seconds to 38 seconds on the reference "
    "machine."
)
LOADER_QUOTE = "We will remove the legacy plugin loader next month"
GAZETTE_QUOTE = "We are targeting the first half of 2027 for the first unit,"
SERVICE_QUOTE = "The station entered commercial service in 2001"
OPENED_QUOTE = "The plant opened in 1974 and closed in 2019, when its two units were retired."

LINKER_QUOTE = "Rust now performs its own search for the MSVC linker"
RENDER_QUOTE = (
    "It renders a 10,000-page site in 38 seconds on the reference machine, down from 95 seconds."
)
REMOVE_QUOTE = "We will remove the legacy plugin loader next month"
MONDAY_QUOTE = (
    "Brightwater Energy expects its flood-damaged Kestrel Bay generating station to run again in "
    "2027, its chief executive said on Monday."
)
APPROVED_QUOTE = "The council approved the new ferry route last Friday"
SERVICES_QUOTE = "Services will begin next Monday, the operator said, with four sailings a day."


@dataclass(frozen=True)
class Twin:
    id: str
    document: str
    claim: str
    quote: str
    #: How the gate must decide: the passage that establishes the subject (a true claim), or the
    #: reason it fails (a false one).
    expect: str
    supported: bool
    facts: Facts = field(default_factory=lambda: Facts())


TWINS = [
    # a company's release: "we", "the plant", "our", "today", "next week"
    Twin(
        "we-title",
        RELEASE,
        "Brightwater Energy is targeting the first half of 2027 for the return of the first unit.",
        TARGET_QUOTE,
        "title",  # the release's headline, its first line
        True,
        RELEASE_FACTS,
    ),
    Twin(
        "we-other-company",
        RELEASE,
        "Northgate Power is targeting the first half of 2027 for the return of the first unit.",
        TARGET_QUOTE,
        "name_missing",
        False,
        RELEASE_FACTS,
    ),
    Twin(
        "we-other-year",
        RELEASE,
        "Brightwater Energy is targeting the first half of 2028 for the return of the first unit.",
        TARGET_QUOTE,
        "literal_missing",
        False,
        RELEASE_FACTS,
    ),
    Twin(
        "the-plant",
        RELEASE,
        "The Kestrel Bay plant supplied about 14% of the province's electricity before the flood.",
        SHARE_QUOTE,
        "title",
        True,
        RELEASE_FACTS,
    ),
    Twin(
        "the-plant-other-share",
        RELEASE,
        "The Kestrel Bay plant supplied about 41% of the province's electricity before the flood.",
        SHARE_QUOTE,
        "literal_missing",
        False,
        RELEASE_FACTS,
    ),
    Twin(
        "today",
        RELEASE,
        "On 3 March 2026 Brightwater Energy confirmed that its Kestrel Bay generating station "
        "will return to service in the first half of 2027.",
        TODAY_QUOTE,
        "publication date",
        True,
        RELEASE_FACTS,
    ),
    Twin(
        "today-other-day",
        RELEASE,
        "On 4 March 2026 Brightwater Energy confirmed that its Kestrel Bay generating station "
        "will return to service in the first half of 2027.",
        TODAY_QUOTE,
        "literal_missing",
        False,
        RELEASE_FACTS,
    ),
    Twin(
        "today-undated",  # no publication date: "today" states no date by itself
        RELEASE,
        "On 3 March 2026 Brightwater Energy confirmed that its Kestrel Bay generating station "
        "will return to service in the first half of 2027.",
        TODAY_QUOTE,
        "literal_missing",
        False,
    ),
    Twin(
        "next-week",
        RELEASE,
        "Inspections of the second unit at Kestrel Bay begin in March 2026.",
        NEXT_WEEK_QUOTE,
        "publication date",
        True,
        RELEASE_FACTS,
    ),
    Twin(
        "next-week-one-day",  # a week is no one day of it
        RELEASE,
        "Inspections of the second unit at Kestrel Bay begin on 9 March 2026.",
        NEXT_WEEK_QUOTE,
        "literal_missing",
        False,
        RELEASE_FACTS,
    ),
    Twin(
        "our-quoted-officer",  # a company's release quoting its own officer speaks for it
        RELEASE,
        "Brightwater Energy's crews have already replaced the damaged transformers.",
        CREWS_QUOTE,
        "title",
        True,
        RELEASE_FACTS,
    ),
    Twin(
        "quoted-officer-company-said",  # the company speaks through its officer on its own page
        RELEASE,
        "Brightwater Energy said its crews have already replaced the damaged transformers.",
        CREWS_QUOTE,
        "title",
        True,
        RELEASE_FACTS,
    ),
    # a project's release notes: "it" under a titled record, "we" only by the publisher
    Twin(
        "it-title",
        NOTES,
        "The new release of Quillmark cuts a full rebuild of a 10,000-page site from 95 seconds to "
        "38 seconds.",
        REBUILD_QUOTE,
        "title",
        True,
        {**NOTES_FACTS, "title": "Quillmark 4.2 release notes"},
    ),
    Twin(
        "it-other-figure",
        NOTES,
        "The new release of Quillmark cuts a full rebuild of a 10,000-page site from 95 seconds to "
        "28 seconds.",
        REBUILD_QUOTE,
        "literal_missing",
        False,
        {**NOTES_FACTS, "title": "Quillmark 4.2 release notes"},
    ),
    Twin(
        "it-other-project",
        NOTES,
        "The new release of Inkwell cuts a full rebuild of a 10,000-page site from 95 seconds to "
        "38 seconds.",
        REBUILD_QUOTE,
        "name_missing",
        False,
        {**NOTES_FACTS, "title": "Quillmark 4.2 release notes"},
    ),
    Twin(
        "we-byline",
        NOTES,
        "The Quillmark maintainers will remove the legacy plugin loader in June 2026.",
        LOADER_QUOTE,
        "byline",
        True,
        NOTES_FACTS,
    ),
    Twin(
        "we-byline-other-month",
        NOTES,
        "The Quillmark maintainers will remove the legacy plugin loader in July 2026.",
        LOADER_QUOTE,
        "literal_missing",
        False,
        NOTES_FACTS,
    ),
    Twin(
        "we-no-byline",  # the same words, no publisher on record: nothing names the "we"
        NOTES,
        "The Quillmark maintainers will remove the legacy plugin loader in June 2026.",
        LOADER_QUOTE,
        "name_missing",
        False,
        {"published": date(2026, 5, 14)},
    ),
    # a newspaper quoting the operator: the quotation speaks for its speaker
    Twin(
        "quoted-we",
        REPORT,
        "Brightwater Energy is targeting the first half of 2027 for the first unit.",
        GAZETTE_QUOTE,
        "speaker",
        True,
        REPORT_FACTS,
    ),
    Twin(
        "quoted-we-newspaper",  # the newspaper reports the "we"; it is not its voice
        REPORT,
        "The Harbour Gazette is targeting the first half of 2027 for the first unit.",
        GAZETTE_QUOTE,
        "name_missing",
        False,
        REPORT_FACTS,
    ),
    Twin(
        "quoted-we-reporter",
        REPORT,
        "Tom Alder is targeting the first half of 2027 for the first unit.",
        GAZETTE_QUOTE,
        "name_missing",
        False,
        REPORT_FACTS,
    ),
    Twin(
        "quoted-newspaper-said",  # the newspaper reports what the operator said
        REPORT,
        "The Harbour Gazette said it is targeting the first half of 2027 for the first unit.",
        GAZETTE_QUOTE,
        "name_missing",
        False,
        REPORT_FACTS,
    ),
    Twin(
        "quoted-speaker",
        REPORT,
        "Maria Lindqvist said Brightwater Energy is targeting the first half of 2027 for the "
        "first unit.",
        GAZETTE_QUOTE,
        "speaker",
        True,
        REPORT_FACTS,
    ),
    Twin(
        "quoted-other-speaker",  # named in the paragraph above, but not the one who said it
        REPORT,
        "Sam Okafor said Brightwater Energy is targeting the first half of 2027 for the first "
        "unit.",
        GAZETTE_QUOTE,
        "name_missing",
        False,
        REPORT_FACTS,
    ),
    Twin(
        "quoted-told-newspaper",  # the claim itself says whom it was told to
        REPORT,
        "Brightwater Energy told the Harbour Gazette it is targeting the first half of 2027 for "
        "the first unit.",
        GAZETTE_QUOTE,
        "title",
        True,
        REPORT_FACTS,
    ),
    # an encyclopedic page: the subject only in the lead; a page about another plant
    Twin(
        "lead",
        ENCYCLOPEDIA,
        "Kestrel Bay Generating Station entered commercial service in 2001.",
        SERVICE_QUOTE,
        "lead",
        True,
    ),
    Twin(
        "lead-other-year",
        ENCYCLOPEDIA,
        "Kestrel Bay Generating Station entered commercial service in 2002.",
        SERVICE_QUOTE,
        "literal_missing",
        False,
    ),
    Twin(
        "lead-sister-station",  # named in the lead, but not as its subject
        ENCYCLOPEDIA,
        "Marrow Point Generating Station entered commercial service in 2001.",
        SERVICE_QUOTE,
        "name_missing",
        False,
    ),
    Twin(
        "text-title",
        OTHER_PLANT,
        "The Marrow Point plant opened in 1974 and closed in 2019.",
        OPENED_QUOTE,
        "title",
        True,
    ),
    Twin(
        "other-plant",  # the page is about Marrow Point; Kestrel Bay is only mentioned
        OTHER_PLANT,
        "The Kestrel Bay plant opened in 1974 and closed in 2019.",
        OPENED_QUOTE,
        "name_missing",
        False,
    ),
    # a capitalized word opening the claim is a name when the writing says so
    Twin(
        "opener-name",  # "Rust" is written capitalized inside sentences of its page
        RUST_POST,
        "Rust now performs its own search for the MSVC linker on Windows.",
        LINKER_QUOTE,
        "heading",
        True,
        RUST_FACTS,
    ),
    Twin(
        "opener-other-product",  # the played run's false claim: the sentence is about Rust
        RUST_POST,
        "PowerShell now performs its own search for the MSVC linker.",
        LINKER_QUOTE,
        "name_missing",
        False,
        RUST_FACTS,
    ),
    Twin(
        "opener-other-product-before",  # the played run's page: PowerShell named just before
        RUST_SEARCH_POST,
        "PowerShell now performs its own search without the current directory.",
        SEARCH_QUOTE,
        "name_missing",
        False,
        RUST_FACTS,
    ),
    Twin(
        "opener-own-product-before",
        RUST_SEARCH_POST,
        "On Windows, Rust now performs its own search without the current directory.",
        SEARCH_QUOTE,
        "heading",
        True,
        RUST_FACTS,
    ),
    Twin(
        "opener-possessive",
        RUST_POST,
        "Rust's compiler now performs its own search for the MSVC linker on Windows.",
        LINKER_QUOTE,
        "heading",
        True,
        RUST_FACTS,
    ),
    Twin(
        "opener-named-elsewhere",  # the page names Python, below, not as the one that searches
        RUST_POST,
        "Python now performs its own search for the MSVC linker.",
        LINKER_QUOTE,
        "name_missing",
        False,
        RUST_FACTS,
    ),
    Twin(
        "opener-common-word",  # "Builds" opens the claim; the page writes "builds"
        RUST_POST,
        "Builds of Rust programs on Windows no longer need a developer command prompt, since "
        "Rust now performs its own search for the MSVC linker.",
        "Rust now performs its own search for the MSVC linker, so builds no longer need a "
        "developer command prompt.",
        "heading",
        True,
        RUST_FACTS,
    ),
    Twin(
        "opener-possessive-title",
        NOTES,
        "Quillmark's new release cuts a full rebuild of a 10,000-page site from 95 seconds to 38 "
        "seconds.",
        REBUILD_QUOTE,
        "title",
        True,
        {**NOTES_FACTS, "title": "Quillmark 4.2 release notes"},
    ),
    Twin(
        "opener-possessive-other-project",
        NOTES,
        "Inkwell's new release cuts a full rebuild of a 10,000-page site from 95 seconds to 38 "
        "seconds.",
        REBUILD_QUOTE,
        "name_missing",
        False,
        {**NOTES_FACTS, "title": "Quillmark 4.2 release notes"},
    ),
    # a title or lead naming two entities: "it" is its subject, "we" its publisher
    Twin(
        "two-entities-it",
        MIGRATION,
        "Quillmark renders a 10,000-page site in 38 seconds, down from 95 seconds.",
        RENDER_QUOTE,
        "title",
        True,
        MIGRATION_FACTS,
    ),
    Twin(
        "two-entities-it-other",  # the parser is named in the title and the lead, not as "it"
        MIGRATION,
        "Inkwell renders a 10,000-page site in 38 seconds, down from 95 seconds.",
        RENDER_QUOTE,
        "name_missing",
        False,
        MIGRATION_FACTS,
    ),
    Twin(
        "two-entities-we",
        MIGRATION,
        "Quillmark will remove the legacy plugin loader in June 2026.",
        REMOVE_QUOTE,
        "title",
        True,
        MIGRATION_FACTS,
    ),
    Twin(
        "two-entities-we-other",
        MIGRATION,
        "The Inkdrop project will remove the legacy plugin loader in June 2026.",
        REMOVE_QUOTE,
        "name_missing",
        False,
        MIGRATION_FACTS,
    ),
    Twin(
        "two-entities-we-plant",  # the release's "we" is the company, not its plant
        RELEASE,
        "The Kestrel Bay plant is targeting the first half of 2027 for the return of its first "
        "unit.",
        TARGET_QUOTE,
        "name_missing",
        False,
        RELEASE_FACTS,
    ),
    Twin(
        "two-entities-the-plant-company",  # "the plant" is the plant, not its operator
        RELEASE,
        "Brightwater Energy supplied about 14% of the province's electricity before the flood.",
        SHARE_QUOTE,
        "name_missing",
        False,
        RELEASE_FACTS,
    ),
    Twin(
        "two-entities-the-station-operator",
        ENCYCLOPEDIA,
        "Brightwater Energy entered commercial service in 2001.",
        SERVICE_QUOTE,
        "name_missing",
        False,
    ),
    # weekdays, read from the publication date
    Twin(
        "on-monday",  # a report of Tuesday 10 March: "said on Monday" is 9 March
        REPORT,
        "On 9 March 2026 Brightwater Energy's chief executive said the Kestrel Bay generating "
        "station would run again in 2027.",
        MONDAY_QUOTE,
        "publication date",
        True,
        REPORT_FACTS,
    ),
    Twin(
        "on-monday-a-week-later",
        REPORT,
        "On 16 March 2026 Brightwater Energy's chief executive said the Kestrel Bay generating "
        "station would run again in 2027.",
        MONDAY_QUOTE,
        "literal_missing",
        False,
        REPORT_FACTS,
    ),
    Twin(
        "on-monday-undated",
        REPORT,
        "On 9 March 2026 Brightwater Energy's chief executive said the Kestrel Bay generating "
        "station would run again in 2027.",
        MONDAY_QUOTE,
        "literal_missing",
        False,
        {"title": REPORT_FACTS["title"]},
    ),
    Twin(
        "last-friday",  # published Thursday 12 March: last Friday is 6 March
        FERRY,
        "The council approved the new ferry route to Kestrel Bay on 6 March 2026.",
        APPROVED_QUOTE,
        "publication date",
        True,
        FERRY_FACTS,
    ),
    Twin(
        "last-friday-other-day",
        FERRY,
        "The council approved the new ferry route to Kestrel Bay on 13 March 2026.",
        APPROVED_QUOTE,
        "literal_missing",
        False,
        FERRY_FACTS,
    ),
    Twin(
        "next-monday",  # Monday has passed this week: next Monday is 16 March
        FERRY,
        "Ferry services to Kestrel Bay will begin on 16 March 2026.",
        SERVICES_QUOTE,
        "publication date",
        True,
        FERRY_FACTS,
    ),
    Twin(
        "next-monday-other-day",
        FERRY,
        "Ferry services to Kestrel Bay will begin on 23 March 2026.",
        SERVICES_QUOTE,
        "literal_missing",
        False,
        FERRY_FACTS,
    ),
]


@pytest.mark.parametrize("twin", TWINS, ids=[twin.id for twin in TWINS])
def test_natural_wording_twins(twin: Twin) -> None:
    assert twin.quote in twin.document
    result = check_pair(twin.claim, twin.quote, twin.document, **twin.facts)
    passages = [item.passage for item in result.literals.context]
    if twin.supported:
        assert result.verdict == "supported", (result.reasons, result.literals)
        assert twin.expect in passages, passages
    else:
        assert result.verdict != "supported", result.literals
        assert twin.expect in result.reasons, (result.reasons, result.literals)


def test_the_table_is_balanced() -> None:
    true = [twin for twin in TWINS if twin.supported]
    false = [twin for twin in TWINS if not twin.supported]
    assert len(true) >= 10 and len(false) >= 10


def test_the_batch_reads_published_and_publisher_and_records_the_relative_date(
    tmp_path: Path,
) -> None:
    rows = [
        {"id": "dated", "published": "2026-03-03"},
        {"id": "undated"},
        {"id": "not-a-date", "published": "3 March"},
    ]
    claim = (
        "On 3 March 2026 Brightwater Energy confirmed that its Kestrel Bay generating station "
        "will return to service in the first half of 2027."
    )
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps({**row, "claim": claim, "quote": TODAY_QUOTE, "source_text": RELEASE}) + "\n"
            for row in rows
        ),
        encoding="utf-8",
    )
    out = tmp_path / "results.jsonl"
    run_gate_file(pairs, out, stdin=io.BytesIO())
    results = {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}
    assert results["dated"]["verdict"] == "supported"
    assert results["dated"]["literals"]["context"] == [
        {
            "literal": "3 March 2026",
            "established_by": "context",
            "passage": "publication date",
            "relative": "today",
        }
    ]
    assert results["undated"]["reasons"] == ["literal_missing"]
    assert results["not-a-date"]["verdict"] == "unresolvable"
    assert results["not-a-date"]["reasons"][0].startswith("invalid_field: published")
