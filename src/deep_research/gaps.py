"""``coverage_gaps``: the codes that mark an entry's kind, and the sentence a reader is shown.

An entry is recorded as ``<code><detail>`` so code can find its kind — ``not_found:`` makes the
run's summary, ``incomplete:`` is rewritten when a run resumes, ``vendor_monoculture:`` is
replaced when the brief is triangulated again. A person reads each as a plain sentence
(:func:`describe`); an entry with no code (an orchestrator's own words) is shown as written.
"""

from __future__ import annotations

from collections.abc import Mapping

#: A sub-question no passage of the sources answered: ``not_found:<sq>: <why>``.
NOT_FOUND = "not_found:"
#: A cap or a failed worker stopped part of the work: ``incomplete:<where>: <why>``.
INCOMPLETE = "incomplete:"
#: Most of a sub-question's sources share one owner: ``vendor_monoculture:<sq>:<owner>``.
VENDOR_MONOCULTURE = "vendor_monoculture:"


def sub_question_label(sq: str, questions: Mapping[str, str]) -> str:
    """``sq2 ("What does the corpus say about …?")``, or the id alone when it has no text."""
    question = questions.get(sq)
    return f'{sq} ("{question}")' if question and question != sq else sq


def describe(gap: str, questions: Mapping[str, str]) -> str:
    """The sentence a report shows for one ``coverage_gaps`` entry."""
    if gap.startswith(NOT_FOUND):
        sq, _, why = gap.removeprefix(NOT_FOUND).partition(": ")
        detail = f": {why}" if why else ""
        return f"{sub_question_label(sq, questions)} is not answered by the sources{detail}."
    if gap.startswith(VENDOR_MONOCULTURE):
        sq, _, owner = gap.removeprefix(VENDOR_MONOCULTURE).partition(":")
        return (
            f"{sub_question_label(sq, questions)} rests mostly on one publisher, "
            f"{owner or 'unnamed'}: its findings are a single voice until another, independent "
            "publisher states them too."
        )
    if gap.startswith(INCOMPLETE):
        return f"The run stopped short of its plan: {gap.removeprefix(INCOMPLETE)}."
    return gap
