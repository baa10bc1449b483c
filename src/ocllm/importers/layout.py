"""What every dataset layout of `ocllm import` is made of: its file suffixes, its rows, its row -> Task function,
and the row checks they share. A row that cannot be a task raises BadRow with what is wrong; the caller names
the file and the row."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ocllm.importers.bounds import Budget
from ocllm.importers.rows import Row
from ocllm.models import Task


class BadRow(Exception):
    """A row that cannot be a task; the message says why."""


class Dataset(NamedTuple):
    suffixes: tuple[str, ...]
    rows: Callable[[Path, Budget], Iterator[Row]]  # the file's rows, counted against the import's bounds
    task: Callable[[Row, int, Counter[str]], Task]  # (row, seed, rows seen per subject so far)
    # For a layout whose golds are in files of their own (BFCL's possible answers): the task function that
    # takes them from those files (`--answers`). None: the layout takes no such files.
    with_answers: Callable[[list[Path]], Callable[[Row, int, Counter[str]], Task]] | None = None


def field(row: Row, name: str) -> Any:
    if name not in row.fields or row.fields[name] is None:
        raise BadRow(f"no {name!r}")
    return row.fields[name]


def text(row: Row, name: str) -> str:
    value = field(row, name)
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise BadRow(f"{name!r} is not text")
    stripped = str(value).strip()
    if not stripped:
        raise BadRow(f"{name!r} is empty")
    return stripped
