"""What kind of failure a Sample records, decided by the client, and the up-front server check that reads it.

Against real servers on 127.0.0.1 (tests/faultserver.py): every failure kind ends on the Sample with its HTTP
status and in samples.jsonl; a trial request that is rate-limited is retried as Retry-After asks, and a rate
limit that persists is refused as a rate limit, never as an unknown model.
"""

from __future__ import annotations

import asyncio
import json
import random
import typing
from pathlib import Path
from typing import Any

import msgspec
import pytest
from faultserver import Behaviour, Drop, FaultServer, Hang, Reply, Stream, models, sse
from helpers import BACKSTOP_S, FIRES_ON_A_HELD_REQUEST_S, quiet, run_cli
from ports import refused_port

from ocllm.analysis.rescore import score_run_dir
from ocllm.files.atomic import read_samples
from ocllm.models import ErrorKind, Sample
from ocllm.run.client import ClientSettings, chat_completion, make_session
from ocllm.run.lanes import Lane
from ocllm.run.runner import run_lane

BODY: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "What is 2 + 2?"}], "max_tokens": 8}


def completion(content: str = "FINAL: B", finish_reason: str = "stop", model: str = "m") -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
    }


def chunk(content: str | None = None, finish_reason: str | None = None) -> dict[str, Any]:
    delta = {} if content is None else {"content": content}
    return {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}


def ask(base_url: str, *, max_attempts: int = 2, stream: bool = False, timeout_s: float = BACKSTOP_S) -> Sample:
    cfg = ClientSettings(
        base_url=base_url, stream=stream, timeout_s=timeout_s, max_attempts=max_attempts, backoff_base_s=0.01
    )

    async def go() -> Sample:
        async with make_session(1) as session:
            return await chat_completion(session, cfg, "t1", BODY, rng=random.Random(3))

    return asyncio.run(go())


