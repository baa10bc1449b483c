"""How reports draw a tool_call task: the expected calls, each call as made and where it was found, and each
argument's check; the summary's dropped calls in words and a table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ocllm.scoring.task_type import DetailTable, Record

_SHORT = 120


def _short(text: str, limit: int = _SHORT) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def expected_text(record: Record) -> str:
    return _short(str(record.get("expected_answer") or "—"))


def _call_text(call: Mapping[str, Any]) -> str:
    arguments = call.get("arguments")
    if not isinstance(arguments, dict):
        text = call.get("arguments_text")
        return f"{call.get('name')}({_short(str(text), 60) if text is not None else ''})"
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return f"{call.get('name')}({args})"


def extracted_text(record: Record) -> str:
    calls = [c for c in record.get("calls") or [] if isinstance(c, dict)]
    source = record.get("call_source")
    if not calls:
        return "no call"
    made = _short("; ".join(_call_text(c) for c in calls))
    if source == "tool_calls":
        return made
    return f"as text in the {source} ({record.get('call_format')}): {made}"


def _where(call: Mapping[str, Any]) -> str:
    if call.get("source") == "tool_calls":
        return "tool_calls"
    return f"{call.get('format')} text in the {call.get('source')} ({call.get('field')} chars " \
           f"{call.get('start')}-{call.get('end')})"


def evidence_lines(record: Record) -> list[tuple[str, str]]:
    lines: list[tuple[str, str]] = []
    if record.get("call_source") not in (None, "none"):
        said = str(record.get("call_source"))
        if record.get("call_format"):
            said += f" (as text, {record['call_format']} format; correct if parsed: {record.get('correct_if_parsed')})"
        lines.append(("calls found in", said))
    for call in record.get("calls") or []:
        if not isinstance(call, dict):
            continue
        number = int(call.get("index", 0)) + 1
        verdict = "matches" if call.get("matched") else "does not match"
        target = call.get("expected_index")
        against = f" expected call {target + 1}" if isinstance(target, int) else ""
        lines.append((f"call {number}", f"{_short(_call_text(call))} [{_where(call)}] {verdict}{against}: "
                                        f"{call.get('said')}"))  # fmt: skip
        for check in call.get("argument_checks") or []:
            if isinstance(check, dict):
                mark = "ok" if check.get("ok") else str(check.get("problem"))
                lines.append((f"call {number} {check.get('name')}", f"{mark}: {check.get('said')}"))
    for reason in record.get("reasons") or []:
        lines.append(("reason", str(reason)))
    if record.get("calls_left_out"):
        lines.append(("calls", f"{record['calls_left_out']} more call(s) not checked"))
    if record.get("text_calls_beside"):
        lines.append(("as text too", f"{record['text_calls_beside']} call(s) written as text beside tool_calls"))
    if record.get("truncated"):
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
