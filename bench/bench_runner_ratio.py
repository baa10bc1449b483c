"""`ocllm run` as a whole process against a zero-cost server, beside a bare aiohttp loop (issue 11).

    PYTHONPATH=src .venv/bin/python bench/bench_runner_ratio.py [N_TASKS] [--concurrency C] [--repeats R]
                                                                 [--profile FILE.prof]

Defaults: 4,000 tasks, concurrency 64, best of 3. The server (bench/loopback.py) runs in its own process
and answers every chat request with one fixed, pre-encoded completion: content "FINAL: B" and ~500
characters of reasoning quoting ten format examples. Against it, each in its own process:

  (a) bare: a plain aiohttp loop posting the request bodies `ocllm run` would send
      (`ocllm.prompting.request_body`) at the same concurrency and reading the JSON; timed around the loop;
  (b) run: `python -m ocllm run --base-url ... --concurrency C` as a subprocess, timed from spawn to exit,
      so interpreter start-up, suite validation, the /models probe, samples.jsonl, live scoring and the
      final scoring and metrics.json all count.

Prints tasks/s for both (best of R, the two alternating) and the ratio run/bare; the issue's goal is 0.8.
With --profile, one more `ocllm run` under cProfile writes FILE.prof and its top 15 functions are printed,
by cumulative and by own time. The child `ocllm run` uses this checkout's src/ (PYTHONPATH).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from bench_runner import bare_loop, write_suite
from loopback import answer_document, answers, machine, start_loopback

from ocllm.run.lanes import Lane
from ocllm.run.prompting import request_body
from ocllm.suites import load_suite

MODEL = "loopback-model"
# The ocllm the child `ocllm run` runs: this checkout's, or another's (OCLLM_BENCH_SRC: a "before" figure).
SRC = Path(os.environ.get("OCLLM_BENCH_SRC") or Path(__file__).resolve().parents[1] / "src")
LOOP_PLUMBING = ("<built-in method builtins.exec>", "<method 'run' of '_contextvars", "events.py:", "base_events.py:")


def child_env() -> dict[str, str]:
    """The environment of every child: this checkout's src/ first on the import path, and bytecode written (as an
    installed copy has it: with PYTHONDONTWRITEBYTECODE every start compiles ocllm's modules again)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


class Child(NamedTuple):
    """One child process's run: its wall time, and the CPU time (user + system) of its whole process tree (every
    process it started and waited for: the decision workers, the forkserver)."""

    wall: float
    cpu: float
    stdout: str


def _become_subreaper() -> None:
    """Descendants orphaned when a child exits (the decision workers' forkserver outlives `ocllm run` by a moment)
    are re-parented to this process, so that waiting for them counts their CPU in RUSAGE_CHILDREN."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER) failed")


def _reap_orphans(keep: set[int]) -> None:
    """Wait for every child of this process but those in `keep` (the loopback server): the orphans of the child
    that just exited, each of which ends once its parent has gone."""
    me = str(os.getpid())
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(stat.parent.name)
        if fields[1] == me and pid not in keep:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


_PR_SET_CHILD_SUBREAPER = 36
KEEP: set[int] = set()  # the children that outlive each measured one (the loopback server)


def child(args: list[str]) -> Child:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=child_env())
    wall = time.perf_counter() - start
    _reap_orphans(KEEP)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{args[:3]} exited {proc.returncode}: {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Child(wall, cpu, proc.stdout)


def bare_run(base: str, suite: Path, concurrency: int) -> tuple[float, Child]:
    """The bare loop's time (around the loop alone), and its process's whole run (this script with --bare)."""
    ran = child([__file__, "--bare", base, str(suite), "--concurrency", str(concurrency)])
    return float(ran.stdout.split()[-1]), ran


def run_command(base: str, suite: Path, out: Path, concurrency: int) -> list[str]:
    return [
        "-m", "ocllm", "run", "--base-url", base, "--model", MODEL, "--suite", str(suite), "--out", str(out),
        "--concurrency", str(concurrency),
    ]  # fmt: skip


def run_seconds(args: list[str]) -> float:
    """Wall time of one `ocllm run` process, from spawn to exit."""
    return child(args).wall


def print_profile(path: Path, top: int = 15) -> None:
    """The top functions by cumulative and by own time. By cumulative time, what only wraps the run is left
    out: functions called at most 3 times (module execution, the click command, `run_lane`, `asyncio.run`)
    and the event loop's plumbing (every coroutine step runs inside it)."""
    stats = pstats.Stats(str(path))
    rows = [
        (nc, tt, ct, f"{Path(file).name}:{line}({func})" if line else func)
        for (file, line, func), (_, nc, tt, ct, _) in stats.stats.items()  # type: ignore[attr-defined]
    ]
    total = max(ct for _, _, ct, _ in rows)
    inner = [row for row in rows if row[0] > 3 and not row[3].startswith(LOOP_PLUMBING)]
    cum = {name: ct for _, _, ct, name in rows}
    run_lane = next(ct for name, ct in cum.items() if name.startswith("runner.py:") and "(run_lane)" in name)
    scoring = next(ct for name, ct in cum.items() if name.startswith("rescore.py:") and "(score_run_dir)" in name)
    print(
        f"\nphases under cProfile: {total:.2f} s in all; run_lane {run_lane:.2f} s = the requests (event loop, "
        f"live scoring included) {run_lane - scoring:.2f} s + final scoring {scoring:.2f} s; "
        f"start-up, imports and printing {total - run_lane:.2f} s"
    )
    for title, key, chosen in (("cumulative", 2, inner), ("own", 1, rows)):
        print(f"\n--- cProfile of `ocllm run` ({total:.2f} s): top {top} by {title} time ---")
        print(f"{'calls':>9} {'own s':>7} {'cum s':>7}  function")
        for nc, tt, ct, name in sorted(chosen, key=lambda row: -row[key])[:top]:
            print(f"{nc:>9} {tt:>7.3f} {ct:>7.3f}  {name}")


