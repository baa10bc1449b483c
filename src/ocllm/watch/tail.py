"""A growing samples.jsonl read a piece at a time: only what was appended since the last look, never disturbing the
writer. The file is opened read-only for each look; the byte offset read so far is remembered, and a torn last line
(no newline yet: the writer is between two writes) is left for the next look, never repaired. A file that shrank or
was replaced (`--retry-errors` rewrites it whole, by a rename) is read again from its start."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, NamedTuple

import msgspec

from ocllm.models import Sample

# What one look reads at most at a time: a first look at a long file is read in pieces, not held whole.
PIECE = 4 << 20

_SAMPLE = msgspec.json.Decoder(Sample)


class Appended(NamedTuple):
    """What a look found: the new samples, in the file's order; whether the file was read again from its start (the
    caller forgets what it held); and the complete lines that were no sample."""

    samples: list[Sample]
    restarted: bool
    unreadable: int


class SamplesTail:
    """One samples.jsonl followed as it grows."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0  # bytes read and used: every whole line before it
        self._identity: tuple[int, int] | None = None  # (device, inode) of the file read so far

    def read(self) -> Appended:
        """The samples appended since the last look (none while the file does not exist)."""
        try:
            fh = open(self.path, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            return Appended([], False, 0)
        with fh:
            stat = os.fstat(fh.fileno())
            identity = (stat.st_dev, stat.st_ino)
            restarted = self._identity is not None and (identity != self._identity or stat.st_size < self.offset)
            if restarted:
                self.offset = 0
            self._identity = identity
            samples: list[Sample] = []
            unreadable = 0
            fh.seek(self.offset)
            for line in _whole_lines(fh):
                self.offset += len(line)
                if not line.strip():
                    continue
                try:
                    samples.append(_SAMPLE.decode(line))
                except (msgspec.DecodeError, msgspec.ValidationError):
                    unreadable += 1
        return Appended(samples, restarted, unreadable)


def _whole_lines(fh: BinaryIO) -> Iterator[bytes]:
    """The lines ending in a newline from the file's position on, read a piece at a time; what follows the last
    newline (a line being written) is not given."""
    rest = b""
    while True:
        piece = fh.read(PIECE)
        if not piece:
            return
        lines = (rest + piece).split(b"\n")
        rest = lines.pop()  # after the last newline: b"" or a line not whole yet
        for line in lines:
            yield line + b"\n"
