"""Why a code answer failed, counted apart (issue 41, docs/scoring/code.md C8): an answer that defined the entry point
and whose code outside it failed (usage lines that do not parse, or raise while the definitions run) is flagged with
the line, and counted in the run's summary and both reports; a test that reads a name neither the task nor the
program defines (MBPP 367's `Node`, which only MBPP's reference solution defines) is the dataset's defect, unscored,
never the model's `failed_assertion`. Real decisions: bubblewrap runs every program; every expected figure is
written here by hand from the answers below."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import write_json

from ocllm.cli import main
from ocllm.models import Policy, Sample
from ocllm.scoring.code.datasets import asserts_check
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.decision import CodeDecision, CodeLimits
from ocllm.scoring.code.fields import CodeTask

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make test installs it)"),
]

LIMITS = CodeLimits(cpu_s=2.0, stdin_cpu_s=2.0, wall_s=6.0)
ADD_TEST = "def check(candidate):\n    assert candidate(1, 2) == 3\n"
ADD = CodeTask(id="add", question="Add two numbers.", entry_point="add", test=ADD_TEST)
# MBPP 367 as `ocllm import mbpp` builds it: the setup code builds trees of `Node`, which only MBPP's reference
# solution defines; the question shows the asserts, which name `root` but never `Node`.
MBPP_367_QUESTION = (
    "Write a function to check if a binary tree is balanced or not.\n\nYour code should pass these tests:\n\n"
    "assert is_tree_balanced(root) == False\nassert is_tree_balanced(root1) == True"
)
MBPP_367_TEST = asserts_check(
    ["assert is_tree_balanced(root) == False", "assert is_tree_balanced(root1) == True"],
    "is_tree_balanced",
    "root = Node(1)\nroot.left = Node(2)\nroot.left.left = Node(3)\nroot1 = Node(1)\nroot1.left = Node(2)",
)
BALANCED = (
    "def is_tree_balanced(root):\n"
    "    def height(node):\n"
    "        return 0 if node is None else 1 + max(height(node.left), height(node.right))\n"
    "    if root is None:\n"
    "        return True\n"
    "    return abs(height(root.left) - height(root.right)) <= 1 and is_tree_balanced(root.left) "
    "and is_tree_balanced(root.right)\n"
)
NODE = "class Node:\n    def __init__(self, data):\n        self.data, self.left, self.right = data, None, None\n\n"


def _decide(task: CodeTask, code: str) -> CodeDecision:
    return decide_code(task, Sample(task_id=task.id, content=f"```python\n{code}\n```"), Policy(), LIMITS)


def test_a_right_function_followed_by_usage_lines_that_do_not_parse_is_flagged_with_the_line() -> None:
    decision = _decide(ADD, "def add(a, b):\n    return a + b\n\n>>> add(1, 2)\n3")
    assert decision.outcome == "syntax_error" and decision.correct is False  # the rule is unchanged
    outside = decision.failed_outside_entry_point
    assert outside is not None
    assert (outside.error, outside.line, outside.text) == ("syntax_error", 4, ">>> add(1, 2)")
    assert (outside.entry_point_first_line, outside.entry_point_last_line) == (1, 2)
    assert "code outside it failed: line 4 `>>> add(1, 2)`" in decision.reason


def test_a_usage_line_that_raises_while_the_definitions_run_is_flagged_with_its_line() -> None:
    code = "import math\n\n\ndef add(a, b):\n    return a + b\n\n\nprint(add(1, 2))\nprint(add(1, unknown))"
    decision = _decide(ADD, code)
    assert decision.outcome == "exception"
    outside = decision.failed_outside_entry_point
    assert outside is not None and (outside.error, outside.line) == ("exception", 9)
    assert outside.text == "print(add(1, unknown))"
    assert (outside.entry_point_first_line, outside.entry_point_last_line) == (4, 5)


def test_a_failure_inside_the_function_or_a_broken_function_is_not_flagged() -> None:
    broken = _decide(ADD, "def add(a, b):\n    return (a +\n\nprint(add(1, 2))")
    assert broken.outcome == "syntax_error" and broken.failed_outside_entry_point is None
    raising = _decide(ADD, "def add(a, b):\n    return a + b\n\nadd(None, 1)")  # the usage line calls it: outside
    assert raising.outcome == "exception" and raising.failed_outside_entry_point is not None
    stub_then_usage = _decide(ADD, 'def add(a, b):\n    """Add."""\n    return a + b\nadd(\n')
    assert stub_then_usage.failed_outside_entry_point is not None  # a def with a docstring and a body is no stub
    wrong = _decide(ADD, "def add(a, b):\n    return a - b")
    assert wrong.outcome == "failed_assertion" and wrong.failed_outside_entry_point is None


def test_mbpp_367_s_node_is_the_dataset_s_defect_not_the_model_s_failure() -> None:
    task = CodeTask(id="mbpp/367", question=MBPP_367_QUESTION, entry_point="is_tree_balanced", test=MBPP_367_TEST)
    decision = _decide(task, BALANCED)
    assert decision.outcome == "tests_error" and decision.correct is None
    assert decision.dataset_defect is not None and decision.dataset_defect.name == "Node"
    assert decision.dataset_defect.where == "tests.py line 1"
    assert "a defect of the dataset's tests" in decision.reason
    # A program that defines Node itself builds the trees: its verdict is its own.
    assert _decide(task, NODE + BALANCED).outcome == "passed"
    assert _decide(task, NODE + BALANCED.replace("<= 1", "<= 5")).outcome == "failed_assertion"


def test_a_name_nothing_defines_after_a_call_is_the_dataset_s_but_one_the_question_names_is_the_model_s() -> None:
    """Before issue 41 a NameError after a call read as the model's failed_assertion."""
    test = "def check(candidate):\n    assert candidate(1) == 1\n    assert candidate(helper(2)) == 2\n"
    unnamed = CodeTask(id="u", question="Return x.", entry_point="f", test=test)
    decision = _decide(unnamed, "def f(x):\n    return x")
    assert decision.outcome == "tests_error" and decision.correct is None and decision.runs[0].calls == 1
    assert decision.dataset_defect is not None and decision.dataset_defect.name == "helper"
    assert decision.dataset_defect.where == "tests.py line 3"
    named = CodeTask(id="n", question="Write f, and a function helper that doubles.", entry_point="f", test=test)
    decision = _decide(named, "def f(x):\n    return x")
    assert decision.outcome == "failed_assertion" and decision.dataset_defect is None
    defined = _decide(unnamed, "def helper(x):\n    return x\n\ndef f(x):\n    return x")
    assert defined.outcome == "passed"  # the program's helper crosses to the tests
    prefix = CodeTask(id="p", question="Return x.", entry_point="f", test=test, code_prefix="LIMIT = 3\n")
    constant = _decide(prefix, "helper = 2\n\ndef f(x):\n    return x")  # defined, though constants never cross
    assert constant.outcome == "failed_assertion" and constant.dataset_defect is None


