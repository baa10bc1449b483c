"""Json tasks: the visible answer must hold one JSON value (bare, or in one fenced block), valid against the task's
JSON Schema when it has one; the evidence names the block read, the parse error and where, or each violation.
(The package is not called `json`, which would shadow the standard library's; the type's name is "json".)"""

from __future__ import annotations

from ocllm.scoring.json_answer import fields, render, simulated
from ocllm.scoring.json_answer.decide import decide_json
from ocllm.scoring.json_answer.decision import JsonDecision
from ocllm.scoring.json_answer.tally import JsonTally
from ocllm.scoring.task_type import TaskType

TASK_TYPE = TaskType(
    name="json",
    label="JSON",
    task_struct=fields.JsonTask,
    decision_type=JsonDecision,
    decide=decide_json,
    gold=lambda task: None,
    check_suite_line=fields.check_suite_line,
    saved_task_fields=fields.saved_task_fields,
    record_fields=fields.record_fields,
    default_template=fields.DEFAULT_TEMPLATE,
    template_placeholders=fields.PLACEHOLDERS,
    required_placeholders=("question",),
    prompt=fields.prompt,
    template_key_before="json_template",
    expected_text=render.expected_text,
    extracted_text=render.extracted_text,
    evidence_lines=render.evidence_lines,
    extracts_answer=True,
    new_tally=JsonTally,
    simulated_answer=simulated.simulated_answer,
    demo_suite="demo-formats",
)
