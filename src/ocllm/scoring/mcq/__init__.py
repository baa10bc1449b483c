"""Multiple-choice tasks: the answer letter a model states, read by the rules of docs/scoring/mcq.md."""

from __future__ import annotations

from ocllm.scoring.room import room_type

TASK_TYPE = room_type(
    __name__, name="mcq", label="multiple choice", template_key_before="prompt_template", demo_suite="demo"
)
