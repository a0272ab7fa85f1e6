"""Does a citation hold: text normalization, quote location, literal fidelity, overlap, support,
the trace gate, the batch gate and its evaluation on labelled rows.

Imported lazily: the hook guard loads single modules of this wing and nothing else.
"""
