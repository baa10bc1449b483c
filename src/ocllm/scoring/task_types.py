"""Every task type this scorer knows, by name: the one place a type is registered.

The types that ship are listed here; a type defined elsewhere (a test's toy room, a user's own) joins with
`register` before a suite naming it is read. Everything else asks this registry (`of`), never a type's name.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

import msgspec

from ocllm.errors import OcllmError
from ocllm.models import Decision, Task
from ocllm.scoring import code, instructions, json_answer, math, mcq, substrings, tool_call, tool_use
from ocllm.scoring.scored import Record, Scored, scored_as
from ocllm.scoring.task_type import TaskType, TextCalls, TypeTally

__all__ = [
    "TASK_TYPES", "TEMPLATE_SETTINGS", "TaskType", "TypeTallies", "drawn_as", "extracts_answer", "import_rooms", "of",
    "recorded_templates", "register", "scored", "task_from", "unregister",
]  # fmt: skip

TASK_TYPES: dict[str, TaskType] = {}


def register(task_type: TaskType) -> TaskType:
    """Add a type to the registry (its name free, its task struct tagged with its name, its decision struct a
    Decision); returns it, so that a room may be registered where it is defined."""
    tag = task_type.task_struct.__struct_config__.tag
    if tag != task_type.name:
        raise ValueError(f"task type {task_type.name!r}: its task struct is tagged {tag!r}, not with its name")
    if not issubclass(task_type.decision_type, Decision):
        raise ValueError(f"task type {task_type.name!r}: its decision struct is not a Decision")
    if task_type.name in TASK_TYPES and TASK_TYPES[task_type.name] is not task_type:
        raise ValueError(f"task type {task_type.name!r} is registered already")
    TASK_TYPES[task_type.name] = task_type
    return task_type


def import_rooms(modules: str) -> None:
    """Import the modules `modules` names (comma-separated): a room defined outside ocllm registers itself when its
    module is imported (`register` at its top level), and a decision worker that unpickles one of its tasks imports
    it too. The CLI hands in OCLLM_TASK_TYPES (docs/architecture.md, "How to add a task type")."""
    for name in filter(None, (part.strip() for part in modules.split(","))):
        try:
            importlib.import_module(name)
        except Exception as exc:  # any failure of a user's module is theirs to read, in one line
            said = f"{type(exc).__name__}: {exc}"
            raise OcllmError(f"OCLLM_TASK_TYPES names {name!r}, which does not import: {said}") from None


def unregister(name: str) -> None:
    """Take a type registered with `register` out again (a test's room, at the end of the test)."""
    TASK_TYPES.pop(name, None)


for _shipped in (mcq, substrings, math, instructions, json_answer, tool_call, code, tool_use):
    register(_shipped.TASK_TYPE)
# The keys lanes files and a lane's record (a manifest's `lane`) kept each type's template under before templates
# were one table ("prompt_template", "math_template", ...): still read; only the shipped types have one. A record
# written since issue 41 keeps every type's template under `templates` alone.
TEMPLATE_SETTINGS = tuple(t.template_key_before for t in TASK_TYPES.values() if t.template_key_before is not None)


def recorded_templates(record: Mapping[str, Any]) -> dict[str, str]:
    """Each registered type's template in force, from a lane's record of any age: its `templates` table, else the
    type's key of before, else the room's default (a record that predates the type ran with that)."""
    table = record.get("templates")
    table = table if isinstance(table, Mapping) else {}
    found: dict[str, str] = {}
    for name, task_type in TASK_TYPES.items():
        before = record.get(task_type.template_key_before) if task_type.template_key_before else None
        for template in (table.get(name), before, task_type.default_template):
            if isinstance(template, str):
                found[name] = template
                break
    return found


def of(name: str) -> TaskType:
    """The type of that name; KeyError for one that is not registered (suites and readers refuse it first)."""
    return TASK_TYPES[name]


def task_from(fields: Mapping[str, Any]) -> Task:
    """A task from its fields as a suite line writes them (`type` among them), in its room's struct; KeyError for
    a type that is not registered, msgspec.ValidationError for a field of the wrong kind."""
    return msgspec.convert(fields, of(fields["type"]).task_struct)


def drawn_as(name: object) -> TaskType:
    """The type a record read back from a document is drawn as in reports: the type it names, else multiple
    choice, which the old harness's records were (one of a type this scorer lacks is drawn as those are)."""
    return TASK_TYPES[name] if isinstance(name, str) and name in TASK_TYPES else mcq.TASK_TYPE


def scored(record: Record, name: str | None = None) -> Scored:
    """A record read back from a document, decoded once into the structs of the room that draws it (`name`'s, else
    the type the record names, as `drawn_as` says): what that room's report hooks take (scoring/scored.py)."""
    room = drawn_as(record.get("task_type") if name is None else name)
    return scored_as(record, room.task_struct, room.decision_type)


def extracts_answer(name: str) -> bool:
    """Whether a type's answer is extracted from the text (a letter, a number) rather than the text itself."""
    known = TASK_TYPES.get(name)
    return known is None or known.extracts_answer


class TypeTallies:
    """Each task type's own tally (its room's `new_tally`), made at the type's first decision: a failed request's
    too, so that a type whose every request failed still shows its figures (all nought), as it always has. A tally
    is handed its room's decisions alone: a failed request's is the base Decision, which the common figures count
    (analysis/metrics.py: an error, neither right nor wrong) and which holds none of the room's evidence."""

    def __init__(self) -> None:
        self._by_type: dict[str, TypeTally[Decision]] = {}

    def add(self, decision: Decision) -> None:
        known = TASK_TYPES.get(decision.task_type)
        tally = self._by_type.get(decision.task_type)
        if known is None or known.new_tally is None:
            return
        if tally is None:
            tally = self._by_type[decision.task_type] = known.new_tally()
        if isinstance(decision, known.decision_type):
            tally.add(decision)

    def figures(self) -> dict[str, dict[str, Any]]:
        return {name: tally.figures() for name, tally in self._by_type.items()}

    def notices(self) -> list[str]:
        return [notice for tally in self._by_type.values() for notice in tally.notices()]

    def text_calls(self) -> list[TextCalls]:
        """Calls written as text, of each type whose tally counts them (the advice about the server's parser)."""
        found = (getattr(tally, "text_calls", lambda: None)() for tally in self._by_type.values())
        return [calls for calls in found if calls is not None]

    def cut_without_call(self) -> tuple[int, int]:
        """Answers cut off at max_tokens with no structured call, and answers, of the types whose tally counts them
        (tool_call's): what says whether tool_choice "required" took."""
        tallies = [t for t in self._by_type.values() if hasattr(t, "cut_without_call")]
        return sum(t.cut_without_call for t in tallies), sum(getattr(t, "answers", 0) for t in tallies)
