"""What every reader of saved runs produces: tasks with the samples they were answered by, and the
decision the saved file itself recorded (`previous`), which is kept, never trusted."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from ocllm.models import Sample, Task


class SavedRecord(NamedTuple):
    task: Task
    sample: Sample
    previous: dict[str, Any]
    carried: dict[str, Any]


class SavedRun(NamedTuple):
    path: Path
    meta: dict[str, Any]  # run-level fields of the input (run_id, lane, model, ...), no tasks
    records: list[SavedRecord]
