"""Tool call tasks: the calls in the structured `tool_calls` field checked against the expected calls; when that
field is empty, calls written as text in the content or the reasoning are found, named and checked too, and said to
have been dropped by the server (docs/scoring/tool_call.md, rules T1-T7)."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from ocllm.models import Policy, Sample
from ocllm.scoring.regions import Piece, split_regions
from ocllm.scoring.text_calls import find_text_calls
from ocllm.scoring.tool_call.checks import check_call, match, parameters_of
from ocllm.scoring.tool_call.decision import MAX_CALLS, ArgumentsError, CallCheck, CallSource, ToolCallDecision
from ocllm.scoring.tool_call.fields import ToolCallTask

_CUT = "; the answer was cut at max_tokens (finish_reason: length)"
_WHERE = {"content": "visible content", "reasoning": "reasoning"}


def decide_tool_call(task: ToolCallTask, sample: Sample, policy: Policy) -> ToolCallDecision:
    expected = task.expected_calls or []
    schemas = parameters_of(task.tools or [])
    regions = split_regions(sample.content, sample.reasoning, think_prefilled=policy.think_prefilled)
    read: list[tuple[CallSource, list[Piece]]] = [("content", regions.visible), ("reasoning", regions.reasoning)]
    as_text = [(source, calls) for source, pieces in read if (calls := _text_calls(source, pieces))]
    truncated = sample.finish_reason == "length"
    cut = _CUT if truncated else ""
    base: dict[str, Any] = {
        "task_id": task.id, "task_type": task.type, "category": task.category, "expected_answer": gold(task),
        "truncated": truncated, "expected_call_count": len(expected),
    }  # fmt: skip
    structured = sample.tool_calls if isinstance(sample.tool_calls, list) else []
    if structured:
        # T1: the structured field holds calls: they alone are decided on (what an agent executes).
        ok, rule, checked, left_out, reasons = verdict(_structured(structured), expected, schemas)
        beside = sum(len(calls) for _, calls in as_text)
        said = f"{len(checked) + left_out} call(s) in tool_calls: " + _summary(ok, rule, reasons)
        if beside:
            said += f"; {beside} more written as text (not decided on)"
        return ToolCallDecision(
            **base, extracted_final_answer=calls_text(checked), extraction_source="content",
            extraction_method="tool_calls", ambiguity="none", correct=ok, rule=rule, reason=said + cut,
            call_source="tool_calls", calls=checked, calls_left_out=left_out, text_calls_beside=beside,
            reasons=reasons,
        )  # fmt: skip
    if as_text:
        # T2, T3: no structured call, but one written as text: the server's tool parser dropped it. Never credited;
        # what it would have been is said.
        source, found = as_text[0]
        ok, _, checked, left_out, reasons = verdict(found, expected, schemas)
        fmt = found[0].format
        would = "they would have been correct" if ok else "they would still be wrong: " + next(iter(reasons), "")
        said = (f"tool_calls is empty, but {len(found)} call(s) are written as text ({fmt} format) in the "
                f"{_WHERE[source]}: the server's tool parser did not take them, so no call was made; had it, {would}")
        return ToolCallDecision(
            **base, extracted_final_answer=None, extraction_source="content" if source == "content" else "reasoning",
            extraction_method="text", ambiguity="call_only_as_text", correct=False, rule="call_only_as_text",
            reason=said + cut, call_source=source, call_format=fmt, correct_if_parsed=ok, calls=checked,
            calls_left_out=left_out, reasons=reasons,
        )  # fmt: skip
    # T7: no call anywhere.
    fields = "tool_calls is empty and no call is written as text in the content or the reasoning"
    if not expected:
        return ToolCallDecision(**base, extracted_final_answer=None, extraction_source="none", extraction_method="none",
                                ambiguity="none", correct=True, rule="no_call_expected",
                                reason=f"no call was expected and none was made ({fields})" + cut)  # fmt: skip
    return ToolCallDecision(
        **base, extracted_final_answer=None, extraction_source="none", extraction_method="none", ambiguity="none",
        correct=False, rule="no_call", reason=f"no call was made ({fields}); expected: {gold(task)}" + cut,
        reasons=[f"expected {len(expected)} call(s), none was made"],
    )  # fmt: skip


def verdict(
    calls: list[CallCheck], expected: list[dict[str, Any]], schemas: dict[str, dict[str, Any]]
) -> tuple[bool, Any, list[CallCheck], int, list[str]]:
    """(correct, rule, each call checked, calls left out, every reason) for a set of calls (T4-T6)."""
    left_out = max(0, len(calls) - MAX_CALLS)
    made = calls[:MAX_CALLS]
    count = len(calls)
    if not expected:
        checked: list[CallCheck] = [check_call(c, None, None, schemas) for c in made]
        names = ", ".join(str(c.name) for c in made)
        said = f"{count} call(s) made ({names}) where none was expected"
        return False, "call_when_none_expected", checked, left_out, [said]
    grid = [[check_call(c, e, j, schemas) for j, e in enumerate(expected)] for c in made]
    placed = match([[check.ok for check in row] for row in grid], len(expected))
    taken = {j for j in placed if j is not None}
    checked = []
    for i, call in enumerate(made):
        j = placed[i]
        if j is not None:
            checked.append(_replace(grid[i][j], matched=True))
            continue
        free = [k for k in range(len(expected)) if k not in taken]
        named = [k for k in free if expected[k]["name"] == call.name] or [
            k for k in range(len(expected)) if expected[k]["name"] == call.name
        ]
        pick = next(iter(named or free), None)
        if pick is None:
            extra = check_call(call, None, None, schemas)
            checked.append(_replace(extra, said=f"{call.name!r}: an extra call (every expected call is matched)")
                           if extra.problem is None else extra)  # fmt: skip
        else:
            checked.append(_replace(grid[i][pick], ok=False) if pick in taken else grid[i][pick])
    ok = count == len(expected) and len(taken) == len(expected)
    reasons: list[str] = []
    if count != len(expected):
        reasons.append(f"{count} call(s) made, {len(expected)} expected")
    for call in checked:
        if call.matched:
            continue
        reasons.append(f"call {call.index + 1} ({call.name}): {call.said}")
        for argument in call.argument_checks:
            if not argument.ok:
                reasons.append(f"call {call.index + 1} ({call.name}) argument {argument.name!r}: {argument.problem}: "
                               f"{argument.said}")  # fmt: skip
    for j, e in enumerate(expected):
        if j not in taken:
            reasons.append(f"expected call {j + 1} ({e['name']}) is not matched by any call")
    rule = "calls_match" if ok else "wrong_call_count" if count != len(expected) else "calls_do_not_match"
    return ok, rule, checked, left_out, reasons


def _replace(call: CallCheck, **changes: Any) -> CallCheck:
    return msgspec.structs.replace(call, **changes)


def _summary(ok: bool, rule: str, reasons: list[str]) -> str:
    if ok:
        return "they are the expected calls"
    if rule == "call_when_none_expected":
        return "no call was expected"
    return "not the expected calls: " + (reasons[0] if reasons else rule)


def _structured(items: list[Any]) -> list[CallCheck]:
    """Each structured call, its arguments text read as JSON (T4: the parse error and where, when it is not)."""
    calls: list[CallCheck] = []
    for index, item in enumerate(items):
        function = item.get("function") if isinstance(item, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str):
            calls.append(CallCheck(index=index, name=None, source="tool_calls", problem="not_a_call",
                                   said="an item of tool_calls with no function name"))  # fmt: skip
            continue
        raw = function.get("arguments")
        text = raw if isinstance(raw, str) else None
        call = CallCheck(index=index, name=name, arguments_text=text, source="tool_calls")
        if raw is None or (isinstance(raw, str) and not raw.strip()):
            arguments: Any = {}  # no arguments text: a call without arguments
        elif isinstance(raw, str):
            try:
                arguments = json.loads(raw)
            except json.JSONDecodeError as exc:
                call.problem = "invalid_arguments_json"
                call.parse_error = ArgumentsError(message=exc.msg, line=exc.lineno, column=exc.colno, offset=exc.pos)
                call.said = (f"{name}: the arguments are not JSON: {exc.msg} at line {exc.lineno}, column "
                             f"{exc.colno} (char {exc.pos})")  # fmt: skip
                calls.append(call)
                continue
            except (RecursionError, ValueError) as exc:
                call.problem, call.said = "invalid_arguments_json", f"{name}: the arguments cannot be read: {exc}"
                calls.append(call)
                continue
        else:
            arguments = raw  # a server that sends the arguments as an object
        if not isinstance(arguments, dict):
            call.problem = "arguments_not_an_object"
            call.said = f"{name}: the arguments are JSON but not an object"
        else:
            call.arguments = arguments
        calls.append(call)
    return calls


def _text_calls(source: CallSource, pieces: list[Piece]) -> list[CallCheck]:
    """The calls written as text in one region: the first piece that holds any gives them."""
    for piece in pieces:
        found = find_text_calls(piece.text)
        if found:
            return [
                CallCheck(index=i, name=c.name, arguments=c.arguments, source=source, format=c.format,
                          field=piece.field, start=piece.offset + c.start, end=piece.offset + c.end)
                for i, c in enumerate(found)
            ]  # fmt: skip
    return []


def _one(name: str | None, arguments: dict[str, Any] | None) -> str:
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in (arguments or {}).items())
    return f"{name}({args})"


def calls_text(calls: list[CallCheck]) -> str:
    """The calls as made, in one line (`get_weather(city="Paris"); get_time()`)."""
    return "; ".join(_one(c.name, c.arguments) if c.arguments is not None else f"{c.name}(<unread>)" for c in calls)


def gold(task: ToolCallTask) -> str:
    """The expected calls in one line, each parameter's acceptable values joined by '|' (`"" ` = may be left out)."""
    expected = task.expected_calls or []
    if not expected:
        return "no call"
    said = []
    for e in expected:
        args = ", ".join(f"{k}={'|'.join(json.dumps(v, ensure_ascii=False) for v in vs)}"
                         for k, vs in (e.get("arguments") or {}).items())  # fmt: skip
        said.append(f"{e['name']}({args})")
    return "; ".join(said)
