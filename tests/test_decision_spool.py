"""The runner's spool of decisions: what goes in comes back equal, by (task id, sample), and nothing stays on disk."""

from __future__ import annotations

from pathlib import Path

from ocllm.models import Policy, Sample
from ocllm.run.decision_spool import DecisionSpool
from ocllm.scoring import decide
from ocllm.scoring.mcq.fields import McqTask


def test_decisions_come_back_equal_and_the_file_is_anonymous(tmp_path: Path) -> None:
    task = McqTask(id="t1", options=["1", "2", "3", "4"], answer="B", category="c")
    outputs = ["FINAL: A\n\nOn reflection: FINAL: B", "The answer is (C). 3", "", "\\boxed{D}"]
    # Two samples of each task: the spool tells them apart by their index.
    decisions = {
        (f"t{i}", index): decide(
            task, Sample(task_id=f"t{i}", sample=index, content=text, reasoning="Format: FINAL: A"), Policy()
        )
        for i, text in enumerate(outputs)
        for index, text in enumerate([text, outputs[(i + 1) % len(outputs)]])
    }
    with DecisionSpool(tmp_path) as spool:
        assert spool.get(("t0", 0)) is None  # nothing decided yet, and no file made for it
        for key, decision in decisions.items():
            spool.add(key, decision)
        assert list(tmp_path.iterdir()) == []  # unlinked at once: a crash leaves nothing behind
        for key in reversed(decisions):
            assert spool.get(key) == decisions[key]
        assert decisions[("t0", 0)] != decisions[("t0", 1)]
        assert spool.get(("unknown", 0)) is None
        assert spool.get(("t0", 2)) is None


def test_reads_between_adds_leave_the_next_add_at_the_end(tmp_path: Path) -> None:
    # An add appends without moving the file's position (a seek would flush the buffer each time); a read moves
    # it, and the next add must still land at the end, not over a decision read back.
    task = McqTask(id="t", options=["1", "2", "3", "4"], answer="B", category="c")
    texts = ["FINAL: A", "FINAL: B", "Answer: (C)", "\\boxed{D}", "no answer at all"]
    decisions = [decide(task, Sample(task_id="t", sample=i, content=text), Policy()) for i, text in enumerate(texts)]
    with DecisionSpool(tmp_path) as spool:
        for i, decision in enumerate(decisions):
            spool.add(("t", i), decision)
            assert spool.get(("t", 0)) == decisions[0]
            assert spool.get(("t", i)) == decision
        assert [spool.get(("t", i)) for i in range(len(texts))] == decisions
