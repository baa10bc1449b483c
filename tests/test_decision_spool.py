"""The runner's spool of decisions: what goes in comes back equal, by task id, and nothing stays on disk."""

from __future__ import annotations

from pathlib import Path

from ocllm.models import Policy, Sample, Task
from ocllm.run.decision_spool import DecisionSpool
from ocllm.scoring import decide


def test_decisions_come_back_equal_and_the_file_is_anonymous(tmp_path: Path) -> None:
    task = Task(id="t1", type="mcq", options=["1", "2", "3", "4"], answer="B", category="c")
    outputs = ["FINAL: A\n\nOn reflection: FINAL: B", "The answer is (C). 3", "", "\\boxed{D}"]
    decisions = {
        f"t{i}": decide(task, Sample(task_id=f"t{i}", content=text, reasoning="Format: FINAL: A"), Policy())
        for i, text in enumerate(outputs)
    }
    with DecisionSpool(tmp_path) as spool:
        assert spool.get("t0") is None  # nothing decided yet, and no file made for it
        for task_id, decision in decisions.items():
            spool.add(task_id, decision)
        assert list(tmp_path.iterdir()) == []  # unlinked at once: a crash leaves nothing behind
        for task_id in reversed(decisions):
            assert spool.get(task_id) == decisions[task_id]
        assert spool.get("unknown") is None
