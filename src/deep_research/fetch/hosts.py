"""The run host allow-list: hosts this run may fetch from.

It holds the hosts seen in the run's search results plus a static list, in
``<brief>/allowed-hosts.json`` (``{"static": [...], "search": [...]}``). When that file exists,
the fetcher refuses any other host, and the Claude Code hooks and the headless runner can ask
the same question (``deep-research hosts check``). Matching is exact host or subdomain, label by
label, never a substring: ``ec.europa.eu.attacker.example`` is not ``ec.europa.eu``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from deep_research.brief import Brief, atomic_write_json, parse_json, read_text
from deep_research.errors import InputError, MissingArtifact, SchemaViolation
from deep_research.urls import host_matches, host_of


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
        return any(host_matches(host, allowed) for allowed in (*self.static, *self.search))

    def as_dict(self) -> dict[str, list[str]]:
        return {"static": sorted(self.static), "search": sorted(self.search)}


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
    """Add the hosts of ``urls_or_hosts`` (search results, or the static list) and save."""
    current = load(brief) or HostAllowList()
    new = {host for item in urls_or_hosts if (host := host_of(item)) is not None}
    if static:
        updated = HostAllowList(tuple(set(current.static) | new), current.search)
    else:
        updated = HostAllowList(current.static, tuple(set(current.search) | new))
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
            if host_of(item) is None:
                raise InputError(f"{item!r} names no host; give a host name or an http(s) URL")
        add_hosts(brief, urls, static=static)
        return {url: True for url in urls}
    allowlist = load(brief)
    return {url: allowlist is None or allowlist.allows(url) for url in urls}
