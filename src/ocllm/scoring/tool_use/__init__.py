"""Tool use over turns: a conversation in which the model calls tools against an environment whose state the calls
change, turn by turn; the episode is judged by its end state and its turns (docs/scoring/tool_use.md)."""

from __future__ import annotations

from ocllm.scoring.room import room_type

TASK_TYPE = room_type(__name__, name="tool_use", label="tool use over turns", demo_suite="demo-agent")
