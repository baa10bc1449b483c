"""A required-substrings task's own fields: the substrings, and whether case counts."""

from __future__ import annotations

from typing import Any

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring.task_type import Message, PromptSettings, chat


class SubstringsTask(Task, tag="required_substrings", kw_only=True):
    """A required-substrings task: the substrings its visible answer must hold, and whether case counts."""

    required_substrings: list[str] | None = None
    case_sensitive: bool = False

DEFAULT_TEMPLATE = "{question}"
PLACEHOLDERS = ("question",)
REQUIRED_PLACEHOLDERS = ()  # what a lane's template must use
# The most substrings one task may require (docs/lanes.md, "Bounds on suites"): each is searched for in the whole
# answer and each missing one is listed in the decision, so a decision costs by their count (100,000 took 1.4 s of
# CPU on a 34,000-character answer; an 8 MB suite line holds 800,000). Tasks written by hand hold a handful.
MAX_SUBSTRINGS = 100


def check_suite_line(where: str, row: dict[str, Any]) -> None:
    required = row.get("required_substrings")
    if not isinstance(required, list) or not required or not all(isinstance(s, str) and s for s in required):
        raise InputError(f"{where}: field 'required_substrings': a required_substrings task needs a list of strings")
    _count(where, required)


def saved_task_fields(where: str, row: dict[str, Any]) -> dict[str, Any]:
    required = row.get("required_substrings")
    if not isinstance(required, list) or not all(isinstance(s, str) for s in required):
        raise InputError(f"{where} is a required_substrings task without a list of required_substrings")
    _count(where, required)  # the same bound for a saved record that is rescored
    return {"required_substrings": required, "case_sensitive": bool(row.get("case_sensitive", False))}


def _count(where: str, required: list[str]) -> None:
    if len(required) > MAX_SUBSTRINGS:
        raise InputError(
            f"{where}: field 'required_substrings': {len(required):,} substrings, more than the {MAX_SUBSTRINGS} a "
            "task may hold (docs/lanes.md, 'Bounds on suites')"
        )


def record_fields(task: SubstringsTask) -> dict[str, Any]:
    # The same keys an MCQ record has, as every record had them before task types were rooms.
    return {"options": None, "required_substrings": task.required_substrings, "case_sensitive": task.case_sensitive}


def user_text(task: SubstringsTask, template: str) -> str:
    """The user message: the task through the lane's template."""
    return template.format(question=task.question)


def prompt(task: SubstringsTask, settings: PromptSettings) -> list[Message]:
    return chat(settings, user_text(task, settings.template))
