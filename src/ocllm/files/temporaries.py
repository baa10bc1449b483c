"""The temporary names of atomic writes, and the ones a killed ocllm left behind.

An output is written to `.NAME.PID.tmp` beside it and renamed into place (files/atomic.py). A process killed
outright (SIGKILL) between the two leaves that file; the next ocllm to write the output, or to start a run in
its folder, removes every such file of that output whose writer is gone. A file whose pid is alive is left
alone: another ocllm may be writing it now.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

__all__ = ["remove_stale_temporaries", "temporary_name"]


def temporary_name(path: Path) -> Path:
    """Where `path` is written before it is renamed into place: beside it, named after this process."""
    return path.with_name(f".{path.name}.{os.getpid()}.tmp")


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Remove the temporaries of `path` (`.NAME.PID.tmp` in its folder) whose process is gone; the ones removed."""
    pattern = re.compile(rf"\.{re.escape(path.name)}\.([0-9]+)\.tmp")
    removed = []
    try:
        entries = list(path.parent.iterdir())
    except OSError:
        return []  # no folder yet (nothing to clean), or one we cannot read (the write will say so)
    for entry in entries:
        found = pattern.fullmatch(entry.name)
        if found is None or _alive(int(found.group(1))) or not entry.is_file() or entry.is_symlink():
            continue
        with contextlib.suppress(OSError):
            entry.unlink()
            removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    """Whether process `pid` exists (ours or another user's). A pid reused since leaves the file there: the safe
    side. Pid 0 and larger than any pid never name a writer that is alive."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: not ours to judge
    except OverflowError:
        return False
    return True
