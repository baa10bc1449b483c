"""Would the decision pool speed up a run's final scoring? (issue 20, the decision pool's item 2)

    PYTHONPATH=src .venv/bin/python bench/bench_final_pass.py [N_RECORDS] [--chunk K]

The final scoring (analysis/rescore.py: score_run_dir) reads back from the spool every decision the run took as its
answers arrived, so after a run that was not resumed it decides nothing; it decides afresh only the tasks of an earlier
invocation (`--resume`), as `ocllm rescore` decides every task. This times deciding N records (bench_scoring's
realistic MCQ mix, default 20,000) (a) in this process, one after another, as the final pass does, and (b) in
worker processes (`DEFAULT_WORKERS`, the "forkserver" context, as the pool starts them), handed over K at a time
(`Executor.map` with chunksize K, default 64; started before the clock) with the results taken back in order, as
a pool-backed final pass would have to. Best of 3 each.
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

from bench_scoring import make_records
from loopback import machine

from ocllm.models import Policy
from ocllm.run.decision_pool import DEFAULT_WORKERS
from ocllm.scoring import decide


def main(n: int, chunk: int) -> None:
    records = make_records(n)
    tasks = [task for task, _ in records]
    samples = [sample for _, sample in records]
    policies = [Policy()] * n
    print(f"machine: {machine()}; {n:,} records; {DEFAULT_WORKERS} workers, chunks of {chunk}")
    here: list[float] = []
    for _ in range(3):
        start = time.perf_counter()
        expected = [decide(task, sample, policy) for task, sample, policy in zip(tasks, samples, policies, strict=True)]
        here.append(time.perf_counter() - start)
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["ocllm.scoring"])
    pooled: list[float] = []
    with ProcessPoolExecutor(DEFAULT_WORKERS, mp_context=context) as executor:
        list(executor.map(decide, tasks[:DEFAULT_WORKERS], samples[:DEFAULT_WORKERS]))  # the workers started
        for _ in range(3):
            start = time.perf_counter()
            got = list(executor.map(decide, tasks, samples, policies, chunksize=chunk))
            pooled.append(time.perf_counter() - start)
    assert got == expected, "the workers' decisions differ from this process's"
    print(f"in this process: {n / min(here):8,.0f} records/s ({min(here):.2f} s)")
    print(f"in the workers:  {n / min(pooled):8,.0f} records/s ({min(pooled):.2f} s), {min(here) / min(pooled):.2f} x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("records", nargs="?", type=int, default=20_000)
    parser.add_argument("--chunk", type=int, default=64)
    args = parser.parse_args()
    main(args.records, args.chunk)
