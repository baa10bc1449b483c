"""The same programs give the same outcomes on a quiet machine and under eight CPU hogs (docs/scoring/code.md, C9):
the limits count the CPU time a program used and the time it was not waiting for a CPU, never plain elapsed time."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from helpers import CPU_HEAVY

from ocllm.models import Policy, Sample
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.decision import CodeLimits
from ocllm.scoring.code.fields import CodeTask, IoTest

pytestmark = [
    pytest.mark.slow,
    CPU_HEAVY,  # eight CPU hogs
    pytest.mark.timeout(600),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make test installs it)"),
]

LIMITS = CodeLimits(cpu_s=2.0, stdin_cpu_s=2.0, wall_s=5.0)
TESTS = "def check(candidate):\n    assert candidate(20) == 6765\n"
# A CPU-bound program that needs about a second of CPU: within its limit however long a loaded machine makes it take.
WORK = "def f(n):\n    total = 0\n    for i in range(6_000_000):\n        total += i % 7\n    a, b = 0, 1\n" \
       "    for _ in range(n):\n        a, b = b, a + b\n    return a\n"  # fmt: skip
PROGRAMS = {
    "passes": "def f(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
    "works_a_second": WORK,
    "wrong": "def f(n):\n    return n\n",
    "spins": "def f(n):\n    while True:\n        pass\n",
    "sleeps": "import time\ndef f(n):\n    time.sleep(600)\n",
    "raises": "def f(n):\n    return [][n]\n",
}
MANY_WRONG = "def f(n):\n    return n + 1 if n < 2999 else n\n"  # wrong on the last call only
STDIN = CodeTask(
    id="sum", question="q", io_tests=[IoTest(input="2 3\n", output="5\n"), IoTest(input="1 1\n", output="2\n")]
)


def _outcomes() -> dict[str, tuple[str | None, str | None]]:
    found: dict[str, tuple[str | None, str | None]] = {}
    task = CodeTask(id="fib", question="q", entry_point="f", test=TESTS)
    for name, program in PROGRAMS.items():
        sample = Sample(task_id="fib", content=f"```python\n{program}```")
        decision = decide_code(task, sample, Policy(), LIMITS)
        found[name] = (decision.outcome, decision.runs[0].timeout if decision.runs else None)
    # A plus-test-sized suite: 3,000 calls across the channel between the tests' box and the program's.
    calls = "def check(candidate):\n    for i in range(3000):\n        assert candidate(i) == i + 1\n"
    many = CodeTask(id="many", question="q", entry_point="f", test=calls)
    for name, program in (("many_calls", "def f(n):\n    return n + 1\n"), ("many_calls_wrong_late", MANY_WRONG)):
        decision = decide_code(many, Sample(task_id="many", content=f"```python\n{program}```"), Policy(), LIMITS)
        found[name] = (decision.outcome, decision.runs[0].timeout if decision.runs else None)
    spin = "import sys\nfor line in sys.stdin:\n    a, b = map(int, line.split())\n    while a + b: pass\n"
    for name, program in (("stdin_ok", "a, b = map(int, input().split())\nprint(a + b)\n"), ("stdin_spins", spin)):
        decision = decide_code(STDIN, Sample(task_id="sum", content=f"```python\n{program}```"), Policy(), LIMITS)
        found[name] = (decision.outcome, decision.runs[-1].timeout if decision.runs else None)
    return found


@contextmanager
def _hogs(count: int) -> Iterator[None]:
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


def test_eight_cpu_hogs_change_no_outcome() -> None:
    quiet = _outcomes()
    # What each program does, as read from it (not from a run).
    assert quiet == {
        "passes": ("passed", None),
        "works_a_second": ("passed", None),
        "wrong": ("failed_assertion", None),
        "spins": ("timeout", "cpu"),
        "sleeps": ("timeout", "wall"),
        "raises": ("exception", None),
        "many_calls": ("passed", None),
        "many_calls_wrong_late": ("failed_assertion", None),
        "stdin_ok": ("passed", None),
        "stdin_spins": ("timeout", "cpu"),
    }
    with _hogs(8):
        loaded = _outcomes()
    assert loaded == quiet
