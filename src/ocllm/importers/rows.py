"""The rows of the dataset files people have: CSV (with or without a header, or with one recognised by its
content), Parquet, JSONL.

Each row comes with the file and its number (from 1, among data rows), so that a bad row can be named.
Parquet is read with pyarrow, a batch at a time; CSV with the csv module; JSONL a line at a time.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ocllm.errors import InputError

PARQUET = (".parquet",)
CSV = (".csv",)
JSONL = (".jsonl", ".json")


class Row(NamedTuple):
    file: Path
    number: int  # from 1, among the file's data rows (a CSV header is not counted)
    fields: dict[str, Any]

    def where(self) -> str:
        return f"{self.file}: row {self.number}"


def files_of(paths: list[Path], suffixes: tuple[str, ...]) -> list[Path]:
    """The files named, and every file of these suffixes inside the folders named (recursively), each
    folder's in sorted order."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            inside = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in suffixes)
            if not inside:
                raise InputError(f"{path}: no {' or '.join(suffixes)} file inside")
            found.extend(inside)
        elif path.is_file():
            found.append(path)
        else:
            raise InputError(f"{path}: no such file or folder")
    return found


# Given a CSV's first row, the field names when that row is a header (recognised by what it says), else None.
HeaderRow = Callable[[list[str]], list[str] | None]


def read_rows(
    path: Path, *, header: bool = True, columns: tuple[str, ...] = (), header_row: HeaderRow | None = None
) -> Iterator[Row]:
    """The rows of one file, by its suffix. A CSV without a header gets `columns` as its field names, unless
    `header_row` recognises its first row as one: then that row names the fields and is no data row."""
    suffix = path.suffix.lower()
    if suffix in PARQUET:
        yield from _parquet_rows(path)
    elif suffix in CSV:
        yield from _csv_rows(path, header, columns, header_row)
    elif suffix in JSONL:
        yield from _jsonl_rows(path)
    else:
        raise InputError(f"{path}: expected a .csv, .parquet or .jsonl file")


def _parquet_rows(path: Path) -> Iterator[Row]:
    # Imported here: pyarrow is large, and only an import needs it.
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        source = pq.ParquetFile(path)
        number = 0
        for batch in source.iter_batches(batch_size=1024):
            for fields in batch.to_pylist():
                number += 1
                yield Row(path, number, fields)
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a Parquet file pyarrow can read ({_first_line(exc)})") from None


def _csv_rows(path: Path, header: bool, columns: tuple[str, ...], header_row: HeaderRow | None) -> Iterator[Row]:
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh)
            names = list(columns)
            if header:
                names = [name.strip() for name in next(reader, [])]
            number = 0
            for values in reader:
                blank = not any(value.strip() for value in values)
                if header_row is not None and not blank:
                    header_row, named = None, header_row(values)  # only the first row can be a header
                    if named is not None:
                        names = named
                        continue  # a header: no data row, so the first question is still row 1
                number += 1
                if blank:
                    continue
                fields = dict(zip(names, values, strict=False))
                if len(values) > len(names):
                    fields["__extra__"] = values[len(names) :]
                yield Row(path, number, fields)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x})") from None
    except csv.Error as exc:
        raise InputError(f"{path}: not a CSV file ({exc})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _jsonl_rows(path: Path) -> Iterator[Row]:
    try:
        with open(path, encoding="utf-8-sig") as fh:
            number = 0
            for line in fh:
                if not line.strip():
                    continue
                number += 1
                try:
                    fields = json.loads(line)
                except (json.JSONDecodeError, RecursionError) as exc:
                    raise InputError(f"{path}: row {number}: not a JSON line ({_first_line(exc)})") from None
                if not isinstance(fields, dict):
                    raise InputError(f"{path}: row {number}: expected a JSON object")
                yield Row(path, number, fields)
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
