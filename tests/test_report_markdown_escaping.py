"""Every model- or suite-controlled string in report.md is escaped, as the HTML pages escape it (issue 29,
section 5): a tool call's argument names (the model's) and an instruction's kwargs (the suite's) reach the
evidence lines' labels, which went into the Markdown raw. A real rescore, then the real `ocllm report`."""

from __future__ import annotations

import json
from pathlib import Path

from ocllm.cli import main

HOSTILE = "</textarea><svg onload=alert(1)>"
WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}}}  # fmt: skip


def records() -> list[dict[str, object]]:
    arguments = json.dumps({"city": "Paris", HOSTILE: "x"})  # the model's own argument name
    tool_call = {
        "task_id": "t_call", "task_type": "tool_call", "category": "tools", "prompt": "Weather in Paris?",
        "tools": [WEATHER], "expected_calls": [{"name": "get_weather", "arguments": {"city": ["Paris"]}}],
        "raw_content": None, "finish_reason": "tool_calls",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": arguments}}],
    }  # fmt: skip
    instructions = {
        "task_id": "t_said", "task_type": "instructions", "category": "ifeval", "prompt": "End with a phrase.",
        "instructions": [{"id": "startend:end_checker", "kwargs": {"end_phrase": HOSTILE}}],
        "raw_content": "Here it is.", "finish_reason": "stop",
    }  # fmt: skip
    return [tool_call, instructions]


def test_argument_names_and_kwargs_are_escaped_in_the_markdown(tmp_path: Path) -> None:
    source = tmp_path / "old.json"
    source.write_text(json.dumps({"lane": "L", "tasks": records()}))
    scored = tmp_path / "scored.json"
    assert main(["rescore", str(source), "-o", str(scored)]) == 0
    assert main(["report", str(scored), "-o", str(tmp_path / "r")]) == 0
    markdown = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    # Both reached the evidence (else the test would prove nothing), escaped as `cell` escapes any text.
    assert markdown.count("&lt;/textarea&gt;&lt;svg onload=alert(1)&gt;") >= 2, markdown
    assert "<svg" not in markdown and "</textarea>" not in markdown
    page = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert "<svg onload" not in page  # the HTML page, as it was
