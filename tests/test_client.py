"""The HTTP client against a real server on 127.0.0.1 (tests/faultserver.py) whose every reply a test scripts.

Nothing in the client is mocked: each test sends real requests over real sockets and reads the Sample. Time
assertions only bound waits from below (a retry must not come early), never tightly from above.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest
from faultserver import Close, Drop, FaultServer, Hang, Pause, Reply, Stream, Together, split_bytes, sse
from helpers import FIRES_ON_A_HELD_REQUEST_S
from ports import refused_port

from ocllm.models import Sample
from ocllm.run.client import (
    ClientSettings,
    backoff_delay,
    chat_completion,
    list_models,
    make_session,
    parse_retry_after,
)
from ocllm.run.sse import SSEParser

API_KEY = "sk-test-7f3a9c1e5b2d4f60"
BODY: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "What is 2 + 2?"}], "max_tokens": 64}
USAGE = {
    "prompt_tokens": 12,
    "completion_tokens": 30,
    "total_tokens": 42,
    "completion_tokens_details": {"reasoning_tokens": 21},
    "prompt_tokens_details": None,
}


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with FaultServer() as srv:
        yield srv


def settings(server: FaultServer, **overrides: Any) -> ClientSettings:
    """Fast settings for tests: retries wait milliseconds, not seconds."""
    values: dict[str, Any] = {
        "base_url": server.base_url,
        "api_key": API_KEY,
        "timeout_s": 5.0,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.05,
    }
    values.update(overrides)
    return ClientSettings(**values)


def run(cfg: ClientSettings, body: dict[str, Any] | None = None, *, task_id: str = "t1") -> Sample:
    async def go() -> Sample:
        async with make_session(4) as session:
            return await chat_completion(session, cfg, task_id, BODY if body is None else body, rng=random.Random(7))

    return asyncio.run(go())


def completion(
    content: str | None = "FINAL: D",
    *,
    finish_reason: str | None = "stop",
    usage: dict[str, Any] | None = None,
    **message: Any,
) -> dict[str, Any]:
    """A non-streamed chat completion as vLLM sends it; extra keyword arguments go into the message."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "qwen3",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **message},
                "finish_reason": finish_reason,
            }
        ],
        "usage": usage or USAGE,
    }


def chunk(finish_reason: str | None = None, **delta: Any) -> dict[str, Any]:
    return {
        "id": "chatcmpl-2",
        "object": "chat.completion.chunk",
        "model": "qwen3",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def usage_chunk(usage: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-2",
        "object": "chat.completion.chunk",
        "model": "qwen3",
        "choices": [],
        "usage": usage or USAGE,
    }


def reasoning_stream(field: str = "reasoning_content") -> str:
    return sse(
        chunk(role="assistant", content=""),
        chunk(**{field: "Options: FINAL: A "}),
        chunk(**{field: "or FINAL: B. Ché"}),
        chunk(content="The answer"),
        chunk(content=" is 4.\nFINAL: B"),
        chunk(finish_reason="stop"),
        usage_chunk(),
    )


# --- success, non-streaming ------------------------------------------------------------------------------------


def test_non_streaming_success_keeps_the_response_and_records_the_request(server: FaultServer) -> None:
    server.script(Reply(json=completion("The answer is 4.\nFINAL: B")))
    sample = run(settings(server))
    assert sample.error is None
    assert sample.content == "The answer is 4.\nFINAL: B"
    assert sample.reasoning is None and sample.reasoning_field is None
    assert sample.finish_reason == "stop"
    assert sample.usage == USAGE
    assert sample.model == "qwen3"
    assert sample.response_id == "chatcmpl-1"
    assert sample.attempts == 1
    assert sample.latency_s is not None and sample.latency_s > 0
    assert sample.ttft_s is None
    assert sample.request == BODY
    (req,) = server.requests
    assert req.method == "POST" and req.path == "/v1/chat/completions"
    assert req.json() == BODY
    assert req.headers["Content-Type"] == "application/json"


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_non_streaming_reasoning_under_either_field_name(server: FaultServer, field: str) -> None:
    server.script(Reply(json=completion("FINAL: B", **{field: "FINAL: A or FINAL: B?"})))
    sample = run(settings(server))
    assert sample.reasoning == "FINAL: A or FINAL: B?"
    assert sample.reasoning_field == field
    assert sample.content == "FINAL: B"


def test_both_reasoning_fields_differing_prefers_reasoning_content(server: FaultServer) -> None:
    server.script(Reply(json=completion("x", reasoning_content="long form", reasoning="short")))
    sample = run(settings(server))
    assert (sample.reasoning, sample.reasoning_field) == ("long form", "reasoning_content")


def test_an_empty_reasoning_content_does_not_hide_a_filled_reasoning(server: FaultServer) -> None:
    server.script(Reply(json=completion("x", reasoning_content=None, reasoning="the real trace")))
    sample = run(settings(server))
    assert (sample.reasoning, sample.reasoning_field) == ("the real trace", "reasoning")


@pytest.mark.parametrize("content", [None, ""])
def test_null_and_empty_content_are_kept_as_sent(server: FaultServer, content: str | None) -> None:
    server.script(Reply(json=completion(content, finish_reason="length", reasoning_content="still thinking")))
    sample = run(settings(server))
    assert sample.error is None
    assert sample.content == content
    assert sample.finish_reason == "length"
    assert sample.reasoning == "still thinking"


def test_usage_is_kept_verbatim_with_reasoning_tokens_and_unknown_keys(server: FaultServer) -> None:
    usage = {**USAGE, "server_specific": {"cached": 3, "list": [1, 2]}}
    server.script(Reply(json=completion(usage=usage)))
    sample = run(settings(server))
    assert sample.usage == usage
    assert sample.usage is not None
    assert sample.usage["completion_tokens_details"]["reasoning_tokens"] == 21


def test_only_choice_index_zero_is_kept(server: FaultServer) -> None:
    doc = completion("first")
    doc["choices"].insert(0, {"index": 1, "message": {"content": "second"}, "finish_reason": "stop"})
    server.script(Reply(json=doc))
    assert run(settings(server)).content == "first"


def test_the_sample_round_trips_through_json(server: FaultServer) -> None:
    server.script(Reply(json=completion(reasoning="r")))
    sample = run(settings(server))
    assert msgspec.json.decode(msgspec.json.encode(sample), type=Sample) == sample


# --- success, streaming ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "gap", "line_end"), [(1, 0.0, "\n"), (7, 0.001, "\n"), (13, 0.001, "\r\n"), (5, 0.001, "\r")]
)
def test_streaming_with_chunks_split_at_odd_byte_boundaries(
    server: FaultServer, size: int, gap: float, line_end: str
) -> None:
    text = sse(
        chunk(role="assistant", content=""),
        chunk(reasoning_content="Ché? "),
        chunk(reasoning_content="FINAL: A or B"),
        chunk(content="Réponse: "),
        chunk(content="FINAL: B"),
        chunk(finish_reason="stop"),
        usage_chunk(),
        line_end=line_end,
    )
    # Cut anywhere, inside "data:", inside a JSON string, between the two bytes of "é" or of "\r\n".
    server.script(Stream(split_bytes(text, size), gap=gap))
    sample = run(settings(server, stream=True))
    assert sample.error is None
    assert sample.content == "Réponse: FINAL: B"
    assert sample.reasoning == "Ché? FINAL: A or B"
    assert sample.reasoning_field == "reasoning_content"
    assert sample.finish_reason == "stop"
    assert sample.usage == USAGE
    assert sample.model == "qwen3" and sample.response_id == "chatcmpl-2"
    assert sample.attempts == 1


