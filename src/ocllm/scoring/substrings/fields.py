"""A required-substrings task's own fields: the substrings, and whether case counts."""

from __future__ import annotations

from typing import Any

from ocllm.errors import InputError
from ocllm.models import Task

DEFAULT_TEMPLATE = "{question}"
PLACEHOLDERS = ("question",)


def check_suite_line(where: str, row: dict[str, Any]) -> None:
    required = row.get("required_substrings")
    if not isinstance(required, list) or not required or not all(isinstance(s, str) and s for s in required):
        raise InputError(f"{where}: field 'required_substrings': a required_substrings task needs a list of strings")


def saved_task_fields(where: str, row: dict[str, Any]) -> dict[str, Any]:
    required = row.get("required_substrings")
    if not isinstance(required, list) or not all(isinstance(s, str) for s in required):
        raise InputError(f"{where} is a required_substrings task without a list of required_substrings")
    return {"required_substrings": required}


def record_fields(task: Task) -> dict[str, Any]:
    # The same keys an MCQ record has, as every record had them before task types were rooms.
    return {
        "options": task.options,
        "required_substrings": task.required_substrings,
        "case_sensitive": task.case_sensitive,
    }


def prompt(task: Task, template: str) -> str:
    return template.format(question=task.question)
