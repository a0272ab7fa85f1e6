#!/usr/bin/env python3
"""Validate every artifact of a brief: `deep-research validate` under its stable name."""

from _shim import run

run("validate")
