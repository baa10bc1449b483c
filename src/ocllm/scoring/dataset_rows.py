"""What a room registers for `ocllm import`: a dataset's name, the files it comes in, and its row -> Task mapping.

The split (a decision of issue 31): reading files is the importers' (`ocllm.importers`: which files a path means,
CSV/Parquet/JSONL rows within the import's bounds, the seeded sample, ids seen twice); what a row *means* is the
room's, because it is knowledge of the room's fields (an MCQ row's options and gold letter, a math row's gold in
its last box, an IFEval row's instructions, a BFCL row's tools). Scoring never imports the importers, so what a
room registers is made only of what is defined here: a `Dataset` naming its files and its row reader by plain
names (the importers resolve them), a `Row` as the importers hand it over, and `BadRow`, which the room raises for
a row that cannot be a task (the importers name the file and the row, and skip it with --skip-bad). The small
field readers every mapping uses (`field`, `text`) are here for the same reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ocllm.models import Task

# The kinds of file a dataset may come in; the importers know each one's suffixes (".jsonl" and ".json" for jsonl).
FileKind = Literal["csv", "parquet", "jsonl"]
# How the importers read a file's rows: "plain" (each row as the file has it); "split_from_name" (each row with
# `__split__`, the split its file name starts with, else "test"); "mmlu_files" (MMLU's per-subject CSVs, header
# or none, with `subject` and `__split__` from the file name; its Parquet with `__split__`).
RowReader = Literal["plain", "split_from_name", "mmlu_files"]


class BadRow(Exception):
    """A row that cannot be a task; the message says why (the importers add the file and the row)."""


class Row(NamedTuple):
    file: Path
    number: int  # from 1, among the file's data rows (a CSV header is not counted)
    fields: dict[str, Any]

    def where(self) -> str:
        return f"{self.file}: row {self.number}"


# (row, the import's seed, rows seen so far per key the mapping counts by) -> the task, or BadRow.
RowTask = Callable[[Row, int, Counter[str]], Task]
# The importers' reader of a JSONL file's rows (within the import's bounds), handed to a dataset that reads files
# beside its rows (`Folder`).
ReadRows = Callable[[Path], Iterable[Row]]


class Folder(NamedTuple):
    """What the PATHs of a dataset laid out as a folder of several kinds of file mean (BFCL's multi-turn data: the
    question files, their possible answers and the function docs beside them), as its room says."""

    rows: list[Path]  # the files whose rows become tasks, in the order they are read
    besides: list[Path]  # the files read beside them (inputs too: -o never replaces one)
    # Given the importers' reader, the row -> Task mapping, which reads what it needs of `besides` as rows come.
    task: Callable[[ReadRows], RowTask]


@dataclass(frozen=True, kw_only=True)
class Dataset:
    """One dataset `ocllm import <name>` reads into the room's tasks."""

    name: str  # the command's FORMAT ("mmlu-pro")
    label: str  # what the command's help calls it ("MMLU-Pro")
    files: tuple[FileKind, ...]  # in the order messages list them ("a gpqa file is .csv")
    # The row -> Task mapping; None for a dataset laid out as a folder (`folder` gives it).
    task: RowTask | None
    rows: RowReader = "plain"
    # A CSV without a header: its field names, in order ("mmlu_files" also takes a first row that names them, in
    # any case, as the header of the public copies).
    csv_columns: tuple[str, ...] = ()
    # For a dataset whose golds are in files of their own (BFCL's possible answers, `--answers`): the task mapping
    # given those files' rows (JSONL, read within the import's bounds). It reads them all before it returns. None:
    # the dataset takes no such files.
    with_answers: Callable[[Iterable[Row]], RowTask] | None = None
    # For a dataset whose files mix the splits its authors defined (MBPP's, by task id): the split names, in the
    # order `--split` lists them, and each task's split (None: in none). Empty: `--split` is refused.
    splits: tuple[str, ...] = ()
    split_of: Callable[[Task], str | None] | None = None
    # For a dataset laid out as a folder of several kinds of file (BFCL's multi-turn data): the PATHs -> the files
    # it reads and its row mapping (raises InputError when the PATHs are not such a folder). None: the files named,
    # and those of its kinds inside the folders named, are its rows, and `task` maps them.
    folder: Callable[[list[Path]], Folder] | None = None

    def __post_init__(self) -> None:
        if (self.task is None) == (self.folder is None):
            raise ValueError(f"dataset {self.name!r}: give a row mapping (task) or a folder layout, one of them")


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