def test_streaming_request_asks_for_usage_and_records_the_sent_body(server: FaultServer) -> None:
    server.script(Stream([reasoning_stream()]))
    sample = run(settings(server, stream=True))
    expected = {**BODY, "stream": True, "stream_options": {"include_usage": True}}
    assert server.requests[0].json() == expected
    assert sample.request == expected
    assert server.requests[0].headers["Accept"] == "text/event-stream"


def test_a_callers_stream_options_are_left_alone(server: FaultServer) -> None:
    server.script(Stream([reasoning_stream()]))
    body = {**BODY, "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
    run(settings(server, stream=True), body)
    sent = server.requests[0].json()
    assert sent["stream"] is True
    assert sent["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_streaming_reasoning_under_either_field_name(server: FaultServer, field: str) -> None:
    server.script(Stream([reasoning_stream(field)]))
    sample = run(settings(server, stream=True))
    assert sample.reasoning == "Options: FINAL: A or FINAL: B. Ché"
    assert sample.reasoning_field == field
    assert sample.content == "The answer is 4.\nFINAL: B"


def test_streaming_deltas_carrying_both_field_names_are_not_doubled(server: FaultServer) -> None:
    # vLLM versions around the rename send each reasoning piece under both names.
    text = sse(
        chunk(reasoning_content="step 1. ", reasoning="step 1. "),
        chunk(reasoning_content="step 2.", reasoning="step 2."),
        chunk(content="done", finish_reason="stop"),
    )
    server.script(Stream([text]))
    sample = run(settings(server, stream=True))
    assert (sample.reasoning, sample.reasoning_field) == ("step 1. step 2.", "reasoning_content")


def test_streaming_deltas_with_differing_fields_prefer_reasoning_content(server: FaultServer) -> None:
    text = sse(
        chunk(reasoning_content="A", reasoning="x"), chunk(reasoning="B"), chunk(content="c", finish_reason="stop")
    )
    server.script(Stream([text]))
    sample = run(settings(server, stream=True))
    # The second delta has only `reasoning`, which is then the one that carries the text.
    assert (sample.reasoning, sample.reasoning_field) == ("AB", "reasoning_content")


def test_streaming_comments_keep_alives_and_ttft(server: FaultServer) -> None:
    parts: list[str | bytes | Pause] = [
        ": connected\n\n",
        "\n\n\n",  # blank keep-alive lines dispatch nothing
        sse(chunk(role="assistant", content=""), done=False),  # a role-only chunk is not the first token
        Pause(0.15),
        ": ping\n\n",
        sse(chunk(reasoning="think"), chunk(content="FINAL: C", finish_reason="length"), usage_chunk()),
    ]
    server.script(Stream(parts))
    sample = run(settings(server, stream=True))
    assert sample.error is None
    assert (sample.content, sample.reasoning, sample.finish_reason) == ("FINAL: C", "think", "length")
    assert sample.ttft_s is not None and sample.latency_s is not None
    assert sample.ttft_s >= 0.14
    assert sample.ttft_s <= sample.latency_s


def test_streaming_content_only_empty_strings_is_empty_not_null(server: FaultServer) -> None:
    text = sse(chunk(role="assistant", content=""), chunk(reasoning_content="cut off"), chunk(finish_reason="length"))
    server.script(Stream([text]))
    sample = run(settings(server, stream=True))
    assert sample.content == ""
    assert sample.finish_reason == "length"
    assert sample.ttft_s is not None


def test_streaming_without_any_content_field_gives_null_content(server: FaultServer) -> None:
    server.script(Stream([sse(chunk(reasoning="only thinking"), chunk(finish_reason="length"))]))
    sample = run(settings(server, stream=True))
    assert sample.content is None
    assert sample.reasoning == "only thinking"


def test_streaming_usage_keeps_the_last_report(server: FaultServer) -> None:
    early = {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}
    text = sse(
        {**chunk(content="a"), "usage": early},
        {**chunk(content="b", finish_reason="stop"), "usage": None},
        usage_chunk(),
    )
    server.script(Stream([text]))
    assert run(settings(server, stream=True)).usage == USAGE


def test_streaming_requested_but_server_answers_with_plain_json(server: FaultServer) -> None:
    server.script(Reply(json=completion("plain", reasoning="r")))
    sample = run(settings(server, stream=True))
    assert (sample.content, sample.reasoning, sample.error) == ("plain", "r", None)
    assert sample.ttft_s is None


def test_stream_ending_with_a_finish_reason_but_without_done_is_accepted(server: FaultServer) -> None:
    server.script(Stream([sse(chunk(content="FINAL: A", finish_reason="stop"), usage_chunk(), done=False)]))
    sample = run(settings(server, stream=True))
    assert (sample.content, sample.error, sample.attempts) == ("FINAL: A", None, 1)
    assert sample.usage == USAGE


def test_stream_cut_after_its_finish_reason_is_accepted(server: FaultServer) -> None:
    server.script(Stream([sse(chunk(content="FINAL: A", finish_reason="stop"), done=False)], abort=True))
    sample = run(settings(server, stream=True))
    assert (sample.content, sample.finish_reason, sample.error, sample.attempts) == ("FINAL: A", "stop", None, 1)


def test_last_event_without_a_trailing_blank_line_still_counts(server: FaultServer) -> None:
    server.script(
        Stream(
            [
                sse(chunk(content="x"), done=False)
                + "data: "
                + '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}'
            ]
        )
    )
    sample = run(settings(server, stream=True))
    assert (sample.content, sample.error) == ("x", None)


# --- retries ---------------------------------------------------------------------------------------------------


def test_429_with_retry_after_seconds_is_honoured(server: FaultServer) -> None:
    server.script(
        Reply(status=429, json={"error": "slow down"}, headers={"Retry-After": "0.2"}),
        Reply(json=completion()),
    )
    # Back-off alone would wait at most 1 ms, so a gap of 0.2 s can only come from Retry-After.
    sample = run(settings(server, backoff_base_s=0.001, backoff_max_s=5.0))
    assert (sample.error, sample.attempts, sample.content) == (None, 2, "FINAL: D")
    first, second = server.requests
    assert second.at - first.at >= 0.19  # 10 ms of slack for timer granularity, never an upper bound


def test_429_with_retry_after_as_a_past_http_date_retries_at_once(server: FaultServer) -> None:
    past = email.utils.formatdate(time.time() - 60, usegmt=True)
    server.script(Reply(status=429, body="busy", headers={"Retry-After": past}), Reply(json=completion()))
    sample = run(settings(server))
    assert (sample.error, sample.attempts) == (None, 2)


def test_retry_after_is_capped_at_backoff_max(server: FaultServer, retry_waits: list[float]) -> None:
    server.script(Reply(status=429, body="busy", headers={"Retry-After": "3600"}), Reply(json=completion()))
    sample = run(settings(server, backoff_max_s=0.05))
    assert (sample.error, sample.attempts) == (None, 2)
    assert retry_waits == [0.05]  # the wait asked for, not the hour (no clock read: load cannot fail it)


def test_retry_after_beyond_the_retry_budget_stops_retrying(server: FaultServer) -> None:
    server.script(Reply(status=429, body="busy", headers={"Retry-After": "10"}), then=Reply(json=completion()))
    sample = run(settings(server, backoff_max_s=30.0, retry_budget_s=1.0))
    assert sample.attempts == 1
    assert sample.error == "HTTP 429 after 1 attempt (retry budget of 1 s spent): busy"
    assert len(server.requests) == 1


def test_retry_budget_bounds_the_number_of_attempts(server: FaultServer) -> None:
    # Waits of 0.1 s on average (full jitter up to 0.2 s): a budget of 3 s holds about 30 attempts, far fewer than
    # max_attempts; and the first answer comes well within it however loaded the machine, so a second one is made.
    server.script(then=Reply(status=503, body="loading"))
    sample = run(settings(server, max_attempts=1000, backoff_base_s=0.2, backoff_max_s=0.2, retry_budget_s=3.0))
    assert sample.error is not None and "retry budget of 3 s spent" in sample.error
    assert 1 < sample.attempts < 1000
    assert len(server.requests) == sample.attempts


def test_500_then_success(server: FaultServer) -> None:
    server.script(Reply(status=500, body="Internal Server Error"), Reply(json=completion("ok")))
    sample = run(settings(server))
    assert (sample.content, sample.attempts, sample.error) == ("ok", 2, None)
    assert [r.json() for r in server.requests] == [BODY, BODY]


def test_500_forever_gives_an_error_after_max_attempts(server: FaultServer) -> None:
    body = "CUDA out of memory.\n" + "x" * 400
    server.script(then=Reply(status=500, body=body, content_type="text/plain"))
    sample = run(settings(server))
    assert sample.attempts == 4
    assert len(server.requests) == 4
    assert sample.error == "HTTP 500 after 4 attempts: " + ("CUDA out of memory. " + "x" * 400)[:200]
    assert (sample.content, sample.reasoning, sample.finish_reason) == (None, None, None)
    assert sample.request == BODY


@pytest.mark.parametrize(
    ("status", "kind"), [(400, "http_status"), (401, "misconfigured"), (404, "misconfigured"), (422, "http_status")]
)
def test_other_4xx_are_not_retried(server: FaultServer, status: int, kind: str) -> None:
    server.script(Reply(status=status, json={"detail": "Not Found"}), then=Reply(json=completion()))
    sample = run(settings(server))
    assert sample.attempts == 1
    assert len(server.requests) == 1
    assert (sample.error_kind, sample.error_status) == (kind, status)
    if kind == "http_status":  # a 4xx that says nothing more: quoted as it came
        assert sample.error == f'HTTP {status}: {{"detail": "Not Found"}}'
    else:  # the same for every request of the lane: the server's reason, then what to change (refusals.py)
        assert sample.error is not None
        assert sample.error.startswith(f"HTTP {status}: Not Found; not retried, no request of this lane can pass")
    assert sample.content is None


@pytest.mark.parametrize("status", [408, 429])
def test_a_request_timeout_and_a_rate_limit_are_retried(server: FaultServer, status: int) -> None:
    # Both say "later", whatever the body says (even of the context: a 429 from a router is still a rate limit).
    body = {"error": {"message": "maximum context length is busy: try again later"}}
    server.script(Reply(status=status, json=body), then=Reply(json=completion()))
    sample = run(settings(server))
    assert (sample.error, sample.attempts) == (None, 2)


def test_a_redirect_is_reported_not_followed(server: FaultServer) -> None:
    server.script(Reply(status=307, body="", headers={"Location": "http://elsewhere/v1/chat/completions"}))
    sample = run(settings(server))
    assert sample.attempts == 1 and len(server.requests) == 1
    assert sample.error == "HTTP 307: redirected to http://elsewhere/v1/chat/completions; (empty body)"


def test_timeout_is_retried_then_reported(server: FaultServer) -> None:
    server.script(then=Hang(5.0))
    sample = run(settings(server, timeout_s=0.3, max_attempts=3))
    assert sample.attempts == 3
    assert len(server.requests) == 3
    assert sample.error == "timeout after 3 attempts: no complete response within 0.3 s"
    assert sample.content is None


def test_a_stream_that_stalls_times_out_then_succeeds(server: FaultServer) -> None:
    server.script(
        Stream([sse(chunk(content="par"), done=False), Pause(600), sse(chunk(content="tial", finish_reason="stop"))]),
        Stream([reasoning_stream()]),
    )
    sample = run(settings(server, stream=True, timeout_s=FIRES_ON_A_HELD_REQUEST_S))
    assert (sample.error, sample.attempts) == (None, 2)
    assert sample.content == "The answer is 4.\nFINAL: B"


def test_dropped_connection_mid_body_is_retried(server: FaultServer) -> None:
    server.script(Drop(partial=b'{"id": "chatcmpl-1", "choi'), Reply(json=completion("after the drop")))
    sample = run(settings(server))
    assert (sample.content, sample.attempts, sample.error) == ("after the drop", 2, None)


def test_dropped_connection_forever_is_reported(server: FaultServer) -> None:
    server.script(then=Drop(partial=b'{"id"'))
    sample = run(settings(server, max_attempts=2))
    assert sample.attempts == 2
    assert sample.error is not None and sample.error.startswith("connection failed after 2 attempts: ")


def test_stream_cut_mid_way_is_retried(server: FaultServer) -> None:
    server.script(
        Stream([sse(chunk(content="half an ans"), done=False)], abort=True),
        Stream([reasoning_stream()]),
    )
    sample = run(settings(server, stream=True))
    assert (sample.error, sample.attempts) == (None, 2)
    # Nothing of the broken attempt leaks into the answer.
    assert sample.content == "The answer is 4.\nFINAL: B"


def test_stream_ending_cleanly_without_done_or_finish_reason_is_a_dropped_connection(server: FaultServer) -> None:
    server.script(then=Stream([sse(chunk(content="half"), done=False)]))
    sample = run(settings(server, stream=True, max_attempts=2))
    assert sample.attempts == 2
    assert sample.error == (
        "connection dropped after 2 attempts: the stream ended without [DONE] and without a finish_reason"
    )


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ('{"id": "chatcmpl-1", "choices": [{"index": 0, "mess', "invalid JSON"),
        ("", "invalid JSON"),
        ('{"id": "chatcmpl-1", "object": "chat.completion"}', "no choices"),
        ('{"id": "chatcmpl-1", "choices": []}', "no choices"),
        ("[1, 2]", "not a JSON object"),
        ('{"choices": [{"index": 0, "finish_reason": "stop"}]}', "choices[0] has no message"),
    ],
)
def test_malformed_200_body_is_retried_then_reported(server: FaultServer, body: str, reason: str) -> None:
    server.script(then=Reply(body=body))
    sample = run(settings(server, max_attempts=3))
    assert sample.attempts == 3
    assert len(server.requests) == 3
    assert sample.error is not None
    assert sample.error.startswith(f"malformed response body after 3 attempts: {reason}")


