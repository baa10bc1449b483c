"""`ocllm import`: the dataset files people have on disk -> one suite of this project.

What a dataset's row means is its task type's (a room's `TaskType.datasets`, scoring/dataset_rows.py); the
registry of them is `datasets.py`, file reading `rows.py` and `row_readers.py` (within the bounds of `bounds.py`),
the seeded sample `sampling.py`, drawn as the rows are read. Local files only: the command
never downloads (docs/importing.md says where to get them).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import msgspec

from ocllm.errors import InputError
from ocllm.files.surrogates import first_lone_surrogate
from ocllm.importers.bounds import DEFAULT_BOUNDS, Bounds, Budget
from ocllm.importers.datasets import Layout, besides_rows, datasets
from ocllm.importers.rows import JSONL, files_of, suffix_of
from ocllm.importers.sampling import SeededSample
from ocllm.models import Task
from ocllm.scoring.dataset_rows import BadRow


class Selection(NamedTuple):
    per_category: int | None = None
    limit: int | None = None
    seed: int = 0
    category: str | None = None  # every task's category; the dataset's own moves to `subset`
    split: str | None = None  # only the tasks of this split of the dataset's own (MBPP's); None: every row


class Imported(NamedTuple):
    tasks: list[Task]
    read: int  # rows read, bad ones included
    skipped: list[str]  # each bad row left out: where, and what is wrong


def import_tasks(
    fmt: str,
    paths: list[Path],
    selection: Selection,
    *,
    skip_bad: bool = False,
    answers: list[Path] | None = None,
    bounds: Bounds = DEFAULT_BOUNDS,
) -> Imported:
    """Every row of the files as a task (a bad row fails the import, or with `skip_bad` is left out), and the
    seeded sample of them, drawn as they are read. `answers`: the files holding the golds, for a layout that
    keeps them apart (bfcl). Past one of `bounds` the import is refused in one line naming it."""
    files = dataset_files(fmt, paths)
    known = datasets()
    dataset = known[fmt]
    if answers and dataset.with_answers is None:
        takes = ", ".join(name for name, d in known.items() if d.with_answers is not None)
        raise InputError(f"--answers is for {takes}; {fmt} files hold their own golds")
    if dataset.folder is not None:  # its rows are some of its files; it reads the others itself, as rows come
        laid_out = dataset.folder(paths)
        files, task_of = laid_out.rows, laid_out.task(besides_rows)
    elif dataset.with_answers is not None and answers:
        task_of = dataset.with_answers(answers)
    else:
        assert dataset.task is not None  # a dataset gives a row mapping or a folder layout (dataset_rows.Dataset)
        task_of = dataset.task
    in_split = _split_filter(fmt, dataset, selection.split)
    kept = 0
    sample = SeededSample(selection.seed, selection.per_category, selection.limit)
    # Each id's first row, as (file, row number): every id is held to find duplicates, not every row's text.
    first_at: dict[str, tuple[int, int]] = {}
    skipped: list[str] = []
    seen: Counter[str] = Counter()
    budget = Budget(bounds)
    for number, file in enumerate(files):
        for row in dataset.rows(file, budget):
            try:
                # "\\udc00" in a JSONL row is valid JSON but no text (no suite can hold it): the row before it is
                # used (its text may be hashed into an id), and the task, which may hold a file's besides (--answers).
                _text_only(row.fields)
                task = task_of(row, selection.seed, seen)
                _text_only(task)
                if task.id in first_at:
                    at_file, at_row = first_at[task.id]
                    raise BadRow(f"duplicate id {task.id!r} (first at {files[at_file]}: row {at_row})")
            except BadRow as exc:
                if not skip_bad:
                    raise InputError(f"{row.where()}: {exc} (--skip-bad leaves such rows out)") from None
                skipped.append(f"{row.where()}: {exc}")
                continue
            first_at[task.id] = (number, row.number)
            if not in_split(task):
                continue
            kept += 1
            # Grouped by the dataset's own category, also when --category gives every task one name.
            sample.offer(task, task.category)
    if not first_at:
        raise InputError(f"{', '.join(map(str, paths))}: no {fmt} tasks found")
    if not kept:
        raise InputError(
            f"{', '.join(map(str, paths))}: none of the {len(first_at)} {fmt} tasks is of the split {selection.split!r}"
        )
    return Imported(_relabelled(sample.tasks(), selection.category), budget.rows, skipped)


def _split_filter(fmt: str, dataset: Layout, split: str | None) -> Callable[[Task], bool]:
    """Whether a task is of `--split`'s split, checked before any row is read."""
    if split is None:
        return lambda task: True
    split_of = dataset.split_of
    if split_of is None:
        having = ", ".join(name for name, d in datasets().items() if d.split_of is not None)
        raise InputError(f"--split is for {having}, whose files mix its splits; {fmt} files are read whole")
    if split not in dataset.splits:
        raise InputError(f"--split {split}: {fmt}'s splits are {', '.join(dataset.splits)}")
    return lambda task: split_of(task) == split


def _text_only(value: object) -> None:
    found = first_lone_surrogate(value)
    if found is not None:
        raise BadRow(f"'{found[0]}' holds a lone UTF-16 surrogate ({found[1]}), which is not text")


def dataset_files(fmt: str, paths: list[Path]) -> list[Path]:
    """The files an import of `paths` reads: those named, and those of the format inside the folders named
    (what -o must never replace)."""
    known = datasets()
    dataset = known.get(fmt)
    if dataset is None:
        raise InputError(f"unknown format {fmt!r}; expected one of {', '.join(known)}")
    if dataset.folder is not None:
        laid_out = dataset.folder(paths)
        return [*laid_out.rows, *laid_out.besides]
    files = files_of(paths, dataset.suffixes)
    for file in files:
        if suffix_of(file) not in dataset.suffixes:
            raise InputError(f"{file}: a {fmt} file is {' or '.join(dataset.suffixes)}")
    return files


def answer_files(paths: list[Path]) -> list[Path]:
    """The files `--answers` names (those inside its folders too): inputs, which -o must never replace."""
    return files_of(paths, JSONL)


def _relabelled(tasks: list[Task], category: str | None) -> list[Task]:
    if category is None:
        return tasks
    return [msgspec.structs.replace(t, category=category, subset=t.category) for t in tasks]
