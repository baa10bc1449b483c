"""Instructions tasks: IFEval's verifiable instructions (25 kinds), each checked against the visible answer with
what it measured, strictly and by IFEval's loose rule."""

from __future__ import annotations

from ocllm.scoring.instructions import dataset, fields, lm_eval, render, simulated
from ocllm.scoring.instructions.decide import decide_instructions
from ocllm.scoring.instructions.decision import InstructionsDecision
from ocllm.scoring.instructions.tally import InstructionsTally
from ocllm.scoring.task_type import TaskType

TASK_TYPE = TaskType(
    name="instructions",
    label="instruction following",
    task_struct=fields.InstructionsTask,
    decision_type=InstructionsDecision,
    decide=decide_instructions,
    gold=lambda task: None,
    check_suite_line=fields.check_suite_line,
    saved_task_fields=fields.saved_task_fields,
    record_fields=fields.record_fields,
    default_template=fields.DEFAULT_TEMPLATE,
    template_placeholders=fields.PLACEHOLDERS,
    required_placeholders=("question",),
    prompt=fields.prompt,
    template_key_before="instructions_template",
    expected_text=render.expected_text,
    extracted_text=render.extracted_text,
    evidence_lines=render.evidence_lines,
    detail_words=render.detail_words,
    detail_tables=render.detail_tables,
    extracts_answer=False,
    passes_word="instruction-following passes (every instruction followed)",
    cut_pass_held="the text followed every instruction, but the answer was not finished",
    new_tally=InstructionsTally,
    simulated_answer=simulated.simulated_answer,
    datasets=dataset.DATASETS,
    lm_eval=lm_eval.LM_EVAL,
    demo_suite="demo-formats",
)