def test_malformed_body_once_then_success(server: FaultServer) -> None:
    server.script(Reply(body='{"choices": [{"mes'), Reply(json=completion("fine")))
    sample = run(settings(server))
    assert (sample.content, sample.attempts, sample.error) == ("fine", 2, None)


def test_malformed_stream_event_is_retried(server: FaultServer) -> None:
    server.script(Stream(['data: {"choices": [{"delta": \n\n']), Stream([reasoning_stream()]))
    sample = run(settings(server, stream=True))
    assert (sample.error, sample.attempts) == (None, 2)


def test_connection_refused_is_reported(server: FaultServer) -> None:
    cfg = ClientSettings(base_url=f"http://127.0.0.1:{refused_port()}/v1", backoff_base_s=0.01, max_attempts=3)
    sample = run(cfg)
    assert sample.attempts == 3
    assert sample.error is not None
    assert sample.error.startswith("connection failed after 3 attempts: Cannot connect to host 127.0.0.1:")
    assert sample.request == BODY


# --- error objects in a 200 response ---------------------------------------------------------------------------


def test_error_object_mid_stream_with_a_client_code_is_not_retried(server: FaultServer) -> None:
    error = {"error": {"object": "error", "message": "maximum context length exceeded", "code": 400}}
    server.script(Stream([sse(chunk(content="par"), error, done=False)]), then=Stream([reasoning_stream()]))
    sample = run(settings(server, stream=True))
    assert sample.attempts == 1
    assert sample.error is not None
    assert sample.error.startswith(
        "server error in stream: maximum context length exceeded (code 400); not retried, the prompt and max_tokens "
        "do not fit the server's context"
    )
    assert (sample.error_kind, sample.error_status) == ("refused", None)
    assert sample.content is None


