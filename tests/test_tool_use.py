"""The tool_use room decided on episodes built here: the gold calls passing, each kind of failure named by its cause,
and the next turn worked out as the runner would ask for it."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from ocllm import scoring
from ocllm.models import Policy, Sample, Turn
from ocllm.scoring.tool_use.decision import ToolUseDecision
from ocllm.scoring.tool_use.fields import ToolUseTask
from ocllm.suites import load_suite

SUITE = {task.id: task for task in load_suite("demo-agent").tasks}


def _task(task_id: str) -> ToolUseTask:
    task = SUITE[task_id]
    assert isinstance(task, ToolUseTask)
    return task


def _wire(calls: list[dict[str, Any]], turn: int) -> list[dict[str, Any]]:
    return [
        {"id": f"call_{turn}_{i}", "type": "function",
         "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments") or {})}}
        for i, call in enumerate(calls)
    ]  # fmt: skip


def play(task: ToolUseTask, calls_by_turn: list[list[dict[str, Any]] | str], answer: str = "Done.") -> Sample:
    """The episode the runner would record for a model that makes these calls at each user turn (or writes this text
    instead of a call), asking the room for each next turn as the runner does."""
    first = {"model": "m", "messages": [{"role": "user", "content": task.user_turns[0].content}]}
    turns: list[Turn] = []
    sent: list[dict[str, Any]] = []
    added: list[dict[str, Any]] = []
    user_turn = 0
    made_calls = False
    while True:
        planned = calls_by_turn[user_turn]
        if isinstance(planned, str):
            reply = Sample(task_id=task.id, content=planned, finish_reason="stop")
        elif planned and not made_calls:
            wired = _wire(planned, user_turn)
            reply = Sample(task_id=task.id, content="", tool_calls=wired, finish_reason="tool_calls")
        else:
            reply = Sample(task_id=task.id, content=answer + " " + " ".join(_all_content(task)), finish_reason="stop")
        turns.append(Turn(sent=sent, tools_added=added, reply=reply))
        so_far = Sample(task_id=task.id, request=first, turns=turns)
        said = scoring.next_turn(task, so_far, Policy())
        if said.end is not None:
            return msgspec.structs.replace(so_far, episode_end=said.end, content=reply.content)
        made_calls = bool(reply.tool_calls)
        if any(m["role"] == "user" for m in said.messages):
            user_turn += 1
            made_calls = False
        sent, added = said.messages, said.tools_added


def _all_content(task: ToolUseTask) -> list[str]:
    return [text for turn in task.user_turns for text in turn.expected_content]


def _gold(task: ToolUseTask) -> list[list[dict[str, Any]] | str]:
    return [list(turn.expected_calls or []) for turn in task.user_turns]


def _decide(task: ToolUseTask, sample: Sample) -> ToolUseDecision:
    decision = scoring.decide(task, sample)
    assert isinstance(decision, ToolUseDecision)
    return decision


@pytest.mark.parametrize("task_id", sorted(SUITE))
def test_the_gold_calls_pass_every_demo_episode(task_id: str) -> None:
    task = _task(task_id)
    decision = _decide(task, play(task, _gold(task)))
    assert decision.correct is True, decision.reason
    assert decision.rule == "episode_right"
    assert decision.turns_right == decision.turns_checked > 0


def test_a_call_with_another_value_changes_the_state_and_fails_that_turn() -> None:
    task = _task("agent_tk_triage")
    calls = _gold(task)
    calls[1] = [{"name": "assign_ticket", "arguments": {"ticket_id": 2, "person": "Marco"}}]
    decision = _decide(task, play(task, calls))
    assert decision.correct is False
    assert (decision.failed_turn, decision.cause) == (2, "wrong_call")
    assert decision.turn_checks[1].differs == {"tickets": ["tickets[id=2]/assignee"]}
    # The state is compared as it stands after each turn: the wrong assignee still differs after turn 3.
    assert [t.passed for t in decision.turn_checks] == [True, False, False]
    assert decision.turns_right == 1 and decision.turns_checked == 3


def test_a_call_written_as_text_is_never_run_and_named() -> None:
    task = _task("agent_ws_list_and_read")
    text = '<tool_call>{"name": "list_files", "arguments": {"folder": "notes"}}</tool_call>'
    decision = _decide(task, play(task, [text, _gold(task)[1]]))
    assert (decision.failed_turn, decision.cause) == (1, "call_as_text")
    assert decision.turn_checks[0].call_format == "hermes" and decision.turn_checks[0].calls == []


def test_arguments_the_schema_refuses_are_not_run() -> None:
    task = _task("agent_tk_comment")
    calls = _gold(task)
    calls[1] = [{"name": "add_comment", "arguments": {"ticket_id": "one", "text": "Reproduced on staging."}}]
    decision = _decide(task, play(task, calls))
    assert decision.cause == "schema_violation"
    run = decision.turn_checks[1].calls[0]
    assert run.status == "schema_violation" and "ticket_id" in (run.problem or "")


def test_an_unknown_tool_is_refused_and_named() -> None:
    task = _task("agent_tk_missing_function")
    calls = _gold(task)
    calls[0] = [{"name": "close_ticket", "arguments": {"ticket_id": 4, "resolution": "fixed in release 2.1"}}]
    decision = _decide(task, play(task, calls))
    # Turn 1 expects nothing (close_ticket is not offered yet): unchecked; the call is refused and changes nothing, so
    # turn 2, when the tool is offered and called, still passes.
    assert decision.turn_checks[0].calls[0].status == "unknown_tool"
    assert decision.correct is True


def test_no_call_where_calls_were_expected() -> None:
    task = _task("agent_ws_rename")
    decision = _decide(task, play(task, ["I would rename it with mv.", _gold(task)[1]]))
    assert (decision.failed_turn, decision.cause) == (1, "no_call")


def test_a_missing_text_in_the_answer_fails_the_turn() -> None:
    task = _task("agent_ws_delete_old")
    sample = play(task, _gold(task), answer="It needs some Python.")
    sample = _without_content(sample, "3.11")
    decision = _decide(task, sample)
    assert decision.cause == "content_missing" and decision.turn_checks[1].missing_content == ["3.11"]


def _cut(reply: Sample, text: str) -> Sample:
    return msgspec.structs.replace(reply, content=(reply.content or "").replace(text, ""))


def _without_content(sample: Sample, text: str) -> Sample:
    turns = [
        msgspec.structs.replace(t, reply=_cut(t.reply, text))
        for t in sample.turns or []
    ]  # fmt: skip
    return msgspec.structs.replace(sample, turns=turns)


def test_the_next_turn_sends_each_calls_result_then_the_next_user_turn() -> None:
    task = _task("agent_ws_list_and_read")
    reply = Sample(task_id=task.id, tool_calls=_wire([{"name": "list_files", "arguments": {"folder": "notes"}}], 0))
    said = scoring.next_turn(task, Sample(task_id=task.id, turns=[Turn(reply=reply)]), Policy())
    assert said.end is None
    assert said.messages == [
        {"role": "tool", "tool_call_id": "call_0_0", "content": '{"files": ["notes/meeting.md", "notes/todo.md"]}'}
    ]
    answered = Sample(task_id=task.id, content="meeting.md and todo.md")
    episode = Sample(task_id=task.id, turns=[Turn(reply=reply), Turn(sent=said.messages, reply=answered)])
    said = scoring.next_turn(task, episode, Policy())
    assert said.messages == [{"role": "user", "content": task.user_turns[1].content}]


def test_a_bound_reached_ends_the_episode_and_is_its_outcome() -> None:
    task = _task("agent_ws_list_and_read")
    reply = Sample(task_id=task.id, tool_calls=_wire([{"name": "list_files", "arguments": {}}], 0))
    episode = Sample(task_id=task.id, turns=[Turn(reply=reply)] * 3)
    policy = Policy(room_settings={"episode_bounds": {"steps_per_turn": 3}})
    said = scoring.next_turn(task, episode, policy)
    assert said.end == "step_bound"
    decision = _decide(task, msgspec.structs.replace(episode, episode_end="step_bound"))
    assert decision.rule == decision.cause == "bound_reached" and decision.correct is False
