"""A json task's own field: its optional JSON Schema, checked when the suite (or a saved record) is read."""

from __future__ import annotations

import json
from typing import Any

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring.json_schemas.checks import schema_problem
from ocllm.scoring.task_type import Message, PromptSettings, chat


class JsonTask(Task, tag="json", kw_only=True):
    """A json task: the JSON Schema its answer's value must be valid against; None: any JSON value."""

    schema: dict[str, Any] | None = None

# The task's question states what JSON to write; a lane may show the schema too with {schema}.
DEFAULT_TEMPLATE = "{question}"
PLACEHOLDERS = ("question", "schema")
REQUIRED_PLACEHOLDERS = ("question",)  # what a lane's template must use


def check_suite_line(where: str, row: dict[str, Any]) -> None:
    if row.get("schema") is None:
        row.pop("schema", None)
        return
    problem = schema_problem(row["schema"])
    if problem is not None:
        raise InputError(f"{where}: field 'schema': {problem}")


def saved_task_fields(where: str, row: dict[str, Any]) -> dict[str, Any]:
    schema = row.get("schema")
    if schema is None:
        return {}
    problem = schema_problem(schema)
    if problem is not None:
        raise InputError(f"{where} has a schema that cannot be used: {problem}")
    return {"schema": schema}


def record_fields(task: JsonTask) -> dict[str, Any]:
    return {"schema": task.schema}


def user_text(task: JsonTask, template: str) -> str:
    """The user message: the task through the lane's template."""
    shown = "" if task.schema is None else json.dumps(task.schema, ensure_ascii=False)
    return template.format(question=task.question, schema=shown)


def prompt(task: JsonTask, settings: PromptSettings) -> list[Message]:
    return chat(settings, user_text(task, settings.template))


def gold(task: Task) -> None:
    """No expected answer to show: the schema (and any expected value) is the gold."""
    return None