def test_error_object_mid_stream_with_a_server_code_is_retried(server: FaultServer) -> None:
    error = {"error": {"message": "engine dead", "type": "InternalServerError", "code": 500}}
    server.script(Stream([sse(chunk(content="par"), error)]), Stream([reasoning_stream()]))
    sample = run(settings(server, stream=True))
    assert (sample.error, sample.attempts) == (None, 2)


def test_error_object_in_a_200_body(server: FaultServer) -> None:
    server.script(Reply(json={"error": "model 'qwen' not found"}), then=Reply(json=completion()))
    sample = run(settings(server))
    assert (sample.error, sample.attempts) == ("server error in response body: model 'qwen' not found", 1)


# --- the API key -----------------------------------------------------------------------------------------------


def test_api_key_is_sent_but_never_stored(server: FaultServer) -> None:
    server.script(Reply(json=completion()))
    sample = run(settings(server))
    assert server.requests[0].headers["Authorization"] == f"Bearer {API_KEY}"
    assert API_KEY.encode() not in msgspec.json.encode(sample)


def test_api_key_echoed_by_the_server_stays_out_of_the_error_and_the_log(
    server: FaultServer, caplog: pytest.LogCaptureFixture
) -> None:
    # Some servers quote the key they rejected; the key sits across the 200-character cut on purpose.
    echo = "y" * 190 + f"invalid key {API_KEY}"
    server.script(Reply(status=503, body=echo), Reply(status=401, body=f"Incorrect API key provided: {API_KEY}"))
    with caplog.at_level(logging.DEBUG, logger="ocllm.run.client"):
        sample = run(settings(server))
    assert sample.attempts == 2
    assert sample.error is not None
    assert sample.error.startswith("HTTP 401: Incorrect API key provided: [redacted]; not retried")
    assert API_KEY.encode() not in msgspec.json.encode(sample)
    assert API_KEY[:8] not in sample.error
    assert "retrying" in caplog.text
    assert API_KEY not in caplog.text and API_KEY[:10] not in caplog.text


