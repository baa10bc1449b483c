"""The sandbox's limits as a lane sets them (`code_limits`, docs/lanes.md, "Code sandbox"): checked when the lanes
file is read, and read again by `decide` from the lane's policy. Every decision records the limits it ran under."""

from __future__ import annotations

from typing import Any

import msgspec

from ocllm.models import Policy
from ocllm.scoring.code.decision import CodeLimits
from ocllm.scoring.task_type import LaneSetting

SETTING = "code_limits"
# The range each limit may be set in: a limit past these is a mistake (an hour of CPU a program, or 64 KiB of memory,
# in which Python does not start).
_BOUNDS: dict[str, tuple[float, float]] = {
    "cpu_s": (0.1, 3600.0), "stdin_cpu_s": (0.1, 3600.0), "wall_s": (0.5, 7200.0),
    "memory_bytes": (64 * 1024**2, 256 * 1024**3), "processes": (4, 4096), "output_bytes": (1024, 1024**3),
    "file_bytes": (1024, 16 * 1024**3), "open_files": (16, 65536),
}  # fmt: skip


def limits_problem(value: object) -> str | None:
    """What is wrong with a lane's `code_limits` table, or None."""
    if not isinstance(value, dict):
        return "must be a table of limits (cpu_s, stdin_cpu_s, wall_s, memory_bytes, processes, output_bytes, ...)"
    for key, given in value.items():
        if key not in _BOUNDS:
            return f"unknown limit {key!r} (the limits: {', '.join(_BOUNDS)})"
        low, high = _BOUNDS[key]
        if isinstance(given, bool) or not isinstance(given, int | float) or not low <= given <= high:
            return f"{key} must be a number from {low:g} to {high:g}"
    return None


LANE_SETTINGS = {SETTING: LaneSetting(default={}, problem=limits_problem)}


def limits_of(policy: Policy) -> CodeLimits:
    """The lane's limits over the defaults (a value checked when the lanes file was read; a saved run's record that
    no longer checks is left for the defaults)."""
    given: Any = policy.room_settings.get(SETTING) or {}
    if limits_problem(given) is not None:
        return CodeLimits()
    return msgspec.convert(given, CodeLimits, strict=False)