def main(n: int, concurrency: int, repeats: int, profile: Path | None) -> None:
    message = answer_document(answers(MODEL, 500, 0, 1)[0])["choices"][0]["message"]  # type: ignore[index]
    print(machine())
    print(
        f"{n:,} tasks, concurrency {concurrency}, best of {repeats}; zero-cost loopback server in its own process, "
        f"one fixed answer: content {message['content']!r}, reasoning {len(message['reasoning_content'])} chars"
    )
    _become_subreaper()
    proc, base = start_loopback(MODEL, reasoning_chars=500)
    KEEP.add(proc.pid)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            suite = Path(tmp) / "bench.jsonl"
            write_suite(suite, n)
            bare: list[float] = []
            run: list[float] = []
            bare_cpu: list[float] = []
            run_cpu: list[float] = []
            for i in range(repeats):
                loop, whole = bare_run(base, suite, concurrency)
                bare.append(loop)
                bare_cpu.append(whole.cpu)
                ran = child(run_command(base, suite, Path(tmp) / f"run{i}", concurrency))
                run.append(ran.wall)
                run_cpu.append(ran.cpu)
                print(
                    f"  round {i + 1}: bare {n / bare[-1]:7,.0f} tasks/s ({whole.cpu:.2f} s CPU, whole process)   "
                    f"ocllm run {n / run[-1]:7,.0f} tasks/s ({ran.cpu:.2f} s CPU, process tree)"
                )
            best_bare, best_run = n / min(bare), n / min(run)
            print(f"bare aiohttp loop: {best_bare:,.0f} tasks/s ({min(bare):.2f} s, the loop alone)")
            print(f"ocllm run:         {best_run:,.0f} tasks/s ({min(run):.2f} s, the whole process)")
            print(f"ratio run/bare:    {best_run / best_bare:.2f} (goal: at least 0.8)")
            print(
                f"CPU, whole process trees (least of {repeats}): bare {min(bare_cpu):.2f} s, ocllm run "
                f"{min(run_cpu):.2f} s; ratio {min(bare_cpu) / min(run_cpu):.2f}"
            )
            if profile is not None:
                command = run_command(base, suite, Path(tmp) / "prof", concurrency)
                seconds = run_seconds(["-m", "cProfile", "-o", str(profile), *command])
                print(f"\nprofiled run: {n / seconds:,.0f} tasks/s under cProfile; wrote {profile}")
                print_profile(profile)
    finally:
        proc.terminate()
        proc.wait()


def bare_main(base: str, suite: str, concurrency: int) -> None:
    """The child process of (a): the same bodies as `ocllm run --base-url BASE --model MODEL` sends."""
    lane = Lane(name="adhoc", base_url=base, model=MODEL, suite=suite, concurrency=concurrency)
    bodies = [request_body(task, lane) for task in load_suite(suite).tasks]
    print(asyncio.run(bare_loop(base, bodies, concurrency)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("tasks", nargs="?", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", type=Path, help="also profile one `ocllm run` with cProfile into this file")
    parser.add_argument("--bare", nargs=2, metavar=("BASE_URL", "SUITE"), help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.bare:
        bare_main(ns.bare[0], ns.bare[1], ns.concurrency)
    else:
        main(ns.tasks, ns.concurrency, ns.repeats, ns.profile)
