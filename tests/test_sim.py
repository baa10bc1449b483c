"""The built-in simulator, over real HTTP on 127.0.0.1: shapes, determinism, accuracy, streaming, errors."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from helpers import BACKSTOP_S, interruptible
from hypothesis import given
from hypothesis import strategies as st

from ocllm.errors import InputError, OcllmError
from ocllm.models import Policy, Sample
from ocllm.scoring import decide, task_types
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.mcq.simulated import parse_options
from ocllm.sim import SimConfig, SimServer
from ocllm.sim.responses import split_pieces
from ocllm.sim.suite_index import SuiteIndex

LETTERS = "ABCDEFGHIJ"


# ------------------------------------------------------------------------------------------- helpers


def mcq_prompt(question: str, options: list[str]) -> str:
    lines = [f"{LETTERS[i]}. {text}" for i, text in enumerate(options)]
    return question + "\n\n" + "\n".join(lines) + "\n\nThink step by step, then end with FINAL: <letter>."


def write_mcq_suite(path: Path, count: int, seed: int = 7) -> list[dict[str, Any]]:
    """`count` generated MCQ tasks with 4 to 10 options and a random gold letter."""
    rng = random.Random(seed)
    tasks = []
    for n in range(count):
        n_options = rng.randint(4, 10)
        tasks.append(
            {
                "id": f"gen_{n:03d}",
                "type": "mcq",
                "question": f"Generated question number {n}: which of these quantities is the {n}th one?",
                "options": [f"quantity {n}-{i}" for i in range(n_options)],
                "answer": LETTERS[rng.randrange(n_options)],
                "category": "generated",
            }
        )
    path.write_text("\n".join(json.dumps(t) for t in tasks) + "\n", encoding="utf-8")
    return tasks


def write_substring_suite(path: Path, count: int) -> list[dict[str, Any]]:
    tasks = [
        {
            "id": f"sub_{n:03d}",
            "type": "required_substrings",
            "question": f"Describe object {n}, naming its colour and its shape and its size.",
            "required_substrings": [f"colour-{n}", f"shape-{n}", f"size-{n}"],
            "category": "instruction",
        }
        for n in range(count)
    ]
    path.write_text("\n".join(json.dumps(t) for t in tasks) + "\n", encoding="utf-8")
    return tasks


def chat_body(model: str, prompt: str, **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": prompt}], "temperature": 0.0, **extra}


def post(url: str, body: bytes | dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=BACKSTOP_S) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def chat(server: SimServer, body: dict[str, Any]) -> dict[str, Any]:
    status, headers, raw = post(server.base_url + "/chat/completions", body)
    assert status == 200, raw
    assert headers.get("x-ocllm-simulator") == "1"
    return json.loads(raw)


def stream(server: SimServer, body: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The chunks of a streamed answer; checks the SSE framing and the closing [DONE]."""
    status, headers, raw = post(server.base_url + "/chat/completions", {**body, "stream": True})
    assert status == 200, raw
    assert headers["Content-Type"].startswith("text/event-stream")
    events = raw.decode().split("\n\n")
    assert events[-1] == "" and events[-2] == "data: [DONE]"
    assert all(e.startswith("data: ") for e in events[:-1])
    return [json.loads(e.removeprefix("data: ")) for e in events[:-2]], headers


def reassemble(chunks: list[dict[str, Any]], field: str) -> tuple[str, str, str | None]:
    content, reasoning, finish = "", "", None
    for chunk in chunks:
        for choice in chunk["choices"]:
            content += choice["delta"].get("content") or ""
            reasoning += choice["delta"].get(field) or ""
            finish = choice["finish_reason"] or finish
    return content, reasoning, finish


