"""Task + lane -> the chat messages and request body that are sent."""

from __future__ import annotations

from typing import Any

from ocllm.models import Task
from ocllm.run.lanes import Lane
from ocllm.scoring import task_types


def user_prompt(task: Task, lane: Lane) -> str:
    """The task through the lane's template for its type (the type's default unless the lane sets one)."""
    task_type = task_types.of(task.type)
    return task_type.prompt(task, getattr(lane, task_type.template_setting))


def request_body(task: Task, lane: Lane, sample: int = 0) -> dict[str, Any]:
    """The request for sample `sample` of `task`: the same body for every sample, but for the seed, which is the
    lane's seed + sample (so that k sampled answers differ, and the same k answers come again in a rerun)."""
    messages = []
    if lane.system_prompt:
        messages.append({"role": "system", "content": lane.system_prompt})
    messages.append({"role": "user", "content": user_prompt(task, lane)})
    body: dict[str, Any] = {"model": lane.model, "messages": messages}
    for key in ("temperature", "top_p", "max_tokens", "seed"):
        value = getattr(lane, key)
        if value is not None:
            body[key] = value + sample if key == "seed" else value
    # vLLM and SGLang pass chat_template_kwargs to the chat template; "enable_thinking" is the switch
    # Qwen3, Nemotron and DeepSeek templates read. Servers that do not know it ignore it.
    if lane.reasoning_switch == "chat_template_kwargs":
        body["chat_template_kwargs"] = {"enable_thinking": lane.reasoning == "native"}
    own = task_types.of(task.type).request_fields(task)
    body.update(own)
    if "tools" in own:
        body["tool_choice"] = lane.tool_choice  # how freely the model may call them (the lane's; "auto" by default)
    for key, value in lane.extra_body.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return body
