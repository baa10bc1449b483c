"""Every task type this scorer knows, by name: the one place a new type is registered."""

from __future__ import annotations

from typing import Any

from ocllm.models import Decision
from ocllm.scoring import instructions, json_answer, math, mcq, substrings, tool_call
from ocllm.scoring.task_type import TaskType, TextCalls, TypeTally

__all__ = ["NAMES", "TASK_TYPES", "TEMPLATE_SETTINGS", "TaskType", "TypeTallies", "drawn_as", "extracts_answer", "of"]

TASK_TYPES: dict[str, TaskType] = {
    t.name: t
    for t in (mcq.TASK_TYPE, substrings.TASK_TYPE, math.TASK_TYPE, instructions.TASK_TYPE, json_answer.TASK_TYPE,
              tool_call.TASK_TYPE)
}
NAMES = tuple(TASK_TYPES)
# The keys a lane's record (a manifest's `lane`) keeps each type's template under, as lanes files wrote them before
# templates were one table ("prompt_template", "math_template", ...); a type without one is under `templates`.
TEMPLATE_SETTINGS = tuple(t.template_key_before for t in TASK_TYPES.values() if t.template_key_before is not None)


def of(name: str) -> TaskType:
    """The type of that name; KeyError for one that is not registered (suites and readers refuse it first)."""
    return TASK_TYPES[name]


def drawn_as(name: object) -> TaskType:
    """The type a record read back from a document is drawn as in reports: the type it names, else multiple
    choice, which the old harness's records were (one of a type this scorer lacks is drawn as those are)."""
    return TASK_TYPES[name] if isinstance(name, str) and name in TASK_TYPES else mcq.TASK_TYPE


def extracts_answer(name: str) -> bool:
    """Whether a type's answer is extracted from the text (a letter, a number) rather than the text itself."""
    known = TASK_TYPES.get(name)
    return known is None or known.extracts_answer


class TypeTallies:
    """Each task type's own tally (its room's `new_tally`), made at the type's first decision."""

    def __init__(self) -> None:
        self._by_type: dict[str, TypeTally] = {}

    def add(self, decision: Decision) -> None:
        tally = self._by_type.get(decision.task_type)
        if tally is None:
            known = TASK_TYPES.get(decision.task_type)
            if known is None or known.new_tally is None:
                return
            tally = self._by_type[decision.task_type] = known.new_tally()
        tally.add(decision)

    def figures(self) -> dict[str, dict[str, Any]]:
        return {name: tally.figures() for name, tally in self._by_type.items()}

    def notices(self) -> list[str]:
        return [notice for tally in self._by_type.values() for notice in tally.notices()]

    def text_calls(self) -> list[TextCalls]:
        """Calls written as text, of each type whose tally counts them (the advice about the server's parser)."""
        found = (getattr(tally, "text_calls", lambda: None)() for tally in self._by_type.values())
        return [calls for calls in found if calls is not None]
