"""A tool_call task's own fields: its OpenAI tools and the calls it expects, checked when the suite (or a saved
record) is read: each tool a function with a JSON-Schema object of parameters, each expected call naming a tool and
only parameters of its schema, each with a non-empty list of acceptable values. The tools are checked by the check
every holder of tools shares (`scoring/tool_schemas.py`): a tool's parameters as the json room checks a schema (its
draft's meta-schema, references inside it only, no cycle that never goes into the value), and all the tools of a task
together hold at most MAX_SCHEMA_VALUES JSON values (docs/lanes.md, "Bounds on suites")."""

from __future__ import annotations

import json
from typing import Any

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring.task_type import Message, PromptSettings, chat
from ocllm.scoring.tool_schemas import tools_problem as shared_tools_problem


class ToolCallTask(Task, tag="tool_call", kw_only=True):
    """A tool_call task: its OpenAI tools ({"type": "function", "function": {"name", "description", "parameters"}}),
    sent with its request, and the calls it expects ({"name", "arguments": {param: [acceptable values]}}; [] for
    none: the model should call nothing)."""

    tools: list[dict[str, Any]] | None = None
    expected_calls: list[dict[str, Any]] | None = None

DEFAULT_TEMPLATE = "{question}"  # the tools travel in the request's `tools`; a lane may show them too with {tools}
PLACEHOLDERS = ("question", "tools")
REQUIRED_PLACEHOLDERS = ("question",)  # what a lane's template must use


def tools_problem(tools: object) -> str | None:
    """Why a task's tools cannot be used, if they cannot: each tool is checked as every holder of tools is
    (`scoring/tool_schemas.py`, shared with the tools a lane adds from an agent's file)."""
    if not isinstance(tools, list) or not tools:
        return 'a tool_call task needs a non-empty list of {"type": "function", "function": {...}} tools'
    return shared_tools_problem(tools, "the task's tools hold")


def expected_problem(expected: object, tools: list[dict[str, Any]]) -> str | None:
    if not isinstance(expected, list):
        return 'expected_calls must be a list of {"name": ..., "arguments": {param: [acceptable values]}} ([]: none)'
    by_name = {t["function"]["name"]: t["function"].get("parameters") or {} for t in tools}
    for number, call in enumerate(expected, start=1):
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            return f'expected call {number} is not an object with a "name"'
        unknown = sorted(set(call) - {"name", "arguments"})
        if unknown:
            return f"expected call {number}: unknown field {unknown[0]!r}"
        if call["name"] not in by_name:
            return f"expected call {number} names {call['name']!r}, which is none of the task's tools"
        arguments = call.get("arguments", {})
        if not isinstance(arguments, dict):
            return f"expected call {number} ({call['name']}): arguments is not an object"
        properties = by_name[call["name"]].get("properties") or {}
        for param, values in arguments.items():
            if param not in properties:
                return f"expected call {number} ({call['name']}): {param!r} is not a parameter of its schema"
            if not isinstance(values, list) or not values:
                return (f"expected call {number} ({call['name']}): {param!r} must be a non-empty list of acceptable "
                        "values")  # fmt: skip
    return None


def _checked(where: str, row: dict[str, Any], said: str) -> dict[str, Any]:
    problem = tools_problem(row.get("tools"))
    if problem is None:
        problem = expected_problem(row.get("expected_calls"), row["tools"])
        if problem is None:
            expected = [{"name": c["name"], "arguments": c.get("arguments") or {}} for c in row["expected_calls"]]
            return {"tools": row["tools"], "expected_calls": expected}
        raise InputError(f"{where}{said}'expected_calls': {problem}")
    raise InputError(f"{where}{said}'tools': {problem}")


def check_suite_line(where: str, row: dict[str, Any]) -> None:
    if "expected_calls" not in row:
        raise InputError(f"{where}: missing field 'expected_calls' (a tool_call task's expected calls; [] for none)")
    row.update(_checked(where, row, ": field "))


def saved_task_fields(where: str, row: dict[str, Any]) -> dict[str, Any]:
    return _checked(where, row, " has a field that cannot be used: ")


def record_fields(task: ToolCallTask) -> dict[str, Any]:
    return {"tools": task.tools, "expected_calls": task.expected_calls}


def user_text(task: ToolCallTask, template: str) -> str:
    """The user message: the task through the lane's template."""
    return template.format(question=task.question, tools=json.dumps(task.tools or [], ensure_ascii=False))


def prompt(task: ToolCallTask, settings: PromptSettings) -> list[Message]:
    return chat(settings, user_text(task, settings.template))
