"""The machine's memory budget for sandboxes: what all the boxes running at once may hold, memory and files together,
bounded by a share of the machine's memory, across every ocllm process of the machine run by one user (docs/lanes.md,
"Code sandbox").

A box may hold its address-space limit (`memory_bytes`) and its tmpfs (`file_bytes`); W decision workers, each
running a group of boxes, could otherwise hold W times that, and two ocllm runs twice as much. The budget is
`SHARE` of MemTotal, cut into units of `UNIT_BYTES`, each unit a lock file: a group takes the units it needs (its
boxes' memory and files, rounded up) with non-blocking `flock`s before anything starts, all or none, and waits for
them when the machine's budget is spent. The kernel drops the locks of a process that ends, however it ends, so a
killed ocllm never leaves units taken. Waiting changes when a program runs, never what it is given: outcomes do not
depend on it.
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["SHARE", "UNIT_BYTES", "Budget", "budget", "machine_memory_bytes"]

SHARE = 0.5
UNIT_BYTES = 64 * 1024**2
_WAIT_S = 0.01
_FALLBACK_BYTES = 8 * 1024**3  # where /proc/meminfo cannot be read


def machine_memory_bytes() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return _FALLBACK_BYTES


class Budget:
    """The units of one machine's budget, as lock files in a folder of their own."""

    def __init__(self, total_bytes: int, folder: Path) -> None:
        self.total_bytes = total_bytes
        self.units = max(1, total_bytes // UNIT_BYTES)
        self.folder = folder

    def units_for(self, nbytes: int) -> int:
        return math.ceil(nbytes / UNIT_BYTES)

    def problem(self, nbytes: int) -> str | None:
        """Why a group holding `nbytes` can never run here, or None."""
        if self.units_for(nbytes) <= self.units:
            return None
        return (
            f"the sandboxes of one program may hold {_gib(nbytes)} (memory and files), more than the "
            f"{_gib(self.total_bytes)} all sandboxes of this machine may hold ({SHARE:.0%} of its memory): lower the "
            "lane's code_limits (memory_bytes, file_bytes)"
        )

    @contextlib.contextmanager
    def taken(self, nbytes: int) -> Iterator[float]:
        """Hold the units `nbytes` needs while the block runs; yields the seconds spent waiting for them."""
        wanted = min(self.units_for(nbytes), self.units)
        started = time.monotonic()
        held = self._take(wanted)
        while held is None:
            time.sleep(_WAIT_S)
            held = self._take(wanted)
        try:
            yield time.monotonic() - started
        finally:
            for fd in held:
                os.close(fd)  # closing the descriptor drops its lock

    def _take(self, wanted: int) -> list[int] | None:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        held: list[int] = []
        for unit in range(self.units):
            if len(held) == wanted:
                break
            fd = os.open(self.folder / f"unit-{unit}", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            held.append(fd)
        if len(held) == wanted:
            return held
        for fd in held:
            os.close(fd)
        return None


def _gib(nbytes: int) -> str:
    return f"{nbytes / 1024**3:.1f} GiB"


_budget: Budget | None = None


def budget() -> Budget:
    """This machine's budget (OCLLM_SANDBOX_BUDGET_DIR names the folder of its lock files, for tests)."""
    global _budget
    if _budget is None:
        folder = os.environ.get("OCLLM_SANDBOX_BUDGET_DIR") or str(
            Path(tempfile.gettempdir()) / f"ocllm-sandbox-budget-{os.geteuid()}"
        )
        _budget = Budget(int(SHARE * machine_memory_bytes()), Path(folder))
    return _budget
