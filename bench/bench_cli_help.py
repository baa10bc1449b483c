"""How long `ocllm --help` takes, start-up included (issue 32: under 0.15 s on 2 cores), or a command's
`ocllm COMMAND --help` (issue 45: `ocllm run --help` under 0.1 s of CPU).

    PYTHONPATH=src .venv/bin/python bench/bench_cli_help.py [--command WORDS] [--runs N] [--budget SECONDS]
        [--cpu-budget SECONDS] [--importtime]

Runs `python -m ocllm --help` N times (default 21) as a user does, a new interpreter each time, with the same
Python that runs this script, and prints the median wall time with the spread. `--command run` times
`python -m ocllm run --help` instead (a subcommand's words separated by spaces: `--command "matrix-report"`).
Exits 1 when the median is above `--budget` (seconds), or the median CPU time above `--cpu-budget`, so that a
check can guard it; the median rather than the best, as a user sees it, and rather than the mean, which one run
stalled by a loaded machine would move. `--importtime` prints the ten slowest imports of one more run
(`python -X importtime`), to say what to load later when the budget is passed. Each run's CPU time (user +
system) is printed beside it: a loaded machine moves it less than the wall time. A bare `python -c pass` is timed
the same way, so that the figure can be read against the interpreter's own start.
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


def slowest_imports(words: list[str], count: int) -> list[tuple[int, str]]:
    """The `count` imports with the largest cumulative time (µs), from one `-X importtime` run of
    `ocllm WORDS --help`."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "ocllm", *words, "--help"],
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
    parser.add_argument(
        "--command", default="", metavar="WORDS", help="time `ocllm WORDS --help` (e.g. run); default: `ocllm --help`"
    )
    parser.add_argument("--budget", type=float, help="exit 1 when the median wall time is above this many seconds")
    parser.add_argument("--cpu-budget", type=float, help="exit 1 when the median CPU time is above this many seconds")
    parser.add_argument("--importtime", action="store_true", help="also print the ten slowest imports")
    args = parser.parse_args()
    words = args.command.split()
    shown = " ".join(["ocllm", *words, "--help"])
    print(f"machine: {machine()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    bare, bare_cpu = timed([sys.executable, "-c", "pass"], args.runs)
    helped, helped_cpu = timed([sys.executable, "-m", "ocllm", *words, "--help"], args.runs)
    width = max(len(shown), len("python -c pass")) + 1
    print(
        f"{'python -c pass:':{width}} median {statistics.median(bare):.3f} s wall, "
        f"{statistics.median(bare_cpu):.3f} s CPU"
    )
    print(
        f"{shown + ':':{width}} median {statistics.median(helped):.3f} s wall (min {min(helped):.3f}, max "
        f"{max(helped):.3f}), {statistics.median(helped_cpu):.3f} s CPU; {args.runs} runs"
    )
    if args.importtime:
        for micros, name in slowest_imports(words, 10):
            print(f"  {micros / 1000:7.1f} ms  {name}")
    over = []
    median, median_cpu = statistics.median(helped), statistics.median(helped_cpu)
    if args.budget is not None and median > args.budget:
        over.append(f"over budget: {median:.3f} s wall > {args.budget:.3f} s")
    if args.cpu_budget is not None and median_cpu > args.cpu_budget:
        over.append(f"over budget: {median_cpu:.3f} s CPU > {args.cpu_budget:.3f} s")
    for line in over:
        print(line, file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