@pytest.mark.parametrize(
    "event",
    [
        "y" * 170 + f"garbage echoing Bearer {API_KEY} and more",  # not JSON
        '{"error": {"message": "' + "y" * 170 + f'bad key {API_KEY}", "code": 401}}}}',  # an error object
        '["' + "y" * 175 + f'{API_KEY}"]',  # JSON, but not an object
    ],
)
def test_api_key_echoed_in_a_stream_never_survives_the_cut(server: FaultServer, event: str) -> None:
    server.script(then=Stream([f"data: {event}\n\n"]))
    sample = run(settings(server, stream=True, max_attempts=1))
    assert sample.error is not None
    for prefix_length in (6, 8, 12, len(API_KEY)):
        assert API_KEY[:prefix_length] not in sample.error


def test_done_without_a_finish_reason_is_an_incomplete_stream(server: FaultServer) -> None:
    # vLLM failing before the first token: only [DONE]; a stream cut to "The corr" and then [DONE].
    server.script(Stream(["data: [DONE]\n\n"]), Stream([sse(chunk(content="The corr"))]))
    sample = run(settings(server, stream=True, max_attempts=2))
    assert sample.content is None and sample.attempts == 2
    assert sample.error is not None and sample.error.startswith("incomplete stream after 2 attempts")


