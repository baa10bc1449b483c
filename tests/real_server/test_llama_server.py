"""ocllm against a real llama.cpp llama-server running SmolLM2-135M-Instruct on the CPU.

Driven as a user drives it: `ocllm run`, `report` and `compare` as subprocesses, then the files they write
are read. A real model's answers are what they are, so no accuracy is asserted: only the structure (every
task exactly once, errors apart from answers, finish reasons, model names, exit codes).

Assertions marked `# contract: issue 8` state behaviour that lands with issue 8 and may fail before it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import read_jsonl, write_suite

from .conftest import (
    MAX_TOKENS,
    SERVED_NAME,
    SERVER_ENV,
    LlamaServer,
    ServerFactory,
    die_with_parent,
    ocllm_budget_s,
)

if not os.environ.get(SERVER_ENV):
    pytest.skip(
        f"needs a real llama-server: run `make test-real-server` (builds and caches one), or set {SERVER_ENV} "
        "and OCLLM_LLAMA_MODEL to a llama-server binary and a GGUF model",
        allow_module_level=True,
    )

# How long an ocllm command may take: ocllm_budget_s(), scaled from the measured speed of the server (conftest.py).


# --- suites ------------------------------------------------------------------------------------------------


def mcq(task_id: str, question: str, options: list[str], answer: str, category: str) -> dict[str, Any]:
    return {"id": task_id, "type": "mcq", "question": question, "options": options, "answer": answer,
            "category": category}  # fmt: skip


def substrings(task_id: str, question: str, required: list[str], category: str) -> dict[str, Any]:
    return {"id": task_id, "type": "required_substrings", "question": question, "required_substrings": required,
            "category": category}  # fmt: skip


TASKS = [
    mcq("add_1", "What is 2 + 3?", ["5", "6", "4", "7"], "A", "arithmetic"),
    mcq("sub_1", "What is 10 - 4?", ["5", "6", "7", "8"], "B", "arithmetic"),
    mcq("mul_1", "What is 3 times 3?", ["6", "12", "9", "33"], "C", "arithmetic"),
    mcq("cap_fr", "What is the capital of France?", ["Berlin", "Madrid", "Rome", "Paris"], "D", "geography"),
    mcq("cap_jp", "What is the capital of Japan?", ["Tokyo", "Seoul", "Beijing", "Bangkok"], "A", "geography"),
    mcq("legs", "How many legs does a spider have?", ["Six", "Eight", "Ten", "Four"], "B", "general"),
    mcq("sky", "What colour is the sky on a clear day?", ["Green", "Red", "Blue", "Yellow"], "C", "general"),
    substrings("echo", "Write the word banana, once, and nothing else.", ["banana"], "general"),
]
# About 20,000 tokens: far past the 4096-token context (and past any one slot's share of it).
HUGE = mcq("huge", "Count the words. " + "apple banana cherry " * 7000, ["1", "2", "3", "4"], "A", "general")


def write_lanes(path: Path, server: LlamaServer, suite: Path, **settings: object) -> Path:
    """A lanes file with one lane `L`: for the settings that have no flag (max_attempts, retry_budget_s...)."""
    lane = {"base_url": server.base_url, "model": SERVED_NAME, "suite": str(suite), **settings}
    lines = ["[lanes.L]", *(f"{key} = {json.dumps(value)}" for key, value in lane.items())]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


# --- running ocllm -----------------------------------------------------------------------------------------


def ocllm_env() -> dict[str, str]:
    # Wide, so that rich does not wrap a note across lines; unbuffered, so a Popen'd run's console can be
    # read while it runs.
    return {**os.environ, "COLUMNS": "250", "PYTHONUNBUFFERED": "1"}


def ocllm(*args: str, timeout: float | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ocllm", *args],
        capture_output=True,
        text=True,
        timeout=timeout or ocllm_budget_s(),
        env=ocllm_env(),
        check=False,
        preexec_fn=die_with_parent,
    )


def run_args(server: LlamaServer, suite: Path, out: Path, *extra: str, model: str = SERVED_NAME) -> list[str]:
    return ["run", "--suite", str(suite), "--base-url", server.base_url, "--model", model, "--out", str(out), *extra]


def start_ocllm(args: list[str], console: Path) -> subprocess.Popen[bytes]:
    """`ocllm ARGS` in the background, stdout and stderr together in `console`."""
    with open(console, "wb") as fh:
        return subprocess.Popen(
            [sys.executable, "-m", "ocllm", *args],
            stdout=fh,
            stderr=subprocess.STDOUT,
            env=ocllm_env(),
            preexec_fn=die_with_parent,
        )


def wait_exit(proc: subprocess.Popen[bytes], console: Path, timeout: float | None = None) -> int:
    timeout = timeout or ocllm_budget_s()
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"ocllm did not finish within {timeout:g} s:\n{console.read_text(errors='replace')}")


def count_lines(path: Path) -> int:
    """Whole lines written so far (a line being written has no newline yet)."""
    return path.read_bytes().count(b"\n") if path.exists() else 0


def wait_for_samples(proc: subprocess.Popen[bytes], samples: Path, console: Path, n: int = 1) -> None:
    budget = ocllm_budget_s()
    deadline = time.monotonic() + budget
    while count_lines(samples) < n:
        if proc.poll() is not None:
            pytest.fail(f"ocllm exited ({proc.returncode}) before {n} sample(s):\n{console.read_text()}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"no {n} sample(s) within {budget:.0f} s:\n{console.read_text()}")
        time.sleep(0.02)


# --- reading what it wrote -----------------------------------------------------------------------------------


def read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def said(result: subprocess.CompletedProcess[str]) -> str:
    """The console output of a finished command, for assertion messages."""
    return f"exit {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"


def assert_each_task_once(samples: list[dict[str, Any]], tasks: list[dict[str, Any]]) -> None:
    ids = [s["task_id"] for s in samples]
    assert sorted(ids) == sorted(t["id"] for t in tasks), f"samples hold {ids}"


def metrics_tasks(out: Path) -> dict[str, dict[str, Any]]:
    return {t["task_id"]: t for t in read_json(out / "metrics.json")["tasks"]}


def note_lines(console: str) -> list[str]:
    return [line for line in console.splitlines() if line.lstrip().startswith("note:")]


# --- a. streamed and not, one request at a time and four ---------------------------------------------------


@pytest.mark.parametrize("concurrency", [1, 4])
@pytest.mark.parametrize("stream", [False, True], ids=["no-stream", "stream"])
def test_a_run_answers_every_task_once(
    llama_server: LlamaServer, tmp_path: Path, stream: bool, concurrency: int
) -> None:
    suite, out = write_suite(tmp_path / "suite.jsonl", TASKS), tmp_path / "run"
    flags = ["--stream" if stream else "--no-stream", "--concurrency", str(concurrency), "--max-tokens", MAX_TOKENS]
    result = ocllm(*run_args(llama_server, suite, out, *flags))
    assert result.returncode == 0, said(result)

    samples = read_jsonl(out / "samples.jsonl")
    assert_each_task_once(samples, TASKS)
    assert [s for s in samples if s.get("error")] == []
    served = llama_server.served_models()
    assert served == [SERVED_NAME]
    for s in samples:
        assert s["model"] == SERVED_NAME  # the name the server answered with, recorded per sample
        assert s["finish_reason"] in ("stop", "length")
        assert isinstance(s["content"], str)
        assert 0 < s["usage"]["completion_tokens"] <= int(MAX_TOKENS)
        assert s["usage"]["prompt_tokens"] > 0
        assert s["latency_s"] > 0
        if stream:
            assert 0 < s["ttft_s"] <= s["latency_s"]
        else:
            assert s.get("ttft_s") is None
        assert s["request"]["stream"] is True if stream else "stream" not in s["request"]

    manifest = read_json(out / "manifest.json")
    assert manifest["status"] == "finished"
    assert [m["id"] for m in manifest["server_models"]["data"]] == served
    summary = read_json(out / "metrics.json")["summary"]
    assert (summary["total"], summary["errors"], summary["complete"]) == (len(TASKS), 0, True)
    assert all(isinstance(t["correct"], bool) for t in metrics_tasks(out).values())
    # Each answer was decided once, as it came, and metrics.json written from those decisions (issue 11):
    # a fresh rescore of the samples decides the same, and the raw outputs are in samples.jsonl only.
    fresh = tmp_path / "fresh.json"
    rescored = ocllm("rescore", str(out), "-o", str(fresh))
    assert rescored.returncode == 0, said(rescored)
    assert read_json(out / "metrics.json")["source"]["raw_outputs"] == "samples.jsonl"
    again = {t["task_id"]: t for t in read_json(fresh)["tasks"]}
    for task_id, ran in metrics_tasks(out).items():
        assert "raw_content" not in ran
        for key in ("extracted_final_answer", "correct", "rule", "reason", "candidates", "ambiguity"):
            assert ran[key] == again[task_id][key], (task_id, key)


# --- b. a prompt past the context size ----------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["no-stream", "stream"])
def test_b_prompt_past_the_context_is_an_error_with_the_servers_reason(
    llama_server: LlamaServer, tmp_path: Path, stream: bool
) -> None:
    tasks = [*TASKS[:3], HUGE, *TASKS[3:5]]
    suite, out = write_suite(tmp_path / "suite.jsonl", tasks), tmp_path / "run"
    flags = ["--stream" if stream else "--no-stream", "--concurrency", "4", "--max-tokens", MAX_TOKENS]
    result = ocllm(*run_args(llama_server, suite, out, *flags))
    assert result.returncode == 1, said(result)

    samples = {s["task_id"]: s for s in read_jsonl(out / "samples.jsonl")}
    assert_each_task_once(list(samples.values()), tasks)
    error = samples["huge"]["error"]
    # llama-server's own words, e.g. "request (20012 tokens) exceeds the available context size (4096 tokens)"
    assert error and "context size" in error, error
    # The client classified it where it happened: a refusal of this request (400), sent once, not a wrong answer nor
    # a lost line; and said what to change.
    assert (samples["huge"]["error_kind"], samples["huge"]["error_status"]) == ("refused", 400)
    assert samples["huge"].get("attempts", 1) == 1 and "give the server a larger context" in error
    assert samples["huge"].get("content") is None
    assert all(s.get("error") is None and s["model"] == SERVED_NAME for tid, s in samples.items() if tid != "huge")

    records = metrics_tasks(out)
    assert records["huge"]["correct"] is None and records["huge"]["error"] == error
    assert all(isinstance(r["correct"], bool) and r["error"] is None for tid, r in records.items() if tid != "huge")
    summary = read_json(out / "metrics.json")["summary"]
    assert (summary["errors"], summary["missing"]) == (1, 0)  # every task ran; one request failed
    assert read_json(out / "manifest.json")["status"] == "finished_with_errors"
    assert "1 task(s) failed" in result.stdout and "context size" in result.stdout, said(result)


# --- c. the server killed mid-run, then --retry-errors -------------------------------------------------------


def test_c_server_killed_mid_run_then_retry_errors(
    start_llama_server: ServerFactory, tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    port = reserve_port()
    server = start_llama_server(port)
    suite = write_suite(tmp_path / "suite.jsonl", TASKS)
    # Slow enough to be killed part-way (one request at a time, 64 tokens each); failures end fast (two
    # attempts within 3 s) instead of the default four attempts within half an hour.
    lanes = write_lanes(
        tmp_path / "lanes.toml", server, suite, concurrency=1, max_tokens=64, stream=False,
        max_attempts=2, retry_budget_s=3.0, timeout_s=60.0,
    )  # fmt: skip
    out, console = tmp_path / "run", tmp_path / "console.txt"
    args = ["run", "--config", str(lanes), "--lane", "L", "--out", str(out)]
    proc = start_ocllm(args, console)
    wait_for_samples(proc, out / "samples.jsonl", console)
    server.kill()
    code = wait_exit(proc, console)
    text = console.read_text(errors="replace")
    assert code == 1, text

    first = read_jsonl(out / "samples.jsonl")
    assert_each_task_once(first, TASKS)
    answered = [s for s in first if s.get("error") is None]
    failed = [s for s in first if s.get("error")]
    assert answered and failed, f"expected answers then errors: {[s.get('error') for s in first]}"
    # One request at a time: once the server is gone, every later task fails, none is answered.
    errors_seen = [s.get("error") is not None for s in first]
    assert errors_seen == sorted(errors_seen), "an answer came after a failure"
    assert all(s["error"].startswith("connection failed") for s in failed), [s["error"] for s in failed]
    assert all(s["error_kind"] == "connection" for s in failed), [s.get("error_kind") for s in failed]
    records = metrics_tasks(out)
    assert all(records[s["task_id"]]["correct"] is None for s in failed)
    assert read_json(out / "manifest.json")["status"] == "finished_with_errors"

    start_llama_server(port)  # the same address, so the lane is unchanged
    again = ocllm(*args, "--retry-errors")
    assert again.returncode == 0, said(again)
    samples = read_jsonl(out / "samples.jsonl")
    assert_each_task_once(samples, TASKS)
    assert all(s.get("error") is None for s in samples)
    # What was answered before the kill was kept, not asked again.
    by_id = {s["task_id"]: s for s in samples}
    assert all(by_id[s["task_id"]] == s for s in answered)
    summary = read_json(out / "metrics.json")["summary"]
    assert (summary["total"], summary["errors"], summary["complete"]) == (len(TASKS), 0, True)


# --- d. a model name the server does not serve ----------------------------------------------------------------


def test_d_wrong_model_name_runs_with_a_note_before_the_first_task(llama_server: LlamaServer, tmp_path: Path) -> None:
    tasks = TASKS[:4]
    suite, out, console = write_suite(tmp_path / "suite.jsonl", tasks), tmp_path / "run", tmp_path / "console.txt"
    flags = ["--no-stream", "--concurrency", "1", "--max-tokens", MAX_TOKENS]
    proc = start_ocllm(run_args(llama_server, suite, out, *flags, model="llama3"), console)

    def names_both(text: str) -> bool:
        return any("llama3" in line and SERVED_NAME in line for line in text.splitlines())

    # The console is read after the first sample is seen: a note missing then was not there before it.
    wait_for_samples(proc, out / "samples.jsonl", console)
    note_before_first_task = names_both(console.read_text(errors="replace"))
    code = wait_exit(proc, console)
    text = console.read_text(errors="replace")
    assert code == 0, text  # llama-server answers whatever name is asked for: the run goes on

    samples = read_jsonl(out / "samples.jsonl")
    assert_each_task_once(samples, tasks)
    assert all(s.get("error") is None for s in samples)
    assert {s["request"]["model"] for s in samples} == {"llama3"}
    assert {s["model"] for s in samples} == {SERVED_NAME}  # llama-server answers with its own name

    assert names_both(text), f"no note naming 'llama3' and {SERVED_NAME!r}:\n{text}"  # contract: issue 8
    assert note_before_first_task, f"the note came only after the first task finished:\n{text}"  # contract: issue 8

    report = ocllm("report", str(out))
    assert report.returncode == 0, said(report)
    markdown = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert SERVED_NAME in markdown, markdown[:2000]  # contract: issue 8


# --- e. Ctrl-C, then --resume -----------------------------------------------------------------------------------


def test_e_ctrl_c_then_report_then_resume(llama_server: LlamaServer, tmp_path: Path) -> None:
    suite, out, console = write_suite(tmp_path / "suite.jsonl", TASKS), tmp_path / "run", tmp_path / "console.txt"
    args = run_args(llama_server, suite, out, "--no-stream", "--concurrency", "1", "--max-tokens", "64")
    proc = start_ocllm(args, console)
    wait_for_samples(proc, out / "samples.jsonl", console)
    proc.send_signal(signal.SIGINT)
    code = wait_exit(proc, console)
    text = console.read_text(errors="replace")
    assert code == 130, text
    assert read_json(out / "manifest.json")["status"] == "interrupted"
    done = read_jsonl(out / "samples.jsonl")
    missing = len(TASKS) - len(done)
    assert missing >= 1, "the run finished before it was interrupted: make it slower"
    assert all(s.get("error") is None for s in done)

    report = ocllm("report", str(out))
    assert report.returncode == 0, said(report)
    told = [line for line in (report.stdout + report.stderr).splitlines() if "INCOMPLETE" in line]
    assert any(re.search(rf"\b{missing}\b", line) for line in told), said(report)  # contract: issue 8
    top = "\n".join((out / "report" / "report.md").read_text(encoding="utf-8").splitlines()[:15])
    assert "incomplete" in top.lower() and re.search(rf"\b{missing}\b", top), top  # contract: issue 8

    resumed = ocllm(*args, "--resume")
    assert resumed.returncode == 0, said(resumed)
    samples = read_jsonl(out / "samples.jsonl")
    assert_each_task_once(samples, TASKS)  # no task repeated, none left out
    assert samples[: len(done)] == done  # the finished ones were kept as they were
    assert all(s.get("error") is None for s in samples)
    assert read_json(out / "manifest.json")["status"] == "finished"
    summary = read_json(out / "metrics.json")["summary"]
    assert (summary["total"], summary["errors"], summary["complete"]) == (len(TASKS), 0, True)


# --- f. max_tokens small enough to truncate ---------------------------------------------------------------------


def test_f_truncation_is_counted_and_noted(llama_server: LlamaServer, tmp_path: Path) -> None:
    tasks = TASKS[:5]
    suite, out = write_suite(tmp_path / "suite.jsonl", tasks), tmp_path / "run"
    result = ocllm(*run_args(llama_server, suite, out, "--no-stream", "--concurrency", "4", "--max-tokens", "4"))
    assert result.returncode == 0, said(result)  # a truncated answer is an answer, not a failed request

    samples = read_jsonl(out / "samples.jsonl")
    assert_each_task_once(samples, tasks)
    assert all(s.get("error") is None and s["usage"]["completion_tokens"] <= 4 for s in samples)
    cut = [s["task_id"] for s in samples if s["finish_reason"] == "length"]
    assert cut, [s["finish_reason"] for s in samples]  # 4 tokens cannot hold the reasoning asked for
    summary = read_json(out / "metrics.json")["summary"]
    assert summary["truncated"] == len(cut)
    assert sorted(tid for tid, r in metrics_tasks(out).items() if r["truncated"]) == sorted(cut)

    notes = note_lines(result.stdout + result.stderr)
    assert any("max_tokens" in n or "truncated" in n for n in notes), said(result)  # contract: issue 8


# --- g. compare and report on real runs -------------------------------------------------------------------------


def test_g_compare_and_report_agree_with_the_runs(llama_server: LlamaServer, tmp_path: Path) -> None:
    tasks = [*TASKS[:6], HUGE]  # the huge task fails on both sides: left out of the paired figures
    suite = write_suite(tmp_path / "suite.jsonl", tasks)
    runs = {"a": (tmp_path / "a", MAX_TOKENS), "b": (tmp_path / "b", "8")}  # b is cut short: other answers
    for out, max_tokens in runs.values():
        result = ocllm(*run_args(llama_server, suite, out, "--concurrency", "4", "--max-tokens", max_tokens))
        assert result.returncode == 1, said(result)  # the huge task

    folder = tmp_path / "a_vs_b"
    result = ocllm("compare", str(runs["a"][0]), str(runs["b"][0]), "-o", str(folder))
    assert result.returncode == 0, said(result)
    for name in ("comparison.json", "comparison.md", "comparison.html"):
        assert (folder / name).stat().st_size > 0
    doc = read_json(folder / "comparison.json")

    a, b = metrics_tasks(runs["a"][0]), metrics_tasks(runs["b"][0])
    paired = [tid for tid in a if tid in b and a[tid]["correct"] is not None and b[tid]["correct"] is not None]
    assert sorted(paired) == sorted(t["id"] for t in TASKS[:6])
    assert doc["unpaired_errors"] == ["huge"]
    assert doc["n_paired"] == len(paired)
    assert doc["a_correct"] == sum(a[tid]["correct"] for tid in paired)
    assert doc["b_correct"] == sum(b[tid]["correct"] for tid in paired)
    assert doc["a_wins"] == sum(a[tid]["correct"] and not b[tid]["correct"] for tid in paired)
    assert doc["b_wins"] == sum(b[tid]["correct"] and not a[tid]["correct"] for tid in paired)
    for side, records in (("a", a), ("b", b)):
        assert doc["resources"][side]["errors"] == 1
        assert doc["resources"][side]["truncated"] == sum(r["truncated"] for r in records.values())
        summary = read_json(runs[side][0] / "metrics.json")["summary"]
        assert summary["correct"] == doc[f"{side}_correct"]  # the huge task is never correct

    result = ocllm("report", str(runs["a"][0]))
    assert result.returncode == 0, said(result)
    report = runs["a"][0] / "report"
    markdown, html = (report / "report.md").read_text(), (report / "report.html").read_text()
    assert "context size" in markdown  # the failed request is listed with the server's reason
    assert all(t["id"] in html for t in tasks)


# --- h. a matrix that starts llama-server itself (issue 14) ---------------------------------------------------


def toml_value(value: object) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def test_h_managed_llama_server_shared_then_restarted_with_other_flags(
    llama_paths: tuple[Path, Path], tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    binary, model = llama_paths
    port = reserve_port()
    command = LlamaServer(binary, model, port, tmp_path / "unused.log").command()
    smaller = [*command, "--ctx-size", "2048"]  # another server setting: its own start
    suite = write_suite(tmp_path / "suite.jsonl", TASKS[:4])
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(
        f'[defaults]\nbase_url = "http://127.0.0.1:{port}/v1"\nmodel = "{SERVED_NAME}"\nsuite = "{suite}"\n'
        f"max_tokens = {MAX_TOKENS}\nconcurrency = 4\nstream = true\n"
        f"[defaults.server]\ncommand = {toml_value(command)}\nready_timeout_s = 120\n"
        f"env = {toml_value({'LLAMA_ARG_THREADS': '2'})}\n"
        "[lanes.greedy]\ntemperature = 0.0\n[lanes.warm]\ntemperature = 0.7\n"
        f"[lanes.small_context]\n[lanes.small_context.server]\ncommand = {toml_value(smaller)}\n",
        encoding="utf-8",
    )
    out = tmp_path / "runs"
    done = ocllm("matrix", str(lanes), "--out", str(out))
    assert done.returncode == 0, said(done)
    manifests = {name: read_json(out / name / "manifest.json") for name in ("greedy", "warm", "small_context")}
    servers = {name: m["server"] for name, m in manifests.items()}
    assert servers["greedy"]["pid"] == servers["warm"]["pid"] != servers["small_context"]["pid"]
    assert servers["small_context"]["command"][-2:] == ["--ctx-size", "2048"]
    for name, server in servers.items():
        assert SERVED_NAME in server["models"] and server["ready_at"]
        assert server["env"] == ([] if name == "small_context" else ["LLAMA_ARG_THREADS"])  # a table replaces whole
        log = (out / name / "server.log").read_text(errors="replace")
        # The lane that started a server has its start-up in its log; the lane sharing it, its requests.
        assert ("llama" in log.lower()) if name != "warm" else ("slot" in log)
        serving = read_json(out / name / "metrics.json")["summary"]["serving"]
        assert serving["requests"] >= len(TASKS[:4]) and serving["output_tokens"] > 0
        assert serving["ttft_samples"] == len(TASKS[:4]) and serving["ttft_p50_s"] > 0
    with pytest.raises(OSError):  # nothing listens any more: ocllm stopped what it started
        socket.create_connection(("127.0.0.1", port), timeout=1).close()


# --- i. two llama-servers behind one lane -----------------------------------------------------------------------


def test_i_two_replicas_share_the_work(
    start_llama_server: ServerFactory, tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    first, second = start_llama_server(reserve_port()), start_llama_server(reserve_port())
    suite = write_suite(tmp_path / "suite.jsonl", TASKS)
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(
        f'[lanes.L]\nbase_url = {json.dumps([first.base_url, second.base_url])}\nmodel = "{SERVED_NAME}"\n'
        f'suite = "{suite}"\nmax_tokens = {MAX_TOKENS}\nconcurrency = 4\n',
        encoding="utf-8",
    )
    done = ocllm("run", "--config", str(lanes), "--lane", "L", "--out", str(tmp_path / "r"))
    assert done.returncode == 0, said(done)
    endpoints = read_json(tmp_path / "r" / "manifest.json")["endpoints"]
    assert [e["base_url"] for e in endpoints] == [first.base_url, second.base_url]
    assert all(e["requests"] > 0 and e["errors"] == 0 for e in endpoints)
    assert sum(e["requests"] for e in endpoints) == len(TASKS)
    assert_each_task_once(read_jsonl(tmp_path / "r" / "samples.jsonl"), TASKS)


# --- j. shards of a suite, merged -------------------------------------------------------------------------------


def test_j_two_shards_merged_are_one_run(llama_server: LlamaServer, tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite.jsonl", TASKS)
    for k in range(2):
        done = ocllm(
            *run_args(llama_server, suite, tmp_path / f"s{k}", "--max-tokens", MAX_TOKENS, "--shard", f"{k}/2")
        )
        assert done.returncode in (0, 1), said(done)
    merged = ocllm("merge", str(tmp_path / "s1"), str(tmp_path / "s0"), "-o", str(tmp_path / "m"))
    assert merged.returncode in (0, 1), said(merged)
    assert_each_task_once(read_jsonl(tmp_path / "m" / "samples.jsonl"), TASKS)
    suite_order = [t["id"] for t in TASKS]
    assert [json.loads(line)["id"] for line in (tmp_path / "m" / "suite.jsonl").read_text().splitlines()] == suite_order
    shard_records = {**metrics_tasks(tmp_path / "s0"), **metrics_tasks(tmp_path / "s1")}
    assert {k: v["correct"] for k, v in metrics_tasks(tmp_path / "m").items()} == {
        k: v["correct"] for k, v in shard_records.items()
    }
    report = ocllm("report", str(tmp_path / "m"))
    assert report.returncode == 0, said(report)


# --- servers (issue 19, item 8): a managed llama-server behind a shell that does not exec, ocllm killed --------


def llama_processes(binary: Path, port: int) -> list[int]:
    """Live llama-server processes (zombies hold nothing) listening on `port`, found by their command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if argv[0] == str(binary).encode() and str(port).encode() in argv and state != "Z":
            found.append(int(entry.name))
    return found


