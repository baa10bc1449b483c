"""A chat-completions request as the simulator reads it: checked, parsed, or refused with vLLM's status."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


class RequestError(Exception):
    """A request the simulator refuses, with the HTTP status and OpenAI error type to answer with."""

    def __init__(self, status: int, error_type: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.message = message


def error_body(status: int, error_type: str, message: str) -> dict[str, Any]:
    """The OpenAI-style error object vLLM returns."""
    return {"error": {"message": message, "type": error_type, "code": status}}


@dataclass(frozen=True)
class ChatRequest:
    """The parts of a chat-completions body the simulator reads, checked."""

    model: str
    messages: list[dict[str, Any]]
    reasoning: bool
    max_tokens: int | None
    stream: bool
    include_usage: bool
    # 0.0 asks for the greedy answer: what the request says when it sends no usable temperature (see below).
    temperature: float = 0.0
    seed: int | None = None  # None: no seed, or one that is no integer
    # The tools offered (OpenAI function tools; () when none) and how freely the model may call them ("auto",
    # "none", "required", or an object naming one function; None when not sent, which means "auto").
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: str | dict[str, Any] | None = None


def parse_request(body: Any, models: dict[str, float]) -> ChatRequest:
    """Check a decoded JSON body; raise RequestError with the status vLLM would answer with."""
    if not isinstance(body, dict):
        raise RequestError(400, "BadRequestError", "the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError(400, "BadRequestError", "'messages' is required and must be a non-empty list")
    for number, message in enumerate(messages):
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise RequestError(400, "BadRequestError", f"messages[{number}] must be an object with a 'role'")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError(400, "BadRequestError", "'model' is required and must be a string")
    if model not in models:
        raise RequestError(404, "NotFoundError", f"The model `{model}` does not exist.")
    max_tokens = body.get("max_tokens")
    if max_tokens is None:
        max_tokens = body.get("max_completion_tokens")  # the newer OpenAI name for the same limit
    if max_tokens is not None and (not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1):
        raise RequestError(400, "BadRequestError", "'max_tokens' must be a positive integer")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise RequestError(400, "BadRequestError", "'stream' must be a boolean")
    stream_options = body.get("stream_options") or {}
    kwargs = body.get("chat_template_kwargs") or {}
    if not isinstance(stream_options, dict) or not isinstance(kwargs, dict):
        raise RequestError(400, "BadRequestError", "'stream_options' and 'chat_template_kwargs' must be objects")
    if "enable_thinking" in kwargs or "thinking" in kwargs:
        # Qwen-style templates read enable_thinking, others read thinking; either switches it on.
        reasoning = bool(kwargs.get("enable_thinking")) or bool(kwargs.get("thinking"))
    else:
        reasoning = "reasoning" in model
    tools = body.get("tools")
    if tools is not None and (not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools)):
        raise RequestError(400, "BadRequestError", "'tools' must be a list of tool objects")
    tool_choice = body.get("tool_choice")
    if tool_choice is not None and tool_choice not in _TOOL_CHOICES and not isinstance(tool_choice, dict):
        raise RequestError(400, "BadRequestError", "'tool_choice' must be 'auto', 'none', 'required' or an object")
    return ChatRequest(
        model=model,
        messages=messages,
        reasoning=reasoning,
        max_tokens=max_tokens,
        stream=stream,
        include_usage=bool(stream_options.get("include_usage")),
        temperature=_temperature(body.get("temperature")),
        seed=_seed(body.get("seed")),
        tools=tuple(tools or ()),
        tool_choice=tool_choice,
    )


_TOOL_CHOICES = ("auto", "none", "required")


def _temperature(value: Any) -> float:
    # No temperature means greedy here, not OpenAI's default of 1: every lane, demo and test that sends none
    # (or 0) relies on the simulator's repeatable answer. Nothing new is refused: a temperature that is no
    # positive finite number (a string, a negative one) is read as greedy too.
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0:
        return float(value)
    return 0.0


def _seed(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def message_text(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict) and p.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""


def first_user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the first user message: what a conversation's task asks."""
    for message in messages:
        if message.get("role") == "user":
            return message_text(message.get("content"))
    return ""


def last_user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last user message: the prompt the simulator answers."""
    for message in reversed(messages):
        if message.get("role") == "user":
            return message_text(message.get("content"))
    return ""
