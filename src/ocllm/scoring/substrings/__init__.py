"""Required-substring tasks: every listed substring must appear in the visible answer."""

from __future__ import annotations

from ocllm.scoring.substrings import fields, render, simulated
from ocllm.scoring.substrings.decide import decide_substrings
from ocllm.scoring.substrings.decision import SubstringsDecision
from ocllm.scoring.task_type import TaskType

TASK_TYPE = TaskType(
    name="required_substrings",
    label="required substrings",
    task_struct=fields.SubstringsTask,
    decision_type=SubstringsDecision,
    decide=decide_substrings,
    check_suite_line=fields.check_suite_line,
    saved_task_fields=fields.saved_task_fields,
    record_fields=fields.record_fields,
    default_template=fields.DEFAULT_TEMPLATE,
    template_placeholders=fields.PLACEHOLDERS,
    required_placeholders=(),
    prompt=fields.prompt,
    template_key_before="substring_template",
    expected_text=render.expected_text,
    extracted_text=render.extracted_text,
    task_view=render.task_view,
    extracts_answer=False,
    passes_word="required-substring passes",
    cut_pass_held="the text held the substrings, but the answer was not finished",
    simulated_answer=simulated.simulated_answer,
    demo_suite="demo",
)