# A saved run in the old harness's metrics format, rescored and reported: the counts and the lines in the summary,
# the notices and both reports.
ANSWERS = {
    "o1": ("add", ADD_TEST, "Add.", "def add(a, b):\n    return a + b\n\n>>> add(1, 2)\n3\n"),
    "o2": ("add", ADD_TEST, "Add.", "def add(a, b):\n    return a + b\n\nprint(add(1, missing))\n"),
    "o3": ("add", ADD_TEST, "Add.", "def add(a, b):\n    return (a +\n"),
    "p1": ("add", ADD_TEST, "Add.", "def add(a, b):\n    return a + b\n"),
    "mbpp/367": ("is_tree_balanced", MBPP_367_TEST, MBPP_367_QUESTION, BALANCED),
}


def _saved_run(path: Path) -> Path:
    tasks: list[dict[str, Any]] = []
    for task_id, (entry, test, question, code) in ANSWERS.items():
        tasks.append({
            "task_id": task_id, "task_type": "code", "category": "function", "question": question,
            "raw_content": f"```python\n{code}```\n", "raw_reasoning": None, "finish_reason": "stop",
            "extracted_final_answer": None, "correct": None, "entry_point": entry, "test": test,
        })  # fmt: skip
    return write_json(path / "run.json", {"run_id": "why", "lane": "why", "tasks": tasks})


def test_the_summary_the_notices_and_both_reports_count_them_apart(tmp_path: Path) -> None:
    rescored = tmp_path / "rescored.json"
    assert main(["rescore", str(_saved_run(tmp_path)), "-o", str(rescored)]) == 0
    doc = json.loads(rescored.read_text(encoding="utf-8"))
    outcomes = {t["task_id"]: t["outcome"] for t in doc["tasks"]}
    assert outcomes == {"o1": "syntax_error", "o2": "exception", "o3": "syntax_error", "p1": "passed",
                        "mbpp/367": "tests_error"}  # fmt: skip
    details = doc["summary"]["by_type"]["code"]["details"]
    assert details["failed_outside_entry_point"] == {"syntax_error": 1, "exception": 1}
    assert details["dataset_defects"] == 1 and details["tests_error"] == 1
    assert (doc["summary"]["correct"], doc["summary"]["scored"], doc["summary"]["unscored"]) == (1, 4, 1)
    outside = next(n for n in doc["notices"] if "defined the entry point, and code outside it failed" in n)
    assert "2 code answer(s)" in outside and "o1 line 4" in outside and "o2 line 4" in outside
    defect = next(n for n in doc["notices"] if "defect of the dataset" in n)
    assert "1 code answer(s)" in defect and "mbpp/367 (Node)" in defect
    assert not any("could not be judged" in n for n in doc["notices"])  # the defect is not said twice

    report = tmp_path / "report"
    assert main(["report", str(rescored), "-o", str(report)]) == 0
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "| syntax_error (1 with the entry point defined, failing outside it) | 2 | 2 | 40.0% |" in markdown
    assert "| exception (1 with the entry point defined, failing outside it) | 1 | 1 | 20.0% |" in markdown
    o1 = next(line for line in markdown.splitlines() if line.startswith("- `o1`"))
    assert "outside the entry point: add was defined (program lines 1-2), and line 4 " in o1
    assert "add(1, 2)\\`, outside it, does not parse" in o1  # the line's text, escaped as Markdown
    defect_line = next(line for line in markdown.splitlines() if line.startswith("- `mbpp/367`"))
    assert "dataset defect: the tests use Node (tests.py line 1)" in defect_line
    page = (report / "report.html").read_text(encoding="utf-8")
    assert "1 a defect of the dataset" in page and "outside the entry point" in page


