"""Json tasks: the visible answer must hold one JSON value (bare, or in one fenced block), valid against the task's
JSON Schema when it has one; the evidence names the block read, the parse error and where, or each violation.
(The package is not called `json`, which would shadow the standard library's; the type's name is "json".)"""

from __future__ import annotations

from ocllm.scoring.room import room_type

TASK_TYPE = room_type(
    __name__, name="json", label="JSON", template_key_before="json_template", demo_suite="demo-formats"
)
