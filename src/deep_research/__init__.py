"""deep-research: verified research briefs whose every claim traces to fetched text."""

from __future__ import annotations

__version__ = "0.1.0"
