"""A code lane against a real llama.cpp llama-server running SmolLM2-135M-Instruct on the CPU (task type code).

The tiny model writes Python, mostly wrong: no accuracy is asserted, only the structure. Every task gets one
decision whose outcome is one of the closed set; an answer with code has its program, the program's digest, the
sandbox and what each run did recorded; an answer without has its reason; a failed request is an error, never a
wrong answer; a rescore in fresh sandboxes gives the same verdicts; the report draws the lane.
"""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from .conftest import SERVED_NAME, SERVER_ENV, LlamaServer

if not os.environ.get(SERVER_ENV):
    pytest.skip(f"needs a real llama-server: run `make test-real-server`, or set {SERVER_ENV}", allow_module_level=True)

from .test_llama_server import (  # after the skip: that module skips the same way
    assert_each_task_once,
    metrics_tasks,
    ocllm,
    read_json,
    read_jsonl,
    run_args,
    said,
    write_suite,
)

OUTCOMES = {"passed", "failed_assertion", "wrong_output", "exception", "timeout", "memory_limit", "output_limit",
            "syntax_error", "no_code", "sandbox_refused"}  # fmt: skip
CODE_TASKS = [
    {"id": "add", "type": "code", "category": "functions", "entry_point": "add",
     "question": "Write a Python function add(a, b) that returns the sum of a and b.",
     "code_prefix": 'def add(a: int, b: int) -> int:\n    """Return a + b."""\n',
     "test": "def check(candidate):\n    assert candidate(2, 3) == 5\n    assert candidate(-1, 1) == 0\n"},
    {"id": "reverse", "type": "code", "category": "functions", "entry_point": "reverse_string",
     "question": "Write a Python function reverse_string(s) that returns the string s reversed.",
     "test": 'def check(candidate):\n    assert candidate("abc") == "cba"\n    assert candidate("") == ""\n'},
    {"id": "double", "type": "code", "category": "stdin programs",
     "question": "Write a Python program that reads one integer from standard input and prints it doubled.",
     "io_tests": [{"input": "4\n", "output": "8\n"}, {"input": "-3\n", "output": "-6\n"}]},
]  # fmt: skip


def _check_evidence(task: dict[str, Any], record: dict[str, Any], sample: dict[str, Any]) -> None:
    outcome = record["outcome"]
    assert record["task_type"] == "code" and outcome in OUTCOMES and record["rule"] == outcome, record
    assert record["correct"] is (True if outcome == "passed" else None if outcome == "sandbox_refused" else False)
    assert record["task_kind"] == ("stdin" if "io_tests" in task else "function") and record["reason"]
    assert record["truncated"] is (sample["finish_reason"] == "length"), (record, sample["finish_reason"])
    content = sample["content"] or ""
    for block in record["candidates"]:  # offsets into the raw content
        assert 0 <= block["start"] <= block["end"] <= len(content), block
    if outcome == "no_code":
        assert record["program"] is None and record["no_code_reason"] and not record["runs"], record
        return
    program = record["program"]
    assert record["code"] and record["code"].strip() in program, record  # the program ends with the code taken
    if task.get("code_prefix"):
        assert program.startswith(task["code_prefix"].rstrip("\n")), program
    assert record["program_sha256"] == hashlib.sha256(program.encode()).hexdigest() == record["extracted_final_answer"]
    sandbox = record["sandbox"]
    assert sandbox["limits"]["cpu_s"] > 0 and sandbox["limits"]["memory_bytes"] > 0, sandbox
    if outcome == "sandbox_refused":
        assert sandbox["kind"] is None and sandbox["refused"] and not record["runs"], sandbox
        return
    assert sandbox["kind"] in ("bubblewrap", "podman", "docker") and sandbox["python_version"], sandbox
    tests = len(task["io_tests"]) if "io_tests" in task else 1
    assert len(record["tests"]) == tests, record["tests"]
    if outcome != "syntax_error" or "io_tests" in task:
        assert record["runs"] and all(run["cpu_s"] >= 0 and run["wall_s"] >= 0 for run in record["runs"]), record


