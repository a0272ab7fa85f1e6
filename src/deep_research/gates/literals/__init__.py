"""Literal fidelity: every figure, date and name in a claim must be backed by its quotes.

Step 3 of the gate. :func:`extract` finds the literals of a text; :func:`check` says which literals
of a claim the quotes cited for it do not establish. Each module's docstring states its rules:
:mod:`.numbers` and :mod:`.number_words` read figures, :mod:`.dates` dates and years,
:mod:`.names` names, :mod:`.qualifiers` the comparatives that bound them; :mod:`.intervals`,
:mod:`.derived` and :mod:`.matching` say when quotes establish them, and :mod:`.context` what the
document around the quotes may add.
"""

from deep_research.gates.literals.context import DocumentContext, Passage, SourceFacts
from deep_research.gates.literals.derived import Derivation
from deep_research.gates.literals.extraction import extract
from deep_research.gates.literals.matching import ContextUse, LiteralCheck, check
from deep_research.gates.literals.tokens import LiteralKind, LiteralToken, Qualifier

__all__ = [
    "ContextUse",
    "Derivation",
    "DocumentContext",
    "LiteralCheck",
    "LiteralKind",
    "LiteralToken",
    "Passage",
    "Qualifier",
    "SourceFacts",
    "check",
    "extract",
]
