"""The rows of a Parquet file, read within the import's bounds before any of it becomes Python values.

A Parquet file's size on disk says nothing of what it holds: zstd turns an 800 MB question into 25 KB, and a
dictionary-encoded column holds 5,000,000 rows in 50 KB. So, in order:
1. the row count in the file's metadata is checked against the bound on rows, before a row is read;
2. each column chunk's uncompressed size in the metadata: a chunk larger than its rows times the bound on a
   value must hold a value past the bound (at least one row is above the average), refused before it is read;
   a chunk larger than the bound on a page has its page headers read (parquet_pages.py), and a page that
   inflates past that bound is refused before pyarrow inflates it;
3. the file is read in small batches (pyarrow's `iter_batches`), and each batch's field sizes are measured on
   pyarrow's arrays (string lengths, summed per row through lists and structs) before one value is turned into
   Python; only a batch within the bounds is.
A batch is BATCH_ROWS rows, so that what is read before it is measured stays small even where dictionary
encoding makes a row large from a few bytes on disk.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ocllm.errors import InputError, MissingExtra
from ocllm.importers.bounds import Budget, row_too_large, size_words, value_too_large
from ocllm.importers.parquet_pages import NotPages, page_sizes

if TYPE_CHECKING:
    import pyarrow as pa

BATCH_ROWS = 64  # at most 64 rows of 8 MB in pyarrow's memory before they are measured
# Page headers, lengths and levels come on top of the values in a chunk's uncompressed size: the metadata check
# allows this much of them per row, so that only values can make a chunk too large.
_OVERHEAD_PER_ROW = 64 * 1024


def parquet_rows(path: Path, budget: Budget) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number from 1, fields) for each row of the file, refused in one line at the first bound passed."""
    # Imported here: pyarrow is large, only an import of Parquet needs it, and it is an extra (ocllm[parquet]).
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtra("reading Parquet", "pyarrow", "parquet") from None

    try:
        source = pq.ParquetFile(path)
        _check_metadata(path, source.metadata, budget)
        _check_pages(path, source.metadata, budget)
        number = 0
        for batch in source.iter_batches(batch_size=BATCH_ROWS):
            sizes = _checked_sizes(path, batch, number, budget)
            for offset, fields in enumerate(batch.to_pylist()):
                number += 1
                budget.row(f"{path}: row {number}", int(sizes[offset]))
                yield number, fields
    except (pa.ArrowException, OSError) as exc:
        raise InputError(f"{path}: not a Parquet file pyarrow can read ({_first_line(exc)})") from None


def _check_metadata(path: Path, meta: Any, budget: Budget) -> None:
    budget.expect_rows(path, meta.num_rows)
    limit = budget.bounds.max_value_bytes
    for group in range(meta.num_row_groups):
        row_group = meta.row_group(group)
        rows = max(row_group.num_rows, 1)
        for column in range(row_group.num_columns):
            chunk = row_group.column(column)
            if chunk.total_uncompressed_size > rows * (limit + _OVERHEAD_PER_ROW):
                name = chunk.path_in_schema.split(".")[0]
                average = chunk.total_uncompressed_size // rows
                where = f"{path}: row group {group + 1} ({rows:,} row{'s' if rows != 1 else ''})"
                raise InputError(value_too_large(where, name, average, budget.bounds, at_least=True)
                                 + " (by the file's metadata: its values average that per row)")  # fmt: skip


