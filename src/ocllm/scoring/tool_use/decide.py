"""Deciding a tool_use episode (docs/scoring/tool_use.md): the recorded calls replayed against fresh environments
beside the gold calls, each user turn checked as BFCL's multi-turn checker checks it (the state after the turn field
by field, the gold calls' results among the model's so far, no call where calls were expected), the end state, and
each failed turn given one cause. The model is never asked again: a rescore reproduces every verdict."""

from __future__ import annotations

import json
from typing import Any

from ocllm.models import Policy, Sample, Turn
from ocllm.scoring.text_calls import find_text_calls
from ocllm.scoring.tool_use.decision import ToolUseDecision, ToolUseRule, TurnCause, TurnCheck
from ocllm.scoring.tool_use.episode import CallRun, Replay, RequestCalls, replay_guarded, requests_of
from ocllm.scoring.tool_use.fields import ToolUseTask, call_words, gold, offered_tools

# Episode ends that are no answer: the turn it ended in fails with this cause.
_ENDS: dict[str, TurnCause] = {
    "refused": "context_exceeded", "environment_limit": "environment_limit", "request_bound": "bound_reached",
    "step_bound": "bound_reached", "call_bound": "bound_reached", "token_bound": "bound_reached",
    "harness_bound": "bound_reached",
}  # fmt: skip
_BAD_ARGUMENTS = {"arguments_not_json": "arguments_not_json", "arguments_not_object": "arguments_not_json"}


def decide_tool_use(task: ToolUseTask, sample: Sample, policy: Policy) -> ToolUseDecision:
    turns = sample.turns if sample.turns is not None else [Turn(reply=sample)]
    requests = requests_of(turns)
    expected = [None if t.expected_calls is None else (t.tools_added, t.expected_calls) for t in task.user_turns]
    replayed = replay_guarded(task.environments, offered_tools(task), requests, expected)
    end = sample.episode_end
    if isinstance(replayed, str):
        replayed, end = Replay(calls=[[] for _ in requests], turns=[], end_state={}), "environment_limit"
    checks = [_turn(task, number, turns, requests, replayed, end) for number in range(len(task.user_turns))]
    differs = _end_state_differs(task, replayed)
    failed = next((check for check in checks if check.passed is False), None)
    rule: ToolUseRule
    finished = end in (None, "answered") and all(check.requests for check in checks)
    if failed is not None:
        assert failed.cause is not None
        rule, correct = failed.cause, False
    elif not finished:
        rule, correct = "not_finished", False
    elif differs:
        rule, correct = "end_state_differs", False
    else:
        rule, correct = "episode_right", True
    checked = [check for check in checks if check.passed is not None]
    calls = [run for request in replayed.calls for run in request]
    return ToolUseDecision(
        task_id=task.id, task_type=task.type, category=task.category, expected_answer=gold(task),
        extracted_final_answer=_calls_words(checks) if calls else None,
        extraction_source="content" if calls else "none", extraction_method="tool_calls" if calls else "none",
        ambiguity="none", correct=correct, rule=rule, reason=_reason(rule, checks, failed, differs, end),
        truncated=any(turn.reply.finish_reason == "length" for turn in turns), turn_checks=checks,
        turns_right=sum(1 for check in checked if check.passed), turns_checked=len(checked), episode_end=end,
        end_state_differs=differs, failed_turn=failed.turn if failed else None, cause=failed.cause if failed else None,
        calls_made=sum(1 for run in calls if run.status != "not_a_call"), requests=len(turns),
    )  # fmt: skip


