"""The run host allow-list: hosts this run may fetch from.

It holds the hosts seen in the run's search results plus a static list, in
``<brief>/allowed-hosts.json`` (``{"static": [...], "search": [...]}``). When that file exists,
the fetcher refuses any other host, and the Claude Code hooks and the headless runner can ask
the same question (``deep-research hosts check``). Matching is exact host or subdomain, label by
label, never a substring: ``ec.europa.eu.attacker.example`` is not ``ec.europa.eu``.

A learned host is checked against the public-suffix list first: a public suffix (``com``,
``co.uk``, ``github.io``) names no one — anyone can register a name under it — so a search hit
on ``https://github.io/`` must not open every ``*.github.io``. Such a host is never learned, and
one found on the search list (a file from before this rule, or one edited by hand) admits
nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from deep_research.brief.layout import Brief
from deep_research.brief.readers import parse_json, read_text
from deep_research.brief.writers import atomic_write_json
from deep_research.errors import InputError, MissingArtifact, SchemaViolation
from deep_research.urls import host_matches, host_of, registrable_domain


def allowlist_path(brief: Brief) -> Path:
    return brief.root / "allowed-hosts.json"


@dataclass(frozen=True)
class HostAllowList:
    static: tuple[str, ...] = ()
    search: tuple[str, ...] = ()

    def allows(self, url: str) -> bool:
        host = host_of(url)
        if host is None:
            return False
        learned = (allowed for allowed in self.search if learnable(allowed))
        return any(host_matches(host, allowed) for allowed in (*self.static, *learned))

    def as_dict(self) -> dict[str, list[str]]:
        return {"static": sorted(self.static), "search": sorted(self.search)}


def learnable(url_or_host: str) -> str | None:
    """The host of ``url_or_host`` when it may join the allow-list, else None: it has a host,
    and that host is not a public suffix (``registrable_domain`` is None exactly for a bare
    suffix, from the list's ICANN and private sections alike, and for an unusable host). The
    host is kept as given, not widened to its registrable domain: a hit on ``docs.python.org``
    admits that host and its subdomains, not all of ``python.org``."""
    host = host_of(url_or_host)
    if host is None or registrable_domain(host) is None:
        return None
    return host


def load(brief: Brief) -> HostAllowList | None:
    """The brief's allow-list, or None when the run keeps none (every public host allowed)."""
    path = allowlist_path(brief)
    if not path.exists():
        return None
    value = parse_json(read_text(path, what="allowed-hosts.json"), what=str(path))
    if not isinstance(value, dict):
        raise SchemaViolation('expected {"static": [...], "search": [...]}', source=str(path))
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("static", "search"):
        items = value.get(key, [])
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise SchemaViolation(
                "expected a list of host names", json_path=f"$.{key}", source=str(path)
            )
        lists[key] = tuple(items)
    return HostAllowList(lists["static"], lists["search"])


def add_hosts(brief: Brief, urls_or_hosts: Iterable[str], *, static: bool = False) -> HostAllowList:
    """Add the hosts of ``urls_or_hosts`` (search results, or the static list) and save.

    A search result's host that is a public suffix (:func:`learnable`) is left out: the hits
    are the web's words, and one of them must not open a whole registry. The static list is
    the operator's own choice and is taken as given (``--allow-host gov.uk`` is one).
    """
    current = load(brief) or HostAllowList()
    if static:
        new = {host for item in urls_or_hosts if (host := host_of(item)) is not None}
        updated = HostAllowList(tuple(set(current.static) | new), current.search)
    else:
        # A suffix already on the list (written before this rule) is dropped as it is saved.
        learned = {host for item in (*current.search, *urls_or_hosts) if (host := learnable(item))}
        updated = HostAllowList(current.static, tuple(learned))
    atomic_write_json(allowlist_path(brief), updated.as_dict())
    return updated


def run_hosts(root: Path, action: str, urls: list[str], *, static: bool = False) -> dict[str, bool]:
    """``deep-research hosts``: add hosts (→ all true), or check URLs (→ allowed per URL).

    Without an allow-list file the run restricts nothing beyond the SSRF guard: all allowed.
    """
    brief = Brief(root)
    if action == "add":
        # The allow-list belongs to a run's brief: adding to a folder that is none would make
        # one, and an item naming no host would be dropped while reported as added.
        if not root.is_dir():
            raise MissingArtifact(f"brief directory not found: {root}; start the run first")
        for item in urls:
            host = host_of(item)
            if host is None:
                raise InputError(f"{item!r} names no host; give a host name or an http(s) URL")
            if not static and learnable(host) is None:
                raise InputError(
                    f"{host} is a public suffix: anyone can register a name under it, so the "
                    "search list never holds it; give the host itself, or --static to choose it"
                )
        add_hosts(brief, urls, static=static)
        return {url: True for url in urls}
    allowlist = load(brief)
    return {url: allowlist is None or allowlist.allows(url) for url in urls}
