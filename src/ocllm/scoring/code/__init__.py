"""Code tasks: the model's program, taken from its visible answer by explicit rules, run in a sandbox (bubblewrap,
else a container engine, else nothing runs), under limits of CPU time; the decision records which block ran and
why, the exact program, the sandbox and its limits, what the program did, and each test's result
(docs/scoring/code.md)."""

from __future__ import annotations

from ocllm.scoring.code import entry_point_only, limits
from ocllm.scoring.room import room_type

TASK_TYPE = room_type(
    __name__,
    name="code",
    label="code",
    lane_settings={**limits.LANE_SETTINGS, **entry_point_only.LANE_SETTINGS},
    demo_suite="demo-code",
)
