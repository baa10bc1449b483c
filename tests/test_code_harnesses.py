"""Other tools' saved results read into code tasks: lm-eval's samples of humaneval and mbpp (tests/data/code/harnesses/,
lines in lm-eval's layout around the published HumanEval and MBPP rows; sources in its README). The reading and the
mapping are tested here; whether our own verdict is computed depends on the code room's decide."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ocllm.formats.harnesses import read_harness_files
from ocllm.scoring.code.fields import CodeTask

DATA = Path(__file__).parent / "data" / "code" / "harnesses"
HUMANEVAL = DATA / "samples_humaneval_2025-09-01T10-00-00.000000.jsonl"
MBPP = DATA / "samples_mbpp_2025-09-01T10-00-00.000000.jsonl"


def records(path: Path) -> list:
    run = read_harness_files("lm-eval", [path])
    found = list(run.records)
    assert not run.unscorable, run.unscorable
    return found


def test_humaneval_samples_become_code_tasks_with_lm_evals_verdict() -> None:
    lines = [json.loads(line) for line in HUMANEVAL.read_text().splitlines()]
    found = records(HUMANEVAL)
    assert [r.task.id for r in found] == ["humaneval/0", "humaneval/2", "humaneval/53"]
    for record, line in zip(found, lines, strict=True):
        task = record.task
        assert isinstance(task, CodeTask) and task.type == "code" and task.kind == "function"
        assert task.code_prefix == line["doc"]["prompt"] and task.test == line["doc"]["test"]
        assert task.entry_point == line["doc"]["entry_point"] and task.category == "humaneval"
        assert task.prompt == line["doc"]["prompt"]  # what lm-eval sent
        assert record.sample.content == line["resps"][0][0]
        previous = record.previous
        assert previous["tool"] == "lm-eval" and previous["metric"] == "pass@1"
        assert previous["correct"] is (line["pass@1"] == 1.0) and record.previous_verdict is previous["correct"]
        assert previous["tool_program"] == line["filtered_resps"][0] and previous["extracted_final_answer"] is None
        assert "gen_prefix_open" not in previous


def test_an_empty_response_reaches_the_scorer_as_an_empty_answer() -> None:
    empty = next(r for r in records(HUMANEVAL) if r.task.id == "humaneval/2")
    assert empty.sample.content == "" and empty.sample.error is None
    assert empty.previous["correct"] is False


def test_mbpp_samples_take_the_asserts_lm_eval_ran() -> None:
    lines = [json.loads(line) for line in MBPP.read_text().splitlines()]
    found = records(MBPP)
    assert [(r.task.id, r.task.entry_point) for r in found] == [
        ("mbpp/0", "remove_Occ"),
        ("mbpp/1", "square_perimeter"),
    ]
    for record, line in zip(found, lines, strict=True):
        task = record.task
        assert task.code_prefix is None and task.category == "mbpp"
        assert task.test is not None and task.test.startswith("def check(candidate):")
        assert all(a.strip() in task.test for a in line["target"].splitlines())
        assert not any(a in task.test for a in line["doc"]["challenge_test_list"])
        assert record.previous["metric"] == "pass_at_1" and record.previous["correct"] is True
        assert record.previous["tests_from"].startswith("the asserts of lm-eval's target")


def test_instruct_responses_are_marked_as_starting_inside_a_fence(tmp_path: Path) -> None:
    line = json.loads(HUMANEVAL.read_text().splitlines()[0])
    prefix = "Here is the completed function:\n```python\n" + line["doc"]["prompt"] + "\n"
    line["arguments"]["gen_args_0"]["arg_0"] = json.dumps(
        [{"role": "user", "content": "Write a solution ...\n```python\n" + line["doc"]["prompt"] + "\n```\n" + prefix}]
    )
    path = tmp_path / "samples_humaneval_instruct_2025-09-01T10-00-00.000000.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (record,) = records(path)
    assert record.task.id == "humaneval_instruct/0" and record.previous["gen_prefix_open"] is True


def test_a_doc_of_another_name_is_read_by_its_fields(tmp_path: Path) -> None:
    line = json.loads(HUMANEVAL.read_text().splitlines()[0])
    path = tmp_path / "samples_my_code_task_2025-09-01T10-00-00.000000.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (record,) = records(path)
    assert isinstance(record.task, CodeTask) and record.task.entry_point == "has_close_elements"


def test_rescore_from_lm_eval_end_to_end(tmp_path: Path) -> None:
    from ocllm.cli import main

    out = tmp_path / "rescored.json"
    assert main(["rescore", "--from", "lm-eval", str(HUMANEVAL), "-o", str(out)]) == 0
    tasks = {t["task_id"]: t for t in json.loads(out.read_text())["tasks"]}
    assert set(tasks) == {"humaneval/0", "humaneval/2", "humaneval/53"}
    if shutil.which("bwrap") is None:
        return  # the programs cannot run here: tests/test_code_refused.py says what then
    # What each response is, read from the file: the canonical body, an empty response, `return x - y` for add.
    assert [tasks[i]["outcome"] for i in ("humaneval/0", "humaneval/2", "humaneval/53")] == [
        "passed", "no_code", "failed_assertion"
    ]
    assert tasks["humaneval/2"]["no_code_reason"] == "empty"
    assert tasks["humaneval/0"]["extraction_method"] == "prefix_body"  # a completion continues HumanEval's prompt
    # lm-eval's own pass@1 is kept beside ours
    assert [tasks[i]["previous"]["correct"] for i in ("humaneval/0", "humaneval/2", "humaneval/53")] == [
        True, False, False
    ]


# --- evalplus ----------------------------------------------------------------------------------------------------

DATASETS = Path(__file__).parent / "data" / "code" / "datasets"


def _evalplus_folder(tmp_path: Path, *, results: bool = True, samples: bool = True, dataset: bool = True) -> Path:
    """evalplus's files as `evalplus.evaluate` leaves them (eval_results.json beside the samples), with the dataset
    file it ran on: the HumanEval slice stands for HumanEvalPlus (the same fields, `test` included)."""
    import shutil

    folder = tmp_path / "evalplus_results"
    folder.mkdir()
    rows = {r["task_id"]: r for r in map(json.loads, _humaneval_lines())}
    if dataset:
        shutil.copy(DATASETS / "HumanEval-4.jsonl.gz", folder / "HumanEvalPlus-v0.1.10.jsonl.gz")
    if samples:
        lines = [
            {
                "task_id": "HumanEval/0",
                "solution": rows["HumanEval/0"]["prompt"] + rows["HumanEval/0"]["canonical_solution"],
            },
            {"task_id": "HumanEval/53", "completion": "    return x - y\n"},
        ]
        (folder / "samples.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    if results:
        failed = [[[1.0], 0.5]]
        stub = "def has_close_elements(numbers, threshold): ..."
        entry = {"task_id": "HumanEval/0", "solution": stub, "base_status": "pass", "plus_status": "fail",
                 "base_fail_tests": [], "plus_fail_tests": failed}  # fmt: skip
        other = {"task_id": "HumanEval/53", "solution": "def add(x, y):\n    return x + y\n", "base_status": "pass",
                 "plus_status": "pass", "base_fail_tests": [], "plus_fail_tests": []}  # fmt: skip
        (folder / "eval_results.json").write_text(
            json.dumps(
                {
                    "date": "2025-09-01 10:00",
                    "hash": "x",
                    "eval": {"HumanEval/0": [entry], "HumanEval/53": [other]},
                    "pass_at_k": {"base": {"pass@1": 1.0}, "plus": {"pass@1": 0.5}},
                }
            )
        )
    return folder


def _humaneval_lines() -> list[str]:
    import gzip

    return gzip.decompress((DATASETS / "HumanEval-4.jsonl.gz").read_bytes()).decode().splitlines()


def test_evalplus_results_with_their_dataset(tmp_path: Path) -> None:
    run = read_harness_files("evalplus", [_evalplus_folder(tmp_path)])
    found = list(run.records)
    assert [(r.task.id, r.sample.sample) for r in found] == [("HumanEval/0", 0), ("HumanEval/53", 0)]
    first, second = found
    assert first.task.entry_point == "has_close_elements" and first.task.test is not None
    assert first.sample.content == "def has_close_elements(numbers, threshold): ..."
    assert (first.previous["base_status"], first.previous["plus_status"], first.previous["correct"]) == (
        "pass",
        "fail",
        False,
    )
    assert second.previous["correct"] is True and second.previous["verdict"] == "base and plus tests"
    assert any("samples files given are not read" in n for n in run.notices)


def test_evalplus_samples_alone_join_prompt_and_completion(tmp_path: Path) -> None:
    run = read_harness_files("evalplus", [_evalplus_folder(tmp_path, results=False)])
    found = {r.task.id: r for r in run.records}
    assert found["HumanEval/53"].sample.content == found["HumanEval/53"].task.code_prefix + "    return x - y\n"
    assert all(r.previous["correct"] is None for r in found.values())


@pytest.mark.slow  # the programs run in bubblewrap
def test_evalplus_samples_alone_say_no_decision_can_be_counted_as_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """evalplus's samples hold no verdict of its own: the console says none was read instead of "changed decisions:
    0", which would read as every earlier verdict kept; the audit's totals have no earlier side."""
    from ocllm.cli import main

    audit = tmp_path / "audit.md"
    folder = _evalplus_folder(tmp_path, results=False)
    out = str(tmp_path / "o.json")
    assert main(["rescore", "--from", "evalplus", str(folder), "-o", out, "--report", str(audit)]) == 0
    console = " ".join(capsys.readouterr().out.split())
    assert (
        "note: evalplus: samples.jsonl is evalplus samples (task_id and solution or completion), which hold no verdict "
        "(evalplus's are in its eval_results.json, given beside them)"
    ) in console
    # HumanEval/0's canonical solution passes; HumanEval/53's `return x - y` does not.
    assert "changed decisions: none counted (no earlier verdict was read from the input) correct: 1 wrong: 1" in console
    text = audit.read_text()
    assert "| all | n/a | 1/2 (50.00%) | n/a |" in text
    assert "No earlier verdict was read from the input, so no decision can be counted as changed." in text


