"""Errors that will not pass are not retried (issue 30, item 2), against scripted servers on 127.0.0.1.

A server that says a request cannot succeed on it as it runs (llama-server started with --no-jinja and sent tools,
a vLLM without its tool parser, an unknown model) fails the task at once, and once two requests are refused alike,
every task left fails unsent: the run ends with the server's reason and what to change, and never advises
--retry-errors for them. A prompt too long for the server's context fails that task at once, and the others go on.
The bodies are the servers' own (run/refusals.py names where each comes from).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from faultserver import FaultServer, Reply, answer, models
from helpers import run_cli, samples_of, sums, write_suite

from ocllm.models import Sample
from ocllm.retry_rule import can_pass
from ocllm.run.refusals import refusal

TASKS = 6
LLAMA_NO_JINJA = {"error": {"code": 500, "message": "tools param requires --jinja flag", "type": "server_error"}}
VLLM_NO_PARSER = {
    "object": "error",
    "message": '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
    "type": "BadRequestError",
    "param": None,
    "code": 400,
}
LLAMA_TOO_LONG = {
    "error": {
        "code": 400,
        "message": "request (9000 tokens) exceeds the available context size (4096 tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 9000,
        "n_ctx": 4096,
    }
}


def suite(tmp: Path) -> Path:
    return write_suite(tmp / "suite.jsonl", sums(TASKS))


@pytest.mark.parametrize(
    ("status", "body", "reason", "change"),
    [
        (500, LLAMA_NO_JINJA, "tools param requires --jinja flag", "start llama-server with --jinja"),
        (400, VLLM_NO_PARSER, "--enable-auto-tool-choice", "start vLLM with --enable-auto-tool-choice"),
    ],
    ids=["llama.cpp without --jinja", "vLLM without a tool parser"],
)
def test_a_configuration_error_stops_the_lane_after_two_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], status: int, body: dict[str, Any], reason: str, change: str
) -> None:
    out = tmp_path / "run"
    with FaultServer() as server:
        server.script(models("m"), then=Reply(status=status, json=body))
        code = run_cli(server.base_url, out, suite=suite(tmp_path), concurrency=1)
        sent = len(server.chat_requests)
    captured = capsys.readouterr()
    # Two requests, each sent once (not the 4 attempts of a transient error); the other tasks were never sent.
    assert sent == 2
    lines = samples_of(out)
    assert len(lines) == TASKS
    assert [s.get("attempts", 1) for s in lines] == [1, 1] + [0] * (TASKS - 2)
    assert {(s["error_kind"], s["error_status"]) for s in lines} == {("misconfigured", status)}
    assert all(reason in s["error"] and change in s["error"] for s in lines)
    # The run ends with one line: the server's reason and what to change; exit 2, as any error a user can fix.
    assert code == 2
    last = captured.err.strip().splitlines()[-1]  # after the progress lines
    assert captured.err.count("ocllm: error") == 1
    assert last.startswith("ocllm: error: lane 'run' stopped: the server refused 2 requests alike")
    assert f"the other {TASKS - 2} request(s) were not sent" in last
    assert reason in last and change in last
    # Errors, never wrong answers; and no --retry-errors advice: the same requests would meet the same refusal.
    assert "--retry-errors" not in captured.out and "--retry-errors" not in captured.err
    assert f"{TASKS} of {TASKS} task(s) failed and are not scored (not counted as wrong)" in captured.out
    assert f"tasks this run: {TASKS} (2 requests, 0 retries)" in captured.out
    metrics = json.loads((out / "metrics.json").read_text())
    assert (metrics["summary"]["errors"], metrics["summary"]["correct"]) == (TASKS, 0)
    manifest = json.loads((out / "manifest.json").read_text())
    assert (manifest["requests"], manifest["retries"]) == (2, {})
    assert any(n.startswith("lane 'run' stopped") and change in n for n in manifest["notices"])
    assert not any("--retry-errors" in n for n in manifest["notices"])


def test_one_configuration_error_alone_does_not_stop_the_lane(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    with FaultServer() as server:
        server.script(models("m"), Reply(status=500, json=LLAMA_NO_JINJA), then=answer())
        code = run_cli(server.base_url, out, suite=suite(tmp_path), concurrency=1)
        sent = len(server.chat_requests)
    assert (code, sent) == (1, TASKS)  # not retried, and the lane went on
    kinds = [s.get("error_kind") for s in samples_of(out)]
    assert kinds == ["misconfigured"] + [None] * (TASKS - 1)
    assert "stopped" not in capsys.readouterr().err


def test_a_prompt_too_long_fails_its_task_at_once_and_the_lane_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    too_long = Reply(status=400, json=LLAMA_TOO_LONG)
    with FaultServer() as server:
        # Refused alike twice, and more: a prompt's own length never stops the lane.
        server.script(models("m"), too_long, too_long, too_long, then=answer())
        code = run_cli(server.base_url, out, suite=suite(tmp_path), concurrency=1)
        sent = len(server.chat_requests)
    captured = capsys.readouterr()
    assert (code, sent) == (1, TASKS)
    lines = samples_of(out)
    assert [s.get("error_kind") for s in lines] == ["refused"] * 3 + [None] * (TASKS - 3)
    assert all(s.get("attempts", 1) == 1 for s in lines)
    assert "exceeds the available context size (4096 tokens)" in lines[0]["error"]
    assert "give the server a larger context (llama.cpp -c" in lines[0]["error"]
    assert "stopped" not in captured.err and "--retry-errors" not in captured.out
    assert "3 task(s) failed: HTTP 400: request (9000 tokens) exceeds the available context size" in captured.out


def test_retry_errors_is_advised_only_for_the_errors_that_can_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    with FaultServer() as server:
        # A task refused for its length, then a task whose request the server failed four times (HTTP 503).
        busy = Reply(status=503, body="busy")
        server.script(models("m"), Reply(status=400, json=LLAMA_TOO_LONG), busy, busy, busy, busy, then=answer())
        assert run_cli(server.base_url, out, suite=suite(tmp_path), concurrency=1) == 1
    printed = capsys.readouterr().out
    assert "2 of 6 task(s) failed and are not scored (not counted as wrong); 1 of them may pass when sent again" in (
        " ".join(printed.split())
    )


@pytest.mark.parametrize(
    ("status", "body", "scope"),
    [
        (500, json.dumps(LLAMA_NO_JINJA), "lane"),
        (500, '{"error":{"code":500,"message":"tool_choice param requires --jinja flag","type":"server_error"}}', "lane"),  # noqa: E501
        (400, json.dumps(VLLM_NO_PARSER), "lane"),
        (400, '{"error":"registry.ollama.ai/library/gemma3:4b does not support tools"}', "lane"),
        (400, '{"object":"error","message":"[{\'type\': \'extra_forbidden\', \'msg\': \'Extra inputs are not permitted\'}]"}', "lane"),  # noqa: E501
        (404, '{"object":"error","message":"The model `qwen` does not exist.","type":"NotFoundError","code":404}', "lane"),  # noqa: E501
        (404, '{"error":"model \\"qwen\\" not found, try pulling it first"}', "lane"),
        (401, '{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}', "lane"),
        (400, json.dumps(LLAMA_TOO_LONG), "request"),
        (400, '{"object":"error","message":"This model\'s maximum context length is 4096 tokens. However, you requested 9000 tokens"}', "request"),  # noqa: E501
        (400, '{"error":{"message":"The input (9000 tokens) is longer than the model\'s context length (4096 tokens)."}}', "request"),  # noqa: E501
        (500, '{"error":{"code":500,"message":"context shift is disabled","type":"server_error"}}', "request"),
        (500, '{"error":{"code":500,"message":"input (9000 tokens) is too large to process. increase the physical batch size (current batch size: 512)","type":"server_error"}}', "request"),  # noqa: E501
        (500, '{"error":{"code":500,"message":"CUDA out of memory","type":"server_error"}}', None),
        (500, '{"error":{"code":500,"message":"the file /tmp/x does not exist","type":"server_error"}}', None),
        (503, '{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}', None),
        (429, '{"error":{"message":"maximum context length requests per minute reached"}}', None),
        (408, "Request Timeout", None),
        (400, '{"error":{"code":400,"message":"\'messages\' is required","type":"invalid_request_error"}}', None),
    ],
)
def test_the_table_of_refusals(status: int, body: str, scope: str | None) -> None:
    found = refusal(status, body)
    assert (found.scope if found else None) == scope


def test_only_errors_that_can_pass_are_worth_sending_again() -> None:
    def failed(kind: str, status: int | None = None) -> Sample:
        return Sample(task_id="t", error="x", error_kind=kind, error_status=status)  # type: ignore[arg-type]

    assert can_pass(failed("timeout")) and can_pass(failed("http_status", 503)) and can_pass(failed("http_status", 429))
    assert can_pass(Sample(task_id="t", error="saved before error kinds"))
    assert not can_pass(failed("misconfigured", 500)) and not can_pass(failed("refused", 400))
    assert not can_pass(failed("http_status", 400))
