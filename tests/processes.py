"""Processes as /proc shows them, for the tests that check what ocllm leaves running (Linux only)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple


class Process(NamedTuple):
    pid: int
    state: str  # R, S, Z (a zombie, which holds nothing), ...
    parent: int
    session: int
    command: str  # the command line, arguments joined by spaces


def processes() -> Iterator[Process]:
    """Every process /proc lists now (one that ends while it is read is left out)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        state, parent, _group, session = stat[stat.rindex(")") + 2 :].split()[:4]
        command = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
        yield Process(int(entry.name), state, int(parent), int(session), command)


def gone(pid: int) -> bool:
    """The process has ended: no entry in /proc, or a zombie waiting for whoever reaps it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rindex(")") + 2] in "ZX"


def cpu_seconds(pid: int) -> float:
    """The CPU time the process has used (user and system), 0 once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Watched(NamedTuple):
    left: list[int]  # the processes still alive when the watch ended
    cpu_s: dict[int, float]  # the CPU time each used while it was watched, as last seen alive


def watch_until_gone(pids: Iterable[int], seconds: float) -> Watched:
    """Watch the processes until every one is gone, or the seconds are over: a bound on waiting, never a measure.
    What each did meanwhile is told by CPU time, which load does not stretch: a process the kernel ended the moment
    its parent went used next to none; one that ran on to the end of its work (a C call, a check's CPU limit) used
    that work's worth, however long or short the wall-clock wait."""
    first = {pid: cpu_seconds(pid) for pid in pids}
    last = dict(first)
    deadline = time.monotonic() + seconds
    while True:
        alive = [pid for pid in first if not gone(pid)]
        for pid in alive:
            last[pid] = max(last[pid], cpu_seconds(pid))
        if not alive or time.monotonic() >= deadline:
            return Watched(alive, {pid: round(last[pid] - first[pid], 2) for pid in first})
        time.sleep(0.02)
