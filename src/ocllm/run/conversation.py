"""A conversation's requests: the episode of a task whose room continues it after each reply (`TaskType.next_turn`).

The room decides what is sent next (the results of the calls it ran against the task's environment, the next user
message, tools a turn adds) or that the episode has ended; this module sends it. Each request is the conversation so
far: the episode's first request, then for each turn the messages it added and its reply as an assistant message
(content and calls as the server returned them; never the reasoning, which chat templates drop from the history).
The room's answer is worked out in a decision worker (`DecisionPool.next_turn`), never in the event loop: a tool
call may cost, and the loop reads every other answer of the run meanwhile.

An episode ends when the room says so, when a request fails (the episode is then a failed request: an error, never a
wrong answer), when the server refuses a request past the first (the conversation outgrew what the server takes:
the room decides it, as `episode_end` "refused"), or at `HARNESS_REQUESTS` requests whatever the room says, a bound
of the harness's own behind the room's. Each turn is appended to the run directory's turns.jsonl as it finishes
(`TurnLog`): an episode stopped in its middle is started again by --resume, and what it had done stays there.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import msgspec

from ocllm.models import NextTurn, Policy, Sample, Task, Turn
from ocllm.run.engine import AttemptWatch, Send

# The most requests of one episode, whatever its room says: a room's bounds (its lane settings) end an episode long
# before; this holds a room that never says "end" to a finite run.
HARNESS_REQUESTS = 200
# What `episode_end` says of an episode the harness ended.
REFUSED = "refused"
HARNESS_BOUND = "harness_bound"
WORKERS_DIED = "the decision workers died twice working out this conversation's next turn"


class TurnLog(Protocol):
    """Where each finished turn goes at once (the run directory's turns.jsonl): `attempt` tells an episode's restarts
    apart."""

    def append(self, task_id: str, sample: int, attempt: int, turn: Turn) -> None: ...


NextTurnOf = Callable[[Task, Sample, Policy], Awaitable[NextTurn | None]]


async def converse(
    task: Task,
    index: int,
    first_request: dict[str, Any],
    *,
    send: Send,
    watch: Callable[[], AttemptWatch],
    next_turn: NextTurnOf,
    policy: Policy,
    log: TurnLog,
    restarted: int = 0,
) -> Sample:
    """Sample `index` of `task` as one episode: `first_request` sent, then what `next_turn` (the room, in a worker)
    says after each reply, until the episode ends. Never raises for what the server does."""
    turns: list[Turn] = []
    tools = list(first_request.get("tools") or [])
    body = first_request
    added = NextTurn()
    while True:
        reply = await send(task.id, body, watch)
        turn = Turn(sent=added.messages, tools_added=added.tools_added, reply=_without_request(reply))
        turns.append(turn)
        log.append(task.id, index, restarted, turn)
        if reply.error is not None:
            if reply.error_kind == "refused" and len(turns) > 1:
                return episode_sample(task.id, index, first_request, turns, REFUSED, restarted)
            return episode_sample(task.id, index, first_request, turns, None, restarted)
        if len(turns) >= HARNESS_REQUESTS:
            return episode_sample(task.id, index, first_request, turns, HARNESS_BOUND, restarted)
        so_far = episode_sample(task.id, index, first_request, turns, None, restarted)
        said = await next_turn(task, so_far, policy)
        if said is None:  # ocllm's own failure, not the server's: an error of no kind the client tells
            return msgspec.structs.replace(so_far, error=WORKERS_DIED)
        if said.end is not None:
            return episode_sample(task.id, index, first_request, turns, said.end, restarted)
        tools = [*tools, *said.tools_added]
        body = {**first_request, "messages": _conversation(first_request, turns, said)}
        if tools:
            body["tools"] = tools
        added = said


def _conversation(first_request: dict[str, Any], turns: list[Turn], said: NextTurn) -> list[dict[str, Any]]:
    """The messages of the next request: the first request's, then each turn's added messages and its reply."""
    messages = list(first_request.get("messages") or [])
    for turn in turns:
        messages.extend(turn.sent)
        messages.append(assistant_message(turn.reply))
    messages.extend(said.messages)
    return messages


def assistant_message(reply: Sample) -> dict[str, Any]:
    """A reply as the conversation's history holds it: its visible content and its calls as the server returned
    them. Content that was null is sent as "" (every server takes that beside calls; not all take null)."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or ""}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    return message


def episode_sample(
    task_id: str, index: int, first_request: dict[str, Any], turns: list[Turn], end: str | None, restarted: int = 0
) -> Sample:
    """The episode as one Sample: its turns, and the fields a one-request sample has, for the episode as a whole
    (the first request; the last reply's content, reasoning, calls and finish reason; usage, latency, attempts,
    retries and re-sends summed; the failure of the last request when no end was said)."""
    replies = [turn.reply for turn in turns]
    last = replies[-1]
    failed = last if end is None and last.error is not None else None
    latencies = [r.latency_s for r in replies]
    retry_reasons: dict[str, int] = {}
    for reply in replies:
        for reason, count in reply.retry_reasons.items():
            retry_reasons[reason] = retry_reasons.get(reason, 0) + count
    return Sample(
        task_id=task_id, sample=index, content=last.content, reasoning=last.reasoning, tool_calls=last.tool_calls,
        reasoning_field=next((r.reasoning_field for r in replies if r.reasoning_field), None),
        finish_reason=last.finish_reason, usage=summed_usage([r.usage for r in replies]), model=last.model,
        response_id=last.response_id,
        latency_s=None if any(x is None for x in latencies) else sum(x for x in latencies if x is not None),
        ttft_s=replies[0].ttft_s, attempts=sum(r.attempts for r in replies),
        error=failed.error if failed else None, error_kind=failed.error_kind if failed else None,
        error_status=failed.error_status if failed else None, request=first_request, retry_reasons=retry_reasons,
        resends=sum(r.resends for r in replies), turns=turns, episode_end=end, restarted=restarted,
    )  # fmt: skip


def summed_usage(usages: list[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The usage of an episode's requests summed: prompt, completion and total tokens, and the reasoning tokens where
    the server counted them (vLLM's completion_tokens_details, SGLang's top level). None when no request said."""
    said = [u for u in usages if isinstance(u, dict)]
    if not said:
        return None
    total: dict[str, Any] = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens", "reasoning_tokens"):
        values = [u[key] for u in said if _count(u.get(key))]
        if values:
            total[key] = sum(values)
    details = [u.get("completion_tokens_details") for u in said]
    reasoning = [d["reasoning_tokens"] for d in details if isinstance(d, dict) and _count(d.get("reasoning_tokens"))]
    if reasoning:
        total["completion_tokens_details"] = {"reasoning_tokens": sum(reasoning)}
    # The largest prompt: what the conversation had grown to, against the server's context.
    prompts = [u["prompt_tokens"] for u in said if _count(u.get("prompt_tokens"))]
    if prompts:
        total["largest_prompt_tokens"] = max(prompts)
    return total


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _without_request(reply: Sample) -> Sample:
    # The turn keeps what it added, not the whole body again (Turn's docstring says why).
    return reply if reply.request is None else msgspec.structs.replace(reply, request=None)