def test_servers_a_wrapped_managed_llama_server_does_not_outlive_ocllm_killed(
    llama_paths: tuple[Path, Path], tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    binary, model = llama_paths
    port = reserve_port()
    command = LlamaServer(binary, model, port, tmp_path / "unused.log").command()
    wrapper = ["sh", "-c", " ".join(shlex.quote(arg) for arg in command) + "; echo llama-server ended"]
    suite = write_suite(tmp_path / "suite.jsonl", TASKS)
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(
        f'[lanes.L]\nbase_url = "http://127.0.0.1:{port}/v1"\nmodel = "{SERVED_NAME}"\nsuite = "{suite}"\n'
        f"max_tokens = {MAX_TOKENS}\nconcurrency = 1\n"
        f"[lanes.L.server]\ncommand = {toml_value(wrapper)}\nready_timeout_s = 120\nstop_timeout_s = 5\n",
        encoding="utf-8",
    )
    out, console = tmp_path / "runs", tmp_path / "console.txt"
    proc = start_ocllm(["matrix", str(lanes), "--out", str(out)], console)
    try:
        wait_for_samples(proc, out / "L" / "samples.jsonl", console)
        shell = read_json(out / "L" / "manifest.json")["server"]["pid"]
        running = llama_processes(binary, port)
        assert running and shell not in running  # the real server is the shell's child, not the shell
        assert "the server of lane L is ready after" in console.read_text()
        proc.kill()  # SIGKILL: ocllm stops nothing itself
        proc.wait()
        deadline = time.monotonic() + 60
        while llama_processes(binary, port) or _answers(port):
            assert time.monotonic() < deadline, f"llama-server outlived ocllm: {llama_processes(binary, port)}"
            time.sleep(0.2)
    finally:
        for pid in llama_processes(binary, port):  # a failing test leaves nothing behind either
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _answers(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


# --- k. a streamed lane needs no retry (issue 19, item 9) -------------------------------------------------------


def arithmetic_tasks(n: int) -> list[dict[str, Any]]:
    """`n` small MCQ tasks, each its own question, the answer at a different letter in turn."""
    tasks = []
    for i in range(n):
        a, b = 3 + i, 7 + 2 * i
        options = [str(a + b + d) for d in (-1, 1, 2)]
        letter = i % 4
        options.insert(letter, str(a + b))
        tasks.append(mcq(f"sum_{i}", f"What is {a} + {b}?", options, "ABCD"[letter], "arithmetic"))
    return tasks


def test_k_a_streamed_40_task_lane_needs_no_retry(llama_server: LlamaServer, tmp_path: Path) -> None:
    # llama-server closes the connection after every streamed response: a pooled connection taken after one was
    # dead ("Server disconnected"), and with one attempt a healthy server failed tasks.
    tasks = arithmetic_tasks(40)
    suite = write_suite(tmp_path / "suite.jsonl", tasks)
    lanes = write_lanes(
        tmp_path / "lanes.toml", llama_server, suite, stream=True, max_attempts=1, concurrency=4, max_tokens=24
    )
    out = tmp_path / "run"
    result = ocllm("run", "--config", str(lanes), "--lane", "L", "--out", str(out))
    assert result.returncode == 0, said(result)
    samples = read_jsonl(out / "samples.jsonl")
    assert_each_task_once(samples, tasks)
    assert [s["error"] for s in samples if s.get("error")] == []
    manifest = read_json(out / "manifest.json")
    assert (manifest["requests"], manifest["retries"], manifest["resends"]) == (40, {}, 0)
    assert manifest["server_kind"] == "llama.cpp" and manifest["server_identity"][0]["evidence"] == "GET /props"
    assert "(40 requests, 0 retries)" in result.stdout
    # Four requests at once share llama.cpp's batches: said before the run, and kept in the manifest.
    assert any("share llama.cpp's batches" in n and "concurrency 4" in n for n in manifest["notices"])
    assert "share llama.cpp's batches" in result.stdout


# --- l. identical runs repeat (issue 19, item 10) ---------------------------------------------------------------


def contents(out: Path) -> dict[str, str | None]:
    return {s["task_id"]: s.get("content") for s in read_jsonl(out / "samples.jsonl")}


def test_l_identical_matrix_runs_and_shards_give_identical_answers(llama_server: LlamaServer, tmp_path: Path) -> None:
    # A matrix shares one server between its lanes: with llama.cpp's prompt cache on, a request started from what
    # the requests before it (lane A's, earlier tests') left in the slots, and two identical runs differed (3 of 40
    # greedy answers, measured). With the cache off they still differed at concurrency 4 (2 of 40: requests in
    # flight together share batches, and a batch's size changes the numbers), so these lanes send one at a time;
    # the console says why a lane of more may not repeat (test k).
    tasks = arithmetic_tasks(40)
    suite = write_suite(tmp_path / "suite.jsonl", tasks)
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(
        f'[defaults]\nbase_url = "{llama_server.base_url}"\nmodel = "{SERVED_NAME}"\nsuite = "{suite}"\n'
        "max_tokens = 32\nconcurrency = 1\n"
        "[lanes.A]\ntemperature = 0.0\n[lanes.B]\ntemperature = 0.7\nseed = 0\n",
        encoding="utf-8",
    )
    runs = [tmp_path / "first", tmp_path / "second"]
    for out in runs:
        done = ocllm("matrix", str(lanes), "--out", str(out))
        assert done.returncode in (0, 1), said(done)
    for name in ("A", "B"):
        first, second = contents(runs[0] / name), contents(runs[1] / name)
        assert sorted(first) == sorted(t["id"] for t in tasks)
        differ = sorted(tid for tid in first if first[tid] != second[tid])
        assert differ == [], f"lane {name}: {len(differ)} of {len(tasks)} answers differ between identical runs"
        for out in runs:
            manifest = read_json(out / name / "manifest.json")
            assert (manifest["server_kind"], manifest["request_settings"]) == ("llama.cpp", {"cache_prompt": False})

    # The greedy lane in two shards, merged, answers as the whole run did.
    for k in range(2):
        shard = ["--out", str(tmp_path / f"s{k}"), "--shard", f"{k}/2"]
        done = ocllm("run", "--config", str(lanes), "--lane", "A", *shard)
        assert done.returncode in (0, 1), said(done)
    merged = ocllm("merge", str(tmp_path / "s0"), str(tmp_path / "s1"), "-o", str(tmp_path / "m"))
    assert merged.returncode in (0, 1), said(merged)
    whole, sharded = contents(runs[0] / "A"), contents(tmp_path / "m")
    differ = sorted(tid for tid in whole if whole[tid] != sharded.get(tid))
    assert differ == [], f"{len(differ)} greedy answers differ between a sharded and an unsharded run: {differ[:5]}"


# --- m. a math lane (issue 20) --------------------------------------------------------------------------------


def math_task(task_id: str, question: str, answer: str, category: str) -> dict[str, Any]:
    return {"id": task_id, "type": "math", "question": question, "answer": answer, "category": category}


MATH_TASKS = [
    math_task("gsm_apples", "Tom has 3 apples and buys 4 more. How many apples does he have?", "7", "gsm"),
    math_task("gsm_pens", "A pen costs $2. How many dollars do 5 pens cost?", "10", "gsm"),
    math_task("frac_half", "What is 1/2 + 1/4? Give a fraction.", "\\frac{3}{4}", "math"),
    math_task("root_two", "What is the square root of 2 squared?", "2", "math"),
    math_task("pair", "Give the point where x = 1 and y = 2 as an ordered pair.", "(1,2)", "math"),
    math_task("speed", "A car goes 100 km in 2 hours. What is its speed in km/h?", "50", "gsm"),
]


@pytest.mark.parametrize("stream", [False, True], ids=["no-stream", "stream"])
def test_m_a_math_lane_is_decided_with_its_evidence(llama_server: LlamaServer, tmp_path: Path, stream: bool) -> None:
    # The tiny model's score does not matter: the prompt sent, every decision's evidence, the figures per type,
    # a rescore that agrees with the run, and reports that draw the math checks.
    suite, out = write_suite(tmp_path / "suite.jsonl", MATH_TASKS), tmp_path / "run"
    flags = ["--stream" if stream else "--no-stream", "--concurrency", "2", "--max-tokens", "96"]
    result = ocllm(*run_args(llama_server, suite, out, *flags))
    assert result.returncode == 0, said(result)
    samples = read_jsonl(out / "samples.jsonl")
    assert_each_task_once(samples, MATH_TASKS)
    for s in samples:
        prompt = s["request"]["messages"][-1]["content"]
        assert prompt.endswith("\n\nPut your final answer within \\boxed{}."), prompt
    by_id = {t["id"]: t for t in MATH_TASKS}
    decided = metrics_tasks(out)
    for task_id, d in decided.items():
        assert d["task_type"] == "math" and d["expected_answer"] == by_id[task_id]["answer"]
        assert isinstance(d["correct"], bool) and d["rule"] and d["reason"]
        assert d["comparator"] in ("string", "number", "tolerance", "structure", "screen", "symbolic", "none")
        assert d["comparison"] in ("equal", "different", "undecided", "killed", "not_compared")
        assert d["gold_normalised"] is not None
        assert d["correct"] is (d["comparison"] == "equal")
        if d["extracted_final_answer"] is None:
            assert d["comparator"] == "none" and d["correct"] is False
        else:
            assert d["normalised_answer"] is not None and d["decided_by"] is not None
            deciding = d["candidates"][d["decided_by"]]
            raw = next(s for s in samples if s["task_id"] == task_id)[deciding["field"]]
            assert raw[deciding["start"] : deciding["end"]] == deciding["text"]  # spans index the raw field
    summary = read_json(out / "metrics.json")["summary"]
    assert set(summary["by_type"]) == {"math"} and summary["by_type"]["math"]["total"] == len(MATH_TASKS)
    details = set(summary["by_type"]["math"]["details"])
    # Decisions ended by a bound on statements (issue 29) are counted apart as well.
    assert details == {"symbolic_checks_killed", "undecided", "screened", "too_many_statements", "decided_by"}
    fresh = tmp_path / "fresh.json"
    rescored = ocllm("rescore", str(out), "-o", str(fresh))
    assert rescored.returncode == 0, said(rescored)
    again = {t["task_id"]: t for t in read_json(fresh)["tasks"]}
    for task_id, ran in decided.items():
        for key in ("extracted_final_answer", "correct", "rule", "comparator", "comparison", "normalisation"):
            assert ran[key] == again[task_id][key], (task_id, key)
    report = tmp_path / "report"
    made = ocllm("report", str(out), "-o", str(report))
    assert made.returncode == 0, said(made)
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "## How each answer was checked" in markdown and "gold, normalised" in markdown
    assert "gold, normalised" in (report / "report.html").read_text(encoding="utf-8")


# --- n. a sampled lane: k = 3 samples of each task (issue 21) --------------------------------------------------


def test_n_a_sampled_lane_asks_each_task_three_times_and_repeats(llama_server: LlamaServer, tmp_path: Path) -> None:
    # Sample i sends seed + i: the model's three answers to a task differ where its sampling does, and a second run
    # of the same lane (one request at a time, as test l needs for llama.cpp to repeat) gives them again.
    tasks = arithmetic_tasks(12)
    suite = write_suite(tmp_path / "suite.jsonl", tasks)
    lanes = write_lanes(
        tmp_path / "lanes.toml", llama_server, suite, temperature=0.9, seed=11, concurrency=1, max_tokens=24,
        samples_per_task=3,
    )  # fmt: skip
    runs = [tmp_path / "first", tmp_path / "second"]
    for out in runs:
        result = ocllm("run", "--config", str(lanes), "--lane", "L", "--out", str(out))
        assert result.returncode == 0, said(result)
    samples = read_jsonl(runs[0] / "samples.jsonl")
    assert sorted((s["task_id"], s.get("sample", 0)) for s in samples) == sorted(
        (t["id"], i) for t in tasks for i in range(3)
    )
    assert all(s["request"]["seed"] == 11 + s.get("sample", 0) for s in samples)
    assert read_json(runs[0] / "manifest.json")["requests"] == 36
    assert "samples: up to 3 per task, 12 tasks" in result.stdout and "avg@3" in result.stdout

    def answers(out: Path) -> dict[tuple[str, int], str | None]:
        return {(s["task_id"], s.get("sample", 0)): s.get("content") for s in read_jsonl(out / "samples.jsonl")}

    first, second = answers(runs[0]), answers(runs[1])
    assert first == second, [key for key in first if first[key] != second[key]][:5]

    # The summary's figures, computed here from the records: avg@3 over every sample, pass@k with Chen et al.'s
    # estimator per task, maj@3 from the answers each sample gave.
    metrics = read_json(runs[0] / "metrics.json")
    summary, records = metrics["summary"], metrics["tasks"]
    assert summary["samples_per_task"] == 3 and summary["tasks_scored"] == 12
    by_task: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_task.setdefault(record["task_id"], []).append(record)
    assert all(sorted(r["sample"] for r in rs) == [0, 1, 2] for rs in by_task.values())
    right = {tid: sum(r["correct"] is True for r in rs) for tid, rs in by_task.items()}
    assert summary["accuracy"] == pytest.approx(sum(right.values()) / 36, abs=1e-6)
    for k in (1, 2, 3):
        expected = sum(1 - math.comb(3 - c, k) / math.comb(3, k) for c in right.values()) / 12
        assert summary["pass_at_k"][str(k)] == pytest.approx(expected, abs=1e-6)

    def majority(rs: list[dict[str, Any]]) -> bool:
        votes = ["gold" if r["correct"] else r["extracted_final_answer"] for r in rs]
        counted = sorted(((votes.count(v), v) for v in set(votes) if v is not None), reverse=True)
        return bool(counted) and counted[0][1] == "gold" and (len(counted) == 1 or counted[0][0] > counted[1][0])

    assert summary["majority_at_k"] == pytest.approx(sum(map(majority, by_task.values())) / 12)
    for tid, agreement in summary["by_task"].items():
        assert (agreement["samples"], agreement["correct"]) == (3, right[tid])

    # Compared with a one-sample lane of the same model, the tasks' shares are paired.
    single = tmp_path / "single"
    done = ocllm("run", "--config", str(lanes), "--lane", "L", "--samples", "1", "--out", str(single))
    assert done.returncode == 0, said(done)
    compared = ocllm("compare", str(single), str(runs[0]), "-o", str(tmp_path / "cmp"))
    assert compared.returncode == 0, said(compared)
    comparison = read_json(tmp_path / "cmp" / "comparison.json")
    assert comparison["test"] == "paired t" and comparison["n_paired"] == 12
    assert (comparison["samples_per_task_a"], comparison["samples_per_task_b"]) == (1, 3)
    assert len(comparison["task_differences"]) == 12


# --- o. an instructions lane: IFEval's checks on a real model's answers (issue 22) -------------------------------


def instructions_task(task_id: str, question: str, *instructions: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"id": task_id, "type": "instructions", "question": question, "category": "ifeval",
            "instructions": [{"id": i, "kwargs": k} for i, k in instructions]}  # fmt: skip


INSTRUCTION_TASKS = [
    instructions_task("commas", "Describe a cat in two sentences. Do not use commas.", ("punctuation:no_comma", {})),
    instructions_task(
        "words",
        "Write about the sea in fewer than 40 words, all in lowercase letters.",
        ("length_constraints:number_words", {"num_words": 40, "relation": "less than"}),
        ("change_case:english_lowercase", {}),
    ),
    instructions_task(
        "keywords",
        "Write a short note that mentions the words apple and river. End with the phrase 'Bye now.'",
        ("keywords:existence", {"keywords": ["apple", "river"]}),
        ("startend:end_checker", {"end_phrase": "Bye now."}),
    ),
    instructions_task(
        "bullets",
        "List exactly three fruits as markdown bullet points, like * apple.",
        ("detectable_format:number_bullet_lists", {"num_bullets": 3}),
    ),
]


def test_o_an_instructions_lane_records_each_instruction_s_measured_verdict(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    suite = write_suite(tmp_path / "suite.jsonl", INSTRUCTION_TASKS)
    out = tmp_path / "run"
    result = ocllm(*run_args(llama_server, suite, out, "--max-tokens", "96"))
    assert result.returncode == 0, said(result)
    samples = read_jsonl(out / "samples.jsonl")
    assert_each_task_once(samples, INSTRUCTION_TASKS)
    by_id = {t["id"]: t for t in INSTRUCTION_TASKS}
    # The prompt is the question (IFEval's prompts state their instructions), sent as it stands.
    for sample in samples:
        assert sample["request"]["messages"][-1]["content"] == by_id[sample["task_id"]]["question"]
    metrics = read_json(out / "metrics.json")
    for record in metrics["tasks"]:
        asked = by_id[record["task_id"]]["instructions"]
        verdicts = record["verdicts"]
        assert [v["id"] for v in verdicts] == [i["id"] for i in asked]
        assert record["instructions_followed"] == [v["followed"] for v in verdicts]
        assert record["correct"] is all(record["instructions_followed"])
        assert record["correct_loose"] is all(v["followed_loose"] for v in verdicts)
        assert all(isinstance(v["measured"], str) and v["measured"] for v in verdicts)
        # Each verdict follows from what was measured on the visible answer, checked again here.
        content = next(s for s in samples if s["task_id"] == record["task_id"])["content"] or ""
        for verdict in verdicts:
            if verdict["id"] == "punctuation:no_comma":
                assert verdict["followed"] is ("," not in content)
    details = metrics["summary"]["by_type"]["instructions"]["details"]
    assert details["prompts"] == len(INSTRUCTION_TASKS)
    assert details["instructions"] == sum(len(t["instructions"]) for t in INSTRUCTION_TASKS)
    assert details["prompt_level_strict"] == pytest.approx(metrics["summary"]["accuracy"])
    fresh = tmp_path / "fresh.json"
    assert ocllm("rescore", str(out), "-o", str(fresh)).returncode == 0
    again = {t["task_id"]: t for t in read_json(fresh)["tasks"]}
    for record in metrics["tasks"]:
        assert again[record["task_id"]]["verdicts"] == record["verdicts"]
    made = ocllm("report", str(out), "-o", str(tmp_path / "report"))
    assert made.returncode == 0, said(made)
    assert "Instructions by kind" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


# --- p. a json lane: one JSON value, a schema, the evidence (issue 22, task type json) -------------------------

JSON_SCHEMA = {"type": "object", "required": ["name", "age"],
               "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}}}  # fmt: skip
JSON_TASKS = [
    {"id": "person", "type": "json", "category": "json", "schema": JSON_SCHEMA,
     "question": 'Reply with only a JSON object with keys "name" (a string) and "age" (an integer), nothing else.'},
    {"id": "list", "type": "json", "category": "json",
     "question": "Reply with only a JSON array of the numbers 1, 2 and 3, nothing else."},
    {"id": "prose", "type": "json", "category": "json", "question": "Say hello in one short sentence."},
]  # fmt: skip


def test_p_a_json_lane_is_decided_with_its_evidence(llama_server: LlamaServer, tmp_path: Path) -> None:
    # The tiny model's score does not matter: each decision's evidence is checked against the raw content with
    # Python's own json module, the summary has the type's figures, a rescore agrees, the report draws it.
    suite, out = write_suite(tmp_path / "suite.jsonl", JSON_TASKS), tmp_path / "run"
    lanes = write_lanes(tmp_path / "lanes.toml", llama_server, suite, max_tokens=64,
                        json_template="{question} Schema, if any: {schema}")  # fmt: skip
    result = ocllm("run", "--config", str(lanes), "--lane", "L", "--out", str(out))
    assert result.returncode == 0, said(result)
    samples = {s["task_id"]: s for s in read_jsonl(out / "samples.jsonl")}
    assert_each_task_once(list(samples.values()), JSON_TASKS)
    assert samples["person"]["request"]["messages"][-1]["content"].endswith(json.dumps(JSON_SCHEMA))
    for task_id, d in metrics_tasks(out).items():
        raw = samples[task_id]["content"] or ""
        assert d["task_type"] == "json" and isinstance(d["correct"], bool) and d["reason"]
        if d["rule"] in ("empty_answer", "several_blocks", "not_a_json_block"):
            assert d["correct"] is False and d["extracted_final_answer"] is None
            continue
        text = raw[d["block"]["start"] : d["block"]["end"]]  # spans index the raw content
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            assert d["rule"] == "not_json" and d["parse_error"]["offset"] == exc.pos, (task_id, raw)
            assert (d["parse_error"]["line"], d["parse_error"]["column"]) == (exc.lineno, exc.colno)
            continue
        assert d["parsed"] is True and json.loads(d["extracted_final_answer"]) == value
        assert d["correct"] is (d["rule"] in ("valid", "parsed")) and (d["valid"] is None) == (task_id != "person")
    summary = read_json(out / "metrics.json")["summary"]
    assert summary["by_type"]["json"]["details"]["answers"] == len(JSON_TASKS)
    fresh = tmp_path / "fresh.json"
    assert ocllm("rescore", str(out), "-o", str(fresh)).returncode == 0
    again = {t["task_id"]: t for t in read_json(fresh)["tasks"]}
    for task_id, ran in metrics_tasks(out).items():
        for key in ("extracted_final_answer", "correct", "rule", "block", "parse_error", "violations"):
            assert ran.get(key) == again[task_id].get(key), (task_id, key)
    made = ocllm("report", str(out), "-o", str(tmp_path / "report"))
    assert made.returncode == 0, said(made)
    assert "## How each answer was checked" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


# --- q. a tool lane: calls recorded and classified (issue 23) -----------------------------------------------------

WEATHER_TOOL = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}  # fmt: skip
TOOL_TASKS = [
    {"id": "weather", "type": "tool_call", "category": "simple", "question": "What is the weather in Paris?",
     "tools": [WEATHER_TOOL], "expected_calls": [{"name": "get_weather", "arguments": {"city": ["Paris"]}}]},
    {"id": "weather_oslo", "type": "tool_call", "category": "simple", "question": "Use the tool: weather in Oslo.",
     "tools": [WEATHER_TOOL], "expected_calls": [{"name": "get_weather", "arguments": {"city": ["Oslo"]}}]},
    {"id": "no_tool", "type": "tool_call", "category": "irrelevance", "question": "Say hello in French.",
     "tools": [WEATHER_TOOL], "expected_calls": []},
]  # fmt: skip


@pytest.mark.parametrize("stream", [False, True])
def test_q_a_tool_lane_records_and_classifies_every_call(
    llama_server: LlamaServer, tmp_path: Path, stream: bool
) -> None:
    # llama-server --jinja (as the fixture starts it) parses calls with its chat template: any verdict, but every
    # answer's calls are recorded where they arrived, and classified.
    suite = write_suite(tmp_path / "suite.jsonl", TOOL_TASKS)
    out = tmp_path / "run"
    extra = ("--stream",) if stream else ()
    result = ocllm(*run_args(llama_server, suite, out, "--max-tokens", "64", *extra))
    assert result.returncode == 0, said(result)
    samples = {s["task_id"]: s for s in read_jsonl(out / "samples.jsonl")}
    assert set(samples) == {t["id"] for t in TOOL_TASKS}
    for sample in samples.values():
        assert sample["request"]["tools"] == [WEATHER_TOOL] and sample["request"]["tool_choice"] == "auto"
    for record in read_json(out / "metrics.json")["tasks"]:
        sample = samples[record["task_id"]]
        calls = sample.get("tool_calls") or []
        assert record["call_source"] in ("tool_calls", "content", "reasoning", "none")
        # Only a structured call can be credited; the source says where the calls came from.
        if calls:
            assert record["call_source"] == "tool_calls"
            for call in calls:
                assert isinstance(call["function"]["name"], str) and isinstance(call["function"]["arguments"], str)
        else:
            assert record["call_source"] != "tool_calls"
            if record["task_id"] != "no_tool":
                assert record["correct"] is False
        if record["call_source"] in ("content", "reasoning"):
            assert record["correct"] is False and isinstance(record["correct_if_parsed"], bool)
    details = read_json(out / "metrics.json")["summary"]["by_type"]["tool_call"]["details"]
    assert isinstance(details, dict) and details


# --- r. a configuration error: tools sent to llama-server --no-jinja (issue 30) ----------------------------------


def test_r_a_configuration_error_fails_the_lane_fast_with_the_servers_reason(
    llama_paths: tuple[Path, Path], tmp_path: Path, reserve_port: Callable[[], int]
) -> None:
    binary, model = llama_paths
    port = reserve_port()
    command = LlamaServer(binary, model, port, tmp_path / "unused.log").command()
    command[command.index("--jinja")] = "--no-jinja"  # tools need the chat template's parser: every request refused
    tasks = [{**task, "id": f"{task['id']}_{i}"} for i in range(3) for task in TOOL_TASKS]
    suite = write_suite(tmp_path / "suite.jsonl", tasks)
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(
        f'[lanes.tools]\nbase_url = "http://127.0.0.1:{port}/v1"\nmodel = "{SERVED_NAME}"\nsuite = "{suite}"\n'
        f"max_tokens = {MAX_TOKENS}\nconcurrency = 1\n"
        f"[lanes.tools.server]\ncommand = {toml_value(command)}\nready_timeout_s = 120\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    result = ocllm("run", "--config", str(lanes), "--lane", "tools", "--out", str(out))
    # Ends with one line: the server's own reason and what to change on the server; exit 2.
    assert result.returncode == 2, said(result)
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("ocllm: error: lane 'tools' stopped: the server refused 2 requests alike"), said(result)
    assert "tools param requires --jinja flag" in last and "start llama-server with --jinja" in last, said(result)
    # Fast: two requests, each sent once (not four attempts each), and the other tasks never sent.
    samples = read_jsonl(out / "samples.jsonl")
    assert_each_task_once(samples, tasks)
    assert sorted(s.get("attempts", 1) for s in samples) == [0] * (len(tasks) - 2) + [1, 1]
    assert {(s["error_kind"], s["error_status"]) for s in samples} == {("misconfigured", 500)}
    manifest = read_json(out / "manifest.json")
    assert (manifest["requests"], manifest["retries"]) == (2, {})
    # Errors, not wrong answers; and no --retry-errors advice, anywhere.
    summary = read_json(out / "metrics.json")["summary"]
    assert (summary["errors"], summary["correct"]) == (len(tasks), 0)
    assert f"{len(tasks)} task(s) failed: HTTP 500: tools param requires --jinja flag" in result.stdout, said(result)
    assert "--retry-errors" not in result.stdout + result.stderr, said(result)
    assert not any("--retry-errors" in n for n in manifest["notices"])


# --- s. conversations over tools: episodes against llama-server --jinja (issue 43) ---------------------------------


def test_s_an_agent_lane_plays_each_episode_turn_by_turn_and_rescore_replays_it(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    # Structure, not accuracy: a 135M model may call or not; whatever it does, every request of an episode is
    # recorded, each structured call answered by its result before the next request, and the verdict replayed.
    shipped = Path(__file__).resolve().parents[2] / "src" / "ocllm" / "data" / "suites" / "demo-agent.jsonl"
    lines = [json.loads(line) for line in shipped.read_text(encoding="utf-8").splitlines()]
    tasks = [line for line in lines if line["id"] in ("agent_ws_list_and_read", "agent_tk_triage")]
    suite = write_suite(tmp_path / "suite.jsonl", tasks)
    out = tmp_path / "run"
    result = ocllm(*run_args(llama_server, suite, out, "--max-tokens", "96", "--concurrency", "1"))
    assert result.returncode == 0, said(result)
    samples = read_jsonl(out / "samples.jsonl")
    assert_each_task_once(samples, tasks)
    logged = read_jsonl(out / "turns.jsonl")
    for sample in samples:
        turns = sample["turns"]
        assert len(turns) >= 1 and sample["request"]["tools"]
        assert sum(1 for line in logged if line["task_id"] == sample["task_id"]) == len(turns)
        for before, after in itertools.pairwise(turns):
            calls = before["reply"].get("tool_calls") or []
            if calls:  # the calls' results, one tool message each, in the order of the calls
                assert [m["tool_call_id"] for m in after["sent"]] == [c.get("id") or "" for c in calls]
                assert all(m["role"] == "tool" for m in after["sent"])
            else:  # no call: the next user turn
                assert [m["role"] for m in after["sent"]] == ["user"]
        assert sample.get("error") is not None or sample["episode_end"] in (
            "answered", "request_bound", "step_bound", "call_bound", "token_bound", "refused",
        )  # fmt: skip
    records = read_json(out / "metrics.json")["tasks"]
    for record in records:
        if record.get("error") is None:
            task = next(t for t in tasks if t["id"] == record["task_id"])
            assert len(record["turn_checks"]) == len(task["user_turns"])
            assert record["correct"] is (record["rule"] == "episode_right")
    again = tmp_path / "again.json"
    rescored = ocllm("rescore", str(out), "-o", str(again))
    assert rescored.returncode == 0, said(rescored)
    replayed = {t["task_id"]: t for t in read_json(again)["tasks"]}
    for record in records:
        for key in ("correct", "rule", "cause", "turns_right", "turns_checked", "episode_end"):
            assert replayed[record["task_id"]].get(key) == record.get(key), (record["task_id"], key)
    print(
        "\n[agent lane] "
        + "; ".join(f"{r['task_id']}: {r['rule']}, {r.get('requests')} request(s)" for r in records)
    )


def test_s_a_call_llama_server_leaves_in_the_text_is_named_never_run_with_the_servers_advice(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    # SmolLM2's chat template has no tool calls: llama-server renders no tools and parses none, as with many a model
    # an agent's operator tries. A JSON schema (the lane's extra_body) makes the model write the call anyway, as text:
    # the episode's turn fails as call_as_text, the call is never run, and the notice says what the server can do.
    shipped = Path(__file__).resolve().parents[2] / "src" / "ocllm" / "data" / "suites" / "demo-agent.jsonl"
    lines = shipped.read_text(encoding="utf-8").splitlines()
    task = next(json.loads(line) for line in lines if "list_and_read" in line)
    suite = write_suite(tmp_path / "suite.jsonl", [task])
    call = {"type": "object", "required": ["name", "arguments"], "properties": {
        "name": {"const": "list_files"},
        "arguments": {"type": "object", "required": ["folder"], "properties": {"folder": {"const": "notes"}}},
    }}  # fmt: skip
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(
        f'[lanes.text]\nbase_url = "{llama_server.base_url}"\nmodel = "{SERVED_NAME}"\nsuite = "{suite}"\n'
        f"max_tokens = 96\nextra_body = {{json_schema = {toml_value(call)}}}\n",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    result = ocllm("run", "--config", str(lanes), "--lane", "text", "--out", str(out))
    assert result.returncode in (0, 1), said(result)
    sample = read_jsonl(out / "samples.jsonl")[0]
    assert not any(turn["reply"].get("tool_calls") for turn in sample["turns"])
    record = read_json(out / "metrics.json")["tasks"][0]
    first = record["turn_checks"][0]
    assert (record["correct"], record["cause"], record["failed_turn"]) == (False, "call_as_text", 1), record
    assert first["call_format"] == "json" and first["text_calls_in"] == "content" and first["calls"] == []
    notices = read_json(out / "manifest.json")["notices"]
    assert any("wrote their calls as text" in n and "llama-server" in n for n in notices), notices


# --- t. the preflight against a well-configured llama-server (issue 44) ---------------------------------------------


def test_t_the_preflight_finds_no_problem_of_the_server_path_on_a_well_configured_llama_server(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    # llama-server --jinja, thinking off (SmolLM2 has none): answers in content, no reasoning, a long prompt kept
    # whole. What the budget probe says is the model's (a 135M model may ramble to max_tokens): measured, not asserted.
    result = ocllm(
        "probe", "--base-url", llama_server.base_url, "--model", SERVED_NAME, "--suite", "smoke", "--max-tokens", "64",
        "--json",
    )  # fmt: skip
    assert result.returncode in (0, 1), said(result)
    found = json.loads(result.stdout.strip().splitlines()[-1])
    by_probe = {f["probe"]: f for f in found["findings"]}
    assert {"channel", "system", "context", "budget"} <= set(by_probe)
    for name in ("channel", "thinking", "context"):
        assert by_probe.get(name, {}).get("outcome") != "problem", by_probe[name]
    # SmolLM2's template writes the system message: the prompt grows by it, as llama-server counts it.
    assert by_probe["system"]["outcome"] == "ok", by_probe["system"]
    short, long = by_probe["context"]["measured"]["prompt_tokens"]
    assert long > 1.5 * short  # the longer prompt counted whole
    print("\n[preflight] " + "; ".join(f"{f['probe']}: {f['outcome']} ({f['said'][:80]})" for f in found["findings"]))