@pytest.mark.parametrize(
    "event",
    [
        'error: {"code": 500, "message": "slot unavailable"}\n\ndata: [DONE]\n\n',  # older llama.cpp
        'event: error\ndata: {"message": "slot unavailable"}\n\ndata: [DONE]\n\n',
    ],
)
def test_error_lines_and_error_events_in_a_stream(server: FaultServer, event: str) -> None:
    server.script(then=Stream([sse(chunk(content="The corr"), done=False) + event]))
    sample = run(settings(server, stream=True, max_attempts=1))
    assert sample.error is not None and "slot unavailable" in sample.error


def test_no_api_key_sends_no_authorization_header(server: FaultServer) -> None:
    server.script(Reply(json=completion()))
    run(settings(server, api_key=None))
    assert "Authorization" not in server.requests[0].headers


def test_settings_repr_hides_the_api_key() -> None:
    cfg = ClientSettings(base_url="http://127.0.0.1:1/v1", api_key=API_KEY)
    assert API_KEY not in repr(cfg)
    assert API_KEY not in str(cfg)
    assert "api_key='[redacted]'" in repr(cfg)


# --- concurrency, session, models --------------------------------------------------------------------------------


def test_concurrent_requests_each_get_their_own_sample(server: FaultServer) -> None:
    server.script(then=Stream([reasoning_stream()], gap=0.001))
    cfg = settings(server, stream=True)

    async def go() -> list[Sample]:
        async with make_session(3) as session:
            return await asyncio.gather(*(chat_completion(session, cfg, f"t{i}", BODY) for i in range(8)))

    samples = asyncio.run(go())
    assert [s.task_id for s in samples] == [f"t{i}" for i in range(8)]
    assert all(s.content == "The answer is 4.\nFINAL: B" and s.error is None for s in samples)


def test_make_session_sends_no_more_requests_at_once_than_asked(server: FaultServer) -> None:
    """Behaviour, not connector attributes: with a session for 2, a third request waits for a free slot. Each
    request is held until two are in the server, then for 0.4 s more, time for a third to arrive were it sent."""
    slow = Stream([Pause(0.4), sse(chunk("stop", content="FINAL: B")), "data: [DONE]\n\n"])
    server.script(then=Together(2, slow))
    cfg = settings(server, stream=True)

    async def go() -> list[Sample]:
        async with make_session(2) as session:
            return await asyncio.gather(*(chat_completion(session, cfg, f"t{i}", BODY) for i in range(5)))

    samples = asyncio.run(go())
    assert all(s.error is None for s in samples)
    assert len(server.requests) == 5
    assert server.max_in_flight == 2  # two at once, never more: the rest after a slot freed


def test_list_models(server: FaultServer) -> None:
    models = {"object": "list", "data": [{"id": "qwen3", "object": "model", "max_model_len": 32768}]}
    server.script(Reply(json=models))

    async def go() -> dict[str, Any] | None:
        async with make_session(1) as session:
            return await list_models(session, settings(server))

    assert asyncio.run(go()) == models
    (req,) = server.requests
    assert (req.method, req.path) == ("GET", "/v1/models")
    assert req.headers["Authorization"] == f"Bearer {API_KEY}"


@pytest.mark.parametrize(
    "behaviour",
    [Reply(status=500, body="down"), Reply(body="not json"), Reply(json=[1]), Hang(5.0), Drop(partial=b"{")],
)
def test_list_models_returns_none_on_failure(server: FaultServer, behaviour: Reply | Hang | Drop) -> None:
    server.script(behaviour)

    async def go() -> dict[str, Any] | None:
        async with make_session(1) as session:
            return await list_models(session, settings(server, timeout_s=0.3))

    assert asyncio.run(go()) is None


def test_list_models_connection_refused_returns_none() -> None:
    async def go() -> dict[str, Any] | None:
        async with make_session(1) as session:
            return await list_models(session, ClientSettings(base_url=f"http://127.0.0.1:{refused_port()}/v1"))

    assert asyncio.run(go()) is None


# --- pieces tested directly ------------------------------------------------------------------------------------


def test_sse_parser_gives_the_same_events_at_every_split_point() -> None:
    text = (
        ": comment\r\n\r\n"
        + sse(chunk(content="é"), done=False, line_end="\r\n")
        + 'event: message\nid: 4\ndata:{"a":\ndata: 1}\n\n'  # two data lines form one event, joined by "\n"
        + "data: [DONE]\n\n"
    ).encode()

    def events(pieces: list[bytes]) -> list[str]:
        parser = SSEParser()
        out = [e for piece in pieces for e in parser.feed(piece)]
        return out + parser.close()

    whole = events([text])
    assert [msgspec.json.decode(e) if e != "[DONE]" else e for e in whole] == [chunk(content="é"), {"a": 1}, "[DONE]"]
    assert whole[1] == '{"a":\n1}'
    for cut in range(1, len(text)):
        assert events([text[:cut], text[cut:]]) == whole, cut
    assert events([bytes([b]) for b in text]) == whole


