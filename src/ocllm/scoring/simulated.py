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
