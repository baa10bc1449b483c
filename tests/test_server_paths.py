"""Same weights, different servers (issue 44, item 4): two lanes whose server kinds differ are compared task by task,
and each task whose answers differ is put under what told them apart: truncation, the channel, the call format, or
the answer itself. Runs through real HTTP servers that say they are llama.cpp and vLLM."""

from __future__ import annotations

import json
from pathlib import Path

from faultserver import FaultServer, Reply, answer
from helpers import quiet, write_suite

from ocllm.analysis.rescore import score_run_dir
from ocllm.cli import main
from ocllm.run.lanes import Lane
from ocllm.run.runner import run_lane

WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip
TASKS = [
    *({"id": f"t{i}", "type": "mcq", "question": "Pick A.", "options": ["x", "y"], "answer": "A", "category": "c"}
      for i in range(1, 5)),
    {"id": "t5", "type": "tool_call", "category": "tools", "question": "Weather in Paris?", "tools": [WEATHER],
     "expected_calls": [{"name": "get_weather", "arguments": {"city": ["Paris"]}}]},
]  # fmt: skip
CALL = {"name": "get_weather", "arguments": {"city": "Paris"}}
WIRE_CALL = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
STRUCTURED = answer(None, finish_reason="tool_calls", tool_calls=[WIRE_CALL])  # type: ignore[arg-type]
# Task by task, in suite order: llama-server's answers, then vLLM's.
LLAMA = [answer("FINAL: A"), answer("FINAL: A"), answer("FINAL: A"), answer("FINAL: A"), STRUCTURED]
VLLM = [
    answer("FINAL: A"),  # the same
    answer("Let me see, the", finish_reason="length"),  # cut off at max_tokens
    answer(None, reasoning_content="It is A. FINAL: A"),  # type: ignore[arg-type]  # the answer only in reasoning
    answer("FINAL: B"),  # another answer
    answer(f"<tool_call>\n{json.dumps(CALL)}\n</tool_call>"),  # the call left in the text
]
KINDS = {
    "llama": ({"/props": Reply(json={"default_generation_settings": {"n_ctx": 4096}, "build_info": "b1"})}, "llamacpp"),
    "vllm": ({"/version": Reply(json={"version": "0.11.0"})}, "vllm"),
}


def _run(tmp_path: Path, name: str, replies: list[Reply]) -> Path:
    routes, owner = KINDS[name]
    suite = write_suite(tmp_path / "suite.jsonl", TASKS)
    with FaultServer(routes) as server:
        server.script(Reply(json={"object": "list", "data": [{"id": "m", "owned_by": owner}]}), *replies)
        lane = Lane(name=name, base_url=server.base_url, model="m", suite=str(suite), concurrency=1)
        run_lane(lane, tmp_path / name, progress=quiet, score=score_run_dir)
    return tmp_path / name


def test_lanes_on_two_server_kinds_are_told_apart_by_what_decided_each_difference(tmp_path: Path) -> None:
    a, b = _run(tmp_path, "llama", LLAMA), _run(tmp_path, "vllm", VLLM)
    out = tmp_path / "cmp"
    assert main(["compare", str(a), str(b), "--out", str(out)]) == 0
    paths = json.loads((out / "comparison.json").read_text())["server_paths"]
    assert paths["kinds"] == ["llama.cpp", "vllm"]
    assert (paths["paired"], paths["same_verdict"], paths["same_answer"]) == (5, 1, 1)
    assert paths["differ"] == {"truncation": ["t2"], "channel": ["t3"], "call format": ["t5"], "answer": ["t4"]}
    assert "3 of 4 by the server path" in paths["said"]
    page = (out / "comparison.md").read_text()
    assert "### Same weights, different servers" in page and "| call format | 1 | t5 |" in page
    assert 'data-table="server-paths"' in (out / "comparison.html").read_text()


def test_lanes_on_one_server_kind_have_no_such_section(tmp_path: Path) -> None:
    a = _run(tmp_path, "llama", LLAMA)
    b = _run(tmp_path / "again", "llama", VLLM)
    out = tmp_path / "cmp"
    assert main(["compare", str(a), str(b), "--out", str(out)]) == 0
    assert json.loads((out / "comparison.json").read_text()).get("server_paths") is None
    assert "Same weights, different servers" not in (out / "comparison.md").read_text()
