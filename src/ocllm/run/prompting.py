"""Task + lane -> the chat messages and request body that are sent."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.run.lanes import Lane
from ocllm.run.sampling import request_fields
from ocllm.scoring import task_types
from ocllm.scoring.task_type import Message
from ocllm.scoring.tool_schemas import tool_names


def messages(task: Task, lane: Lane) -> list[Message]:
    """The chat messages of the task's request: its room's prompt, given the lane's template for the type (the
    room's default unless the lane sets one) and the lane's system prompt (its own, or its agent's file's)."""
    task_type = task_types.of(task.type)
    return task_type.prompt(task, lane.prompt_settings(task_type))


def request_body(task: Task, lane: Lane, sample: int = 0) -> dict[str, Any]:
    """The request for sample `sample` of `task`: the same body for every sample, but for the seed, which is the
    lane's seed + sample (so that k sampled answers differ, and the same k answers come again in a rerun)."""
    body: dict[str, Any] = {"model": lane.model, "messages": messages(task, lane)}
    body.update(request_fields(lane.sampling, sample))
    # vLLM and SGLang pass chat_template_kwargs to the chat template; "enable_thinking" is the switch
    # Qwen3, Nemotron and DeepSeek templates read. Servers that do not know it ignore it.
    if lane.reasoning_switch == "chat_template_kwargs":
        body["chat_template_kwargs"] = {"enable_thinking": lane.reasoning == "native"}
    task_type = task_types.of(task.type)
    body.update(task_type.request_fields(task, lane.settings_for(task_type)))  # tool_call: tools, tool_choice
    if extra := lane.extra_tools():
        # An agent's tools after the task's own (a task that sends none gets them alone, with no tool_choice: the
        # server's default, "auto", as an agent leaves it). Before extra_body, which still wins.
        body["tools"] = [*(body.get("tools") or []), *extra]
    for key, value in lane.extra_body.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return body


def refuse_tool_clash(lane: Lane, tasks: Iterable[Task]) -> None:
    """Refuse, in one line and before any request, a lane whose agent's tools share a name with a task's own tool: a
    request offering two tools of one name is one no model can answer unambiguously, nor a scorer read."""
    if lane.extra_tools_file is None:
        return
    extra = set(lane.extra_tools_file.tools)
    for task in tasks:
        task_type = task_types.of(task.type)
        own = task_type.request_fields(task, lane.settings_for(task_type)).get("tools") or []
        clash = next((name for name in tool_names(own) if name in extra), None)
        if clash is not None:
            raise InputError(
                f"lane {lane.name!r}: extra_tools_file {lane.extra_tools_file.path}: the tool {clash!r} is also a tool "
                f"of task {task.id!r}; rename it in the file, or leave it out"
            )
