"""What a tool_call task's request carries besides its messages: the task's tools, and the lane's `tool_choice`
(the room's own lane setting: how freely the model may call them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ocllm.scoring.task_type import LaneSetting
from ocllm.scoring.tool_call.fields import ToolCallTask

# OpenAI's values: "auto" lets the model choose, "required" makes it call one, "none" forbids calls. vLLM serves
# "auto" only when started with --enable-auto-tool-choice (advice.py says so when it refuses it).
TOOL_CHOICES = ("auto", "required", "none")


def _tool_choice_problem(value: object) -> str | None:
    if value in TOOL_CHOICES:
        return None
    return f"must be one of {', '.join(repr(choice) for choice in TOOL_CHOICES)} (got {value!r})"


LANE_SETTINGS = {"tool_choice": LaneSetting(default="auto", problem=_tool_choice_problem)}


def request_fields(task: ToolCallTask, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The task's tools and the lane's tool_choice, in this order (the bytes every request with tools carried)."""
    return {"tools": task.tools, "tool_choice": settings["tool_choice"]}
