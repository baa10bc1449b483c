"""Tool call tasks: the model is given OpenAI tools and must call the expected ones with acceptable arguments (BFCL's
AST checker's rules); only calls in the structured `tool_calls` field count, and calls the server's parser dropped
(written as text in the content or the reasoning) are found, named by format and counted apart."""

from __future__ import annotations

from ocllm.scoring.room import room_type
from ocllm.scoring.tool_call import bfcl

TASK_TYPE = room_type(
    __name__,
    name="tool_call",
    label="tool call",
    template_key_before="tool_template",
    datasets=bfcl.DATASETS,
    demo_suite="demo-tools",
)
