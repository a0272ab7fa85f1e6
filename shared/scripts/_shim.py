"""Run one deep-research command under a stable script name (imported by the sibling shims)."""

import sys
from pathlib import Path


def run(*command: str) -> None:
    try:
        from deep_research.cli import main
    except ImportError:  # a checkout without the package installed
        sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
        from deep_research.cli import main
    sys.exit(main([*command, *sys.argv[1:]]))