async def _post_all(url: str, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # No connection limit: the point of some callers is to have every request in flight at once.
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one(body: dict[str, Any]) -> dict[str, Any]:
            async with session.post(url, json=body) as response:
                assert response.status == 200
                return await response.json()

        return await asyncio.gather(*(one(b) for b in bodies))


def post_all(server: SimServer, bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return asyncio.run(_post_all(server.base_url + "/chat/completions", bodies))


def score(task: dict[str, Any], response: dict[str, Any], field: str = "reasoning_content") -> Any:
    choice = response["choices"][0]
    sample = Sample(
        task_id=task["id"],
        content=choice["message"]["content"],
        reasoning=choice["message"].get(field),
        finish_reason=choice["finish_reason"],
    )
    return decide(task_types.task_from(task), sample, Policy())


QUESTION = "Which planet in the solar system is known as the red planet?"
OPTIONS = ["Venus", "Mars", "Jupiter", "Saturn"]


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    path = tmp_path / "suite.jsonl"
    task = {"id": "mars", "type": "mcq", "question": QUESTION, "options": OPTIONS, "answer": "B", "category": "x"}
    path.write_text(json.dumps(task) + "\n", encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------- tests


def test_models_are_listed_with_the_simulator_label() -> None:
    config = SimConfig(models={"alpha": 0.5, "beta-reasoning": 0.9})
    with SimServer(config) as server:
        assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
        with urllib.request.urlopen(server.base_url + "/models", timeout=BACKSTOP_S) as response:
            assert response.headers["x-ocllm-simulator"] == "1"
            listing = json.loads(response.read())
    assert listing["object"] == "list"
    assert [m["id"] for m in listing["data"]] == ["alpha", "beta-reasoning"]
    assert all(m["owned_by"] == "ocllm-simulator" and m["object"] == "model" for m in listing["data"])
    assert all(m["max_model_len"] == 32768 for m in listing["data"])


def test_default_config_is_usable() -> None:
    config = SimConfig()
    assert config.models == {"sim-baseline": 0.85, "sim-reasoning": 0.93}
    assert config.reasoning_field == "reasoning_content" and config.suites == ()


def test_mcq_without_reasoning(suite: Path) -> None:
    with SimServer(SimConfig(suites=(suite,))) as server:
        body = chat(server, chat_body("sim-baseline", mcq_prompt(QUESTION, OPTIONS), max_tokens=512))
    assert body["object"] == "chat.completion" and body["model"] == "sim-baseline"
    assert body["id"].startswith("chatcmpl-sim-") and body["system_fingerprint"] == "ocllm-simulator"
    choice = body["choices"][0]
    message = choice["message"]
    assert message["role"] == "assistant" and message.get("reasoning_content") is None
    assert choice["finish_reason"] == "stop"
    last_line = message["content"].splitlines()[-1]
    assert last_line in {f"FINAL: {x}" for x in "ABCD"}
    assert len(message["content"]) > len(last_line) + 20  # a working paragraph precedes it
    usage = body["usage"]
    assert "completion_tokens_details" not in usage
    assert 10 <= usage["completion_tokens"] <= 250
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert abs(usage["prompt_tokens"] - len(mcq_prompt(QUESTION, OPTIONS)) / 4) < 10


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_mcq_with_reasoning_uses_the_configured_field(suite: Path, field: str) -> None:
    other = "reasoning" if field == "reasoning_content" else "reasoning_content"
    with SimServer(SimConfig(suites=(suite,), reasoning_field=field, truncation_rate=0.0)) as server:
        body = chat(server, chat_body("sim-reasoning", mcq_prompt(QUESTION, OPTIONS)))
        chunks, _ = stream(server, chat_body("sim-reasoning", mcq_prompt(QUESTION, OPTIONS)))
    message = body["choices"][0]["message"]
    assert message["content"] in {f"FINAL: {x}" for x in "ABCD"}
    assert isinstance(message[field], str) and len(message[field].split(". ")) >= 3
    assert other not in message
    assert body["usage"]["completion_tokens_details"]["reasoning_tokens"] >= 300
    assert all(other not in c["choices"][0]["delta"] for c in chunks if c["choices"])
    assert reassemble(chunks, field)[1] == message[field]


def test_chat_template_kwargs_switch_reasoning(suite: Path) -> None:
    prompt = mcq_prompt(QUESTION, OPTIONS)
    with SimServer(SimConfig(suites=(suite,), truncation_rate=0.0)) as server:
        cases = {
            ("sim-reasoning", None): True,
            ("sim-baseline", None): False,
            ("sim-reasoning", json.dumps({"enable_thinking": False})): False,
            ("sim-baseline", json.dumps({"enable_thinking": True})): True,
            ("sim-baseline", json.dumps({"thinking": True})): True,
            ("sim-reasoning", json.dumps({"thinking": False})): False,
        }
        for (model, kwargs), thinking in cases.items():
            extra = {"chat_template_kwargs": json.loads(kwargs)} if kwargs else {}
            message = chat(server, chat_body(model, prompt, **extra))["choices"][0]["message"]
            assert (message.get("reasoning_content") is not None) is thinking, (model, kwargs)
            assert (message["content"].count("\n") == 0) is thinking  # reasoning on: only "FINAL: X"


def test_same_request_same_answer(suite: Path) -> None:
    body = chat_body("sim-reasoning", mcq_prompt(QUESTION, OPTIONS), max_tokens=2048, seed=1)
    config = SimConfig(suites=(suite,))
    with SimServer(config) as server:
        first, second = chat(server, body), chat(server, body)
    with SimServer(config) as server:  # a new server process state gives the same answer too
        third = chat(server, body)
    for other in (second, third):
        assert {k: v for k, v in other.items() if k != "created"} == {k: v for k, v in first.items() if k != "created"}
    with SimServer(SimConfig(suites=(suite,), seed=1)) as server:
        assert chat(server, body)["id"] != first["id"]  # the seed is part of what decides


@pytest.mark.parametrize(("model", "accuracy"), [("sim-baseline", 0.85), ("sim-reasoning", 0.93)])
def test_mcq_accuracy_matches_the_configured_rate(tmp_path: Path, model: str, accuracy: float) -> None:
    tasks = write_mcq_suite(tmp_path / "gen.jsonl", 200)
    config = SimConfig(models={model: accuracy}, suites=(tmp_path / "gen.jsonl",), truncation_rate=0.0)
    with SimServer(config) as server:
        responses = post_all(server, [chat_body(model, mcq_prompt(t["question"], t["options"])) for t in tasks])
    decisions = [score(t, r) for t, r in zip(tasks, responses, strict=True)]
    # Every answer is readable by the scorer; wrong ones name another valid option, never an invalid one.
    assert all(d.ambiguity == "none" and d.extracted_final_answer is not None for d in decisions)
    observed = sum(d.correct for d in decisions) / len(decisions)
    assert abs(observed - accuracy) < 0.07, observed
    if model == "sim-reasoning":
        # About a third of traces quote format examples with other letters; the visible answer still decides.
        quoting = [d for d in decisions if d.reasoning_statements > 0]
        assert 0.15 < len(quoting) / len(decisions) < 0.5
        assert all(
            c.letter != d.extracted_final_answer for d in quoting for c in d.candidates if c.region == "reasoning"
        )


def test_required_substrings_accuracy(tmp_path: Path) -> None:
    tasks = write_substring_suite(tmp_path / "sub.jsonl", 120)
    config = SimConfig(models={"m": 0.75}, suites=(tmp_path / "sub.jsonl",))
    with SimServer(config) as server:
        responses = post_all(server, [chat_body("m", t["question"] + "\nAnswer in a list.") for t in tasks])
    decisions = [score(t, r) for t, r in zip(tasks, responses, strict=True)]
    observed = sum(d.correct for d in decisions) / len(decisions)
    assert abs(observed - 0.75) < 0.1, observed
    assert all(len(d.missing_substrings) == (0 if d.correct else 1) for d in decisions)


def test_required_substrings_with_reasoning_adds_a_trace(tmp_path: Path) -> None:
    tasks = write_substring_suite(tmp_path / "sub.jsonl", 1)
    config = SimConfig(models={"m": 1.0}, suites=(tmp_path / "sub.jsonl",), truncation_rate=0.0)
    with SimServer(config) as server:
        message = chat(server, chat_body("m", tasks[0]["question"], chat_template_kwargs={"enable_thinking": True}))[
            "choices"
        ][0]["message"]
    assert message["reasoning_content"] and all(s in message["content"] for s in tasks[0]["required_substrings"])


def test_truncation(suite: Path) -> None:
    config = SimConfig(suites=(suite,), truncation_rate=1.0)
    body = chat_body("sim-reasoning", mcq_prompt(QUESTION, OPTIONS), max_tokens=777)
    with SimServer(config) as server:
        response = chat(server, body)
        chunks, _ = stream(server, body)
        # Truncation is a reasoning-mode event: the same model with thinking off is not cut.
        plain = chat(server, {**body, "chat_template_kwargs": {"enable_thinking": False}})
    choice = response["choices"][0]
    assert choice["finish_reason"] == "length" and choice["message"]["content"] == ""
    trace = choice["message"]["reasoning_content"]
    assert trace and trace[-1] not in ".!?"
    assert response["usage"]["completion_tokens"] == 777
    assert response["usage"]["completion_tokens_details"]["reasoning_tokens"] == 777
    assert reassemble(chunks, "reasoning_content") == ("", trace, "length")
    assert plain["choices"][0]["finish_reason"] == "stop"
    assert score({"id": "mars", "type": "mcq", "options": OPTIONS, "answer": "B"}, response).truncated


def test_truncation_rate_zero_never_truncates(tmp_path: Path) -> None:
    tasks = write_mcq_suite(tmp_path / "gen.jsonl", 60)
    with SimServer(SimConfig(suites=(tmp_path / "gen.jsonl",), truncation_rate=0.0)) as server:
        responses = post_all(
            server, [chat_body("sim-reasoning", mcq_prompt(t["question"], t["options"])) for t in tasks]
        )
    assert all(r["choices"][0]["finish_reason"] == "stop" for r in responses)


def test_unknown_questions_still_get_answers() -> None:
    with SimServer(SimConfig()) as server:
        mcq = chat(server, chat_body("sim-baseline", mcq_prompt("Never seen before?", ["x", "y", "z"])))
        plain = chat(server, chat_body("sim-baseline", "Write a haiku about the sea."))
    assert mcq["choices"][0]["message"]["content"].splitlines()[-1] in {"FINAL: A", "FINAL: B", "FINAL: C"}
    text = plain["choices"][0]["message"]["content"]
    assert text and "FINAL" not in text and "simulat" in text


def test_unknown_model_is_404() -> None:
    with SimServer(SimConfig()) as server:
        for extra in ({}, {"stream": True}):
            status, headers, raw = post(server.base_url + "/chat/completions", chat_body("gpt-99", "hi", **extra))
            assert status == 404 and headers["x-ocllm-simulator"] == "1"
            error = json.loads(raw)["error"]
            assert error["type"] == "NotFoundError" and error["code"] == 404 and "gpt-99" in error["message"]


@pytest.mark.parametrize(
    "body",
    [b"{not json", b"\xff\xfe", b"[1, 2]", json.dumps({"model": "sim-baseline"}).encode()],
    ids=["bad-json", "not-utf8", "not-an-object", "no-messages"],
)
def test_bad_requests_are_400(body: bytes) -> None:
    with SimServer(SimConfig()) as server:
        status, _, raw = post(server.base_url + "/chat/completions", body)
    assert status == 400
    error = json.loads(raw)["error"]
    assert error["type"] == "BadRequestError" and error["code"] == 400 and error["message"]


def test_unknown_path_is_an_openai_style_404() -> None:
    with SimServer(SimConfig()) as server:
        status, _, raw = post(server.base_url + "/completions-nowhere", {})
    assert status == 404 and json.loads(raw)["error"]["type"] == "NotFoundError"


@pytest.mark.parametrize("model", ["sim-baseline", "sim-reasoning"])
def test_stream_reassembles_to_the_non_streaming_answer(suite: Path, model: str) -> None:
    body = chat_body(model, mcq_prompt(QUESTION, OPTIONS), stream_options={"include_usage": True})
    with SimServer(SimConfig(suites=(suite,), truncation_rate=0.0)) as server:
        whole = chat(server, body)
        chunks, headers = stream(server, body)
    assert headers["x-ocllm-simulator"] == "1"
    message = whole["choices"][0]["message"]
    content, reasoning, finish = reassemble(chunks, "reasoning_content")
    assert (content, reasoning or None, finish) == (
        message["content"],
        message["reasoning_content"],
        whole["choices"][0]["finish_reason"],
    )
    assert all(c["object"] == "chat.completion.chunk" and c["id"] == whole["id"] for c in chunks)
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    kinds = [next(iter(c["choices"][0]["delta"]), None) for c in chunks[1:-2]]
    assert kinds == sorted(kinds, key=lambda k: k != "reasoning_content")  # reasoning deltas come first
    assert kinds.count("content") >= 2 and (model == "sim-baseline" or kinds.count("reasoning_content") >= 2)
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"] == whole["usage"]


def test_usage_chunk_only_when_asked(suite: Path) -> None:
    body = chat_body("sim-baseline", mcq_prompt(QUESTION, OPTIONS))
    with SimServer(SimConfig(suites=(suite,))) as server:
        plain, _ = stream(server, body)
        off, _ = stream(server, {**body, "stream_options": {"include_usage": False}})
    assert all(c["choices"] and "usage" not in c for c in plain + off)


def test_latency_is_spread_and_does_not_block_other_requests() -> None:
    """No wall-clock bound (a loaded machine makes anything slow): the delays are checked from below, which load
    cannot break, and "does not block" as overlap: every stream had begun before any had ended. A server that
    waited out one request's latency before the next would end the first stream before the second began."""
    latency, streams = 1.5, 20

    async def timed(session: aiohttp.ClientSession, body: dict[str, Any]) -> tuple[float, float, float, int]:
        """When the request went out, its first chunk came and its last chunk came, and how many chunks."""
        sent = time.monotonic()
        times = []
        async with session.post(server.base_url + "/chat/completions", json={**body, "stream": True}) as response:
            assert response.status == 200
            async for line in response.content:
                if line.startswith(b"data: {"):
                    times.append(time.monotonic())
        return sent, times[0], times[-1], len(times)

    async def all_at_once(bodies: list[dict[str, Any]]) -> list[tuple[float, float, float, int]]:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
            return await asyncio.gather(*(timed(session, b) for b in bodies))

    with SimServer(SimConfig(latency_s=latency)) as server:
        bodies = [chat_body("sim-baseline", f"Question {n}?\n\nA. yes\nB. no") for n in range(streams)]
        timings = asyncio.run(all_at_once(bodies))
        answers = post_all(server, bodies)  # not streamed: the same delay, once, before the whole answer
    assert len(answers) == streams and all(a["choices"][0]["message"]["content"] for a in answers)
    assert max(first for _, first, _, _ in timings) < min(last for _, _, last, _ in timings)  # all at once
    for sent, first, last, chunks in timings:
        assert chunks >= 3
        # About a third of the latency before the first chunk, the rest between the chunks (from below only).
        assert first - sent >= latency / 3 - 0.02 and last - first >= latency * 2 / 3 - 0.02


def test_port_is_released_and_server_can_restart() -> None:
    server = SimServer(SimConfig())
    with server:
        port = server.port
        assert server.base_url == f"http://127.0.0.1:{port}/v1"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # fails with EADDRINUSE if the listener were still open
    with SimServer(SimConfig(), port=port) as again:
        assert again.port == port


def test_a_bad_suite_fails_on_enter(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    good = '{"id": "a", "type": "mcq", "question": "q", "options": ["x", "y"], "answer": "A", "category": "c"}'
    bad.write_text(good + '\n{"id": 3}\n', encoding="utf-8")  # validated as `ocllm run` validates suites
    with pytest.raises(InputError, match=r"bad\.jsonl:2:"), SimServer(SimConfig(suites=(bad,))):
        pass
    with pytest.raises(InputError, match="no such file"), SimServer(SimConfig(suites=(tmp_path / "none.jsonl",))):
        pass


@pytest.mark.parametrize(
    "kwargs",
    [{"models": {}}, {"models": {"m": 1.5}}, {"truncation_rate": -0.1}, {"latency_s": -1}, {"reasoning_field": "x"}],
)
def test_bad_config_is_a_user_error(kwargs: dict[str, Any]) -> None:
    with pytest.raises(OcllmError):
        SimConfig(**kwargs)


def test_suite_index_finds_the_longest_question_anywhere() -> None:
    long_q = "What is the boiling point of water at sea level, in degrees Celsius?"
    tasks = [
        McqTask(id="short", question="Why?"),
        McqTask(id="long", question=long_q),
        McqTask(id="longer", question=long_q + " Assume pure water."),
    ]
    index = SuiteIndex(tasks)
    assert index.find(f"Question: {long_q} Assume pure water.\nA. 90\nB. 100").id == "longer"
    assert index.find(f"Q: {long_q}\nA. 90").id == "long"
    assert index.find("Why? Because.").id == "short"
    assert index.find("Nothing known here.") is None
    assert SuiteIndex([]).find("anything") is None


def test_options_are_parsed_from_the_last_option_block() -> None:
    prompt = "Example:\nA. one\nB. two\nFINAL: A\n\nNow:\nA. red\nB) green\n(C) blue\nE. skipped\n"
    assert parse_options(prompt) == ["red", "green", "blue"]
    assert parse_options("No options here.") == []


@given(st.text())
def test_stream_pieces_join_back_to_the_text(text: str) -> None:
    pieces = split_pieces(text)
    assert "".join(pieces) == text and len(pieces) <= 24


def test_serve_runs_until_interrupted() -> None:
    code = "from ocllm.sim import SimConfig, serve; serve(SimConfig(models={'m': 0.5}), '127.0.0.1', 0)"
    # Ctrl-C's default disposition, as at a terminal: a suite started in the background from a script hands its
    # children SIGINT ignored, and serve() (not the ocllm command, which restores it) would never see it.
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, preexec_fn=interruptible
    ) as process:
        try:
            assert process.stdout is not None
            banner = process.stdout.readline()
            assert "simulat" in banner and "Ctrl-C" in banner
            base_url = next(word for word in banner.split() if word.startswith("http://")).rstrip(";")
            with urllib.request.urlopen(base_url + "/models", timeout=BACKSTOP_S) as response:
                assert json.loads(response.read())["data"][0]["id"] == "m"
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=BACKSTOP_S) == 0
        finally:
            if process.poll() is None:
                process.kill()
