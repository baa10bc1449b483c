"""The sizes of the pages of a Parquet column chunk, read from their headers before the chunk is read.

pyarrow inflates a page whole before any of its values can be measured, and the file's footer says only a
chunk's total: one 800 MB question among 1,000 short ones is a chunk of 800 MB for 1,000 rows, well under the
rows' share of the bound on a value, and reading it cost 2.5 GB before the value could be refused. Each page
starts with a header (Thrift's compact protocol) that says what the page inflates to; the headers are read
here, a few bytes each, so that a page past the bound is refused before pyarrow inflates it.

Only the three sizes at the head of a PageHeader are used (1: type, 2: uncompressed size, 3: compressed
size); everything else in a header is passed over by its type, without being understood.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

_STOP, _TRUE, _FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(13)
_PIECE = 4096  # bytes of a header read at a time; most headers are a few dozen bytes
MAX_HEADER = 16 << 20  # a header past this (its statistics are values of the page) is no header a writer writes


class NotPages(Exception):
    """The bytes where the footer says a chunk begins are not page headers (a damaged or encrypted file)."""


class _Header:
    """Compact-protocol reading of one header from a file, reading more of the file as it is needed."""

    def __init__(self, fh: BinaryIO, start: int) -> None:
        self._fh, self._start = fh, start
        fh.seek(start)
        self._data = b""
        self.pos = 0

    def byte(self) -> int:
        if self.pos >= len(self._data):
            if len(self._data) >= MAX_HEADER:
                raise NotPages("a page header longer than 16 MB")
            more = self._fh.read(_PIECE)
            if not more:
                raise NotPages("the file ends inside a page header")
            self._data += more
        value = self._data[self.pos]
        self.pos += 1
        return value

    def skip(self, count: int) -> None:
        for _ in range(count):  # headers are short; a byte at a time keeps one way of reading
            self.byte()

    def varint(self) -> int:
        shift = result = 0
        while True:
            byte = self.byte()
            result |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return result
            shift += 7
            if shift > 70:
                raise NotPages("a number in a page header that does not end")

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def skip_value(self, kind: int, depth: int = 0) -> None:
        if depth > 64:
            raise NotPages("a page header nested too deeply")
        if kind in (_TRUE, _FALSE):
            return
        if kind == _BYTE:
            self.skip(1)
        elif kind in (_I16, _I32, _I64):
            self.varint()
        elif kind == _DOUBLE:
            self.skip(8)
        elif kind == _BINARY:
            self.skip(self.varint())
        elif kind in (_LIST, _SET):
            head = self.byte()
            size, element = head >> 4, head & 0x0F
            if size == 15:
                size = self.varint()
            for _ in range(size):
                if element in (_TRUE, _FALSE):
                    self.skip(1)  # in a list, a boolean is a byte of its own
                else:
                    self.skip_value(element, depth + 1)
        elif kind == _MAP:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.skip_value(types >> 4, depth + 1)
                    self.skip_value(types & 0x0F, depth + 1)
        elif kind == _STRUCT:
            self.fields(depth + 1, wanted=())
        else:
            raise NotPages(f"type {kind} in a page header")

    def fields(self, depth: int, wanted: tuple[int, ...]) -> dict[int, int]:
        """A struct's fields up to its end; the integer fields whose ids are `wanted`, by id."""
        found: dict[int, int] = {}
        field = 0
        while True:
            head = self.byte()
            kind = head & 0x0F
            if kind == _STOP:
                return found
            delta = head >> 4
            field = field + delta if delta else self.zigzag()
            if field in wanted and kind in (_I16, _I32, _I64):
                found[field] = self.zigzag()
            else:
                self.skip_value(kind, depth)


def page_sizes(fh: BinaryIO, start: int, length: int) -> Iterator[tuple[int, int]]:
    """(uncompressed, compressed) bytes of each page of the chunk of `length` bytes at `start`."""
    position, end = start, start + length
    while position < end:
        header = _Header(fh, position)
        sizes = header.fields(0, wanted=(2, 3))
        if 2 not in sizes or 3 not in sizes or sizes[2] < 0 or sizes[3] < 0:
            raise NotPages("a page header without its sizes")
        yield sizes[2], sizes[3]
        position += header.pos + sizes[3]
