"""Code tasks from other tools' records (scoring/other_harnesses.py says the split): evalplus's results, whose tasks
are the rows of the dataset they ran on (HumanEvalPlus, MbppPlus), read as `ocllm import humaneval | mbpp` reads them
(scoring/code/datasets.py), so that a rescored task and an imported one are the same task."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ocllm.models import Task
from ocllm.scoring.code.datasets import humaneval_task, mbpp_task
from ocllm.scoring.dataset_rows import BadRow, Row
from ocllm.scoring.other_harnesses import HarnessMapping, HarnessRecord, NotScorable


def evalplus_task(record: HarnessRecord) -> Task:
    """The dataset row of the record's task_id as a code task (an MBPP row by its `Mbpp/` id or its asserts)."""
    row = Row(Path(record.where), 0, dict(record.fields))
    mbpp = record.task_id.startswith("Mbpp/") or "test_list" in record.fields or "assertion" in record.fields
    try:
        return (mbpp_task if mbpp else humaneval_task)(row, 0, Counter())
    except BadRow as exc:
        raise NotScorable(record.task_id, record.where, f"its dataset row: {exc}") from None


HARNESS_RECORDS = {
    # evalplus extracts no answer: it runs the solution (kept as the sample); nothing to set beside ours.
    "evalplus": HarnessMapping(task=evalplus_task, extracted=lambda _value: None),
}
