"""Multiple-choice tasks: the answer letter a model states, read by the rules of docs/scoring/mcq.md."""

from __future__ import annotations

from ocllm.scoring.mcq import datasets, fields, harness_tasks, lm_eval, prompt, render, simulated
from ocllm.scoring.mcq.decide import decide_mcq
from ocllm.scoring.mcq.decision import McqDecision
from ocllm.scoring.task_type import TaskType

TASK_TYPE = TaskType(
    name="mcq",
    label="multiple choice",
    task_struct=fields.McqTask,
    decision_type=McqDecision,
    decide=decide_mcq,
    gold=fields.gold,
    check_suite_line=fields.check_suite_line,
    saved_task_fields=fields.saved_task_fields,
    record_fields=fields.record_fields,
    default_template=prompt.DEFAULT_TEMPLATE,
    template_placeholders=prompt.PLACEHOLDERS,
    required_placeholders=("question", "options"),
    prompt=prompt.prompt,
    template_key_before="prompt_template",
    option_count=fields.option_count,
    simulated_answer=simulated.simulated_answer,
    datasets=datasets.DATASETS,
    lm_eval=lm_eval.LM_EVAL,
    harness_records=harness_tasks.HARNESS_RECORDS,
    claims_untyped=harness_tasks.claims_untyped,
    task_view=render.task_view,
    demo_suite="demo",
)
