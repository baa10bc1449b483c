"""What the kernel says of a process, read off /proc (Linux): its CPU seconds, the time it spent runnable but waiting
for a CPU, its start time and state, and the processes below it. Every reader returns a neutral value for a process
that is gone or cannot be read: the callers poll processes that may end at any moment."""

from __future__ import annotations

import contextlib
import os
import signal
import time

__all__ = [
    "cpu_seconds", "descendants", "kill_left", "reap_zombie_children", "run_delay", "stat_fields", "with_start_times",
]  # fmt: skip

_TICK_S = 1.0 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01


def stat_fields(pid: int) -> list[bytes] | None:
    """/proc/<pid>/stat's fields after the command name (field 3, the state, first), or None. The command name is in
    parentheses and may hold spaces or ")": the fields are counted after its last closing parenthesis."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    try:
        return stat[stat.rindex(b")") + 2 :].split()
    except ValueError:
        return None


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds of process `pid`: user and system, with those of the children it waited for; None if unreadable."""
    fields = stat_fields(pid)
    if fields is None or len(fields) < 15:
        return None
    return sum(int(x) for x in fields[11:15]) * _TICK_S


def run_delay(pid: int) -> float:
    """Seconds process `pid` has spent runnable, waiting for a CPU (/proc/<pid>/schedstat's second field)."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it, through /proc/<pid>/task/<tid>/children."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        try:
            tasks = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                with open(f"/proc/{current}/task/{tid}/children") as f:
                    queue.extend(int(child) for child in f.read().split())
            except OSError:
                continue
    return found


def with_start_times(pids: list[int]) -> list[tuple[int, bytes]]:
    """Each process with its start time (stat's field 22), which tells it from a later process given its number."""
    return [(pid, fields[19]) for pid in pids if (fields := stat_fields(pid)) is not None and len(fields) > 19]


def kill_left(processes: list[tuple[int, bytes]]) -> int:
    """Processes still alive a moment after what held them was ended (there should be none: the kernel ends a
    process table with its first process); each is killed and counted."""
    if not processes:
        return 0
    time.sleep(0.02)
    left = 0
    for pid, started in processes:
        fields = stat_fields(pid)
        if fields is None or fields[19] != started or fields[0] in (b"Z", b"X"):
            continue
        left += 1
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return left


def reap_zombie_children() -> int:
    """Reap every child of this process that has ended and not been waited for. A sandbox ended by killing it leaves
    its processes to this process (a child subreaper) as zombies: nothing else would wait for them. Called once every
    process this one started itself has been waited for, so that no one else's exit status is taken."""
    reaped = 0
    for child in descendants(os.getpid())[1:]:
        fields = stat_fields(child)
        if fields is None or fields[0] != b"Z" or int(fields[1]) != os.getpid():
            continue
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(child, os.WNOHANG)[0] == child:
                reaped += 1
    return reaped
