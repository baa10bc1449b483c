"""Read a zip archive's members, zstd-compressed ones included (zip method 93, as inspect_ai writes them), each
bounded: a member is read as a stream that refuses, in one line naming the archive, the member and the
bound, as soon as more than `limit` bytes have come out of it. The size the zip declares is never trusted
(a zip bomb declares what it likes); a member that declares more than the bound is refused before a byte is
inflated.

Python's zipfile decompresses zstd itself from 3.14. Before that, the member's compressed bytes are read
from where the zip's directory says they are and decompressed with the `zstandard` package, a piece at a
time; the CRC in the directory is checked as zipfile would check it, once the member has been read through."""

from __future__ import annotations

import contextlib
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Protocol

from ocllm.errors import InputError

ZSTD = 93
MB = 1 << 20
_ZIPFILE_READS_ZSTD = hasattr(zipfile, "ZIP_ZSTANDARD")
_LOCAL_HEADER = struct.Struct("<4s5H3I2H")  # signature ... file name length, extra field length
_LOCAL_SIGNATURE = b"PK\x03\x04"
_PIECE = 1 << 20  # bytes inflated at a time when a member is read whole
_FAILURES = (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError, zlib.error)


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _Pieces(Protocol):
    """What `_Bounded` reads from: zipfile's member, or `_ZstdMember` (read a piece of a size given each time)."""

    def read(self, size: int, /) -> bytes: ...


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, limit: int = 128 * MB) -> bytes:
    """The member's bytes, decompressed, at most `limit` of them; one line naming the archive and the member
    when they cannot be read, or would be more."""
    pieces: list[bytes] = []
    with open_member(archive, info, path, limit) as stream:
        while piece := stream.read(_PIECE):
            pieces.append(piece)
    return b"".join(pieces)


@contextlib.contextmanager
def open_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, limit: int) -> Iterator[Readable]:
    """The member as a stream of its decompressed bytes (`read(size)`), refused once more than `limit` have
    come out; its CRC checked when it has been read to its end."""
    if info.file_size > limit:
        raise InputError(_too_large(path, info, limit))
    if info.flag_bits & 0x1:
        raise InputError(f"{path}: {info.filename} is encrypted")
    with contextlib.ExitStack() as stack:
        try:
            if info.compress_type == ZSTD and not _ZIPFILE_READS_ZSTD:
                raw: _Pieces = _ZstdMember(stack.enter_context(open(path, "rb")), info, path)
            else:
                raw = stack.enter_context(archive.open(info))
        except _FAILURES as exc:
            raise InputError(f"{path}: cannot read {info.filename} ({exc})") from None
        yield _Bounded(raw, info, path, limit)


def _too_large(path: Path, info: zipfile.ZipInfo, limit: int) -> str:
    return (
        f"{path}: {info.filename} inflates to more than {limit // MB} MB, the most this member is read to "
        "(a zip bomb, or not the log it claims to be)"
    )


class _Bounded:
    """A member's decompressed bytes, counted as they come: past the bound, an error, never more memory."""

    def __init__(self, raw: _Pieces, info: zipfile.ZipInfo, path: Path, limit: int) -> None:
        self._raw, self._info, self._path, self._limit = raw, info, path, limit
        self._count = 0

    def read(self, size: int = -1) -> bytes:
        if size == 0:
            return b""  # ijson's look at whether the stream gives bytes or text
        # Never more than one byte past the bound in one read, whatever was asked: enough to know it is passed.
        room = self._limit + 1 - self._count
        try:
            data = self._raw.read(room if size < 0 else min(size, room))
        except InputError:
            raise
        except _FAILURES as exc:
            raise InputError(f"{self._path}: cannot read {self._info.filename} ({exc})") from None
        self._count += len(data)
        if self._count > self._limit:
            raise InputError(_too_large(self._path, self._info, self._limit))
        if self._count > self._info.file_size:  # zipfile stops there itself; the zstd reader here does not
            raise InputError(
                f"{self._path}: {self._info.filename} inflates to more than the {self._info.file_size} bytes the zip "
                f"declares for it (a zip bomb, or a damaged zip; a member is read to {self._limit // MB} MB at most)"
            )
        return data


class _ZstdMember:
    """A zstd member read where the zip's directory says it is, inflated a piece at a time (its frames all:
    inspect_ai starts a new one every so many megabytes), its CRC checked at its end."""

    def __init__(self, fh: BinaryIO, info: zipfile.ZipInfo, path: Path) -> None:
        import zstandard  # only needed, and only installed, where zipfile cannot do this itself

        self._info, self._path = info, path
        fh.seek(info.header_offset)
        header = fh.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
            raise InputError(f"{path}: {info.filename}: damaged zip (no local header where the directory says)")
        name_length, extra_length = _LOCAL_HEADER.unpack(header)[-2:]
        fh.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
        self._compressed = _Slice(fh, info.compress_size, f"{path}: {info.filename}")
        # zstandard reads from any object with a read(size) (its documentation), its stub names IO[bytes] only.
        self._reader = zstandard.ZstdDecompressor().stream_reader(
            self._compressed,  # type: ignore[arg-type]
            read_across_frames=True,
        )
        self._error = zstandard.ZstdError
        self._crc = 0
        self._ended = False

    def read(self, size: int) -> bytes:
        if self._ended:
            return b""
        try:
            data = self._reader.read(size)
        except self._error as exc:
            raise InputError(f"{self._path}: {self._info.filename}: not valid zstd data ({exc})") from None
        self._crc = zlib.crc32(data, self._crc)
        if not data:
            self._ended = True
            if not self._compressed.done():
                raise InputError(f"{self._path}: {self._info.filename}: the archive ends inside this member")
            if self._crc != self._info.CRC:
                raise InputError(f"{self._path}: {self._info.filename}: damaged (CRC mismatch)")
        return data


class _Slice:
    """The `size` bytes of a file from where it stands: a member's compressed bytes, read a piece at a time."""

    def __init__(self, fh: BinaryIO, size: int, where: str) -> None:
        self._fh, self._left, self._where = fh, size, where
        self._short = False

    def read(self, size: int = -1) -> bytes:
        want = self._left if size < 0 else min(size, self._left)
        data = self._fh.read(want) if want else b""
        self._left -= len(data)
        self._short = self._short or len(data) < want
        return data

    def done(self) -> bool:
        """Every compressed byte the directory names was there."""
        return not self._left and not self._short
