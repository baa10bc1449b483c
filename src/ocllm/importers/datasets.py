"""The datasets `ocllm import` reads, by name: each task type's (its room's `TaskType.datasets`), with what the
importers need to read its files. The registry is built from the task types when it is asked, so that a type
registered later (a test's own room) imports too; no module here names a type or a dataset.

A room says what its rows mean (scoring/dataset_rows.py); this side resolves what the room names in plain words:
the kinds of file to their suffixes, the row reader to a reader of rows.py, and `--answers` files to their rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from ocllm.importers.bounds import Budget
from ocllm.importers.row_readers import Rows, rows_of
from ocllm.importers.rows import JSONL, SUFFIXES, files_of, read_rows
from ocllm.models import Task
from ocllm.scoring import task_types
from ocllm.scoring.dataset_rows import Dataset, Folder, Row, RowTask


class Layout(NamedTuple):
    """A dataset as the importers read it."""

    suffixes: tuple[str, ...]
    rows: Rows  # the file's rows, counted against the import's bounds
    task: RowTask | None  # (row, seed, rows seen per key so far) -> Task, or BadRow; None: `folder` gives it
    # For a dataset whose golds are in files of their own (BFCL's possible answers): the task mapping that takes
    # them from those files (`--answers`). None: the dataset takes no such files.
    with_answers: Callable[[list[Path]], RowTask] | None = None
    # The dataset's own splits (`--split`) and each task's, as the room says (dataset_rows.Dataset).
    splits: tuple[str, ...] = ()
    split_of: Callable[[Task], str | None] | None = None
    # A dataset laid out as a folder of several kinds of file: the PATHs -> its files and row mapping.
    folder: Callable[[list[Path]], Folder] | None = None


def datasets() -> dict[str, Layout]:
    """Every registered type's datasets, in the registry's order, by name."""
    found: dict[str, Layout] = {}
    for task_type in task_types.TASK_TYPES.values():
        for dataset in task_type.datasets:
            if dataset.name in found:
                raise ValueError(f"two task types register the dataset {dataset.name!r}")  # a programming error
            found[dataset.name] = _layout(dataset)
    return found


def names() -> tuple[str, ...]:
    """What `ocllm import` takes as FORMAT."""
    return tuple(datasets())


def labels() -> str:
    """The datasets as the command's help names them ("MMLU, MMLU-Pro, ...")."""
    return ", ".join(dataset.label for task_type in task_types.TASK_TYPES.values() for dataset in task_type.datasets)


def _layout(dataset: Dataset) -> Layout:
    suffixes = tuple(suffix for kind in dataset.files for suffix in SUFFIXES[kind])
    with_answers = dataset.with_answers
    answers = None if with_answers is None else (lambda paths: with_answers(_answer_rows(paths)))
    return Layout(suffixes, rows_of(dataset), dataset.task, answers, dataset.splits, dataset.split_of, dataset.folder)


def besides_rows(path: Path) -> Iterator[Row]:
    """The rows of a file a folder dataset reads beside its rows (JSONL), within the default bounds, counted apart
    from the questions (as `--answers` files are)."""
    yield from read_rows(path, Budget())


def _answer_rows(paths: list[Path]) -> Iterator[Row]:
    """The rows of the `--answers` files (JSONL), read within the default bounds, counted apart from the
    questions."""
    budget = Budget()
    for path in files_of(paths, JSONL):
        yield from read_rows(path, budget)
