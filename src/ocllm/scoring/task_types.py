"""Every task type this scorer knows, by name: the one place a new type is registered."""

from __future__ import annotations

from ocllm.scoring import math, mcq, substrings
from ocllm.scoring.task_type import TaskType

__all__ = ["NAMES", "TASK_TYPES", "TaskType", "extracts_answer", "of"]

TASK_TYPES: dict[str, TaskType] = {t.name: t for t in (mcq.TASK_TYPE, substrings.TASK_TYPE, math.TASK_TYPE)}
NAMES = tuple(TASK_TYPES)


def of(name: str) -> TaskType:
    """The type of that name; KeyError for one that is not registered (suites and readers refuse it first)."""
    return TASK_TYPES[name]


def extracts_answer(name: str) -> bool:
    """Whether a type's answer is extracted from the text (a letter, a number) rather than the text itself."""
    known = TASK_TYPES.get(name)
    return known is None or known.extracts_answer