def test_evalplus_without_its_dataset_ends_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ocllm.cli import main

    folder = _evalplus_folder(tmp_path, dataset=False)
    assert main(["rescore", "--from", "evalplus", str(folder), "-o", str(tmp_path / "out.json")]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1 and "hold no tests: give the dataset file" in lines[0]


def test_a_task_missing_from_the_dataset_is_unscorable(tmp_path: Path) -> None:
    folder = _evalplus_folder(tmp_path)
    data = json.loads((folder / "eval_results.json").read_text())
    data["eval"]["HumanEval/999"] = [{"task_id": "HumanEval/999", "solution": "x", "base_status": "fail"}]
    (folder / "eval_results.json").write_text(json.dumps(data))
    run = read_harness_files("evalplus", [folder])
    assert [r.task.id for r in run.records] == ["HumanEval/0", "HumanEval/53"]
    assert [(u.task_id, u.reason) for u in run.unscorable] == [
        ("HumanEval/999", "no row of this task_id in the dataset files given")
    ]


def test_evalplus_results_are_named_when_given_without_from(tmp_path: Path) -> None:
    from ocllm.formats.harnesses import recognise

    fmt = recognise(_evalplus_folder(tmp_path) / "eval_results.json")
    assert fmt is not None and fmt.name == "evalplus"


# --- human-eval's results (tests/data/code/real/README.md) --------------------------------------------------------

REAL = Path(__file__).parent / "data" / "code" / "real"
QWEN25 = REAL / "qwen2.5-coder-0.5b-instruct_humaneval_results.jsonl"


@pytest.mark.slow  # the programs run in bubblewrap
def test_human_evals_results_are_named_and_its_passed_is_the_earlier_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`evaluate_functional_correctness` writes each sample's line with `result` and `passed`: read with --from
    evalplus, the console says what the file is and that `passed` is human-eval's verdict, and the changed decisions
    are counted against it. Of these 12 lines human-eval passed 1 (HumanEval/16); this scorer passes 6, the five others
    HumanEval/0, 2, 3, 4 and 7 (tests/test_code_real_outputs.py reads each answer): 5 changed decisions."""
    from ocllm.cli import main

    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(QWEN25, folder)
    shutil.copy(REAL / "HumanEval-real.jsonl.gz", folder)
    out, audit = tmp_path / "out.json", tmp_path / "audit.md"
    assert main(["rescore", "--from", "evalplus", str(folder), "-o", str(out), "--report", str(audit)]) == 0
    console = capsys.readouterr().out
    assert (
        f"note: evalplus: {QWEN25.name} is human-eval's results (evaluate_functional_correctness's "
        "<samples>_results.jsonl: task_id, completion, result, passed): each line's `passed` is read as human-eval's "
        "verdict on that sample"
    ) in " ".join(console.split())
    assert "human-eval against ocllm's scorer: code (12 tasks both decided)" in console
    assert "| 1/12 (8.33%) |" in console.replace("│", "|") and "Changed decisions (5)" in console
    assert "changed decisions: 5   correct: 6   wrong: 6" in console
    lines = {r["task_id"]: r for r in map(json.loads, QWEN25.read_text().splitlines())}
    tasks = json.loads(out.read_text())["tasks"]
    for task in tasks:  # each task's earlier verdict is human-eval's, with its words
        previous, line = task["previous"], lines[task["task_id"]]
        assert (previous["tool"], previous["correct"], previous["tool_result"]) == (
            "human-eval", line["passed"], line["result"]
        )
    assert sum(t["correct"] != t["previous"]["correct"] for t in tasks) == 5
    # The audit's changed decision says what human-eval ran and what it said of it.
    row = next(line for line in audit.read_text().splitlines() if line.startswith("| `HumanEval/0` |"))
    assert row.startswith(
        "| `HumanEval/0` | - | no program recorded via human-eval prompt + completion, human-eval said 'failed: "
    )
    assert " → incorrect | " in row and row.endswith("→ correct | `passed` | check(candidate) returned after 7 call(s) "
                                                     "of the program: it passed its tests |")  # fmt: skip
    # The rescored document keeps whose verdicts they are: its report says human-eval, not evalplus.
    assert main(["report", str(out), "-o", str(tmp_path / "report")]) == 0
    assert "human-eval: 1/12   ocllm's scorer: 6/12   changed decisions: 5" in capsys.readouterr().out
    markdown = (tmp_path / "report" / "report.md").read_text()
    assert "human-eval" in markdown and "evalplus's verdict" not in markdown


def test_human_evals_results_without_the_dataset_say_what_the_file_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ocllm.cli import main

    assert main(["rescore", "--from", "evalplus", str(QWEN25), "-o", str(tmp_path / "out.json")]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1
    assert lines[0].startswith(f"ocllm: error: {QWEN25}: human-eval's results (evaluate_functional_correctness's ")
    assert "which hold no tests: give the dataset file they ran on among the inputs" in lines[0]
    assert lines[0].endswith("for human-eval's results, human-eval's data/HumanEval.jsonl.gz)")


# --- a LiveCodeBench file given as evalplus's (tests/data/code/livecodebench/README.md) -----------------------------

LCB = Path(__file__).parent / "data" / "code" / "livecodebench" / "Scenario.codegeneration_2_0.2_eval_all.json"


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


def test_a_livecodebench_file_is_named_with_the_fields_seen_and_what_ocllm_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ocllm.cli import main

    out = str(tmp_path / "out.json")
    assert main(["rescore", "--from", "evalplus", str(LCB), "-o", out]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(
        f"ocllm: error: {LCB}: a LiveCodeBench code generation results (*_eval_all.json, its verdicts in graded_list), "
        "not evalplus's (its first record has question_id, code_list, output_list, graded_list, pass@1, metadata, "
        "platform, contest_id); it holds no tests and ocllm reads no LiveCodeBench output."
    )
    assert "--from evalplus reads evalplus's eval_results.json or samples .jsonl (task_id and solution)" in line
    assert "ocllm import livecodebench <code_generation_lite test*.jsonl> -o lcb.jsonl" in line
    assert "evalplus's results hold no tests" not in line
    # In a folder (it is skipped, saying why), and as JSON lines of LiveCodeBench's custom outputs (question_id,
    # code_list), the same words.
    folder = tmp_path / "lcb"
    folder.mkdir()
    shutil.copy(LCB, folder)
    assert main(["rescore", "--from", "evalplus", str(folder), "-o", out]) == 2
    line = _one_error_line(capsys)
    assert f"skipped: {LCB.name} (a LiveCodeBench code generation results" in line
    custom = tmp_path / "custom.jsonl"
    rows = json.loads(LCB.read_text())
    custom.write_text("".join(json.dumps({"question_id": r["question_id"], "code_list": r["code_list"]}) + "\n"
                              for r in rows))  # fmt: skip
    assert main(["rescore", "--from", "evalplus", str(custom), "-o", out]) == 2
    line = _one_error_line(capsys)
    assert line.startswith(f"ocllm: error: {custom}: a LiveCodeBench code generation output, not evalplus's (its "
                           "first record has question_id, code_list); it holds no tests")  # fmt: skip
