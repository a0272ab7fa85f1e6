"""Model calls and dollars of a Claude run vs the bundled workflow's formula (a measurement,
not a test).

The scripted 25-claim question of tests/claude_calls.py, run end to end at quick and at full
depth against the fake Messages API in its strict mode (each model thinks as the API's does, a
realistic 6,000-token think on every judging call; each model's own cacheable minimum) and
local web servers — no key, no network — on the current-generation defaults:

    python benchmarks/claude_calls.py

prints, per depth, the model calls by role, the verified claims, the ratio to
1 + 5 + 15 + 3 × 25 + 1 = 97 — the calls the bundled workflow makes for the same question —
and the dollars by model, beside the figures measured before the model table (commit e0be4eb:
claude-opus-5 / claude-sonnet-5 / claude-haiku-4-5, the lenient fake: no thinking, a 1,024-token
cacheable minimum everywhere).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from claude_calls import BUNDLED, measure

#: Measured at commit e0be4eb with this script: (model calls, dollars) per depth.
PREVIOUS = {"quick": (29, 0.2004), "full": (36, 0.2628)}


def main() -> int:
    for depth in ("quick", "full"):
        with tempfile.TemporaryDirectory() as tmp:
            found = measure(Path(tmp), depth, os.environ.__setitem__)
        roles = ", ".join(f"{role} {n}" for role, n in sorted(found["by_role"].items()))
        models = ", ".join(f"{m} ${v:.4f}" for m, v in sorted(found["usd_by_model"].items()))
        calls, usd = PREVIOUS[depth]
        print(
            f"{depth:5}: {found['calls']} model calls ({found['calls'] / BUNDLED:.0%} of "
            f"{BUNDLED}) — {roles}; {found['verified']} claims verified, {found['stripped']} "
            f"refuted; verdict {found['verdict']}; ${found['usd']:.4f} at the fake's token "
            f"counts ({models}); before: {calls} calls, ${usd:.4f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
