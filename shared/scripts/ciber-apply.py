#!/usr/bin/env python3
"""Apply a CIBER diagnosis to a brief: `deep-research ciber apply` under its stable name."""

from _shim import run

run("ciber", "apply")
