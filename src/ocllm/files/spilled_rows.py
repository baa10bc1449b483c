"""Rows of text gathered one at a time and read back in order, held on disk past a megabyte: a list whose length
is the input's (a rescore's changed decisions: one in five tasks of a file lm-eval scored with its own filters) no
longer grows the process (issue 45: memory flat in the input's length). The first few stay in memory for whoever
shows only those (the console's table)."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator

import msgspec

_IN_MEMORY_BYTES = 1 << 20
_DECODER = msgspec.json.Decoder(tuple[str, ...])


class SpilledRows:
    def __init__(self, kept: int) -> None:
        self._kept = kept
        self.head: list[tuple[str, ...]] = []  # the first `kept` rows
        self._count = 0
        self._file: tempfile.SpooledTemporaryFile[bytes] | None = None

    def append(self, row: tuple[str, ...]) -> None:
        if len(self.head) < self._kept:
            self.head.append(row)
        if self._file is None:
            self._file = tempfile.SpooledTemporaryFile(max_size=_IN_MEMORY_BYTES)  # noqa: SIM115 (closed in close())
        # JSON strings hold no raw newline: one row a line.
        self._file.write(msgspec.json.encode(row) + b"\n")
        self._count += 1

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[tuple[str, ...]]:
        """Every row, in the order appended (reading them all is the caller's choice: a report that lists them)."""
        if self._file is None:
            return
        self._file.seek(0)
        try:
            for line in iter(self._file.readline, b""):
                yield _DECODER.decode(line)
        finally:
            self._file.seek(0, 2)  # appending goes on at the end

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
