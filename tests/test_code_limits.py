"""A lane's `code_limits` (docs/lanes.md, "Code sandbox"): checked when the lanes file is read, in force in every
decision, recorded in each, and read back by a rescore of the run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from helpers import CPU_HEAVY

from ocllm.errors import InputError
from ocllm.models import Policy, Sample
from ocllm.run.lanes import load_lanes, public_settings
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.decision import CodeLimits
from ocllm.scoring.code.fields import CodeTask
from ocllm.scoring.code.limits import limits_of

HEAD = '[lanes.A]\nbase_url = "http://127.0.0.1:1/v1"\nmodel = "m"\nsuite = "demo"\n'


def _lane(tmp_path: Path, table: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "lanes.toml"
    path.write_text(HEAD + "[lanes.A.code_limits]\n" + table)
    return load_lanes(path)["A"]


def test_a_lanes_limits_replace_the_defaults_and_are_recorded(tmp_path: Path) -> None:
    lane = _lane(tmp_path, "cpu_s = 3\nmemory_bytes = 1073741824\n")
    assert limits_of(lane.policy()) == CodeLimits(cpu_s=3.0, memory_bytes=1024**3)
    assert public_settings(lane)["code_limits"] == {"cpu_s": 3, "memory_bytes": 1073741824}
    assert limits_of(Policy()) == CodeLimits()  # a lane that sets none: the defaults


@pytest.mark.parametrize(
    ("table", "said"),
    [("cpu_s = 0\n", "cpu_s must be a number from 0.1 to 3600"), ("gpu_s = 1\n", "unknown limit 'gpu_s'"),
     ("processes = true\n", "processes must be a number")],
)  # fmt: skip
def test_a_bad_limit_is_refused_naming_it(tmp_path: Path, table: str, said: str) -> None:
    with pytest.raises(InputError, match=said):
        _lane(tmp_path, table)


@pytest.mark.slow
@CPU_HEAVY  # a program run to its CPU limit
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed (make test installs it)")
def test_a_decision_runs_under_the_lanes_limits_and_records_them(tmp_path: Path) -> None:
    lane = _lane(tmp_path, "cpu_s = 1\nwall_s = 5\n")
    task = CodeTask(id="t", question="q", entry_point="f", test="def check(candidate):\n    candidate(0)\n")
    sample = Sample(task_id="t", content="```python\ndef f(x):\n    while True:\n        pass\n```")
    decision = decide_code(task, sample, lane.policy())
    assert decision.outcome == "timeout" and decision.reason == "the program reached its CPU-time limit of 1 s"
    assert decision.sandbox is not None and decision.sandbox.limits.cpu_s == 1.0 and decision.sandbox.limits.wall_s == 5
