"""Files on disk: atomic writes, so that a crash never leaves a half-written output behind."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from ocllm.errors import OcllmError


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary name beside `path`, flush it to disk, then rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def refuse_overwrite(output: Path, *inputs: Path) -> None:
    """An output must never replace one of the files it was computed from."""
    for source in inputs:
        if output.exists() and source.exists() and output.resolve() == source.resolve():
            raise OcllmError(f"{output}: refusing to write the output over its own input")
