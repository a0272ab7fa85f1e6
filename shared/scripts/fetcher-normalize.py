#!/usr/bin/env python3
"""Coerce raw fetcher output into sources.jsonl rows: `deep-research normalize`, stable name."""

from _shim import run

run("normalize")
