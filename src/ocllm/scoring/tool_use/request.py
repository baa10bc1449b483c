"""What a tool_use request carries besides its messages (the tools offered, no `tool_choice`: an agent loop lets the
model choose, and "required" would never let it answer), and the episode's bounds, a lane setting of the room's own
(`episode_bounds`): each bound an episode reaches ends it, and is its outcome (docs/scoring/tool_use.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ocllm.models import Policy
from ocllm.scoring.task_type import LaneSetting
from ocllm.scoring.tool_use.decision import EpisodeBounds
from ocllm.scoring.tool_use.fields import ToolUseTask, offered_tools

SETTING = "episode_bounds"
_RANGES = {
    "requests": (1, 200), "steps_per_turn": (1, 100), "calls_per_request": (1, 100), "completion_tokens": (0, 10**8),
}  # fmt: skip


def bounds_problem(value: object) -> str | None:
    """What is wrong with a lane's `episode_bounds` table, or None."""
    if not isinstance(value, dict):
        return f"must be a table of bounds ({', '.join(_RANGES)})"
    for key, given in value.items():
        if key not in _RANGES:
            return f"unknown bound {key!r} (the bounds: {', '.join(_RANGES)})"
        low, high = _RANGES[key]
        if isinstance(given, bool) or not isinstance(given, int) or not low <= given <= high:
            return f"{key} must be a whole number from {low} to {high}"
    return None


LANE_SETTINGS = {SETTING: LaneSetting(default={}, problem=bounds_problem)}


def bounds_of(policy: Policy) -> EpisodeBounds:
    """The lane's bounds over the defaults (a value no longer valid is left for the defaults)."""
    given: Any = policy.room_settings.get(SETTING) or {}
    if bounds_problem(given) is not None:
        return EpisodeBounds()
    return msgspec.convert(given, EpisodeBounds)


def request_fields(task: ToolUseTask, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The tools of the first request; later requests add what their turns add (run/conversation.py)."""
    return {"tools": offered_tools(task)}