def _turn(
    task: ToolUseTask, number: int, turns: list[Turn], requests: list[RequestCalls], replayed: Replay, end: str | None
) -> TurnCheck:
    """User turn `number` (from 0) checked: passed, failed with its cause, or not checked."""
    mine = [i for i, request in enumerate(requests) if request.turn == number]
    user = task.user_turns[number]
    if not mine:
        checked = bool(user.expected_calls) or bool(user.expected_content)
        return TurnCheck(turn=number + 1, passed=False if checked else None, cause="not_reached" if checked else None)
    replies = [turns[i].reply for i in mine]
    runs: list[CallRun] = [run for i in mine for run in replayed.calls[i]]
    state = replayed.turns[number] if number < len(replayed.turns) else None
    differs = dict(state.differs) if state is not None and state.differs else {}
    missing = list(state.missing_results) if state is not None and state.missing_results else []
    answer = replies[-1].content or ""
    missing_content = [text for text in user.expected_content if text not in answer]
    text_calls, fmt, where = _text_calls(replies)
    ended_here = end in _ENDS and mine[-1] == len(requests) - 1
    expects_calls = bool(user.expected_calls)
    no_call = expects_calls and not runs
    failed = ended_here or no_call or bool(differs) or bool(missing) or bool(missing_content)
    checked = expects_calls or bool(user.expected_content) or ended_here
    check = TurnCheck(
        turn=number + 1, requests=len(mine), calls=runs, passed=(not failed) if checked else None, differs=differs,
        missing_results=missing, missing_content=missing_content, text_calls=text_calls, call_format=fmt,
        text_calls_in=where,
    )  # fmt: skip
    if failed:
        wrong = bool(differs) or bool(missing)
        check.cause = _cause(replies, runs, end if ended_here else None, text_calls, where, no_call, wrong)
    return check


def _cause(
    replies: list[Sample], runs: list[CallRun], end: str | None, text_calls: int, where: str | None, no_call: bool,
    wrong: bool,
) -> TurnCause:
    """The one cause of a failed turn: the first that holds, in the order docs/scoring/tool_use.md gives (U4)."""
    if end is not None:
        return _ENDS[end]
    if any(reply.finish_reason == "length" for reply in replies):
        return "cut_off"
    if text_calls and where == "content" and not runs:
        return "call_as_text"
    if not runs and (where == "reasoning" or (not (replies[-1].content or "").strip() and replies[-1].reasoning)):
        return "answer_in_reasoning"
    statuses = [run.status for run in runs]
    if any(status in _BAD_ARGUMENTS for status in statuses):
        return "arguments_not_json"
    if "schema_violation" in statuses:
        return "schema_violation"
    if "unknown_tool" in statuses:
        return "unknown_tool"
    if no_call:
        return "no_call"
    return "wrong_call" if wrong else "content_missing"


def _text_calls(replies: list[Sample]) -> tuple[int, Any, Any]:
    """Calls written as text in the turn's replies that carried no structured call: how many, the first's format, and
    the field they stood in."""
    count, fmt, where = 0, None, None
    for reply in replies:
        if reply.tool_calls:
            continue
        for field, text in (("content", reply.content), ("reasoning", reply.reasoning)):
            found = find_text_calls(text) if text else []
            if found:
                count += len(found)
                fmt, where = fmt or found[0].format, where or field
    return count, fmt, where


def _end_state_differs(task: ToolUseTask, replayed: Replay) -> dict[str, list[str]]:
    differs: dict[str, list[str]] = {}
    for kind, fields in (task.end_state or {}).items():
        state = replayed.end_state.get(kind, {})
        wrong = [field for field, value in fields.items() if state.get(field) != value]
        if wrong:
            differs[kind] = wrong
    return differs


def _calls_words(checks: list[TurnCheck]) -> str:
    parts = []
    for check in checks:
        if check.calls:
            shown = [call_words(run.name or "?", _arguments(run)) for run in check.calls]
            parts.append(f"turn {check.turn}: {', '.join(shown)}")
    return "; ".join(parts)


def _arguments(run: CallRun) -> dict[str, Any]:
    try:
        value = json.loads(run.arguments or "{}")
    except ValueError:
        return {"(not JSON)": run.arguments}
    return value if isinstance(value, dict) else {"(not an object)": value}


def _reason(
    rule: str, checks: list[TurnCheck], failed: TurnCheck | None, differs: dict[str, list[str]], end: str | None
) -> str:
    total = len(checks)
    if rule == "episode_right":
        return f"every checked turn of {total} passed and the episode ended with an answer"
    if failed is not None:
        said = f"turn {failed.turn} of {total} failed: {str(failed.cause).replace('_', ' ')}"
        if failed.differs:
            said += " (" + "; ".join(f"{kind}: {', '.join(f)} differ" for kind, f in failed.differs.items()) + ")"
        elif failed.missing_results:
            said += f" ({len(failed.missing_results)} gold result(s) never given)"
        return said
    if rule == "not_finished":
        return f"the episode ended before its {total} turns were done ({end or 'no answer'})"
    return "the end state differs: " + "; ".join(f"{kind}: {', '.join(f)}" for kind, f in differs.items())
