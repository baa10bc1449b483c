"""Zip bombs shaped as inspect_ai logs, for the hostile-input tests (issue 19, item 3): a .eval of a megabyte
or two whose header.json, or one sample, inflates to a gigabyte. Written by hand, a piece at a time, so that a
member can be zstd-compressed (method 93, as inspect_ai writes them), which Python's zipfile writes only from
3.14, and so that making the bomb never holds what it inflates to."""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import zstandard

from ocllm.formats.zip_members import read_member

DEFLATE, ZSTD = 8, 93
INSPECT_FIXTURE = next((Path(__file__).parent / "fixtures" / "inspect" / "0.3.285").glob("*.eval"))


def json_of_size(prefix: bytes, size: int, suffix: bytes) -> Iterator[bytes]:
    """A JSON member of `size` bytes, mostly one long string of zeros, made a megabyte at a time."""
    yield prefix
    piece = b"0" * (1 << 20)
    left = size - len(prefix) - len(suffix)
    while left > 0:
        yield piece[:left]
        left -= len(piece)
    yield suffix


def write_zip(path: Path, members: list[tuple[str, int, Iterable[bytes]]], lies: dict[str, int] | None = None) -> Path:
    """A zip of (name, method, content pieces), each member compressed as its content is made; the sizes and
    CRCs in its headers are the true ones, but for the members `lies` gives another size to declare."""
    central = b""
    with path.open("wb") as fh:
        for name, method, chunks in members:
            compressor: Any = (
                zlib.compressobj(9, zlib.DEFLATED, -15)
                if method == DEFLATE
                else zstandard.ZstdCompressor().compressobj()
            )
            crc, size, packed = 0, 0, bytearray()
            for chunk in chunks:
                crc, size = zlib.crc32(chunk, crc), size + len(chunk)
                packed += compressor.compress(chunk)
            packed += compressor.flush()
            size = (lies or {}).get(name, size)
            offset, encoded = fh.tell(), name.encode()
            fh.write(struct.pack("<4s5H3I2H", b"PK\x03\x04", 63, 0, method, 0, 33, crc, len(packed), size,
                                 len(encoded), 0) + encoded + packed)  # fmt: skip
            central += struct.pack("<4s6H3I5H2I", b"PK\x01\x02", 63, 63, 0, method, 0, 33, crc, len(packed), size,
                                   len(encoded), 0, 0, 0, 0, 0, offset) + encoded  # fmt: skip
        start, count = fh.tell(), len(members)
        fh.write(central + struct.pack("<4s4H2IH", b"PK\x05\x06", 0, 0, count, count, len(central), start, 0))
    return path


def fixture_member(name: str) -> bytes:
    """A member of the inspect_ai log in tests/fixtures, as inspect_ai wrote it."""
    with zipfile.ZipFile(INSPECT_FIXTURE) as archive:
        return read_member(archive, archive.getinfo(name), INSPECT_FIXTURE)


def bomb_log(path: Path, member: str, method: int, size: int, declared: int | None = None) -> Path:
    """A log of the fixture's header and first sample, in which `member` (header.json, or a second sample)
    inflates to `size` bytes, and says so, unless `declared` gives the size its headers claim instead."""
    header = fixture_member("header.json")
    sample = fixture_member("samples/q1_epoch_1.json")
    if member == "header.json":
        head: Iterable[bytes] = json_of_size(b'{"eval": {"task": "bomb", "pad": "', size, b'"}}')
        samples = [("samples/q1_epoch_1.json", method, [sample])]
    else:
        head = [header]
        samples = [
            ("samples/q1_epoch_1.json", method, [sample]),
            (member, method, json_of_size(b'{"id": "q2", "epoch": 1, "input": "', size, b'"}')),
        ]
    return write_zip(path, [("header.json", method, head), *samples], {member: declared} if declared else None)
