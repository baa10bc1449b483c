"""Required-substring tasks: every listed substring must appear in the visible answer."""

from __future__ import annotations

from ocllm.scoring.room import room_type

TASK_TYPE = room_type(
    __name__,
    name="required_substrings",
    label="required substrings",
    template_key_before="substring_template",
    extracts_answer=False,
    passes_word="required-substring passes",
    cut_pass_held="the text held the substrings, but the answer was not finished",
    demo_suite="demo",
)
