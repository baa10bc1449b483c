"""Outcomes whatever way a program ends (docs/scoring/code.md, C7 and C8): a standard-input program's output is
compared whatever its exit path with status 0 (`os._exit(0)` after flushing, the fast-I/O contest template), and a
function task's `failed_assertion` only ever follows a call that reached the program."""

from __future__ import annotations

import shutil

import pytest

from ocllm.models import Policy, Sample
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.decision import CodeDecision, CodeLimits
from ocllm.scoring.code.fields import CodeTask, IoTest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make test installs it)"),
]

LIMITS = CodeLimits(cpu_s=2.0, stdin_cpu_s=2.0, wall_s=6.0)
STDIN = CodeTask(id="s", question="q", io_tests=[IoTest(input="3\n", output="4\n"), IoTest(input="9\n", output="10\n")])
FAST_IO = "import os, sys\nn = int(sys.stdin.readline())\nsys.stdout.write(str(n + {k}) + '\\n')\nsys.stdout.flush()\n"


def _decide(task: CodeTask, code: str) -> CodeDecision:
    return decide_code(task, Sample(task_id=task.id, content=f"```python\n{code}\n```"), Policy(), LIMITS)


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        (FAST_IO.format(k=1) + "os._exit(0)", "passed"),
        (FAST_IO.format(k=0) + "os._exit(0)", "wrong_output"),
        (FAST_IO.format(k=1) + "sys.exit(0)", "passed"),
        (FAST_IO.format(k=1) + "sys.exit()", "passed"),
        (FAST_IO.format(k=1) + "sys.exit(3)", "exception"),
        (FAST_IO.format(k=1) + "os._exit(1)", "exception"),
        (FAST_IO.format(k=1) + "raise ValueError('after the output')", "exception"),
    ],
)  # fmt: skip
def test_a_standard_input_program_is_judged_by_its_output_whatever_way_it_ends_with_status_0(
    code: str, outcome: str
) -> None:
    decision = _decide(STDIN, code)
    assert decision.outcome == outcome, decision.reason
    if outcome == "exception" and "ValueError" in code:
        assert "ValueError: after the output" in decision.reason


def test_failed_assertion_only_after_a_call_reached_the_program() -> None:
    setup_fails = "SETUP = Node(1)\n\ndef check(candidate):\n    assert candidate(1)\n"
    before_any_call = CodeTask(id="t", question="q", entry_point="f", test=setup_fails)
    decision = _decide(before_any_call, "def f(x):\n    return x")
    assert decision.outcome == "tests_error" and decision.correct is None
    assert "before any call reached the program" in decision.reason
    one_call = "def check(candidate):\n    assert candidate(1) == 2\n"
    after_a_call = CodeTask(id="t", question="q", entry_point="f", test=one_call)
    decision = _decide(after_a_call, "def f(x):\n    return x")
    assert decision.outcome == "failed_assertion" and decision.runs[0].calls == 1


def test_the_prompt_s_helpers_and_the_function_s_own_name_reach_the_tests() -> None:
    """HumanEval/32 and /33's shapes: a check that calls the prompt's helper, and the function by its name."""
    prefix = "def poly(xs, x):\n    return sum(c * x**i for i, c in enumerate(xs))\n\n\n"
    prefix += "def find_zero(xs):\n    \"\"\"A root.\"\"\"\n"
    test = "def check(candidate):\n    assert abs(poly([1, 2], candidate([1, 2]))) < 1e-6\n"
    test += "    assert find_zero([2, 4]) == -0.5\n"
    task = CodeTask(id="t", question="q", entry_point="find_zero", test=test, code_prefix=prefix)
    decision = _decide(task, "def find_zero(xs):\n    return -xs[0] / xs[1]")
    assert decision.outcome == "passed", decision.reason
    assert decision.runs[0].calls == 2


def test_objects_of_the_program_stay_in_its_box_and_are_used_through_handles() -> None:
    """A regular expression's match (MBPP's `check_str`), a LeetCode `Solution()`, and MBPP's setup code building the
    program's own `Node` tree: each object stays in the program's box; its methods and attributes are used there."""
    match = CodeTask(id="m", question="q", entry_point="f", test=(
        "def check(candidate):\n    m = candidate('ab12')\n    assert m\n    assert m.group(0) == '12'\n"
        "    assert m.span() == (2, 4) and m != m.group(0)\n"))  # fmt: skip
    decision = _decide(match, "import re\ndef f(s):\n    return re.search(r'\\d+', s)")
    assert decision.outcome == "passed", decision.reason
    leetcode = CodeTask(id="l", question="q", entry_point="Solution", test=(
        "def check(candidate):\n    s = candidate()\n    assert s.twoSum([2, 7, 11], 9) == [0, 1]\n"))  # fmt: skip
    solution = "\n".join([
        "class Solution:",
        "    def twoSum(self, nums, target):",
        "        seen = {}",
        "        for i, n in enumerate(nums):",
        "            if target - n in seen:",
        "                return [seen[target - n], i]",
        "            seen[n] = i",
    ])  # fmt: skip
    assert _decide(leetcode, solution).outcome == "passed"
    tree = CodeTask(id="n", question="q", entry_point="height", test=(
        "root = Node(1)\nroot.left = Node(2)\nroot.left.left = Node(3)\n\n"
        "def check(candidate):\n    assert candidate(root) == 3\n    assert height(root.left) == 2\n"))  # fmt: skip
    program = (
        "class Node:\n    def __init__(self, v):\n        self.v, self.left, self.right = v, None, None\n\n"
        "def height(node):\n    return 0 if node is None else 1 + max(height(node.left), height(node.right))\n"
    )
    decision = _decide(tree, program)
    assert decision.outcome == "passed", decision.reason
    decision = _decide(tree, program.replace("1 + max", "max"))
    assert decision.outcome == "failed_assertion"


def test_a_method_s_result_is_plain_data_and_an_object_s_truth_is_its_own() -> None:
    task = CodeTask(id="b", question="q", entry_point="Solution", test=(
        "def check(candidate):\n    assert candidate().ok(1)\n"))  # fmt: skip
    falsy = "class Falsy:\n    def __bool__(self):\n        return False\n\nclass Solution:\n    def ok(self, x):\n"
    assert _decide(task, falsy + "        return Falsy()").outcome == "exception"  # never truthy by default here
    tree = CodeTask(id="t", question="q", entry_point="empty", test=(
        "box = Box()\n\ndef check(candidate):\n    assert not box\n    assert candidate(box)\n"))  # fmt: skip
    box = "class Box:\n    def __len__(self):\n        return 0\n\ndef empty(b):\n    return len(b) == 0\n"
    decision = _decide(tree, box)
    assert decision.outcome == "passed", decision.reason  # `not box` asked the program's object, as one process would
