"""Model calls of a Claude run vs the bundled workflow's formula (a measurement, not a test).

The scripted 25-claim question of tests/claude_calls.py, run end to end at quick and at full
depth against the fake Messages API and local web servers (no key, no network):

    python benchmarks/claude_calls.py

prints, per depth, the model calls by role, the verified claims, and the ratio to
1 + 5 + 15 + 3 × 25 + 1 = 97 — the calls the bundled workflow makes for the same question.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from claude_calls import BUNDLED, measure


def main() -> int:
    for depth in ("quick", "full"):
        with tempfile.TemporaryDirectory() as tmp:
            found = measure(Path(tmp), depth, os.environ.__setitem__)
        roles = ", ".join(f"{role} {n}" for role, n in sorted(found["by_role"].items()))
        print(
            f"{depth:5}: {found['calls']} model calls ({found['calls'] / BUNDLED:.0%} of "
            f"{BUNDLED}) — {roles}; {found['verified']} claims verified, {found['stripped']} "
            f"refuted; verdict {found['verdict']}; ${found['usd']:.4f} at the fake's token counts"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