# The lane's opt-in `code_runs = "entry_point_only"` (C7a): evalplus's way, reported as such wherever figures appear.
def test_entry_point_only_runs_the_function_that_usage_lines_broke_and_says_what_it_kept() -> None:
    only = Policy(room_settings={"code_runs": "entry_point_only"})
    code = "import re\n\ndef add(a, b):\n    return a + b\n\n>>> add(1, 2)\n3"
    sample = Sample(task_id="add", content=f"```python\n{code}\n```")
    assert decide_code(ADD, sample, Policy(), LIMITS).outcome == "syntax_error"  # as written, the rule's default
    decision = decide_code(ADD, sample, only, LIMITS)
    assert decision.outcome == "passed" and decision.correct is True
    assert decision.program == "def add(a, b):\n    return a + b\n"  # the unused import left out too
    assert decision.entry_point_only is not None and decision.entry_point_only.kept == ["def add"]
    assert decision.entry_point_only.left_out_lines == 3 and decision.failed_outside_entry_point is None
    assert "run as the entry point and what it uses (code_runs entry_point_only): def add" in decision.reason
    # A usage line that raises is left out; a wrong function still fails; no def of it runs the program as written.
    raising = "def add(a, b):\n    return a + b\n\nprint(add(1, missing))"
    assert decide_code(ADD, Sample(task_id="add", content=raising), only, LIMITS).outcome == "passed"
    wrong = decide_code(ADD, Sample(task_id="add", content="def add(a, b):\n    return a - b\n\nadd(1"), only, LIMITS)
    assert wrong.outcome == "failed_assertion"
    other = decide_code(ADD, Sample(task_id="add", content="```python\ndef plus(a, b):\n    return a + b\n```"),
                        only, LIMITS)  # fmt: skip
    assert other.entry_point_only is not None and other.entry_point_only.found is False
    assert other.outcome == "exception" and "it ran as written" in other.reason


def test_rescore_with_code_runs_entry_point_only_counts_and_says_it_in_the_summary_and_the_reports(
    tmp_path: Path,
) -> None:
    rescored = tmp_path / "rescored.json"
    report = tmp_path / "report"
    argv = ["rescore", str(_saved_run(tmp_path)), "-o", str(rescored), "--code-runs", "entry_point_only"]
    assert main(argv) == 0
    assert main(["report", str(rescored), "-o", str(report)]) == 0
    doc = json.loads(rescored.read_text(encoding="utf-8"))
    outcomes = {t["task_id"]: t["outcome"] for t in doc["tasks"]}
    # o1 and o2 (a right function, then usage lines that fail) pass; o3's own def does not parse: it runs as written.
    assert outcomes == {"o1": "passed", "o2": "passed", "o3": "syntax_error", "p1": "passed",
                        "mbpp/367": "tests_error"}  # fmt: skip
    details = doc["summary"]["by_type"]["code"]["details"]
    assert details["entry_point_only"] == {"cut": 4, "as_written": 1}
    assert details["failed_outside_entry_point"] == {"syntax_error": 0, "exception": 0}
    said = next(n for n in doc["notices"] if "entry_point_only" in n)
    assert said.startswith("5 code answer(s) ran under code_runs") and "1 had no def of the entry point" in said
    markdown = (report / "report.md").read_text(encoding="utf-8")
    assert "4 run as the entry point and what it uses (code_runs entry_point_only, evalplus's way)" in markdown
    o2 = next(line for line in markdown.splitlines() if line.startswith("- `o2`"))
    assert "entry point only: kept def add; 1 other line(s) left out" in o2
    # Without the switch the saved run reads as before: nothing of the kind in its figures.
    plain = tmp_path / "plain.json"
    assert main(["rescore", str(tmp_path / "run.json"), "-o", str(plain)]) == 0
    assert "entry_point_only" not in json.loads(plain.read_text(encoding="utf-8"))["summary"]["by_type"]["code"][
        "details"
    ]
