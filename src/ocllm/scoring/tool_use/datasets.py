"""The tool_use room's dataset for `ocllm import`: BFCL's multi-turn files, read from its data folder
(bfcl_files.py: which files; bfcl_tasks.py: a row -> a task)."""

from __future__ import annotations

from ocllm.scoring.dataset_rows import Dataset
from ocllm.scoring.tool_use import bfcl_files

DATASETS = (
    Dataset(name="bfcl-multi-turn", label="BFCL multi-turn", files=("jsonl",), task=None, folder=bfcl_files.layout),
)
