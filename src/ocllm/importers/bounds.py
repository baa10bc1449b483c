"""The bounds on what `ocllm import` reads, and what an import has read so far against them.

A dataset file is small on disk and can be huge once read: a 25 KB zstd Parquet holds an 800 MB question, a
50 KB one 5,000,000 dictionary-encoded rows. Every reader of rows.py counts what it reads here and is refused,
in one line naming the bound, before it holds more than a bound allows (docs/lanes.md, "Bounds on imported
files", says each value and why). The bounds are arguments with these defaults, never globals.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from ocllm.errors import InputError
from ocllm.files.reading import MAX_DEPTH

MB = 1 << 20
GB = 1 << 30


class Bounds(NamedTuple):
    # Rows read by one import, all its files together: ten times the largest benchmark split there is (MMLU's
    # auxiliary train set is 99,842 rows; a test split is at most about 14,000).
    max_rows: int = 1_000_000
    # One field of a row (a question, a gold, a solution, a list of options or tools), its text in UTF-8 bytes:
    # a question of a megabyte is some 250,000 tokens, past any context window served.
    max_value_bytes: int = 1 * MB
    # One row, every field together (a JSONL line, a CSV record, a Parquet row).
    max_row_bytes: int = 8 * MB
    # A Parquet page, inflated: pyarrow inflates a page whole before a value of it can be measured. Writers' pages
    # are about 1 MB (pyarrow's, Spark's, the Hugging Face converter's); a page holds whole values.
    max_page_bytes: int = 64 * MB
    # Brackets inside brackets in a JSON line: as deep as every other JSON ocllm reads (files/reading.py).
    max_depth: int = MAX_DEPTH
    # The values of every row read, together: what an import may cost in memory when it keeps every row.
    max_total_bytes: int = 2 * GB


DEFAULT_BOUNDS = Bounds()


def size_words(size: int) -> str:
    """A byte count as the messages say it: whole megabytes from 1 MB up, else bytes."""
    return f"{size // MB:,} MB" if size >= MB else f"{size:,} bytes"


class Budget:
    """What one import has read so far, over all its files, against its bounds."""

    def __init__(self, bounds: Bounds = DEFAULT_BOUNDS) -> None:
        self.bounds = bounds
        self.rows = 0
        self.bytes = 0

    def expect_rows(self, path: Path, count: int) -> None:
        """A file that says how many rows it holds (Parquet's metadata) is refused before a row is read."""
        if self.rows + count > self.bounds.max_rows:
            before = f" after the {self.rows:,} rows read before it" if self.rows else ""
            raise InputError(
                f"{path}: {count:,} rows by its metadata{before}; an import reads at most "
                f"{self.bounds.max_rows:,} rows (the bound on rows read)"
            )

    def row(self, where: str, size: int) -> None:
        """Count one row read, of `size` bytes, refused past the bound on rows, on a row's or on all rows' bytes."""
        self.rows += 1
        if self.rows > self.bounds.max_rows:
            raise InputError(
                f"{where}: more than {self.bounds.max_rows:,} rows; an import reads at most "
                f"{self.bounds.max_rows:,} rows (the bound on rows read)"
            )
        if size > self.bounds.max_row_bytes:
            raise InputError(row_too_large(where, size, self.bounds))
        self.bytes += size
        if self.bytes > self.bounds.max_total_bytes:
            raise InputError(
                f"{where}: the rows read so far hold more than {size_words(self.bounds.max_total_bytes)}, the most an "
                "import reads (the bound on all rows' values together)"
            )

    def fields(self, where: str, fields: dict[str, Any]) -> None:
        """Check and count a row read as Python values (JSONL, CSV): each field, then the row."""
        total = 0
        for name, value in fields.items():
            size = text_bytes(value, self.bounds.max_value_bytes)
            if size > self.bounds.max_value_bytes:
                raise InputError(value_too_large(where, name, size, self.bounds))
            total += size
        self.row(where, total)


def value_too_large(where: str, name: str, size: int, bounds: Bounds, *, at_least: bool = False) -> str:
    said = "at least " if at_least else ""
    return (
        f"{where}: {name!r} holds {said}{size_words(size)}, more than the {size_words(bounds.max_value_bytes)} "
        "an imported value may hold"
    )


def row_too_large(where: str, size: int, bounds: Bounds) -> str:
    return f"{where}: {size_words(size)}, more than the {size_words(bounds.max_row_bytes)} an imported row may hold"


def text_bytes(value: Any, stop: int) -> int:
    """The UTF-8 bytes of the text in a value read from JSON or CSV: its strings (keys too) at every depth, and
    for a number or a constant the length it is written with, counted until past `stop`. A loop with a stack, not
    recursion: the value may be nested as deep as the bound on depth allows."""
    total = 0
    stack: list[Any] = [value]
    while stack and total <= stop:
        item = stack.pop()
        if isinstance(item, str):
            # A character is at most 4 bytes: encode only a text that could pass the bound.
            total += len(item) if item.isascii() else len(item.encode("utf-8", "surrogatepass"))
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        else:
            total += _written_length(item)
    return total


def _written_length(item: Any) -> int:
    if isinstance(item, bool) or item is None:
        return 4
    if isinstance(item, int):
        # Digits, without converting a huge integer to text (Python refuses past 4,300 digits).
        return max(1, (item.bit_length() * 30103) // 100000 + 1)
    return len(repr(item))
