"""Reading a streamed body: its bytes through the SSE framing (sse.py) into events, each handed to the stream's
assembly (assembly.py), until [DONE], the end of the body, or a failure; and whether the stream ended as an
answer or was cut."""

from __future__ import annotations

import asyncio
import contextlib

import aiohttp

from ocllm.run.client.assembly import Response, StreamAccumulator
from ocllm.run.client.failures import Failure
from ocllm.run.sse import SSEParser

# How long to wait for the end of a streamed body after [DONE] before giving up on reusing the connection.
_DRAIN_AFTER_DONE_S = 1.0


async def read_stream(resp: aiohttp.ClientResponse, started: float, api_key: str | None) -> Response | Failure:
    parser = SSEParser()
    acc = StreamAccumulator(started, api_key)
    try:
        # iter_any rather than line iteration: aiohttp's readline refuses lines longer than its buffer limit,
        # and a server may send a whole long answer in one event.
        async for chunk in resp.content.iter_any():
            for data in parser.feed(chunk):
                failure = acc.handle(data)
                if failure is not None:
                    return failure
                if acc.done:
                    await _drain(resp)
                    return _finished(acc)
        for data in parser.close():
            failure = acc.handle(data)
            if failure is not None:
                return failure
            if acc.done:
                return _finished(acc)
    except (aiohttp.ClientError, OSError):
        # The answer is complete once a finish_reason arrived; losing only the trailing usage chunk and
        # [DONE] is not worth a second generation.
        if acc.finish_reason is not None:
            return acc.response()
        raise
    if acc.finish_reason is None:
        return Failure(
            "stream_cut",
            "connection dropped",
            "the stream ended without [DONE] and without a finish_reason",
            retryable=True,
        )
    return acc.response()


def _finished(acc: StreamAccumulator) -> Response | Failure:
    """[DONE] arrived. Without a finish_reason the generation did not end: vLLM sends a bare [DONE] when it
    fails before the first token, and older llama.cpp sends [DONE] after an error event. Retry, then error."""
    if acc.finish_reason is None:
        return Failure(
            "stream_cut",
            "incomplete stream",
            "[DONE] arrived without a finish_reason: the generation did not end",
            retryable=True,
        )
    return acc.response()


async def _drain(resp: aiohttp.ClientResponse) -> None:
    """Read what follows [DONE] (normally just the end of the chunked body) so the connection can be reused.

    A server that keeps the stream open after [DONE] gets a short grace period, then the connection is dropped:
    the answer is complete either way.
    """
    with contextlib.suppress(TimeoutError, aiohttp.ClientError, OSError):
        async with asyncio.timeout(_DRAIN_AFTER_DONE_S):
            async for _ in resp.content.iter_any():
                pass
