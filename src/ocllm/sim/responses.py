"""The simulator's answers shaped as vLLM shapes them: a `chat.completion` body, or the
`chat.completion.chunk` objects of a stream, cut into deltas at rough token boundaries."""

from __future__ import annotations

import math
import re
from typing import Any

from ocllm.sim.config import SIM_LABEL
from ocllm.sim.simulator import Completion

# Rough tokens for streaming: a word with its leading space, a punctuation mark, or trailing space.
_TOKEN = re.compile(r"\s*\w+|\s*\S|\s+")
_MAX_PIECES = 24  # deltas per field: enough to exercise reassembly, few enough for hundreds of streams


def _usage(completion: Completion) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "total_tokens": completion.prompt_tokens + completion.completion_tokens,
    }
    if completion.reasoning_tokens is not None:
        usage["completion_tokens_details"] = {"reasoning_tokens": completion.reasoning_tokens}
    return usage


def completion_body(completion: Completion, *, created: int, reasoning_field: str) -> dict[str, Any]:
    """A non-streaming `chat.completion` body, shaped like vLLM's."""
    # vLLM with a reasoning parser always sends the field, null when the model did not think.
    message: dict[str, Any] = {"role": "assistant", "content": completion.content}
    message[reasoning_field] = completion.reasoning
    if completion.tool_calls:
        message["tool_calls"] = completion.tool_calls  # content null beside them, as vLLM's tool parsers leave it
    return {
        "id": completion.response_id,
        "object": "chat.completion",
        "created": created,
        "model": completion.model,
        "system_fingerprint": SIM_LABEL,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": completion.finish_reason}],
        "usage": _usage(completion),
    }


def split_pieces(text: str) -> list[str]:
    """Split text into streaming deltas at rough token boundaries; joining them gives the text back."""
    tokens = _TOKEN.findall(text)
    size = max(1, math.ceil(len(tokens) / _MAX_PIECES))
    return ["".join(tokens[i : i + size]) for i in range(0, len(tokens), size)]


def stream_chunks(
    completion: Completion, *, created: int, reasoning_field: str, include_usage: bool
) -> list[dict[str, Any]]:
    """The `chat.completion.chunk` objects of a streamed answer, in order (without the [DONE] line)."""

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {
            "id": completion.response_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": completion.model,
            "system_fingerprint": SIM_LABEL,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}],
        }

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [chunk({reasoning_field: piece}) for piece in split_pieces(completion.reasoning or "")]
    chunks += [chunk({"content": piece}) for piece in split_pieces(completion.content or "")]
    for index, call in enumerate(completion.tool_calls or []):
        # As vLLM streams a call: its index, id, type and name first, then the arguments text in pieces.
        function = call["function"]
        head = {"index": index, "id": call["id"], "type": call["type"], "function": {"name": function["name"]}}
        chunks.append(chunk({"tool_calls": [head]}))
        for piece in split_pieces(function["arguments"]):
            chunks.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    chunks.append(chunk({}, completion.finish_reason))
    if include_usage:
        chunks.append(
            {
                "id": completion.response_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": completion.model,
                "system_fingerprint": SIM_LABEL,
                "choices": [],
                "usage": _usage(completion),
            }
        )
    return chunks