def _check_pages(path: Path, meta: Any, budget: Budget) -> None:
    """Refuse a page that inflates past the bound on a page, from its header, before pyarrow inflates it. Only a
    chunk larger than the bound can hold such a page; a chunk whose headers cannot be read is left to pyarrow."""
    limit = budget.bounds.max_page_bytes
    with open(path, "rb") as fh:
        for group in range(meta.num_row_groups):
            row_group = meta.row_group(group)
            for column in range(row_group.num_columns):
                chunk = row_group.column(column)
                if chunk.total_uncompressed_size <= limit:
                    continue
                offsets = [o for o in (chunk.dictionary_page_offset, chunk.data_page_offset) if o is not None]
                try:
                    for inflated, _ in page_sizes(fh, min(offsets), chunk.total_compressed_size):
                        if inflated > limit:
                            name = chunk.path_in_schema.split(".")[0]
                            raise InputError(
                                f"{path}: row group {group + 1}, column {name!r}: a page that inflates to "
                                f"{size_words(inflated)}, more than the {size_words(limit)} an import lets pyarrow "
                                "inflate at once (the bound on a page)"
                            )
                except NotPages:
                    continue


def _checked_sizes(path: Path, batch: pa.RecordBatch, before: int, budget: Budget) -> np.ndarray:
    """Each row's bytes in the batch (all fields), once every field of every row is within the bound on a value
    and every row within the bound on a row."""
    bounds = budget.bounds
    total = np.zeros(batch.num_rows, dtype=np.int64)
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        sizes = field_bytes(column)
        if sizes.size and (largest := int(sizes.max())) > bounds.max_value_bytes:
            row = before + int(sizes.argmax()) + 1
            raise InputError(value_too_large(f"{path}: row {row}", name, largest, bounds))
        total += sizes
    if total.size and int(total.max()) > bounds.max_row_bytes:
        row = before + int(total.argmax()) + 1
        raise InputError(row_too_large(f"{path}: row {row}", int(total.max()), bounds))
    return total


def _text_types() -> tuple[Any, ...]:
    import pyarrow.types as t

    return (t.is_string, t.is_large_string, t.is_binary, t.is_large_binary, t.is_string_view, t.is_binary_view)


def field_bytes(array: pa.Array) -> np.ndarray:
    """The bytes of each row's value in a pyarrow array, as int64: a string's UTF-8 length, a fixed-width
    value's width, a list's or a struct's the sum of its parts (at every depth); a null is 0."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    text_types = _text_types()
    if isinstance(array, pa.ChunkedArray):
        parts = [field_bytes(chunk) for chunk in array.chunks]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    if pa.types.is_dictionary(kind):
        per_entry = field_bytes(array.dictionary)
        indices = array.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        sizes = per_entry[indices] if per_entry.size else np.zeros(len(array), dtype=np.int64)
        return np.where(array.is_valid().to_numpy(zero_copy_only=False), sizes, 0)
    if any(test(kind) for test in text_types):
        lengths = pc.binary_length(array).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        return cast(np.ndarray, lengths)  # pyarrow has no annotations: to_numpy's array is Any to mypy
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_map(kind):
        return _per_list(array)
    if pa.types.is_fixed_size_list(kind):
        sizes = field_bytes(array.flatten())  # the values of the rows that are not null, in order
        parents = pc.list_parent_indices(array).to_numpy(zero_copy_only=False)
        return np.bincount(parents, weights=sizes, minlength=len(array)).astype(np.int64)
    if pa.types.is_struct(kind):
        total = np.zeros(len(array), dtype=np.int64)
        for child in array.flatten():  # the fields, with the struct's own nulls applied
            total += field_bytes(child)
        return total
    try:
        width = max(kind.bit_width // 8, 1)
    except ValueError:  # a type of no fixed width this reader does not know: its size cannot be told
        width = 0
    return np.where(array.is_valid().to_numpy(zero_copy_only=False), width, 0).astype(np.int64)


def _per_list(array: Any) -> np.ndarray:
    """A list's (or a map's) element sizes summed per row: from the offsets into all its values (a map's are its
    key-value structs), which hold for a slice of the array as for the whole."""
    sizes = field_bytes(array.values)
    prefix = np.concatenate(([0], np.cumsum(sizes, dtype=np.int64)))
    offsets = array.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
    totals = prefix[offsets[1:]] - prefix[offsets[:-1]]
    return np.where(array.is_valid().to_numpy(zero_copy_only=False), totals, 0)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
