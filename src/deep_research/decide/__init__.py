"""What the brief is worth: the skeptic panel's votes, triangulation, CIBER, the work counters,
the verdict, the audit, freshness, the hand-off block and the offline re-check.

Imported lazily: the hook guard loads single modules of this wing and nothing else.
"""
