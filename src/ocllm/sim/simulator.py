"""What the ocllm SIMULATOR answers a checked request: the seeded draws, the answer drafted, truncation and
token counts, as a Completion. It runs no model: it writes plausible text from templates (`answers`).

At temperature 0 (or none) everything here is pure and deterministic. Each random choice comes from a
`random.Random` seeded by a SHA-256 of (config seed, model, the messages as canonical JSON, reasoning on/off),
so the same request always gets the same answer: the runner's resume test compares a resumed run with an
uninterrupted one, byte for byte. Above temperature 0 the request's seed and temperature join the draw, and a
request without a seed draws afresh (`sampling` says how, and how a task's samples are correlated).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

from ocllm.models import Task
from ocllm.scoring import is_conversation
from ocllm.scoring.simulated import Call, SimulatedRequest, SimulatedTools
from ocllm.sim.answers import cut_mid_sentence, draft_answer
from ocllm.sim.config import MAX_MODEL_LEN, SimConfig
from ocllm.sim.requests import ChatRequest, first_user_text, last_user_text, message_text
from ocllm.sim.sampling import latent_chance, request_digest, sample_digest, seeded
from ocllm.sim.suite_index import SuiteIndex
from ocllm.suites import load_suite


@dataclass(frozen=True)
class Completion:
    """One simulated answer, before it is shaped into a response body or stream."""

    response_id: str
    model: str
    content: str | None  # None when the answer is only tool calls, or all went into the reasoning
    reasoning: str | None  # None in non-reasoning mode
    finish_reason: str
    prompt_tokens: int
    completion_tokens: int
    reasoning_tokens: int | None  # None in non-reasoning mode
    tool_calls: list[dict[str, Any]] | None = None  # as `message.tool_calls` holds them; None when none


class Simulator:
    """Answers chat requests for the configured models, from the suites it was given."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        tasks: list[Task] = []
        for path in config.suites:
            tasks.extend(load_suite(str(path)).tasks)  # validated as `ocllm run` validates it
        tasks.extend(self.config.tasks)
        self.index = SuiteIndex(tasks)

    def complete(self, request: ChatRequest) -> Completion:
        accuracy = self.config.models[request.model]
        digest = request_digest(self.config.seed, request)
        rng = seeded(digest)
        chance = accuracy
        if request.temperature > 0:
            # A sampled answer: the task's latent chance comes from the greedy draw of correctness, the rest of
            # the answer from the sample's own draws (see `sampling`).
            rng.random()  # the greedy answer's truncation draw
            chance = latent_chance(accuracy, request.temperature, 1.0 - rng.random())
            digest = sample_digest(self.config.seed, request)
            rng = seeded(digest)
        # Both draws are always taken, in this order, so that changing the truncation rate or the
        # reasoning text does not change which answers are correct.
        truncated = rng.random() < self.config.truncation_rate and request.reasoning
        correct = rng.random() < chance

        prompt = last_user_text(request.messages)
        # A conversation's task is the one its first user message asks (its later turns quote none, or another's by
        # chance); any other request's, the one its last user message quotes (a few-shot prompt's first is an example).
        opening = self.index.find(first_user_text(request.messages))
        task = opening if opening is not None and is_conversation(opening) else self.index.find(prompt)
        tools = SimulatedTools(request.tools, request.tool_choice, self.config.tool_parser, self.config.tool_format)
        asked = SimulatedRequest(
            rng, task, prompt, request.model, correct, request.reasoning, tools, tuple(request.messages)
        )
        draft = draft_answer(asked)

        content, reasoning, finish_reason = draft.content, draft.reasoning, "stop"
        calls = _wire_calls(draft.tool_calls, digest) if draft.tool_calls else None
        if calls:
            finish_reason = "tool_calls"
        if truncated and reasoning is not None:
            content, reasoning, finish_reason, calls = "", cut_mid_sentence(rng, reasoning), "length", None

        prompt_tokens = _prompt_tokens(request.messages, request.tools)
        content_tokens = _approx_tokens(content or "") + (_approx_tokens(json.dumps(calls)) if calls else 0)
        reasoning_tokens: int | None = None
        if finish_reason == "length":
            # The model spent its whole budget thinking: vLLM's default budget is what the context leaves.
            completion_tokens = request.max_tokens or max(1, MAX_MODEL_LEN - prompt_tokens)
            reasoning_tokens = completion_tokens
        elif reasoning is not None:
            # Real reasoning traces are far longer than the few sentences written here; report that.
            thinking = max(_approx_tokens(reasoning), rng.randint(300, 2500))
            completion_tokens = _cap(thinking + content_tokens, request.max_tokens)
            reasoning_tokens = max(0, completion_tokens - content_tokens)
        else:
            completion_tokens = _cap(content_tokens + rng.randint(5, 120), request.max_tokens)
        return Completion(
            response_id=f"chatcmpl-sim-{digest[:24]}",
            model=request.model,
            content=content,
            reasoning=reasoning,
            finish_reason=finish_reason,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            reasoning_tokens=reasoning_tokens,
            tool_calls=calls,
        )


def _wire_calls(calls: list[Call], digest: str) -> list[dict[str, Any]]:
    """The calls as `message.tool_calls` holds them, with ids made from the response's digest (vLLM's id form)."""
    wired = []
    for number, (name, arguments) in enumerate(calls):
        suffix = hashlib.sha256(f"{digest}:{number}".encode()).hexdigest()[:32]
        function = {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}
        wired.append({"id": f"chatcmpl-tool-{suffix}", "type": "function", "function": function})
    return wired



def _approx_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _prompt_tokens(messages: list[dict[str, Any]], tools: tuple[dict[str, Any], ...] = ()) -> int:
    # About four characters a token, plus the few tokens a chat template adds around each message; a chat template
    # writes the tools offered into the prompt too, as JSON (an agent's two dozen tools are thousands of tokens).
    chars = sum(len(message_text(m.get("content"))) for m in messages)
    if tools:
        chars += len(json.dumps(list(tools), ensure_ascii=False))
    return max(1, math.ceil(chars / 4) + 4 * len(messages))


def _cap(tokens: int, max_tokens: int | None) -> int:
    return min(tokens, max_tokens) if max_tokens is not None else tokens
