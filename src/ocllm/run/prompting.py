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
    task_type = task_types.of(task.type)
    fields = task_type.request_fields(task, lane.settings_for(task_type))  # tool_call: tools, tool_choice
    if extra := lane.extra_tools():
        # An agent's tools after the task's own (a task that sends none gets them alone, with no tool_choice: the
        # server's default, "auto", as an agent leaves it). Before extra_body, which still wins.
        fields["tools"] = [*(fields.get("tools") or []), *extra]
    return lane_body(lane, list(messages(task, lane)), sample, fields)


def lane_body(
    lane: Lane, sent: list[Any], sample: int = 0, fields: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A request of the lane's with these messages (a task's, or the preflight's own, which get the lane's system
    prompt first): its model, its sampling, its thinking switch, then `fields`, then its extra_body, which wins."""
    if fields is None and (system := lane.system_text()):
        sent = [{"role": "system", "content": system}, *sent]
    body: dict[str, Any] = {"model": lane.model, "messages": sent}
    body.update(request_fields(lane.sampling, sample))
    # vLLM and SGLang pass chat_template_kwargs to the chat template; "enable_thinking" is the switch
    # Qwen3, Nemotron and DeepSeek templates read. Servers that do not know it ignore it.
    if lane.reasoning_switch == "chat_template_kwargs":
        body["chat_template_kwargs"] = {"enable_thinking": lane.reasoning == "native"}
    body.update(fields or {})
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
