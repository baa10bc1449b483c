"""Math tasks (GSM8K, MATH-500, AIME): a free-form answer, read by rules M1-M8 of docs/scoring/math.md and compared
with the gold by a named chain of comparators."""

from __future__ import annotations

from ocllm.scoring.room import room_type

TASK_TYPE = room_type(__name__, name="math", label="math", template_key_before="math_template", demo_suite="demo-math")
