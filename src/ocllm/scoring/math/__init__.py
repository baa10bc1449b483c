"""Math tasks (GSM8K, MATH-500, AIME): a free-form answer, read by rules M1-M8 of docs/scoring/math.md and compared
with the gold by a named chain of comparators."""

from __future__ import annotations

from ocllm.scoring.math import datasets, fields, lm_eval, prompt, render, simulated
from ocllm.scoring.math.decide import decide_math
from ocllm.scoring.math.decision import MathCandidate, MathDecision
from ocllm.scoring.math.tally import MathTally
from ocllm.scoring.task_type import TaskType

__all__ = ["TASK_TYPE", "MathCandidate", "MathDecision", "decide_math"]

TASK_TYPE = TaskType(
    name="math",
    label="math",
    task_struct=fields.MathTask,
    decision_type=MathDecision,
    decide=decide_math,
    check_suite_line=fields.check_suite_line,
    saved_task_fields=fields.saved_task_fields,
    record_fields=fields.record_fields,
    default_template=prompt.DEFAULT_TEMPLATE,
    template_placeholders=prompt.PLACEHOLDERS,
    required_placeholders=("question",),
    prompt=prompt.prompt,
    template_key_before="math_template",
    evidence_lines=render.evidence_lines,
    task_view=render.task_view,
    new_tally=MathTally,
    simulated_answer=simulated.simulated_answer,
    datasets=datasets.DATASETS,
    lm_eval=lm_eval.LM_EVAL,
    demo_suite="demo-math",
)
