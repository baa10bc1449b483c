"""Every published reference solution passes its own tests with the tests apart from the program (docs/scoring/
code.md, "Trust"), and wrong-by-construction variants of them fail.

The datasets are the whole published files of tests/data/code/datasets/full/ (its README names them), imported with
`ocllm import` as a user would; each reference solution is the answer of a task, as a fenced block (HumanEval's
prompt and canonical solution; MBPP's `code`), decided as `ocllm run` decides it. HumanEval+ and MBPP+ run with
their plus tests (the files in the layout that holds them), under a lane's limits raised for them (plus tests call
a function thousands of times; the defaults are for one answer's handful of asserts).

Set apart, each with its reason, and each checked to be what it is said to be:
- HumanEval+/32: the file's test calls `_poly(*candidate(*inp), inp)`, which no function passes: the canonical
  solution fails it in one process too (asserted below).
- MBPP+/255: one of its plus inputs makes the reference return 1,663,740 tuples of 77 strings (about 1.1 GB in one
  process's memory, more encoded): past the output limit, `output_limit` (asserted below), never a wrong verdict.
(MBPP+/599's reference uses about 13 s of CPU through the boundary: past the default 10 s, within these lanes' 60.)

Variants (HumanEval, every task; MBPP sanitized, every task): the reference wrapped so that it returns a wrong value
(`value + 1` for an int, `value + 1 + |value|` for a float, `not value` for a bool, one more item for a container,
`1` for None) or a value of the wrong type (`str(value)`; a str becomes its list of characters): each fails.
"""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ocllm.models import Policy, Sample
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.decision import CodeLimits
from ocllm.scoring.code.fields import CodeTask

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make test installs it)"),
]

FULL = Path(__file__).parent / "data" / "code" / "datasets" / "full"
# name -> (import format, file, chunks the tasks are split in across the test workers, the limits)
PLUS_LIMITS = CodeLimits(cpu_s=60.0)
DATASETS: dict[str, tuple[str, str, int, CodeLimits]] = {
    "humaneval": ("humaneval", "HumanEval.jsonl.gz", 4, CodeLimits()),
    "humaneval+": ("humaneval", "HumanEvalPlus-OriginFmt.jsonl.gz", 8, PLUS_LIMITS),
    "mbpp": ("mbpp", "mbpp.jsonl.gz", 12, CodeLimits()),
    "mbpp-sanitized": ("mbpp", "sanitized-mbpp.json.gz", 6, CodeLimits()),
    "mbpp+": ("mbpp", "MbppPlus-OriginFmt.jsonl.gz", 8, PLUS_LIMITS),
}
SET_APART = {
    ("humaneval+", "HumanEval/32"): "its test unpacks the function's float result: no function passes it",
    ("mbpp+", "Mbpp/255"): "a result of 1.1 GB in memory (1,663,740 tuples of 77 strings): output_limit",
}

WRAPPER = '''

def _wrong_value(value):
    if type(value) is bool:
        return not value
    if type(value) is int:
        return value + 1
    if type(value) is float:
        return value + 1.0 + abs(value)
    if type(value) is str:
        return value + "x"
    if type(value) in (list, tuple):
        return type(value)(list(value) + [None])
    if type(value) is dict:
        return {**value, "_wrong": 1}
    if type(value) in (set, frozenset):
        return type(value)(set(value) | {"_wrong"})
    if value is None:
        return 1
    return None


def _wrong_type(value):
    if type(value) is str:
        return list(value) or [None]
    return str(value)


_reference = ENTRY


def ENTRY(*args, **kwargs):
    return WRONG(_reference(*args, **kwargs))
'''