def test_sse_parser_tolerates_events_without_blank_lines_between_them() -> None:
    parser = SSEParser()
    out = parser.feed(b'data: {"a": 1}\ndata: {"b": 2}\ndata: [DONE]\n')
    assert out + parser.close() == ['{"a": 1}', '{"b": 2}', "[DONE]"]


def test_sse_parser_strips_a_byte_order_mark() -> None:
    parser = SSEParser()
    assert parser.feed("\ufeffdata: x\n\n".encode()) == ["x"]


def test_parse_retry_after() -> None:
    assert parse_retry_after("2") == 2.0
    assert parse_retry_after(" 0.25 ") == 0.25
    assert parse_retry_after("-3") == 0.0
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    assert parse_retry_after("nan") is None
    future = parse_retry_after(email.utils.formatdate(time.time() + 120, usegmt=True))
    assert future is not None and 100 < future <= 121
    assert parse_retry_after(email.utils.formatdate(time.time() - 120, usegmt=True)) == 0.0


def test_backoff_is_full_jitter_within_the_capped_exponential() -> None:
    cfg = ClientSettings(base_url="http://127.0.0.1:1/v1", backoff_base_s=0.5, backoff_max_s=3.0)
    rng = random.Random(0)
    for attempt, cap in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 3.0), (10, 3.0), (5000, 3.0)]:
        delays = [backoff_delay(cfg, attempt, rng) for _ in range(200)]
        assert all(0.0 <= d <= cap for d in delays)
        assert max(delays) > cap * 0.8  # spread over the whole range, not a fixed wait
    # The same seed gives the same waits: a test can make jitter deterministic.
    assert [backoff_delay(cfg, 3, random.Random(1)) for _ in range(3)] == [
        backoff_delay(cfg, 3, random.Random(1)) for _ in range(3)
    ]


@pytest.mark.parametrize(
    "overrides",
    [
        {"base_url": "127.0.0.1:8000/v1"},
        {"max_attempts": 0},
        {"timeout_s": 0},
        {"connect_timeout_s": -1},
        {"backoff_base_s": -0.1},
        {"retry_budget_s": float("nan")},
    ],
)
def test_invalid_settings_are_refused(overrides: dict[str, Any]) -> None:
    values: dict[str, Any] = {"base_url": "http://127.0.0.1:8000/v1", **overrides}
    with pytest.raises(ValueError):
        ClientSettings(**values)


def test_make_session_refuses_zero_concurrency() -> None:
    with pytest.raises(ValueError):
        make_session(0)


# --- issue 19, item 9: kept-alive connections the server closed; every retry's reason counted -----------------


def run_in_turn(cfg: ClientSettings, n: int, *, reuse_connections: bool = True) -> list[Sample]:
    """`n` requests one after the other through one session of one connection, as a lane of concurrency 1."""

    async def go() -> list[Sample]:
        async with make_session(1, reuse_connections=reuse_connections) as session:
            return [await chat_completion(session, cfg, f"t{i}", BODY, rng=random.Random(7)) for i in range(n)]

    return asyncio.run(go())


def test_a_reused_connection_the_server_had_closed_is_resent_free(server: FaultServer) -> None:
    # Every answer leaves its connection doomed: the next request on it is met by a close before any byte.
    server.script(then=Reply(json=completion(), close_after=True))
    samples = run_in_turn(settings(server, max_attempts=1), 3)
    assert [s.error for s in samples] == [None, None, None]
    assert [s.attempts for s in samples] == [1, 1, 1]  # no attempt was spent on the dead connections
    # The re-send's connection is not pooled, so the third request opens a new one and meets no dead connection.
    assert [s.resends for s in samples] == [0, 1, 0]
    assert all(s.retry_reasons == {} for s in samples)
    assert [r.closed for r in server.requests] == [False, True, False, False]


def test_a_streamed_answer_then_a_dead_pooled_connection_is_resent_free(server: FaultServer) -> None:
    server.script(then=Stream([reasoning_stream()], close_after=True))
    samples = run_in_turn(settings(server, stream=True, max_attempts=1), 4)
    assert [s.error for s in samples] == [None] * 4 and [s.attempts for s in samples] == [1] * 4
    assert [s.resends for s in samples] == [0, 1, 0, 1]  # every other request takes the one pooled connection


def test_without_reuse_no_request_meets_a_dead_connection(server: FaultServer) -> None:
    # What streamed lanes do: llama-server closes after every stream, so a pooled connection would be dead.
    server.script(then=Stream([reasoning_stream()], close_after=True))
    samples = run_in_turn(settings(server, stream=True, max_attempts=1), 3, reuse_connections=False)
    assert [(s.error, s.resends) for s in samples] == [(None, 0)] * 3
    assert not any(r.closed for r in server.requests)


def test_a_new_connection_closed_before_any_byte_spends_an_attempt(server: FaultServer) -> None:
    # Not a stale pooled connection: the server itself dropped a request it was given. That is a retry.
    server.script(Close(), then=Reply(json=completion()))
    (sample,) = run_in_turn(settings(server, max_attempts=2), 1)
    assert (sample.error, sample.attempts, sample.resends) == (None, 2, 0)
    assert sample.retry_reasons == {"server disconnected": 1}


