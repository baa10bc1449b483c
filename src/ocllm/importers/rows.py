"""The rows of the dataset files people have: CSV (with or without a header, or with one recognised by its
content), Parquet, JSONL.

Each row comes with the file and its number (from 1, among data rows), so that a bad row can be named; it is a
`scoring.dataset_rows.Row`, what a room's row -> Task mapping is handed. Parquet is read with pyarrow, a batch at
a time (parquet_rows.py); CSV with the csv module; JSONL a line at a time. Every reader counts what it reads
against the import's bounds (bounds.py) as it reads: a line is read to the bound on a row and no further, a field
is measured before the row is used.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ocllm.errors import InputError
from ocllm.files.file_kind import not_regular, refuse_lfs_pointer
from ocllm.importers.bounds import Budget, size_words
from ocllm.importers.json_line import BadLine, json_object
from ocllm.importers.parquet_rows import parquet_rows
from ocllm.scoring.dataset_rows import Row

PARQUET = (".parquet",)
CSV = (".csv",)
JSONL = (".jsonl", ".json", ".jsonl.gz", ".json.gz")
GZIP = ".gz"
# A room's dataset names the kinds of file it comes in (scoring/dataset_rows.py); these are their suffixes.
SUFFIXES = {"csv": CSV, "parquet": PARQUET, "jsonl": JSONL}


def suffix_of(path: Path) -> str:
    """A file's kind by its name, in lower case: its last suffix, or its last two for a gzipped file
    (`HumanEval.jsonl.gz` -> `.jsonl.gz`)."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == GZIP:
        return "".join(suffixes[-2:])
    return path.suffix.lower()


def files_of(paths: list[Path], suffixes: tuple[str, ...]) -> list[Path]:
    """The files named, and every file of these suffixes inside the folders named (recursively), each
    folder's in sorted order."""
    found: list[Path] = []
    for path in paths:
        problem = not_regular(path)  # a device or a FIFO named is refused by what it is, never opened
        if problem is not None:
            raise problem
        if path.is_dir():
            # Inside a folder only regular files are read: a device or a FIFO there is no dataset file.
            inside = sorted(p for p in path.rglob("*") if p.is_file() and suffix_of(p) in suffixes)
            if not inside:
                raise InputError(f"{path}: no {' or '.join(suffixes)} file inside")
            found.extend(inside)
        else:
            found.append(path)
    return found


# Given a CSV's first row, the field names when that row is a header (recognised by what it says), else None.
HeaderRow = Callable[[list[str]], list[str] | None]


def read_rows(
    path: Path,
    budget: Budget,
    *,
    header: bool = True,
    columns: tuple[str, ...] = (),
    header_row: HeaderRow | None = None,
) -> Iterator[Row]:
    """The rows of one file, by its suffix, counted against `budget`. A CSV without a header gets `columns` as its
    field names, unless `header_row` recognises its first row as one: then that row names the fields and is no
    data row."""
    problem = not_regular(path)
    if problem is not None:
        raise problem
    refuse_lfs_pointer(path)  # a dataset repository cloned without Git LFS: said as what it is
    suffix = suffix_of(path)
    if suffix in PARQUET:
        for number, fields in parquet_rows(path, budget):
            yield Row(path, number, fields)
    elif suffix in CSV:
        yield from _csv_rows(path, budget, header, columns, header_row)
    elif suffix in JSONL:
        yield from _jsonl_rows(path, budget)
    else:
        raise InputError(f"{path}: expected a .csv, .parquet or .jsonl (.jsonl.gz) file")


@contextlib.contextmanager
def _csv_field_limit(limit: int) -> Iterator[None]:
    """The csv module's bound on a field (131,072 characters unless set, and process-wide) set to the bound on a
    value while a file is read, and given back after."""
    before = csv.field_size_limit(limit)
    try:
        yield
    finally:
        csv.field_size_limit(before)


def _bounded_lines(path: Path, fh: Any, budget: Budget) -> Iterator[str]:
    """A text file's lines, each read to the bound on a row and no further (a line of 800 MB is never held); the
    blank ones, which no row counts, to the bound on all rows' values (a gzipped file of nothing but newlines
    inflates without end)."""
    limit = budget.bounds.max_row_bytes
    number = blank = 0
    while line := fh.readline(limit + 1):
        number += 1
        if len(line) > limit:
            raise InputError(
                f"{path}: line {number} is longer than {size_words(limit)}, more than an imported row may hold"
            )
        if not line.strip():
            blank += len(line)
            if blank > budget.bounds.max_total_bytes:
                raise InputError(
                    f"{path}: line {number}: more than {size_words(budget.bounds.max_total_bytes)} of blank lines, "
                    "more than an import reads (the bound on all rows' values together)"
                )
        yield line


def _csv_rows(
    path: Path, budget: Budget, header: bool, columns: tuple[str, ...], header_row: HeaderRow | None
) -> Iterator[Row]:
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh, _csv_field_limit(budget.bounds.max_value_bytes):
            reader = csv.reader(_bounded_lines(path, fh, budget))
            names = list(columns)
            if header:
                names = [name.strip() for name in next(reader, [])]
            number = 0
            for values in reader:
                blank = not any(value.strip() for value in values)
                if header_row is not None and not blank:
                    named = header_row(values)
                    header_row = None  # only the first row can be a header
                    if named is not None:
                        names = named
                        continue  # a header: no data row, so the first question is still row 1
                number += 1
                if blank:
                    continue
                # A value is a string, and the values past the named columns a list of them under "__extra__".
                fields: dict[str, str | list[str]] = dict(zip(names, values, strict=False))
                if len(values) > len(names):
                    fields["__extra__"] = values[len(names) :]
                budget.fields(f"{path}: row {number}", fields)
                yield Row(path, number, fields)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x})") from None
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            raise InputError(
                f"{path}: line {reader.line_num}: a field of more than {budget.bounds.max_value_bytes:,} characters, "
                "more than an imported value may hold"
            ) from None
        raise InputError(f"{path}: not a CSV file ({exc})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _open_text(path: Path) -> Any:
    """A JSONL file as text, a gzipped one inflated as it is read."""
    if suffix_of(path).endswith(GZIP):
        return gzip.open(path, "rt", encoding="utf-8-sig")
    return open(path, encoding="utf-8-sig")


def _jsonl_rows(path: Path, budget: Budget) -> Iterator[Row]:
    try:
        with _open_text(path) as fh:
            number = 0
            for line in _bounded_lines(path, fh, budget):
                if not line.strip():
                    continue
                number += 1
                try:
                    fields = json_object(line, budget.bounds.max_depth)
                except BadLine as exc:
                    raise InputError(f"{path}: row {number}: {_first_line(exc)}") from None
                budget.fields(f"{path}: row {number}", fields)
                yield Row(path, number, fields)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x})") from None
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: not a whole gzip file ({exc or type(exc).__name__})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
