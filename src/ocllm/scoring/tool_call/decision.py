"""The typed evidence of a tool_call decision: every call found (in `tool_calls`, or written as text in the content
or the reasoning), where and in which format, and each call's checks against the expected call it was matched to,
per argument. docs/scoring/tool_call.md names every value of the closed sets."""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from ocllm.models import Decision
from ocllm.scoring.text_calls import CallFormat

# Where the calls decided on were found: the structured field an agent executes, or written as text (T2).
CallSource = Literal["tool_calls", "content", "reasoning", "none"]
# The text formats a call is recognised in when the structured field is empty (T3).
ToolRule = Literal[
    "calls_match", "no_call_expected", "calls_do_not_match", "wrong_call_count", "call_when_none_expected", "no_call",
    "call_only_as_text", "request_error",
]  # fmt: skip
ToolAmbiguity = Literal["none", "call_only_as_text"]
# Why a call, or one of its arguments, is not the expected one (T4, T5).
CallProblem = Literal[
    "unknown_function", "wrong_function", "invalid_arguments_json", "arguments_not_an_object", "not_a_call",
]  # fmt: skip
ArgumentProblem = Literal["missing_required", "missing", "unknown_parameter", "unexpected_parameter", "wrong_type",
                          "wrong_value"]  # fmt: skip
# Calls checked in one decision; more are counted (calls_left_out), so the evidence says it is a selection.
MAX_CALLS = 64


class ArgumentsError(msgspec.Struct, kw_only=True):
    """Why a call's arguments text is not JSON, as Python's json module says it, and where (from 1 / from 0)."""

    message: str
    line: int
    column: int
    offset: int


class ArgumentCheck(msgspec.Struct, kw_only=True):
    """One parameter of a call: given or not, and its verdict against the schema and the acceptable values."""

    name: str
    given: bool
    value: Any = None  # as the call gave it (None when not given)
    ok: bool
    problem: ArgumentProblem | None = None
    said: str  # what was checked, in words ("'Paris' is among ['paris', 'Paris, France']")


class CallCheck(msgspec.Struct, kw_only=True):
    """One call as made, where it was found, and its checks against the expected call it was set against."""

    index: int  # its place among the calls found (from 0)
    name: str | None
    arguments_text: str | None = None  # the arguments as the server sent them (structured calls: a JSON string)
    arguments: dict[str, Any] | None = None  # as read (None: not read)
    source: CallSource
    format: CallFormat | None = None  # for a call found as text
    field: Literal["content", "reasoning"] | None = None  # the raw field a call found as text stands in
    start: int | None = None  # where the call's text stands in that field

    end: int | None = None
    expected_index: int | None = None  # the expected call it was checked against (None: none was)
    matched: bool = False  # it is that expected call, and no other call was matched to it
    ok: bool = False
    problem: CallProblem | None = None
    said: str = ""
    parse_error: ArgumentsError | None = None
    argument_checks: list[ArgumentCheck] = msgspec.field(default_factory=list)


class ToolCallDecision(Decision, kw_only=True):
    """A tool_call task's verdict. `correct` counts only the calls in the structured `tool_calls` field: what an
    agent would execute. A call found only as text leaves `correct` false and says what it would have been
    (`correct_if_parsed`)."""

    extraction_method: Literal["tool_calls", "text", "none"]
    ambiguity: ToolAmbiguity
    rule: ToolRule
    call_source: CallSource = "none"
    call_format: CallFormat | None = None
    correct_if_parsed: bool | None = None  # for calls found only as text: the verdict they would have had
    expected_call_count: int = 0  # how many calls the task expects (0: none should be made)
    calls: list[CallCheck] = msgspec.field(default_factory=list)
    calls_left_out: int = 0
    # Calls found as text in the other fields while the structured field had some: counted, never decided on.
    text_calls_beside: int = 0
    reasons: list[str] = msgspec.field(default_factory=list)  # every reason the calls are not the expected ones