@pytest.mark.parametrize("stream", [False, True])
def test_s_a_code_lane_records_the_program_the_sandbox_and_each_test(
    llama_server: LlamaServer, tmp_path: Path, stream: bool
) -> None:
    suite, out = write_suite(tmp_path / "suite.jsonl", CODE_TASKS), tmp_path / "run"
    extra = ("--stream",) if stream else ()
    result = ocllm(*run_args(llama_server, suite, out, "--max-tokens", "200", *extra))
    assert result.returncode == 0, said(result)
    samples = {s["task_id"]: s for s in read_jsonl(out / "samples.jsonl")}
    assert_each_task_once(list(samples.values()), CODE_TASKS)
    decided = metrics_tasks(out)
    assert sorted(decided) == sorted(t["id"] for t in CODE_TASKS)
    failed = {task_id for task_id, sample in samples.items() if sample.get("error")}
    for task in CODE_TASKS:
        record = decided[task["id"]]
        if task["id"] in failed:  # a transport failure: an error, never a wrong answer
            assert record["correct"] is None and record["rule"] == "request_error" and record["outcome"] is None
            continue
        _check_evidence(task, record, samples[task["id"]])
    summary = read_json(out / "metrics.json")["summary"]
    assert summary["errors"] == len(failed)
    assert summary["by_type"]["code"]["total"] == len(CODE_TASKS)
    # The answers decided again, in fresh sandboxes: the same verdicts.
    fresh = tmp_path / "fresh.json"
    rescored = ocllm("rescore", str(out), "-o", str(fresh))
    assert rescored.returncode == 0, said(rescored)
    again = {t["task_id"]: t for t in read_json(fresh)["tasks"]}
    for task_id, ran in decided.items():
        for key in ("correct", "outcome", "rule", "extraction_method", "program_sha256", "no_code_reason"):
            assert ran.get(key) == again[task_id].get(key), (task_id, key)
    made = ocllm("report", str(out), "-o", str(tmp_path / "report"))
    assert made.returncode == 0, said(made)
    assert (tmp_path / "report" / "report.html").stat().st_size > 0


# What the default prompt makes a real model spend (issue 41): HumanEval's first tasks (the question is the docstring's
# words), asked with the default template, which shows the code prefix, and with a lane template that does not. Each
# lane's summary counts the answers that wrote the prompt's docstring again; the figure is checked against the
# samples read here, and both lanes' figures are printed (`pytest -s`), the effect of the template.
HUMANEVAL = Path(__file__).parent.parent / "data" / "code" / "datasets" / "full" / "HumanEval.jsonl.gz"
SIGNATURE_ONLY = "{question}\n\nWrite the function `{entry_point}` in one ```python code block."


def _humaneval(count: int) -> list[dict[str, Any]]:
    with gzip.open(HUMANEVAL, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in itertools.islice(lines, count)]
    return [{"id": row["task_id"], "type": "code", "category": "humaneval", "question": _docstring(row["prompt"]),
             "code_prefix": row["prompt"], "entry_point": row["entry_point"], "test": row["test"]}
            for row in rows]  # fmt: skip


def _docstring(prompt: str) -> str:
    """The prompt's docstring, white space run together: the text between its first pair of triple quotes."""
    return " ".join(prompt.split('"""')[1].split())


def _repeated_here(task: dict[str, Any], code: str) -> bool:
    """Read again here, apart from the scorer: the docstring's first 60 characters found in the code."""
    return _docstring(task["code_prefix"])[:60] in " ".join(code.split())


def test_the_default_prompts_cost_in_repeated_docstrings_is_counted_and_an_entry_point_only_rescore_keeps_the_function(
    llama_server: LlamaServer, tmp_path: Path
) -> None:
    tasks = _humaneval(4)
    suite = write_suite(tmp_path / "suite.jsonl", tasks)
    lanes = tmp_path / "lanes.toml"
    lanes.write_text(
        f'[defaults]\nbase_url = "{llama_server.base_url}"\nmodel = "{SERVED_NAME}"\nsuite = "{suite}"\n'
        "max_tokens = 160\nconcurrency = 1\n[lanes.default]\n"
        f"[lanes.signature]\ntemplates = {{ code = {json.dumps(SIGNATURE_ONLY)} }}\n",
        encoding="utf-8",
    )
    done = ocllm("matrix", str(lanes), "--out", str(tmp_path / "m"))
    assert done.returncode == 0, said(done)
    figures = {}
    for lane in ("default", "signature"):
        out = tmp_path / "m" / lane
        samples = {s["task_id"]: s for s in read_jsonl(out / "samples.jsonl")}
        decided = metrics_tasks(out)
        with_code = [t for t in tasks if decided[t["id"]].get("code") is not None]
        by_hand = sum(_repeated_here(t, decided[t["id"]]["code"]) for t in with_code)
        counted = read_json(out / "metrics.json")["summary"]["by_type"]["code"]["details"].get("docstring_repeated")
        if with_code:
            assert counted == {"repeated": by_hand, "of": len(with_code)}, (lane, counted, samples)
        figures[lane] = counted
    print(f"answers that wrote HumanEval's docstring again, default prompt vs signature only: {figures}")

    # The same answers rescored evalplus's way: every program run is cut from the one that ran as written, and an
    # answer that passed as written still passes.
    out = tmp_path / "m" / "default"
    cut = tmp_path / "entry_point_only.json"
    rescored = ocllm("rescore", str(out), "-o", str(cut), "--code-runs", "entry_point_only")
    assert rescored.returncode == 0, said(rescored)
    written = metrics_tasks(out)
    for record in read_json(cut)["tasks"]:
        before = written[record["task_id"]]
        only = record.get("entry_point_only")
        if before.get("program") is None:
            assert only is None and record["outcome"] == before["outcome"], record
            continue
        assert only is not None, record
        if only["found"]:
            kept = [line for line in record["program"].splitlines() if line.strip()]
            assert all(line in before["program"].splitlines() for line in kept), record["program"]
        if before["outcome"] == "passed":
            assert record["outcome"] == "passed", record
