"""A lane's fingerprint (issue 44, item 2): the chat template's sha256 and the context the server serves, read where
the server says them (llama.cpp's /props, vLLM's /models), kept in the manifest and compared like any setting."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from faultserver import FaultServer, Reply, answer
from helpers import quiet, write_suite

from ocllm.analysis.rescore import score_run_dir
from ocllm.cli import main
from ocllm.run.lanes import Lane
from ocllm.run.runner import run_lane

TASK = {"id": "t1", "type": "mcq", "question": "Pick A.", "options": ["x", "y"], "answer": "A", "category": "c"}


def _props(template: str, n_ctx: int) -> dict[str, Reply]:
    body = {"default_generation_settings": {"n_ctx": n_ctx}, "build_info": "b5000", "chat_template": template}
    return {"/props": Reply(json=body)}


def _run(tmp_path: Path, name: str, routes: dict[str, Reply], models: dict[str, object]) -> Path:
    suite = write_suite(tmp_path / "suite.jsonl", [TASK])
    with FaultServer(routes) as server:
        server.script(Reply(json=models), then=answer("FINAL: A"))
        lane = Lane(name=name, base_url=server.base_url, model="m", suite=str(suite), concurrency=1)
        run_lane(lane, tmp_path / name, progress=quiet, score=score_run_dir)
    return tmp_path / name


def test_llama_cpp_s_template_and_context_are_the_lanes_fingerprint_and_compare_flags_them(tmp_path: Path) -> None:
    listed = {"object": "list", "data": [{"id": "m", "owned_by": "llamacpp"}]}
    a = _run(tmp_path, "a", _props("{{ messages }}", 8192), listed)
    b = _run(tmp_path, "b", _props("{{ messages }}{{ tools }}", 4096), listed)
    identity = json.loads((a / "manifest.json").read_text())["server_identity"][0]
    assert identity["chat_template_sha256"] == hashlib.sha256(b"{{ messages }}").hexdigest()
    assert identity["context"] == 8192
    assert main(["compare", str(a), str(b), "-o", str(tmp_path / "cmp")]) == 0
    rows = (tmp_path / "cmp" / "comparison.md").read_text().splitlines()
    template = next(line for line in rows if "chat template (sha256)" in line)
    context = next(line for line in rows if "server context (tokens)" in line)
    assert "(differs)" in template and hashlib.sha256(b"{{ messages }}").hexdigest()[:12] in template
    assert "(differs)" in context and "8,192" in context and "4,096" in context


def test_vllm_s_listed_max_model_len_is_its_context(tmp_path: Path) -> None:
    listed = {"object": "list", "data": [{"id": "m", "owned_by": "vllm", "max_model_len": 32768}]}
    run = _run(tmp_path, "v", {"/version": Reply(json={"version": "0.9.0"})}, listed)
    identity = json.loads((run / "manifest.json").read_text())["server_identity"][0]
    assert (identity["kind"], identity["context"], identity.get("chat_template_sha256")) == ("vllm", 32768, None)


def test_ollama_s_template_and_modelfile_num_ctx_come_from_its_show_of_the_lane_s_model(tmp_path: Path) -> None:
    shown = {
        "template": "{{ .System }}{{ .Prompt }}", "parameters": "temperature 0.7\nnum_ctx                        8192",
        "model_info": {"llama.context_length": 131072},  # what the model was trained for, not what Ollama serves
    }  # fmt: skip
    routes = {"/api/version": Reply(json={"version": "0.12.0"}), "/api/show": Reply(json=shown)}
    listed = {"object": "list", "data": [{"id": "m", "owned_by": "library"}]}
    suite = write_suite(tmp_path / "suite.jsonl", [TASK])
    with FaultServer(routes) as server:
        server.script(Reply(json=listed), then=answer("FINAL: A"))
        lane = Lane(name="o", base_url=server.base_url, model="m", suite=str(suite), concurrency=1)
        run_lane(lane, tmp_path / "o", progress=quiet, score=score_run_dir)
        asked = [json.loads(r.body) for r in server.routed if r.path == "/api/show"]
    identity = json.loads((tmp_path / "o" / "manifest.json").read_text())["server_identity"][0]
    assert asked == [{"model": "m"}]
    assert identity["kind"] == "ollama" and identity["context"] == 8192
    assert identity["chat_template_sha256"] == hashlib.sha256(b"{{ .System }}{{ .Prompt }}").hexdigest()


def test_an_ollama_modelfile_without_num_ctx_leaves_the_context_unsaid(tmp_path: Path) -> None:
    routes = {"/api/version": Reply(json={"version": "0.12.0"}), "/api/show": Reply(json={"parameters": "top_k 40"})}
    run = _run(tmp_path, "o", routes, {"object": "list", "data": [{"id": "m", "owned_by": "library"}]})
    identity = json.loads((run / "manifest.json").read_text())["server_identity"][0]
    assert identity["kind"] == "ollama"
    assert identity.get("context") is None and identity.get("chat_template_sha256") is None
