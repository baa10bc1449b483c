"""The one rule of "no answer": a response the scorer found no answer in, for a Decision and for a task's record in a
document alike. A rule of decisions, so on the scoring side, where both the analysis that counts it and the report
that marks it take it from."""

from __future__ import annotations

from ocllm.scoring import task_types


def gave_no_answer(
    *, error: object, correct: bool | None, task_type: object, extracted: object, source: object
) -> bool:
    """A response the scorer found no answer in: not a failed request, nothing extracted where the type extracts
    an answer (an MCQ answer with no statement, or statements that name no single option), or no visible text
    at all where the whole text is the answer (a required-substrings task). The one rule, for a Decision and
    for a task's record in a document alike."""
    if error is not None or correct is not False:
        return False  # a failed request, a right answer, or no verdict at all (a code task no sandbox could run)
    known = task_types.TASK_TYPES.get(task_type) if isinstance(task_type, str) else None
    if known is not None and not known.extracts_answer:
        return source == "none"
    return extracted is None
