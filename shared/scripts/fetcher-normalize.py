#!/usr/bin/env python3
"""Coerce raw fetcher output into sources.jsonl rows: ``deep-research normalize`` by another name."""

import sys
from pathlib import Path

try:
    from deep_research.cli import main
except ImportError:  # a checkout where the package is not installed: use its src/ directly
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    from deep_research.cli import main

sys.exit(main(["normalize", *sys.argv[1:]]))
