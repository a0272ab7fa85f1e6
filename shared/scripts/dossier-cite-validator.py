#!/usr/bin/env python3
"""The trace gate (claims or dossier mode): `deep-research trace` under its stable name."""

from _shim import run

run("trace")
