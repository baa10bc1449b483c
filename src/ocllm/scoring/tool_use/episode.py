"""An episode's calls run against its environments: the model's, request by request, and the gold calls turn by turn
beside them, each side on instances of its own made from the task's first state. Run in a guarded child
(`scoring/guarded.py`), bounded by CPU time, from `next_turn` (the results the model reads next) and from `decide`
(the states and results it checks); both replay from the first state, so neither keeps anything between calls.

A call is dispatched structurally and never evaluated: its name must be a tool offered at that request, its arguments
must be a JSON object (decoded with a JSON decoder) that the tool's parameters schema accepts; only then is the
environment's method of that name called with them (`environments/base.py`). Each refusal is the call's result, which
the model reads: an `{"error": ...}` saying what was wrong.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Literal

import msgspec

from ocllm.errors import InputError
from ocllm.models import Turn
from ocllm.scoring.guarded import Limits, Service
from ocllm.scoring.tool_use.environments import ENVIRONMENTS, Environment

CallStatus = Literal[
    "ran", "tool_error", "unknown_tool", "arguments_not_json", "arguments_not_object", "schema_violation", "not_a_call",
]  # fmt: skip


class CallRun(msgspec.Struct, kw_only=True):
    """One call the model made, as the server returned it, and what came of it."""

    id: str | None = None
    name: str | None = None
    arguments: str | None = None  # the arguments' text as the server gave it
    status: CallStatus = "ran"
    problem: str | None = None  # why it was not run, or what the environment said went wrong
    result: str = ""  # the text the model read back


class RequestCalls(msgspec.Struct, kw_only=True):
    """What one request of the episode brings to the replay: the user turn it belongs to, the tools it added, and the
    calls its reply made (`tool_calls` verbatim)."""

    turn: int
    tools_added: list[dict[str, Any]] = msgspec.field(default_factory=list)
    calls: list[Any] = msgspec.field(default_factory=list)


class TurnState(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Where a user turn left the model's environments, and how it compares with the gold calls' (None: not checked)."""

    differs: dict[str, list[str]] | None = None  # environment -> fields of its state that differ from the gold's
    missing_results: list[str] | None = None  # the gold calls' results of this turn the model's calls never gave


class Replay(msgspec.Struct, kw_only=True):
    """The episode replayed: each request's calls with their results, and each user turn's comparison with the gold."""

    calls: list[list[CallRun]]  # by request
    turns: list[TurnState]  # by user turn reached
    end_state: dict[str, dict[str, Any]]  # the model's environments' state when the episode ended


def requests_of(turns: list[Turn]) -> list[RequestCalls]:
    """Each request of the episode with the user turn it belongs to (a request that sent a user message starts the
    next), the tools it added and the calls its reply made."""
    requests = []
    user_turn = 0
    for number, turn in enumerate(turns):
        if number and any(message.get("role") == "user" for message in turn.sent):
            user_turn += 1
        calls: list[Any] = turn.reply.tool_calls or []
        requests.append(RequestCalls(turn=user_turn, tools_added=turn.tools_added, calls=calls))
    return requests


def replay(
    environments: dict[str, dict[str, Any]],
    offered: list[dict[str, Any]],
    requests: list[RequestCalls],
    gold: list[tuple[list[dict[str, Any]], list[dict[str, Any]]] | None] | None = None,
) -> Replay:
    """Run the model's calls request by request, and, where `gold` gives a turn's (tools added, expected calls), those
    on the gold's instances; compare after each user turn the model reached (as BFCL's multi-turn checker does: the
    state field by field, and the gold results among every result the model's calls gave so far)."""
    for kind in environments:
        ENVIRONMENTS[kind].fresh_replay()
    mine = _instances(environments)
    theirs = _instances(environments)
    tools = {tool["function"]["name"]: tool for tool in offered}
    gold_tools = dict(tools)
    runs: list[list[CallRun]] = []
    results_so_far: list[str] = []
    turns: list[TurnState] = []
    for number, request in enumerate(requests):
        tools.update((tool["function"]["name"], tool) for tool in request.tools_added)
        ran = [run_call(mine, tools, call) for call in request.calls]
        runs.append(ran)
        # Every result the model read counts, a refusal's too, as BFCL counts every executed call's (its errors'
        # too): a gold call the room refuses (BFCL's ground truth breaks its schema in a few entries) expects the
        # same refusal, which only the same call gives.
        results_so_far.extend(call.result for call in ran)
        turn_ends = number == len(requests) - 1 or requests[number + 1].turn != request.turn
        if turn_ends:
            turns.extend(TurnState() for _ in range(request.turn - len(turns)))  # turns with no request: none
            turns.append(_compared(mine, theirs, gold_tools, gold, request.turn, results_so_far))
    return Replay(calls=runs, turns=turns, end_state={kind: env.state() for kind, env in mine.items()})


