#!/usr/bin/env python3
"""Schema validation of every artifact of a brief: `deep-research validate` under its stable script name."""

from _shim import run

run("validate")
