"""The machine's memory budget for sandboxes (scoring/isolation/memory_budget.py; docs/lanes.md, "Code sandbox"):
units are lock files shared by every process of the machine, taken all or none, freed when their holder ends however
it ends; a group that can never fit is refused in words that name both sizes."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import BACKSTOP_S

from ocllm.models import Policy, Sample
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.decision import CodeLimits
from ocllm.scoring.code.fields import CodeTask
from ocllm.scoring.isolation.memory_budget import UNIT_BYTES, Budget, machine_memory_bytes

HOLDER = """
import sys
from pathlib import Path
from ocllm.scoring.isolation.memory_budget import Budget
budget = Budget(int(sys.argv[2]), Path(sys.argv[1]))
with budget.taken(int(sys.argv[3])):
    print("held", flush=True)
    sys.stdin.readline()
print("released", flush=True)
"""


def _holder(folder: Path, total: int, nbytes: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent / "src")}
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(folder), str(total), str(nbytes)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    return process


def test_units_held_by_another_process_are_not_taken_until_it_lets_them_go(tmp_path: Path) -> None:
    budget = Budget(3 * UNIT_BYTES, tmp_path)
    holder = _holder(tmp_path, 3 * UNIT_BYTES, 2 * UNIT_BYTES)
    try:
        assert budget._take(2) is None  # one unit is free, two are asked for: none is taken
        single = budget._take(1)
        assert single is not None and len(single) == 1
        for fd in single:
            os.close(fd)
        assert holder.stdin is not None
        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout is not None and holder.stdout.readline() == "released\n"
        assert holder.wait(timeout=BACKSTOP_S) == 0
        with budget.taken(3 * UNIT_BYTES):
            assert budget._take(1) is None  # all three held here now
    finally:
        holder.kill()
        holder.wait()


def test_a_holder_killed_outright_frees_its_units(tmp_path: Path) -> None:
    budget = Budget(2 * UNIT_BYTES, tmp_path)
    holder = _holder(tmp_path, 2 * UNIT_BYTES, 2 * UNIT_BYTES)
    assert budget._take(1) is None
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=BACKSTOP_S)
    held = budget._take(2)
    assert held is not None
    for fd in held:
        os.close(fd)


def test_a_group_larger_than_the_budget_is_refused_naming_both_sizes(tmp_path: Path) -> None:
    budget = Budget(4 * 1024**3, tmp_path)
    assert budget.problem(4 * 1024**3) is None
    said = budget.problem(5 * 1024**3)
    assert said is not None and "5.0 GiB" in said and "4.0 GiB" in said and "code_limits" in said


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make test installs it)")
def test_code_limits_past_the_machine_s_budget_are_sandbox_refused() -> None:
    task = CodeTask(id="t", question="q", entry_point="f", test="def check(candidate):\n    assert candidate(1) == 2\n")
    limits = CodeLimits(memory_bytes=machine_memory_bytes())  # two boxes of it: past half the machine's memory
    sample = Sample(task_id="t", content="```python\ndef f(x):\n    return x + 1\n```")
    decision = decide_code(task, sample, Policy(), limits)
    assert decision.outcome == "sandbox_refused" and decision.correct is None
    assert "all sandboxes of this machine may hold" in decision.reason