def test_one_free_resend_per_attempt_then_the_failure_counts(server: FaultServer) -> None:
    # The pooled connection is dead, and the fresh one is closed too: the free re-send is spent, the attempt fails.
    server.script(Reply(json=completion(), close_after=True), Close(), then=Reply(json=completion()))
    first, second = run_in_turn(settings(server, max_attempts=1), 2)
    assert first.error is None
    assert second.error is not None and second.error.startswith("connection failed after 1 attempt")
    assert (second.attempts, second.resends, second.error_kind) == (1, 1, "connection")


def test_every_retry_reason_is_counted_by_kind(server: FaultServer) -> None:
    # The close comes first, on a new connection: on a reused one it would be a stale connection, re-sent free.
    server.script(
        Close(),
        Reply(status=503, body="busy"),
        Reply(status=503, body="busy"),
        Reply(body="not json"),
        then=Reply(json=completion()),
    )
    (sample,) = run_in_turn(settings(server, max_attempts=5), 1)
    assert (sample.error, sample.attempts) == (None, 5)
    assert sample.retry_reasons == {"HTTP 503": 2, "server disconnected": 1, "malformed response body": 1}
    # The reasons survive the samples file.
    assert msgspec.json.decode(msgspec.json.encode(sample), type=Sample) == sample


def test_a_final_failure_is_not_counted_as_a_retry(server: FaultServer) -> None:
    server.script(then=Reply(status=503, body="busy"))
    (sample,) = run_in_turn(settings(server, max_attempts=3), 1)
    assert sample.error is not None and sample.attempts == 3
    assert sample.retry_reasons == {"HTTP 503": 2}  # the third failure is the error itself, not a retry


# --- tool calls (issue 23): recorded as the server gave them, streamed fragments joined ----------------------------

CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}


def test_a_non_streamed_answer_s_tool_calls_are_kept_verbatim(server: FaultServer) -> None:
    body = {"id": "r", "model": "qwen3", "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": None, "tool_calls": [CALL, {**CALL, "id": "call_2"}]}}]}
    server.script(Reply(json=body))
    sample = run(settings(server))
    assert sample.error is None and sample.finish_reason == "tool_calls"
    assert sample.tool_calls == [CALL, {**CALL, "id": "call_2"}] and sample.content is None


def test_streamed_tool_call_fragments_are_joined_by_their_index(server: FaultServer) -> None:
    # As vLLM streams them: the first fragment of each call has its index, id and name, the next ones pieces of the
    # arguments; two calls interleaved.
    def chunk(fragments: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
        return {"id": "r", "model": "qwen3", "choices": [{"index": 0, "delta": {"tool_calls": fragments},
                                                          "finish_reason": finish}]}  # fmt: skip

    events = [
        chunk([{"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]),
        chunk([{"index": 0, "function": {"arguments": '{"city": '}}]),
        chunk([{"index": 1, "id": "call_b", "type": "function", "function": {"name": "get_time"}}]),
        chunk([{"index": 0, "function": {"arguments": '"Paris"}'}}, {"index": 1, "function": {"arguments": "{}"}}]),
        chunk([], finish="tool_calls"),
    ]
    server.script(Stream(parts=[sse(*events)]))
    sample = run(settings(server, stream=True))
    assert sample.error is None and sample.finish_reason == "tool_calls" and sample.ttft_s is not None
    assert sample.tool_calls == [
        {"id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
        {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
    ]


def test_an_answer_without_calls_records_none(server: FaultServer) -> None:
    server.script(Reply(json=completion("FINAL: B")))
    assert run(settings(server)).tool_calls is None


def fragments_joined(*deltas: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    from ocllm.run.client import ToolCallFragments

    joined = ToolCallFragments()
    for delta in deltas:
        joined.add(delta)
    return joined.calls()


def test_streamed_calls_of_servers_that_stray_from_openai_s_shape_are_joined_right() -> None:
    # (review of issue 23) A name sent whole on every fragment, as some gateways do: kept once.
    assert fragments_joined(
        [{"index": 0, "id": "c1", "function": {"name": "get", "arguments": '{"a":'}}],
        [{"index": 0, "id": "c1", "function": {"name": "get", "arguments": "1}"}}],
    ) == [{"id": "c1", "type": "function", "function": {"name": "get", "arguments": '{"a":1}'}}]
    # No index (Gemini-compatible servers): a new id opens the next call.
    assert [c["function"] for c in fragments_joined(
        [{"id": "c1", "function": {"name": "a", "arguments": "{}"}}],
        [{"id": "c2", "function": {"name": "b", "arguments": "{}"}}],
    ) or []] == [{"name": "a", "arguments": "{}"}, {"name": "b", "arguments": "{}"}]  # fmt: skip
    # Index 0 for every call, ids telling them apart.
    assert len(fragments_joined(
        [{"index": 0, "id": "c1", "function": {"name": "a", "arguments": "{}"}}],
        [{"index": 0, "id": "c2", "function": {"name": "b", "arguments": "{}"}}],
    ) or []) == 2  # fmt: skip
    # Arguments sent as an object: kept as its JSON text.
    assert fragments_joined([{"index": 0, "id": "c", "function": {"name": "a", "arguments": {"x": 1}}}]) == [
        {"id": "c", "type": "function", "function": {"name": "a", "arguments": '{"x": 1}'}}
    ]
    # A name in pieces before its arguments is still joined.
    assert fragments_joined(
        [{"id": "c", "function": {"name": "get_"}}],
        [{"function": {"name": "weather"}}],
        [{"function": {"arguments": "{}"}}],
    ) == [{"id": "c", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}]
