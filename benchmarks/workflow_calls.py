"""Model requests and agents of one full research run through the plugin's workflow (a
measurement, not a test).

The contested world of tests/scripted_run.py at full depth, run by the real Claude Code CLI
through ``/deep-research:deep-research`` with its workflow, every model played by the live
suite's players (tests/plugin/test_plugin_live_run.py) behind the fake Messages API — no key,
no network but loopback (the pages are served on port 80 of a loopback address: run as root):

    python benchmarks/workflow_calls.py [--claude PATH]

prints the workflow's agents by type (the stepper's among them), the model requests by who made
them, and the verdict. Counts do not depend on load. ``--claude`` defaults to ``claude`` on PATH.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path[:0] = [str(TESTS), str(TESTS / "plugin")]

from test_plugin_live_run import Player, run_claude, skill, workflow_agents  # noqa: E402

from localhttp import LocalServer, on_port_80  # noqa: E402
from scripted_run import TOPIC, Web  # noqa: E402


def _web() -> tuple[LocalServer, Web]:
    try:
        drawn = on_port_80()
    except PermissionError:
        drawn = None
    if drawn is None:
        raise SystemExit("no free loopback address for port 80 (run as root)")
    server, address = drawn
    web = Web(server, address, contested=True)
    web.build()
    return server, web


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claude", default=shutil.which("claude"), help="the claude CLI")
    args = parser.parse_args()
    if not args.claude:
        raise SystemExit("no claude CLI: give --claude PATH")
    with tempfile.TemporaryDirectory() as tmp:
        # As the live suite does (tests/conftest.py): no session records or key of the user's.
        os.environ["XDG_STATE_HOME"] = str(Path(tmp) / "xdg-state")
        os.environ["DEEP_RESEARCH_CLAUDE"] = args.claude
        for name in ("CLAUDE_CODE_SESSION_ID", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
            os.environ.pop(name, None)
        server, web = _web()
        with server:
            player = Player(web, lambda p: skill(p, "full"))
            prompt = f"/deep-research:deep-research {TOPIC} --depth full"
            run = run_claude(Path(tmp), web, player, prompt, binary=args.claude)
        agents = workflow_agents(run)
        requests = player.log.requests
        print(f"claude: {args.claude} (exit {run.returncode}); driver {player.driver}")
        print(f"verdict: {str(run.result.get('result'))[:120]}")
        print(f"workflow agents: {sum(agents.values())} — {dict(sorted(agents.items()))}")
        print(f"stepper agents: {agents['stepper']}")
        print(f"model requests: {sum(requests.values())} — {dict(sorted(requests.items()))}")
        print(f"refused answers: {len(player.refusals)}; script errors: {player.log.errors}")
        return 0 if run.returncode == 0 and not player.log.errors else 1


if __name__ == "__main__":
    sys.exit(main())
