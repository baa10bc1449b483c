"""What a tool_use episode sends after each reply (`TaskType.next_turn`): the results of the reply's calls, run against
the task's environments in the guarded child; else, when the reply made no call (it answered, or wrote its calls as
text, which are never run), the next user turn with the tools it adds; else the end. Each bound the episode reaches
ends it (`episode_bounds`). Pure: what it says is a function of the task, the episode so far and the lane's bounds."""

from __future__ import annotations

from ocllm.models import NextTurn, Policy, Sample, Turn
from ocllm.scoring.tool_use.episode import replay_guarded, requests_of
from ocllm.scoring.tool_use.fields import ToolUseTask, offered_tools
from ocllm.scoring.tool_use.request import bounds_of


def next_turn(task: ToolUseTask, episode: Sample, policy: Policy) -> NextTurn:
    bounds = bounds_of(policy)
    turns = episode.turns or []
    requests = requests_of(turns)
    reply = turns[-1].reply
    calls = reply.tool_calls or []
    if len(turns) >= bounds.requests:
        return NextTurn(end="request_bound")
    if bounds.completion_tokens and _completion_tokens(turns) >= bounds.completion_tokens:
        return NextTurn(end="token_bound")
    if calls:
        in_turn = sum(1 for request in requests if request.turn == requests[-1].turn)
        if len(calls) > bounds.calls_per_request:
            return NextTurn(end="call_bound")
        if in_turn >= bounds.steps_per_turn:
            return NextTurn(end="step_bound")
        replayed = replay_guarded(task.environments, offered_tools(task), requests)
        if isinstance(replayed, str):
            return NextTurn(end="environment_limit")
        results = [
            {"role": "tool", "tool_call_id": run.id or "", "content": run.result} for run in replayed.calls[-1]
        ]
        return NextTurn(messages=results)
    following = requests[-1].turn + 1
    if following < len(task.user_turns):
        turn = task.user_turns[following]
        return NextTurn(messages=[{"role": "user", "content": turn.content}], tools_added=turn.tools_added)
    return NextTurn(end="answered")


def _completion_tokens(turns: list[Turn]) -> int:
    total = 0
    for turn in turns:
        usage = turn.reply.usage or {}
        count = usage.get("completion_tokens")
        if isinstance(count, int) and not isinstance(count, bool):
            total += count
    return total
