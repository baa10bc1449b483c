"""Instructions tasks: IFEval's verifiable instructions (25 kinds), each checked against the visible answer with
what it measured, strictly and by IFEval's loose rule."""

from __future__ import annotations

from ocllm.scoring.instructions import dataset
from ocllm.scoring.room import room_type

TASK_TYPE = room_type(
    __name__,
    name="instructions",
    label="instruction following",
    template_key_before="instructions_template",
    extracts_answer=False,
    passes_word="instruction-following passes (every instruction followed)",
    cut_pass_held="the text followed every instruction, but the answer was not finished",
    datasets=dataset.DATASETS,
    demo_suite="demo-formats",
)
