"""Task + lane -> the chat messages and request body that are sent."""

from __future__ import annotations

from typing import Any

from ocllm.models import Task
from ocllm.run.lanes import Lane
from ocllm.run.sampling import request_fields
from ocllm.scoring import task_types
from ocllm.scoring.task_type import Message


def messages(task: Task, lane: Lane) -> list[Message]:
    """The chat messages of the task's request: its room's prompt, given the lane's template for the type (the
    room's default unless the lane sets one) and the lane's system prompt."""
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
    for key, value in lane.extra_body.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return body
