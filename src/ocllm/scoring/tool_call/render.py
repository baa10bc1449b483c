"""How reports draw a tool_call task: the expected calls, each call as made and where it was found, and each
argument's check; the summary's dropped calls in words and a table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ocllm.scoring.scored import Scored
from ocllm.scoring.task_type import DetailTable
from ocllm.scoring.tool_call.decision import CallCheck, ToolCallDecision
from ocllm.scoring.tool_call.fields import ToolCallTask

_SHORT = 120

ToolCall = Scored[ToolCallTask, ToolCallDecision]


def _short(text: str, limit: int = _SHORT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def expected_text(scored: ToolCall) -> str:
    return _short(str(scored.record.get("expected_answer") or "—"))  # the expected calls as the record states them


def _call_text(call: CallCheck) -> str:
    if call.arguments is None:
        text = call.arguments_text
        return f"{call.name}({_short(text, 60) if text is not None else ''})"
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.arguments.items())
    return f"{call.name}({args})"


def extracted_text(scored: ToolCall) -> str:
    decision = scored.decision
    if decision is None or not decision.calls:  # a failed request, or an input's record of its own: no call read
        return "no call"
    made = _short("; ".join(_call_text(c) for c in decision.calls))
    if decision.call_source == "tool_calls":
        return made
    return f"as text in the {decision.call_source} ({decision.call_format}): {made}"


def _where(call: CallCheck) -> str:
    if call.source == "tool_calls":
        return "tool_calls"
    return f"{call.format} text in the {call.source} ({call.field} chars {call.start}-{call.end})"


def evidence_lines(scored: ToolCall) -> list[tuple[str, str]]:
    decision = scored.decision
    if decision is None:
        return []
    lines: list[tuple[str, str]] = []
    if decision.call_source != "none":
        said: str = decision.call_source
        if decision.call_format:
            said += f" (as text, {decision.call_format} format; correct if parsed: {decision.correct_if_parsed})"
        lines.append(("calls found in", said))
    for call in decision.calls:
        number = call.index + 1
        verdict = "matches" if call.matched else "does not match"
        target = call.expected_index
        against = f" expected call {target + 1}" if target is not None else ""
        lines.append((f"call {number}", f"{_short(_call_text(call))} [{_where(call)}] {verdict}{against}: {call.said}"))
        for check in call.argument_checks:
            mark = "ok" if check.ok else str(check.problem)
            lines.append((f"call {number} {check.name}", f"{mark}: {check.said}"))
    for reason in decision.reasons:
        lines.append(("reason", reason))
    if decision.calls_left_out:
        lines.append(("calls", f"{decision.calls_left_out} more call(s) not checked"))
    if decision.text_calls_beside:
        lines.append(("as text too", f"{decision.text_calls_beside} call(s) written as text beside tool_calls"))
    if decision.truncated:
        lines.append(("truncated", "cut at max_tokens"))
    return lines


def detail_words(details: Mapping[str, Any]) -> str:
    said = (f"{details.get('answers_with_structured_calls', 0)} of {details.get('answers', 0)} answer(s) called in "
            f"tool_calls; {details.get('answers_with_calls_only_as_text', 0)} wrote their calls only as text (dropped "
            f"by the server's parser; {details.get('correct_if_parsed', 0)} would have been correct)")  # fmt: skip
    if details.get("invalid_arguments_json"):
        said += f"; {details['invalid_arguments_json']} call(s) with arguments that are not JSON"
    return said


def detail_tables(details: Mapping[str, Any]) -> list[DetailTable]:
    formats = details.get("as_text_by_format") or {}
    if not formats:
        return []
    rows = [[str(fmt), str(n)] for fmt, n in sorted(formats.items())]
    rows += [[f"in the {where}", str(n)] for where, n in sorted((details.get("as_text_by_where") or {}).items())]
    return [DetailTable("Calls dropped by the server's parser (written as text)", ["format / where", "answers"], rows)]
