"""The row readers a room's dataset names (`scoring.dataset_rows.RowReader`): how a file's rows are read and what
its name adds to them. File reading, so it is the importers', never a room's.

"plain": the rows as the file has them. "split_from_name": each row with `__split__`, the split its file's name
starts with (`test-00000-of-00001.parquet`, `train.jsonl`, `test_socratic.jsonl`), else "test". "mmlu_files":
MMLU's per-subject CSVs (`<subject>_<split>.csv`, no header, or the public copies' header) with `subject` and
`__split__` from the file's name, and its Parquet (`validation-00000-of-00001.parquet`) with `__split__`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path

from ocllm.importers.bounds import Budget
from ocllm.importers.rows import CSV, read_rows
from ocllm.scoring.dataset_rows import Dataset, Row

Rows = Callable[[Path, Budget], Iterator[Row]]

# The split a file holds, from its name: `test-00000-of-00001.parquet`, `train.jsonl`, `test_socratic.jsonl`.
_SPLIT = re.compile(r"^(test|train|validation|val|dev)(?![a-z])", re.IGNORECASE)
# MMLU's: a CSV's name ends with its split (`anatomy_dev.csv`), a Parquet's starts with it.
_SPLIT_SUFFIX = re.compile(r"_(test|dev|val|validation|train|auxiliary_train)$")
_PARQUET_SPLIT = re.compile(r"^(test|dev|val|validation|train|auxiliary_train)\b")
_ANSWER_NAMES = ("answer", "target")  # the last header cell of MMLU's public copies, compared case-folded


def rows_of(dataset: Dataset) -> Rows:
    """The reader the dataset names."""
    if dataset.rows == "split_from_name":
        return _rows_with_split
    if dataset.rows == "mmlu_files":
        return partial(_mmlu_rows, dataset.csv_columns)
    return read_rows


def _split_of(path: Path) -> str:
    match = _SPLIT.match(path.stem)
    return match.group(1).lower() if match else "test"


def _rows_with_split(path: Path, budget: Budget) -> Iterator[Row]:
    split = _split_of(path)
    for row in read_rows(path, budget):
        yield Row(row.file, row.number, {**row.fields, "__split__": split})


def _mmlu_rows(columns: tuple[str, ...], path: Path, budget: Budget) -> Iterator[Row]:
    # The split, from the file name (`anatomy_dev.csv`, `validation-00000-of-00001.parquet`): the test split's
    # ids are `mmlu/<subject>/<n>`, another split's name it (`mmlu/anatomy/dev/3`), so that importing the
    # whole tarball leaves a test question its id.
    if path.suffix.lower() in CSV:
        split = _SPLIT_SUFFIX.search(path.stem)
        subject = _SPLIT_SUFFIX.sub("", path.stem)
        extra = {"subject": subject, "__split__": split.group(1) if split else "test"}
        header = partial(_mmlu_header, columns)
        for row in read_rows(path, budget, header=False, columns=columns, header_row=header):
            yield Row(row.file, row.number, {**row.fields, **extra})
    else:
        split = _PARQUET_SPLIT.match(path.stem)
        for row in read_rows(path, budget):
            yield Row(row.file, row.number, {**row.fields, "__split__": split.group(1) if split else "test"})


def _mmlu_header(columns: tuple[str, ...], cells: list[str]) -> list[str] | None:
    """The field names, when a CSV's first row is the header the public copies of MMLU write: its last six
    cells `question, A, B, C, D, answer` (or `target`), in any case; cells before them are columns of their
    own (pandas writes its index first). Recognised by these words alone, never guessed from the data: a
    question whose answer cell is a letter is a question, whatever its text."""
    width = len(columns)
    words = [cell.strip().casefold() for cell in cells]
    named = tuple(column.casefold() for column in columns[:-1])
    if len(words) < width or tuple(words[-width:-1]) != named or words[-1] not in _ANSWER_NAMES:
        return None
    leading = [cell.strip() or f"column {i + 1}" for i, cell in enumerate(cells[:-width])]
    return [*leading, *columns]

