"""robots.txt, read with Protego (RFC 9309: longest match wins, ``Allow`` beats ``Disallow`` on a
tie), fetched once per origin per run and kept in the brief so parallel fetchers share it.

What an unreadable robots.txt means follows RFC 9309 §2.3.1: a 4xx (other than 429) is
"unavailable" and allows everything; a 429, a 5xx, a refusal or a network failure is
"unreachable" and disallows everything for the run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from protego import Protego

from deep_research.brief.layout import Brief
from deep_research.brief.writers import atomic_write_json

#: The product token robots.txt groups are matched against (the user agent's first word).
ROBOTS_TOKEN = "deep-research"
#: RFC 9309 asks parsers to read at least 500 KiB; larger files are treated as unreachable.
MAX_ROBOTS_BYTES = 512 * 1024

State = Literal["rules", "allow_all", "disallow_all"]


@dataclass(frozen=True)
class RobotsFile:
    origin: str
    state: State
    body: str = ""

    def allows(self, url: str) -> bool:
        if self.state != "rules":
            return self.state == "allow_all"
        return bool(Protego.parse(self.body).can_fetch(url, ROBOTS_TOKEN))


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), (parts.netloc or "").lower(), "", "", ""))


def robots_url(origin: str) -> str:
    return origin + "/robots.txt"


#: origin → RobotsFile, fetching robots.txt when needed (the fetcher supplies it).
Loader = Callable[[str], RobotsFile]


class RobotsCache:
    """robots.txt per origin for one run: in memory, backed by ``<brief>/.robots/``."""

    def __init__(self, brief: Brief, loader: Loader) -> None:
        self._dir = brief.root / ".robots"
        self._loader = loader
        self._memory: dict[str, RobotsFile] = {}

    def get(self, url: str) -> RobotsFile:
        origin = origin_of(url)
        found = self._memory.get(origin) or self._read(origin)
        if found is None:
            found = self._loader(origin)
            atomic_write_json(
                self._path(origin), {"origin": origin, "state": found.state, "body": found.body}
            )
        self._memory[origin] = found
        return found

    def allows(self, url: str) -> bool:
        return self.get(url).allows(url)

    def _path(self, origin: str) -> Path:
        return self._dir / (hashlib.sha256(origin.encode("utf-8")).hexdigest()[:32] + ".json")

    def _read(self, origin: str) -> RobotsFile | None:
        path = self._path(origin)
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # absent or damaged: fetch it again
        if not isinstance(value, dict) or value.get("origin") != origin:
            return None
        state = value.get("state")
        if state not in ("rules", "allow_all", "disallow_all"):
            return None
        return RobotsFile(origin, state, str(value.get("body", "")))
