"""Code tasks: the model's program, taken from its visible answer by explicit rules, run in a sandbox (bubblewrap,
else a container engine, else nothing runs), under limits of CPU time; the decision records which block ran and
why, the exact program, the sandbox and its limits, what the program did, and each test's result
(docs/scoring/code.md)."""

from __future__ import annotations

from ocllm.scoring.code import datasets, entry_point_only, fields, harness_tasks, limits, lm_eval, render
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.decision import CodeDecision
from ocllm.scoring.code.simulated import simulated_answer
from ocllm.scoring.code.tally import CodeTally
from ocllm.scoring.task_type import TaskType

TASK_TYPE = TaskType(
    name="code",
    label="code",
    task_struct=fields.CodeTask,
    decision_type=CodeDecision,
    decide=decide_code,
    gold=lambda task: None,
    check_suite_line=fields.check_suite_line,
    saved_task_fields=fields.saved_task_fields,
    record_fields=fields.record_fields,
    default_template=fields.DEFAULT_TEMPLATE,
    template_placeholders=fields.PLACEHOLDERS,
    required_placeholders=("question",),
    prompt=fields.prompt,
    lane_settings={**limits.LANE_SETTINGS, **entry_point_only.LANE_SETTINGS},
    extracts_answer=True,
    datasets=datasets.DATASETS,
    lm_eval=lm_eval.LM_EVAL,
    harness_records=harness_tasks.HARNESS_RECORDS,
    expected_text=render.expected_text,
    extracted_text=render.extracted_text,
    evidence_lines=render.evidence_lines,
    task_view=render.task_view,
    new_tally=CodeTally,
    detail_words=render.detail_words,
    detail_tables=render.detail_tables,
    pair_tables=render.pair_tables,
    demo_suite="demo-code",
    simulated_answer=simulated_answer,
)
