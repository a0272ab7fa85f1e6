"""The headless run's reading of what its searches offered (``phases.search_work``): the world
is exhausted only when every document a search listed was read, and an unread one is named."""

from __future__ import annotations

import pytest

from deep_research.models import SourceRow
from deep_research.run.checkpoint import WorkerRecord
from deep_research.run.phases import search_work

READ = ["https://a.example/1", "https://b.example/2"]


def rows(*urls: str) -> list[SourceRow]:
    return [SourceRow(id=f"S{n}", url=url) for n, url in enumerate(urls, start=1)]


@pytest.mark.parametrize(
    ("workers", "exhausted", "unread"),
    [
        # Every listed document was read (by this worker or another): the world's end.
        ([WorkerRecord(id="sq1", queries=["q"], unread=[READ[1]])], True, []),
        # A listed document nobody read: its host is named, nothing is relaxed.
        (
            [WorkerRecord(id="sq1", queries=["q"], unread=["https://c.example/3"])],
            False,
            ["c.example"],
        ),
        # No worker searched: nothing shows what the world offered.
        ([WorkerRecord(id="sq1")], False, []),
    ],
    ids=["all-read", "one-unread", "no-search"],
)
def test_the_searches_are_exhausted_only_when_nothing_they_listed_is_unread(
    workers: list[WorkerRecord], exhausted: bool, unread: list[str]
) -> None:
    record, hosts = search_work(workers, rows(*READ))
    assert (record is not None) == exhausted
    assert hosts == unread
    if record is not None:
        assert (record.round, record.fetchers, record.searches) == (2, 1, 1)
        assert (record.publishers, record.distinct_sources) == (2, 2)
