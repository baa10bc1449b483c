"""The harness's own overhead: tasks per second through `ocllm run` against the simulator with zero
latency, beside a bare aiohttp loop sending the same request bodies to the same server.

Run: `.venv/bin/python bench/bench_runner.py [N_TASKS]` (default 2000). The simulator runs in its own
process (`ocllm serve-sim`), as a real server would, so the two measurements share nothing but the
loopback. docs/performance.md records the result.
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp
from loopback import wait_until_serving

from ocllm.analysis.rescore import score_run_dir
from ocllm.run.lanes import Lane
from ocllm.run.progress import RunProgress
from ocllm.run.prompting import request_body
from ocllm.run.runner import run_lane
from ocllm.suites import load_suite


def write_suite(path: Path, n: int) -> None:
    rng = random.Random(1)
    with path.open("w") as fh:
        for i in range(n):
            a, b = rng.randint(100, 999), rng.randint(100, 999)
            options = [str(a + b + d) for d in (0, 7, -11, 23)]
            rng.shuffle(options)
            row = {
                "id": f"b{i:05d}",
                "type": "mcq",
                "question": f"Task {i}: what is {a} + {b}?",
                "options": options,
                "answer": "ABCD"[options.index(str(a + b))],
                "category": "bench",
            }
            fh.write(json.dumps(row) + "\n")


def start_sim(suite: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ocllm",
            "serve-sim",
            "--port",
            str(port),
            "--suite",
            str(suite),
            "--truncation-rate",
            "0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return proc, wait_until_serving(proc, port, "the simulator")


async def bare_loop(base: str, bodies: list[dict], concurrency: int) -> float:
    queue = list(reversed(bodies))
    connector = aiohttp.TCPConnector(limit=concurrency, limit_per_host=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            while queue:
                body = queue.pop()
                async with session.post(f"{base}/chat/completions", json=body) as resp:
                    await resp.json()

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - start


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempfile.TemporaryDirectory() as tmp:
        suite_path = Path(tmp) / "bench.jsonl"
        write_suite(suite_path, n)
        proc, base = start_sim(suite_path)
        try:
            print(
                f"{n} tasks; simulator (zero latency) in its own process; Python {platform.python_version()} "
                f"on {platform.machine()}, {os.cpu_count()} CPUs"
            )
            print(f"{'concurrency':>11} {'ocllm run':>12} {'bare aiohttp':>13} {'overhead':>9}")
            tasks = load_suite(str(suite_path)).tasks
            for concurrency in (1, 16, 64):
                lane = Lane(
                    name="bench", base_url=base, model="sim-baseline", suite=str(suite_path), concurrency=concurrency
                )
                bodies = [request_body(t, lane) for t in tasks]
                bare = asyncio.run(bare_loop(base, bodies, concurrency))
                out = Path(tmp) / f"run{concurrency}"
                start = time.perf_counter()
                with open(os.devnull, "w") as devnull:
                    run_lane(
                        lane, out, progress=lambda label, total, done: RunProgress(label, total, done, stream=devnull),
                        score=score_run_dir,
                    )
                harness = time.perf_counter() - start
                print(f"{concurrency:>11} {n / harness:>10.0f}/s {n / bare:>11.0f}/s {harness / bare - 1:>8.0%}")
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
