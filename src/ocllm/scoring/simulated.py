"""What a room's simulated answer is made from and what it gives back: the simulator's (`ocllm.sim`) request to a
room, and the room's answer. The simulator runs no model; each room writes the text a model would answer its tasks
with (`TaskType.simulated_answer`), so that the simulator knows no type and a new type brings its own answers.

Which room answers (the simulator asks, `sim/answers.py`):
- a prompt that quotes a task the simulator knows: that task's room; a room without the hook, or whose hook returns
  None (math without a gold answer), leaves the simulator's plain "I do not know this question" sentence;
- a prompt it does not know (`task` None): every room in registry order, the first that returns an answer wins
  (tool_call: when the request offers tools; mcq: when the prompt lists lettered options and offers no tools),
  else the plain sentence.

A hook that returns None must not have drawn from `rng` first: the plain sentence (or the next room) draws from the
same generator, and the same seed must keep giving the same text.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ocllm.models import Task

Call = tuple[str, dict[str, Any]]  # a function name and its arguments
# Where a tool call the model makes arrives: "structured" in `message.tool_calls`, as a server with a tool parser gives
# it; "none" as text in the content, as a server without one does; "reasoning" as text inside the reasoning field, as
# a reasoning parser that swallows the call does. The simulator's settings (SimConfig.tool_parser) take these values.
TOOL_PARSERS = ("structured", "none", "reasoning")
# How a call written as text is written (`scoring/tool_call/simulated.py` shows each); SimConfig.tool_format takes
# one of them, or "mixed", one drawn per answer.
TOOL_TEXT_FORMATS = ("hermes", "json", "mistral", "llama", "pythonic")


@dataclass(frozen=True)
class SimulatedTools:
    """What the request offers of tools and how the simulated server delivers calls (its tool_parser and tool_format
    settings)."""

    offered: tuple[dict[str, Any], ...]  # the request's tools; () when it sent none
    choice: str | dict[str, Any] | None  # the request's tool_choice
    parser: str  # one of TOOL_PARSERS
    fmt: str  # "mixed" (one drawn per answer) or one of TOOL_TEXT_FORMATS


@dataclass(frozen=True)
class SimulatedRequest:
    """One request as a room's hook sees it. Every random choice comes from `rng`, in an order that stays the same,
    so the same seed gives the same text."""

    rng: random.Random
    task: Task | None  # the task the prompt quotes; None for a prompt the simulator does not know
    prompt: str  # the last user message's text
    model: str
    correct: bool  # whether the answer is drawn right (where right is known)
    reasoning: bool  # reasoning mode: the answer has a reasoning text
    tools: SimulatedTools
    # The request's messages: a conversation's room reads where the episode stands (which user turn, what was called).
    messages: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class SimulatedAnswer:
    """What the model says (None when it only called tools), what it thought (None in non-reasoning mode), and the
    calls the server returns structured (None when none)."""

    content: str | None
    reasoning: str | None
    tool_calls: list[Call] | None = None


SimulatedAnswerer = Callable[[SimulatedRequest], SimulatedAnswer | None]


def snippet(text: str, words: int = 12) -> str:
    """The first words of a text, as an answer's reasoning quotes a question."""
    parts = text.split()
    return " ".join(parts[:words]) + (" ..." if len(parts) > words else "")


def delivered(calls: list[Call], setting: SimulatedTools, fmt: str, thinking: str | None) -> SimulatedAnswer:
    """Calls the model means to make, as the simulated server returns them (`setting.parser`): structured in
    `tool_calls` (only when the request offered tools: no server parses calls it was not given tools for), or
    written in `fmt` at the end of the reasoning, or in the content."""
    text = written(calls, fmt)
    if setting.parser == "reasoning":
        return SimulatedAnswer(None, f"{thinking}\n\n{text}" if thinking else text, None)
    if setting.parser == "structured" and setting.offered:
        return SimulatedAnswer(None, thinking, calls)
    return SimulatedAnswer(text, thinking, None)


def written(calls: list[Call], fmt: str) -> str:
    """The calls as a model writes them in `fmt` (one of TOOL_TEXT_FORMATS), when no parser makes them structured."""
    objects = [{"name": name, "arguments": arguments} for name, arguments in calls]
    if fmt == "hermes":
        return "\n".join(f"<tool_call>\n{_json(o)}\n</tool_call>" for o in objects)
    if fmt == "json":
        return _json(objects[0] if len(objects) == 1 else objects)
    if fmt == "mistral":
        return "[TOOL_CALLS]" + _json(objects)
    if fmt == "llama":
        return "<|python_tag|>" + "; ".join(_json({"name": n, "parameters": a}) for n, a in calls)
    if fmt == "pythonic":
        return "[" + ", ".join(f"{n}({', '.join(f'{k}={_python(v)}' for k, v in a.items())})" for n, a in calls) + "]"
    raise ValueError(f"unknown tool call format {fmt!r}")


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _python(value: Any) -> str:
    """A JSON value as a Python literal (what `ast.literal_eval` reads back)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_python(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_json(str(k))}: {_python(v)}" for k, v in value.items()) + "}"
    return _json(value)  # a number, or a string in double quotes (JSON's escapes are Python's)