def _rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        text = f.read()
    return json.loads(text) if text.lstrip().startswith("[") else [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def suites(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[tuple[CodeTask, str]]]:
    """Each dataset imported by `ocllm import`, each task with its reference solution as the answer's code."""
    folder = tmp_path_factory.mktemp("suites")
    found = {}
    for name, (fmt, file, _, _) in DATASETS.items():
        rows = _rows(FULL / file)
        source = FULL / file
        if file.endswith(".json.gz"):  # a JSON array (MBPP sanitized): as JSON lines, rows unchanged
            source = folder / f"{name}.jsonl"
            source.write_text("".join(json.dumps(row) + "\n" for row in rows))
        suite = folder / f"{name}-suite.jsonl"
        command = [sys.executable, "-m", "ocllm", "import", fmt, str(source), "-o", str(suite)]
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=300)
        by_id = {str(row["task_id"]).split("/")[-1]: row for row in rows}
        tasks = []
        for line in suite.read_text().splitlines():
            fields = json.loads(line)
            row = by_id[fields["id"].split("/")[-1]]
            code = row["code"] if "code" in row else row["prompt"] + row["canonical_solution"]
            keep = ("id", "question", "entry_point", "test", "code_prefix", "category")
            tasks.append((CodeTask(**{k: v for k, v in fields.items() if k in keep}), code))
        assert len(tasks) == len(rows)
        found[name] = tasks
    return found


def _decide(task: CodeTask, code: str, limits: CodeLimits) -> tuple[str, str]:
    sample = Sample(task_id=task.id, content=f"```python\n{code}\n```\n", finish_reason="stop")
    decision = decide_code(task, sample, Policy(), limits)
    return str(decision.outcome), decision.reason


CASES = [(name, chunk) for name, (_, _, chunks, _) in DATASETS.items() for chunk in range(chunks)]


@pytest.mark.timeout(900)
@pytest.mark.parametrize(("name", "chunk"), CASES)
def test_every_reference_solution_passes_its_tests(
    suites: dict[str, list[tuple[CodeTask, str]]], name: str, chunk: int
) -> None:
    _, _, chunks, limits = DATASETS[name]
    failed = {}
    for task, code in suites[name][chunk::chunks]:
        if (name, task.id) in SET_APART:
            continue
        outcome, reason = _decide(task, code, limits)
        if outcome != "passed":
            failed[task.id] = (outcome, reason)
    assert failed == {}


VARIANTS = [(name, wrong, chunk) for name in ("humaneval", "mbpp-sanitized")
            for wrong in ("_wrong_value", "_wrong_type") for chunk in range(4)]  # fmt: skip


@pytest.mark.timeout(900)
@pytest.mark.parametrize(("name", "wrong", "chunk"), VARIANTS)
def test_every_wrong_variant_of_a_reference_solution_fails(
    suites: dict[str, list[tuple[CodeTask, str]]], name: str, wrong: str, chunk: int
) -> None:
    passed = []
    for task, code in suites[name][chunk::4]:
        assert task.entry_point is not None
        variant = code + WRAPPER.replace("ENTRY", task.entry_point).replace("WRONG", wrong)
        outcome, _ = _decide(task, variant, DATASETS[name][3])
        if outcome == "passed":
            passed.append(task.id)
    assert passed == []


def test_what_is_set_apart_is_what_it_is_said_to_be(suites: dict[str, list[tuple[CodeTask, str]]]) -> None:
    tasks = {(name, task.id): (task, code) for name, listed in suites.items() for task, code in listed}
    # HumanEval+/32: the canonical solution fails the file's test in one process too (run here, as trusted code).
    task, code = tasks["humaneval+", "HumanEval/32"]
    namespace: dict[str, Any] = {}
    exec(compile(code + "\n" + (task.test or ""), "humaneval-plus-32", "exec"), namespace)
    with pytest.raises(TypeError, match="must be an iterable"):
        namespace["check"](namespace[task.entry_point or ""])
    assert _decide(task, code, PLUS_LIMITS)[0] == "failed_assertion"
    # MBPP+/255: its result is past the output limit (a value larger than 16 MiB through the channel).
    task, code = tasks["mbpp+", "Mbpp/255"]
    outcome, reason = _decide(task, code, PLUS_LIMITS)
    assert outcome == "output_limit" and "larger than the output limit" in reason