ERROR_EVENT = {"error": {"object": "error", "message": "the engine died", "code": 500}}
# llama-server's bodies, as its handlers write them (tools/server: server.cpp ex_wrapper, server-common.cpp
# format_error_response): a std::runtime_error becomes a 500 "server_error", a prompt past the slot's context a 400.
LLAMA_NO_JINJA = {"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}}
LLAMA_TOO_LONG = {
    "error": {
        "code": 400,
        "message": "request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 5000,
        "n_ctx": 4096,
    }
}

# behaviour, stream, (kind, status), how the error message starts (its wording is unchanged).
CASES: list[tuple[str, Behaviour, bool, tuple[ErrorKind, int | None], str]] = [
    ("500", Reply(status=500, body="overloaded"), False, ("http_status", 500), "HTTP 500 after 2 attempts: "),
    (
        "429",
        Reply(status=429, body="slow down", headers={"Retry-After": "0"}),
        False,
        ("http_status", 429),
        "HTTP 429 after 2 attempts: ",
    ),
    ("400", Reply(status=400, json={"error": {"message": "bad"}}), False, ("http_status", 400), "HTTP 400: "),
    (
        "404",
        Reply(status=404, json={"detail": "Not Found"}),
        False,
        ("misconfigured", 404),
        "HTTP 404: Not Found; not retried, no request of this lane can pass on this server as it runs: check the "
        "lane's model",
    ),
    (
        "tools without --jinja",
        Reply(status=500, json=LLAMA_NO_JINJA),
        False,
        ("misconfigured", 500),
        "HTTP 500: tools param requires --jinja flag; not retried, no request of this lane can pass on this server as "
        "it runs: start llama-server with --jinja, without --no-jinja",
    ),
    (
        "context too long",
        Reply(status=400, json=LLAMA_TOO_LONG),
        False,
        ("refused", 400),
        "HTTP 400: request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it; not "
        "retried, the prompt and max_tokens do not fit the server's context: give the server a larger context "
        "(llama.cpp -c",
    ),
    (
        "too long, in a stream",
        Stream([sse(chunk("x"), {"error": LLAMA_TOO_LONG["error"]}, done=False)]),
        True,
        ("refused", None),
        "server error in stream: request (5000 tokens) exceeds the available context size",
    ),
    ("timeout", Hang(600), False, ("timeout", None), "timeout after 2 attempts: "),
    ("dropped", Drop(partial=b'{"id": "chatcmpl-1", "cho'), False, ("connection", None), "connection failed after"),
    ("malformed", Reply(body='{"choices": [{"mess'), False, ("malformed", None), "malformed response body after"),
    (
        "error object in body",
        Reply(json=ERROR_EVENT),
        False,
        ("server_error_event", None),
        "server error in response body after 2 attempts: the engine died (code 500)",
    ),
    (
        "error event",
        Stream([sse(chunk("par"), ERROR_EVENT, done=False)]),
        True,
        ("server_error_event", None),
        "server error in stream after 2 attempts: the engine died (code 500)",
    ),
    (
        "error line",
        Stream(["data: " + json.dumps(chunk("par")) + "\n\nerror: out of memory\n\n"]),
        True,
        ("server_error_event", None),
        "server error in stream: out of memory",  # no code: nothing says waiting would help
    ),
    (
        "stream cut",
        Stream([sse(chunk("half an ans"), done=False)]),
        True,
        ("stream_cut", None),
        "connection dropped after 2 attempts: ",
    ),
    (
        "done too early",
        Stream([sse(chunk("half"))]),
        True,
        ("stream_cut", None),
        "incomplete stream after 2 attempts: ",
    ),
    (
        "stream aborted by the connection",
        Stream([sse(chunk("half"), done=False)], abort=True),
        True,
        ("connection", None),
        "connection failed after 2 attempts: ",
    ),
    ("aborted", Reply(json=completion(finish_reason="abort")), False, ("aborted", None), "aborted after 2 attempts"),
]


@pytest.mark.parametrize(
    ("behaviour", "stream", "expected", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_failure_kind_is_recorded_with_its_status(
    behaviour: Behaviour, stream: bool, expected: tuple[ErrorKind, int | None], message: str
) -> None:
    with FaultServer() as server:
        server.script(then=behaviour)
        # A held request times out soon; any other behaviour is met within a timeout no loaded machine reaches.
        sample = ask(server.base_url, stream=stream, timeout_s=0.5 if isinstance(behaviour, Hang) else BACKSTOP_S)
    assert sample.error is not None and sample.error.startswith(message), sample.error
    assert (sample.error_kind, sample.error_status) == expected
    # The kind survives samples.jsonl exactly.
    assert msgspec.json.decode(msgspec.json.encode(sample), type=Sample) == sample


def test_connection_refused_is_a_connection_failure() -> None:
    sample = ask(f"http://127.0.0.1:{refused_port()}/v1")
    assert sample.error is not None and sample.error.startswith("connection failed after 2 attempts: Cannot connect")
    assert (sample.error_kind, sample.error_status) == ("connection", None)


def test_the_kind_and_status_are_those_of_the_last_attempt() -> None:
    with FaultServer() as server:
        server.script(Reply(status=503, body="loading"), then=Reply(status=400, json={"error": "bad request"}))
        sample = ask(server.base_url, max_attempts=3)
    assert sample.attempts == 2 and sample.error is not None and sample.error.startswith("HTTP 400: ")
    assert (sample.error_kind, sample.error_status) == ("http_status", 400)


def test_a_response_carries_no_error_kind_and_keeps_its_shape() -> None:
    with FaultServer() as server:
        server.script(Reply(status=500, body="once"), then=Reply(json=completion()))
        sample = ask(server.base_url)
    assert (sample.error, sample.error_kind, sample.error_status, sample.attempts) == (None, None, None, 2)
    encoded = json.loads(msgspec.json.encode(sample))
    assert "error_kind" not in encoded and "error_status" not in encoded


def test_samples_saved_before_error_kinds_still_load() -> None:
    old = b'{"task_id": "t1", "attempts": 4, "error": "HTTP 500 after 4 attempts: overloaded"}'
    sample = msgspec.json.decode(old, type=Sample)
    assert (sample.error, sample.error_kind, sample.error_status) == (
        "HTTP 500 after 4 attempts: overloaded",
        None,
        None,
    )


def test_the_client_and_the_record_agree_on_the_kinds() -> None:
    (recorded,) = [a for a in typing.get_args(typing.get_type_hints(Sample)["error_kind"]) if a is not type(None)]
    assert set(typing.get_args(recorded)) == set(typing.get_args(ErrorKind))
    assert {c[3][0] for c in CASES} == set(typing.get_args(ErrorKind))  # every kind is tested above


# --- a whole run: the kinds in samples.jsonl -------------------------------------------------------------------


def test_every_kind_is_written_to_samples_jsonl(tmp_path: Path) -> None:
    failures: list[tuple[Behaviour, tuple[str, int] | tuple[str]]] = [
        (Reply(status=500, body="overloaded"), ("http_status", 500)),
        (Reply(status=429, body="slow down"), ("http_status", 429)),
        (Hang(600), ("timeout",)),
        (Drop(partial=b'{"id"'), ("connection",)),
        (Reply(body="not json"), ("malformed",)),
        (Stream([sse(chunk("x"), ERROR_EVENT, done=False)]), ("server_error_event",)),
        (Stream([sse(chunk("half"), done=False)]), ("stream_cut",)),
        (Reply(json=completion(finish_reason="abort")), ("aborted",)),
    ]
    with FaultServer() as server:
        # /models lists the model, so no trial request: task i (concurrency 1) meets failure i, then answers.
        server.script(
            models("m"), *(f for f, _ in failures), then=Stream([sse(chunk("FINAL: B", finish_reason="stop"))])
        )
        lane = Lane(
            name="L",
            base_url=server.base_url,
            model="m",
            suite="smoke",
            stream=True,
            concurrency=1,
            max_attempts=1,
            timeout_s=FIRES_ON_A_HELD_REQUEST_S,  # the Hang's, never an answer's
        )
        result = run_lane(lane, tmp_path / "run", progress=quiet, score=score_run_dir)
    assert (result.summary.errors, result.summary.total) == (len(failures), 10)
    lines = [json.loads(line) for line in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    written = [(s["error_kind"], s["error_status"]) if "error_status" in s else (s["error_kind"],) for s in lines[:8]]
    assert written == [expected for _, expected in failures]
    assert all("error_kind" not in s and "error_status" not in s and "error" not in s for s in lines[8:])
    again = read_samples(tmp_path / "run" / "samples.jsonl")
    assert [(s.error_kind, s.error_status) for s in again[:2]] == [("http_status", 500), ("http_status", 429)]


# --- the up-front check: a rate-limited trial request ----------------------------------------------------------


def test_a_rate_limited_trial_request_is_retried_after_retry_after_and_the_run_goes_ahead(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], retry_waits: list[float]
) -> None:
    # The reproduced bug: /models lists `router`, the trial request meets one 429, and the run was refused.
    with FaultServer() as server:
        limited = Reply(status=429, json={"error": {"message": "rate limit exceeded"}}, headers={"Retry-After": "1"})
        server.script(models("router"), limited, then=Reply(json=completion(model="router")))
        code = run_cli(server.base_url, tmp_path / "r", model="coder")
        arrivals = server.chat_requests
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert retry_waits == [1.0]  # the second trial request waited as Retry-After asked (the wait, not a clock)
    assert len(arrivals) == 2 + 10  # two trial requests, then the ten tasks
    assert "rate" not in captured.err and "fails" not in captured.err
    samples = [json.loads(line) for line in (tmp_path / "r" / "samples.jsonl").read_text().splitlines()]
    assert len(samples) == 10 and not any("error" in s for s in samples)


def test_a_persistent_rate_limit_is_refused_as_a_rate_limit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FaultServer() as server:
        limited = Reply(status=429, json={"error": {"message": "rate limit exceeded"}}, headers={"Retry-After": "0"})
        server.script(models("router"), then=limited)
        code = run_cli(server.base_url, tmp_path / "r", model="coder")
        tries = len(server.chat_requests)
    err = capsys.readouterr().err
    assert code == 2
    assert "rate-limiting" in err and "HTTP 429 after 3 attempts" in err and "rate limit exceeded" in err
    assert "fails" not in err and "not among" not in err and "'coder'" not in err
    assert len(err.strip().splitlines()) == 1
    assert tries == 3  # bounded: a few attempts, not the lane's whole retry policy
    assert not (tmp_path / "r").exists()


def test_a_rate_limit_asking_for_a_long_wait_is_refused_at_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], retry_waits: list[float]
) -> None:
    with FaultServer() as server:
        server.script(models("router"), then=Reply(status=429, body="later", headers={"Retry-After": "3600"}))
        code = run_cli(server.base_url, tmp_path / "r", model="coder")
        tries = len(server.chat_requests)
    err = capsys.readouterr().err
    assert code == 2 and "rate-limiting" in err and "retry budget of 30 s spent" in err
    # The trial's retry budget is bounded, whatever Retry-After says: one try and no wait at all.
    assert tries == 1 and retry_waits == []


def test_a_rejected_model_name_is_still_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with FaultServer() as server:
        server.script(models("router"), then=Reply(status=404, json={"error": {"message": "model coder not found"}}))
        code = run_cli(server.base_url, tmp_path / "r", model="coder")
        tries = len(server.chat_requests)
    err = capsys.readouterr().err
    assert code == 2 and "a request for model 'coder' fails (served: router): HTTP 404: " in err
    assert "model coder not found" in err
    assert "rate" not in err
    assert tries == 1  # a 404 will not change on retry
    assert not (tmp_path / "r").exists()


def test_a_server_error_on_the_trial_request_lets_the_run_go_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with FaultServer() as server:
        broken = Reply(status=500, body="engine hiccup")
        server.script(models("router"), broken, broken, broken, then=Reply(json=completion(model="router")))
        code = run_cli(server.base_url, tmp_path / "r", model="coder")
    out = capsys.readouterr().out
    assert code == 0
    assert "a first request failed (HTTP 500 after 3 attempts: engine hiccup); the run goes on" in out
