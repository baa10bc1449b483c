"""How long `make demo` takes: `python -m ocllm.demo` run into a temporary folder, its wall time and the CPU time of
its whole process tree (the decision workers, the guarded children, the report process, the managed server).

Run: `.venv/bin/python bench/bench_demo.py [--runs N] [--warmup]` (N timed runs, default 1; `--warmup` runs the demo
once untimed first, so that the figures are those of a warm start: bytecode compiled, files in the page cache).
Prints one line per run and the machine (CPUs, load average, Python); docs/performance.md records the result.

The CPU time of every process of the demo is counted, not only of those their parents wait for: this process is made
a child subreaper (Linux), so a process whose parent has gone (a guarded child killed with its parent) comes back to
it, is reaped here and counted. What is still alive after the demo ended is said, and killed: the demo promises that
nothing it starts outlives it.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import platform
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

_PR_SET_CHILD_SUBREAPER = 36
# How long a process left behind by the demo may take to go by itself (a guarded child killed by PR_SET_PDEATHSIG
# when its parent goes is gone in milliseconds).
_GRACE_S = 5.0


class Measured(NamedTuple):
    wall_s: float
    cpu_s: float  # user + system, of every process of the demo's tree
    exit_code: int
    left_running: list[str]  # what was still alive after the demo ended (then killed)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _live_children() -> list[int]:
    pids: list[int] = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        with open(task / "children") as fh:
            pids += [int(pid) for pid in fh.read().split()]
    return pids


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:120]
    except OSError:
        return "?"


def _reap(deadline: float) -> list[str]:
    """Reap every process re-parented here; past `deadline`, say and kill those still alive."""
    left: list[str] = []
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return left  # none left
        if pid:
            continue
        if time.monotonic() < deadline:
            time.sleep(0.02)
            continue
        for alive in _live_children():
            left.append(f"{alive} {_command_line(alive)}")
            os.kill(alive, signal.SIGKILL)
        deadline = float("inf")  # killed: now only reaped


def run_demo(out: Path, log: Path) -> Measured:
    cpu_before = _children_cpu()
    start = time.perf_counter()
    with log.open("wb") as sink:
        code = subprocess.call([sys.executable, "-m", "ocllm.demo", str(out)], stdout=sink, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - start
    left = _reap(time.monotonic() + _GRACE_S)
    return Measured(wall, _children_cpu() - cpu_before, code, left)


def machine() -> str:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{cpus} CPUs usable, load average {load}; Python {platform.python_version()} on {platform.platform()}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="timed runs (default 1)")
    parser.add_argument("--warmup", action="store_true", help="run the demo once, untimed, first")
    args = parser.parse_args()
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    failed = False
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as tmp:
        log = Path(tmp) / "demo.log"
        if args.warmup:
            run_demo(Path(tmp) / "warmup", log)
        for i in range(args.runs):
            print(f"before run {i + 1}: {machine()}")
            measured = run_demo(Path(tmp) / f"run{i}", log)
            print(
                f"run {i + 1}: wall {measured.wall_s:.1f} s, CPU {measured.cpu_s:.1f} s (its whole process tree), "
                f"exit code {measured.exit_code}, left running: {len(measured.left_running)}"
            )
            for line in measured.left_running:
                print(f"  left running (killed): {line}")
            if measured.exit_code != 0:
                print(log.read_text(errors="replace")[-3000:])
            failed |= measured.exit_code != 0 or bool(measured.left_running)
    print(f"after: {machine()}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
