"""How long `ocllm --help` takes, start-up included (issue 32: under 0.15 s on 2 cores).

    PYTHONPATH=src .venv/bin/python bench/bench_cli_help.py [--runs N] [--budget SECONDS] [--importtime]

Runs `python -m ocllm --help` N times (default 21) as a user does, a new interpreter each time, with the same
Python that runs this script, and prints the median wall time with the spread. Exits 1 when the median is above
`--budget` (seconds), so that a check can guard it; the median rather than the best, as a user sees it, and
rather than the mean, which one run stalled by a loaded machine would move. `--importtime` prints the ten
slowest imports of one more run (`python -X importtime`), to say what to load later when the budget is passed.
Each run's CPU time (user + system) is printed beside it. A bare `python -c pass` is timed the same way, so that
the figure can be read against the interpreter's own start.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

from loopback import machine

# As installed: bytecode compiled once and read after. (PYTHONDONTWRITEBYTECODE, set in some shells and containers,
# would compile every module of ocllm on every start: some 30 ms here that no installed copy pays.)
CHILD_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Each run's wall time, and its CPU time (user + system of the child), which a loaded machine moves less: on a
    busy one the wall time is mostly waiting for a core."""
    walls, cpus = [], []
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=CHILD_ENV)  # writes the bytecode; not timed
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=CHILD_ENV)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return walls, cpus


def slowest_imports(count: int) -> list[tuple[int, str]]:
    """The `count` imports with the largest cumulative time (µs), from one `-X importtime` run."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ocllm", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env=CHILD_ENV,
    )
    found = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            found.append((int(parts[1]), parts[2].rstrip()))
    return sorted(found, reverse=True)[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--budget", type=float, help="exit 1 when the median is above this many seconds")
    parser.add_argument("--importtime", action="store_true", help="also print the ten slowest imports")
    args = parser.parse_args()
    print(f"machine: {machine()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    bare, bare_cpu = timed([sys.executable, "-c", "pass"], args.runs)
    helped, helped_cpu = timed([sys.executable, "-m", "ocllm", "--help"], args.runs)
    print(f"python -c pass: median {statistics.median(bare):.3f} s wall, {statistics.median(bare_cpu):.3f} s CPU")
    print(
        f"ocllm --help:   median {statistics.median(helped):.3f} s wall (min {min(helped):.3f}, max "
        f"{max(helped):.3f}), {statistics.median(helped_cpu):.3f} s CPU; {args.runs} runs"
    )
    if args.importtime:
        for micros, name in slowest_imports(10):
            print(f"  {micros / 1000:7.1f} ms  {name}")
    median = statistics.median(helped)
    if args.budget is not None and median > args.budget:
        print(f"over budget: {median:.3f} s > {args.budget:.3f} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
