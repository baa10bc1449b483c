"""Read a zip archive's members, zstd-compressed ones included (zip method 93, as inspect_ai writes them).

Python's zipfile decompresses zstd itself from 3.14. Before that, the member's compressed bytes are read
from where the zip's directory says they are and decompressed with the `zstandard` package; the CRC in the
directory is checked as zipfile would check it."""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

from ocllm.errors import InputError

ZSTD = 93
_ZIPFILE_READS_ZSTD = hasattr(zipfile, "ZIP_ZSTANDARD")
_LOCAL_HEADER = struct.Struct("<4s5H3I2H")  # signature ... file name length, extra field length
_LOCAL_SIGNATURE = b"PK\x03\x04"


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> bytes:
    """The member's bytes, decompressed; one line naming the archive and the member when they cannot be."""
    try:
        if info.compress_type == ZSTD and not _ZIPFILE_READS_ZSTD:
            return _zstd_member(info, path)
        return archive.read(info)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, RuntimeError, zlib.error) as exc:
        raise InputError(f"{path}: cannot read {info.filename} ({exc})") from None


def _zstd_member(info: zipfile.ZipInfo, path: Path) -> bytes:
    import zstandard  # only needed, and only installed, where zipfile cannot do this itself

    if info.flag_bits & 0x1:
        raise InputError(f"{path}: {info.filename} is encrypted")
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        header = fh.read(_LOCAL_HEADER.size)
        if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
            raise InputError(f"{path}: {info.filename}: damaged zip (no local header where the directory says)")
        name_length, extra_length = _LOCAL_HEADER.unpack(header)[-2:]
        fh.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
        compressed = fh.read(info.compress_size)
    if len(compressed) != info.compress_size:
        raise InputError(f"{path}: {info.filename}: the archive ends inside this member")
    try:
        # inspect_ai starts a new frame every so many megabytes: read them all.
        data = zstandard.ZstdDecompressor().decompressobj(read_across_frames=True).decompress(compressed)
    except zstandard.ZstdError as exc:
        raise InputError(f"{path}: {info.filename}: not valid zstd data ({exc})") from None
    if zlib.crc32(data) != info.CRC:
        raise InputError(f"{path}: {info.filename}: damaged (CRC mismatch)")
    return data
