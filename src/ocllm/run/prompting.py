"""Task + lane -> the chat messages and request body that are sent."""

from __future__ import annotations

from typing import Any

from ocllm.models import Task
from ocllm.run.lanes import Lane


def format_options(options: list[str]) -> str:
    return "\n".join(f"{chr(ord('A') + i)}. {text}" for i, text in enumerate(options))


def user_prompt(task: Task, lane: Lane) -> str:
    if task.type == "mcq":
        options = task.options or []
        return lane.prompt_template.format(
            question=task.question,
            options=format_options(options),
            letters=f"A-{chr(ord('A') + len(options) - 1)}",
        )
    return lane.substring_template.format(question=task.question)


def request_body(task: Task, lane: Lane) -> dict[str, Any]:
    messages = []
    if lane.system_prompt:
        messages.append({"role": "system", "content": lane.system_prompt})
    messages.append({"role": "user", "content": user_prompt(task, lane)})
    body: dict[str, Any] = {"model": lane.model, "messages": messages}
    for key in ("temperature", "top_p", "max_tokens", "seed"):
        value = getattr(lane, key)
        if value is not None:
            body[key] = value
    # vLLM and SGLang pass chat_template_kwargs to the chat template; "enable_thinking" is the switch
    # Qwen3, Nemotron and DeepSeek templates read. Servers that do not know it ignore it.
    if lane.reasoning_switch == "chat_template_kwargs":
        body["chat_template_kwargs"] = {"enable_thinking": lane.reasoning == "native"}
    for key, value in lane.extra_body.items():
        if isinstance(value, dict) and isinstance(body.get(key), dict):
            body[key] = {**body[key], **value}
        else:
            body[key] = value
    return body
