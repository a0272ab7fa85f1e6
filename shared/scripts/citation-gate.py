#!/usr/bin/env python3
"""The standalone batch citation gate: `deep-research gate` under its stable name."""

from _shim import run

run("gate")
