"""The simulator's side of a tool_use episode: at each request, where the conversation stands (which user turn, whether
the model has called in it yet) and what a model would do there.

At a turn's first request, drawn right, the turn's expected calls, all in one reply; drawn wrong, one of: a call with
one argument changed, the calls of the turn without its last, or a sentence instead of any call (stopping early).
After the model has called in a turn (the results are in), an answer in words that says what each expected text asks.
Where the calls go (structured, as text in the content, in the reasoning) is the simulated server's `tool_parser`
setting, as for the tool_call room (`scoring.simulated.delivered`). Every random choice comes from the request's rng.
"""

from __future__ import annotations

import random
from typing import Any

from ocllm.scoring.simulated import TOOL_TEXT_FORMATS, Call, SimulatedAnswer, SimulatedRequest, delivered
from ocllm.scoring.tool_use.fields import ToolUseTask


def simulated_answer(request: SimulatedRequest) -> SimulatedAnswer | None:
    task = request.task
    if not isinstance(task, ToolUseTask):
        return None
    messages = list(request.messages)
    turn = max(0, sum(1 for m in messages if m.get("role") == "user") - 1)
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
    called = any(m.get("role") == "assistant" and m.get("tool_calls") for m in messages[last_user:])
    user = task.user_turns[min(turn, len(task.user_turns) - 1)]
    expected: list[Call] = [(c["name"], dict(c.get("arguments") or {})) for c in user.expected_calls or []]
    rng = request.rng
    fmt = rng.choice(TOOL_TEXT_FORMATS) if request.tools.fmt == "mixed" else request.tools.fmt
    thinking = f"The user asks: {user.content[:80]} I will use the tools for it." if request.reasoning else None
    if called or not expected:
        return SimulatedAnswer(_words(user.expected_content if request.correct else []), thinking, None)
    if not request.correct:
        expected = _wrong(rng, expected)
        if not expected:
            return SimulatedAnswer("I am not able to do that with the tools I have.", thinking, None)
    return delivered(expected, request.tools, fmt, thinking)


def _wrong(rng: random.Random, calls: list[Call]) -> list[Call]:
    """What a model gets wrong at a turn: a changed argument, the last call left out, or no call at all."""
    kind = rng.choice(("argument", "fewer", "none"))
    if kind == "none":
        return []
    if kind == "fewer" and len(calls) > 1:
        return calls[:-1]
    name, arguments = calls[-1]
    if not arguments:
        return calls[:-1]
    key = rng.choice(sorted(arguments))
    return [*calls[:-1], (name, {**arguments, key: _other(arguments[key])})]


def _other(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + " (draft)"
    return value


def _words(expected: list[str]) -> str:
    if expected:
        return "Done. " + " ".join(f"It says: {text}." for text in expected)
    return "Done: that is taken care of."
