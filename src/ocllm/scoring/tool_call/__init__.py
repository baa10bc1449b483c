"""Tool call tasks: the model is given OpenAI tools and must call the expected ones with acceptable arguments (BFCL's
AST checker's rules); only calls in the structured `tool_calls` field count, and calls the server's parser dropped
(written as text in the content or the reasoning) are found, named by format and counted apart."""

from __future__ import annotations

from ocllm.scoring.task_type import TaskType
from ocllm.scoring.tool_call import bfcl, fields, render, request, simulated
from ocllm.scoring.tool_call.decide import decide_tool_call, gold
from ocllm.scoring.tool_call.decision import ToolCallDecision
from ocllm.scoring.tool_call.tally import ToolCallTally

TASK_TYPE = TaskType(
    name="tool_call",
    label="tool call",
    task_struct=fields.ToolCallTask,
    decision_type=ToolCallDecision,
    decide=decide_tool_call,
    gold=gold,
    check_suite_line=fields.check_suite_line,
    saved_task_fields=fields.saved_task_fields,
    record_fields=fields.record_fields,
    default_template=fields.DEFAULT_TEMPLATE,
    template_placeholders=fields.PLACEHOLDERS,
    required_placeholders=("question",),
    prompt=fields.prompt,
    template_key_before="tool_template",
    lane_settings=request.LANE_SETTINGS,
    request_fields=request.request_fields,
    expected_text=render.expected_text,
    extracted_text=render.extracted_text,
    evidence_lines=render.evidence_lines,
    detail_words=render.detail_words,
    detail_tables=render.detail_tables,
    extracts_answer=True,
    new_tally=ToolCallTally,
    simulated_answer=simulated.simulated_answer,
    datasets=bfcl.DATASETS,
    demo_suite="demo-tools",
)