def _compared(
    mine: dict[str, Environment],
    theirs: dict[str, Environment],
    gold_tools: dict[str, dict[str, Any]],
    gold: list[tuple[list[dict[str, Any]], list[dict[str, Any]]] | None] | None,
    turn: int,
    results_so_far: list[str],
) -> TurnState:
    if gold is None or turn >= len(gold) or gold[turn] is None:
        return TurnState()
    added, expected = gold[turn]  # type: ignore[misc]
    gold_tools.update((tool["function"]["name"], tool) for tool in added)
    gold_results = []
    for call in expected:
        arguments = json.dumps(call.get("arguments") or {})
        gold_results.append(run_call(theirs, gold_tools, {"function": {"name": call["name"], "arguments": arguments}}))
    if not expected:
        return TurnState()  # nothing to do: not checked, as BFCL does not check it (its calls still count later)
    differs = {kind: fields for kind, env in mine.items() if (fields := env.differs(theirs[kind]))}
    available = Counter(results_so_far)
    missing = []
    for run in gold_results:
        if available[run.result] > 0:
            available[run.result] -= 1
        else:
            missing.append(run.result)
    return TurnState(differs=differs, missing_results=missing)


def _instances(environments: dict[str, dict[str, Any]]) -> dict[str, Environment]:
    return {kind: ENVIRONMENTS[kind](state) for kind, state in environments.items()}


def run_call(envs: dict[str, Environment], tools: dict[str, dict[str, Any]], call: Any) -> CallRun:
    """One call as the server returned it, checked and, if it may be, run."""
    function = call.get("function") if isinstance(call, dict) else None
    call_id = call.get("id") if isinstance(call, dict) and isinstance(call.get("id"), str) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return _refused(call_id, None, None, "not_a_call", "not a function call")
    name, text = function["name"], function.get("arguments")
    shown = text if isinstance(text, str) else json.dumps(text)
    if name not in tools:
        return _refused(call_id, name, shown, "unknown_tool", f"no tool {name!r} is offered")
    if isinstance(text, str):
        try:
            arguments = json.loads(text) if text.strip() else {}
        except (ValueError, RecursionError):
            return _refused(call_id, name, shown, "arguments_not_json", "the arguments are not JSON")
    else:
        arguments = text if text is not None else {}
    if not isinstance(arguments, dict):
        return _refused(call_id, name, shown, "arguments_not_object", "the arguments are not a JSON object")
    problem = _schema_problem(tools[name], arguments)
    if problem is not None:
        return _refused(call_id, name, shown, "schema_violation", problem)
    owner = next((env for env in envs.values() if name in env.tools()), None)
    if owner is None:
        return _refused(call_id, name, shown, "unknown_tool", f"no environment of the task runs {name!r}")
    result = owner.call(name, arguments)
    failed = owner.failure(result)
    return CallRun(
        id=call_id, name=name, arguments=shown, status="ran" if failed is None else "tool_error", result=result,
        problem=failed,
    )  # fmt: skip


def _refused(call_id: str | None, name: str | None, arguments: str | None, status: CallStatus, why: str) -> CallRun:
    return CallRun(
        id=call_id, name=name, arguments=arguments, status=status, problem=why, result=json.dumps({"error": why})
    )


def _schema_problem(tool: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    import jsonschema  # in the guarded child only: the worker that asks never loads it for this

    schema = {**(tool["function"].get("parameters") or {}), "type": "object"}
    validator = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(arguments))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    said = error.message if len(error.message) <= 300 else error.message[:297] + "..."
    return f"{where}: {said}" if where else said


# ---- run in the guarded child ------------------------------------------------------------------------------------


class _Asked(msgspec.Struct, kw_only=True):
    environments: dict[str, dict[str, Any]]
    offered: list[dict[str, Any]]
    requests: list[RequestCalls]
    gold: list[tuple[list[dict[str, Any]], list[dict[str, Any]]] | None] | None = None


def replay_guarded(
    environments: dict[str, dict[str, Any]],
    offered: list[dict[str, Any]],
    requests: list[RequestCalls],
    gold: list[tuple[list[dict[str, Any]], list[dict[str, Any]]] | None] | None = None,
) -> Replay | str:
    """`replay`, in the guarded child under REPLAY_LIMIT_S of CPU time: the Replay, or why it could not be had (a
    deterministic sentence: the limit reached). What crosses is JSON text, read again in the child. An environment
    this machine cannot run (BFCL's backends not here) is the user's to fix: InputError, before any child runs."""
    for kind, state in environments.items():
        if (lacking := ENVIRONMENTS[kind].missing(state)) is not None:
            raise InputError(lacking)
    asked = msgspec.json.encode(_Asked(environments=environments, offered=offered, requests=requests, gold=gold))
    result = _service.call(f"{__name__}:_replay_in_child", (asked,), Limits(cpu_s=REPLAY_LIMIT_S))
    if result.status == "done":
        return msgspec.json.decode(result.value, type=Replay)
    if result.status == "limit":
        return f"running the calls {result.detail}"
    return f"the calls could not be run: {result.detail}"


def _replay_in_child(asked_text: bytes) -> bytes:
    asked = msgspec.json.decode(asked_text, type=_Asked)
    return msgspec.json.encode(replay(asked.environments, asked.offered, asked.requests, asked.gold))


def _start() -> str:
    """Import jsonschema once, outside any call's limit."""
    import jsonschema  # noqa: F401

    return "jsonschema"


# The CPU time one replay of an episode may use: ocllm's environments take milliseconds; a call that asks an
# environment for an enormous computation reaches it.
REPLAY_LIMIT_S = 10.0
_service = Service("tool-use-episode", startup=f"{__name__}:_start", startup_limits=Limits(cpu_s=30.0, stall_s=30.0))
