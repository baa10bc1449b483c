"""An instructions task's own fields: its list of IFEval instructions, each an id and its keyword arguments."""

from __future__ import annotations

from typing import Any

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring.instructions.checks import CHECKS, checked_kwargs
from ocllm.scoring.task_type import Message, PromptSettings, chat


class InstructionsTask(Task, tag="instructions", kw_only=True):
    """An instructions task: its IFEval instructions, each {"id": ..., "kwargs": {...}}."""

    instructions: list[dict[str, Any]] | None = None

DEFAULT_TEMPLATE = "{question}"  # IFEval's prompts state their instructions themselves
PLACEHOLDERS = ("question",)
REQUIRED_PLACEHOLDERS = ("question",)  # what a lane's template must use
# The most instructions one task may hold (docs/lanes.md, "Bounds on suites"). IFEval's prompts hold 1 to 3; each
# instruction is checked on the whole answer, so a task of 10^6 of them (1 GB of suite) never finished deciding.
MAX_INSTRUCTIONS = 20


def instructions_problem(value: object) -> str | None:
    """What is wrong with a task's `instructions` (I5: an unknown id is refused, never passed), or None."""
    if not isinstance(value, list) or not value:
        return "an instructions task needs a non-empty list of {\"id\": ..., \"kwargs\": {...}}"
    if len(value) > MAX_INSTRUCTIONS:
        return (
            f"{len(value):,} instructions, more than the {MAX_INSTRUCTIONS} a task may hold (IFEval's prompts hold "
            "at most 3; docs/lanes.md, 'Bounds on suites')"
        )
    for number, item in enumerate(value, start=1):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            return f"instruction {number} is not an object with an \"id\""
        check = CHECKS.get(item["id"])
        if check is None:
            return f"instruction {number}: unknown instruction id {item['id']!r} (IFEval's 25 ids are known)"
        kwargs = item.get("kwargs", {})
        if kwargs is None:
            kwargs = {}
        if not isinstance(kwargs, dict):
            return f"instruction {number} ({item['id']}): kwargs is not an object"
        try:
            checked_kwargs(check, kwargs)
        except ValueError as exc:
            return f"instruction {number}: {exc}"
        unknown = sorted(set(item) - {"id", "kwargs"})
        if unknown:
            return f"instruction {number} ({item['id']}): unknown field {unknown[0]!r}"
    return None


def _normal(value: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each instruction as {id, kwargs}, its arguments as checked (nulls and empty unused ones dropped, 3.0 read as
    3): one canonical form for suites and records."""
    return [
        {"id": item["id"], "kwargs": checked_kwargs(CHECKS[item["id"]], item.get("kwargs") or {})} for item in value
    ]


def check_suite_line(where: str, row: dict[str, Any]) -> None:
    problem = instructions_problem(row.get("instructions"))
    if problem is not None:
        raise InputError(f"{where}: field 'instructions': {problem}")
    row["instructions"] = _normal(row["instructions"])


def saved_task_fields(where: str, row: dict[str, Any]) -> dict[str, Any]:
    problem = instructions_problem(row.get("instructions"))
    if problem is not None:
        raise InputError(f"{where} has instructions that cannot be checked: {problem}")
    return {"instructions": _normal(row["instructions"])}


def record_fields(task: InstructionsTask) -> dict[str, Any]:
    return {"instructions": task.instructions}


def user_text(task: InstructionsTask, template: str) -> str:
    """The user message: the task through the lane's template."""
    return template.format(question=task.question)


def prompt(task: InstructionsTask, settings: PromptSettings) -> list[Message]:
    return chat(settings, user_text(task, settings.template))


def gold(task: Task) -> None:
    """No expected answer to show: the instructions are the gold."""
    return None
