"""A tool_use task's own fields: its environments and their first state, the tools it offers, its user turns (each
may add tools, and may say which calls it expects and what its answer must say), and the end state that must hold.
Checked when the suite (or a saved record) is read (docs/scoring/tool_use.md, "The task")."""

from __future__ import annotations

from typing import Any

import msgspec

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring.task_type import Message, PromptSettings, chat
from ocllm.scoring.tool_schemas import tool_names, tools_problem
from ocllm.scoring.tool_use.environments import ENVIRONMENTS

MAX_TURNS = 50
MAX_EXPECTED_CALLS = 200  # a turn's


class UserTurn(msgspec.Struct, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """One user turn: the message, the tools it adds to those offered, and what it is checked on: the calls it expects
    (`[{"name", "arguments": {...}}]`, run against a gold environment beside the model's: the state after the turn
    and the calls' results are compared; [] expects nothing done; None: the turn is not checked) and texts the turn's
    last reply must contain."""

    content: str
    tools_added: list[dict[str, Any]] = msgspec.field(default_factory=list)
    expected_calls: list[dict[str, Any]] | None = None
    expected_content: list[str] = msgspec.field(default_factory=list)


class ToolUseTask(Task, tag="tool_use", kw_only=True):
    """A conversation over tools: `environments` (kind -> first state), `tools` offered from the start (None: every
    tool of its environments), `user_turns` (the first's content is the question), and `end_state` (kind -> {field:
    value}) that must hold when the episode ends."""

    environments: dict[str, dict[str, Any]] = msgspec.field(default_factory=dict)
    tools: list[dict[str, Any]] | None = None
    user_turns: list[UserTurn] = msgspec.field(default_factory=list)
    end_state: dict[str, dict[str, Any]] | None = None


DEFAULT_TEMPLATE = "{question}"  # the first user turn; the tools travel in the request's `tools`
PLACEHOLDERS = ("question",)
REQUIRED_PLACEHOLDERS = ("question",)


def offered_tools(task: ToolUseTask) -> list[dict[str, Any]]:
    """The tools of the episode's first request: the task's, or every tool of its environments."""
    if task.tools is not None:
        return task.tools
    return [schema for kind in task.environments for schema in ENVIRONMENTS[kind].SCHEMAS]


def _tools_problem(tools: object, what: str) -> str | None:
    if not isinstance(tools, list):
        return f"{what} is not a list of OpenAI function tools"
    problem = tools_problem(tools, f"{what} hold")
    return None if problem is None else f"{what}: {problem}"



def _calls_problem(calls: object, names: set[str], number: int) -> str | None:
    if calls is None:
        return None
    if not isinstance(calls, list) or len(calls) > MAX_EXPECTED_CALLS:
        return f"turn {number}: expected_calls is not a list of at most {MAX_EXPECTED_CALLS} calls"
    for call in calls:
        if not isinstance(call, dict) or set(call) - {"name", "arguments"} or not isinstance(call.get("name"), str):
            return f'turn {number}: an expected call is not {{"name": ..., "arguments": {{...}}}}'
        if call["name"] not in names:
            return f"turn {number}: expected call {call['name']!r} is none of the task's tools"
        if not isinstance(call.get("arguments", {}), dict):
            return f"turn {number}: expected call {call['name']!r}: arguments is not an object"
    return None


def task_problem(row: dict[str, Any]) -> str | None:
    """What is wrong with a tool_use line's own fields, or None."""
    environments = row.get("environments")
    if not isinstance(environments, dict) or not environments:
        return f"environments must name at least one environment ({', '.join(ENVIRONMENTS)}) with its first state"
    for kind, state in environments.items():
        if kind not in ENVIRONMENTS:
            return f"environments: unknown environment {kind!r} (known: {', '.join(ENVIRONMENTS)})"
        if (problem := ENVIRONMENTS[kind].state_problem(state)) is not None:
            return f"environments: {kind}: {problem}"
    tools = row.get("tools")
    if tools is not None and (problem := _tools_problem(tools, "tools")) is not None:
        return problem
    offered = tools if tools is not None else [s for kind in environments for s in ENVIRONMENTS[kind].SCHEMAS]
    names = set(tool_names(offered))
    turns = row.get("user_turns")
    if not isinstance(turns, list) or not turns or len(turns) > MAX_TURNS:
        return f"user_turns must be a list of 1 to {MAX_TURNS} user turns"
    for number, turn in enumerate(turns, start=1):
        try:
            checked = msgspec.convert(turn, UserTurn)
        except msgspec.ValidationError as error:
            return f"turn {number}: {error}"
        if checked.tools_added and (problem := _tools_problem(checked.tools_added, f"turn {number}: tools_added")):
            return problem
        names |= set(tool_names(checked.tools_added))
    # An expected call may name a tool a later turn adds (BFCL's multi_turn_miss_func_49 does, and BFCL runs it):
    # the gold's call is then refused as the model's would be, and the turn expects that refusal among its results.
    for number, turn in enumerate(turns, start=1):
        if (problem := _calls_problem(turn.get("expected_calls"), names, number)) is not None:
            return problem
    question = row.get("question")
    if question not in (None, "", turns[0].get("content")):
        return "question, when given, is the first turn's content"
    end_state = row.get("end_state")
    if end_state is not None and not (
        isinstance(end_state, dict) and all(k in environments and isinstance(v, dict) for k, v in end_state.items())
    ):
        return "end_state maps environments of the task to {field: value} that must hold at the end"
    return None


def check_suite_line(where: str, row: dict[str, Any]) -> None:
    if (problem := task_problem(row)) is not None:
        raise InputError(f"{where}: {problem}")
    # A suite read to be run: what this machine lacks to run its environments (BFCL's backends) is said now, not at
    # the first call. A saved record is read without it (a report needs no backends; a rescore checks at replay).
    for kind, state in row["environments"].items():
        if (lacking := ENVIRONMENTS[kind].missing(state)) is not None:
            raise InputError(f"{where}: {lacking}")
    row["question"] = row["user_turns"][0]["content"]


def saved_task_fields(where: str, row: dict[str, Any]) -> dict[str, Any]:
    if (problem := task_problem(row)) is not None:
        raise InputError(f"{where} is a tool_use task that cannot be used: {problem}")
    return {
        "environments": row["environments"], "tools": row.get("tools"),
        "user_turns": [msgspec.convert(turn, UserTurn) for turn in row["user_turns"]],
        "end_state": row.get("end_state"),
    }  # fmt: skip


def record_fields(task: ToolUseTask) -> dict[str, Any]:
    return {
        "environments": task.environments, "tools": task.tools, "user_turns": msgspec.to_builtins(task.user_turns),
        "end_state": task.end_state,
    }  # fmt: skip


def prompt(task: ToolUseTask, settings: PromptSettings) -> list[Message]:
    """The first request's messages: the lane's system prompt and the first user turn through the lane's template.
    The later turns are sent as they are (`conversation.next_turn`)."""
    return chat(settings, settings.template.format(question=task.user_turns[0].content))


def gold(task: ToolUseTask) -> str:
    """The expected calls, turn by turn, in words."""
    parts = []
    for number, turn in enumerate(task.user_turns, start=1):
        if turn.expected_calls is None:
            continue
        calls = ", ".join(call_words(c["name"], c.get("arguments") or {}) for c in turn.expected_calls) or "nothing"
        parts.append(f"turn {number}: {calls}")
    if task.end_state:
        parts.append("end state: " + ", ".join(f"{k}.{f}" for k, fields in task.end_state.items() for f in fields))
    return "; ".join(parts) or "—"


def call_words(name: str, arguments: dict[str, Any]) -> str:
    """A call as a reader takes it in: `read_file(path="notes.md")`, values as JSON, long ones cut."""
    shown = []
    for key, value in arguments.items():
        text = msgspec.json.encode(value).decode()
        shown.append(f"{key}={text if len(text) <= 40 else text[:37] + '...'}")
    return f"{name}({', '.join(shown)})"
