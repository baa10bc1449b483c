"""Peak memory of `ocllm rescore` on run directories of growing size: does it stay flat?

    .venv/bin/python bench/bench_rescore_memory.py [SIZES...]     (default: 5000 20000 50000)

For each size, writes a run directory (a suite of MCQ tasks and samples.jsonl with ~3 KB of realistic
output per task, a third of it reasoning), then runs `ocllm rescore DIR -o OUT.json` in a child process and
reads its peak resident memory (ru_maxrss). The output file grows with the run; the memory should not.
"""

from __future__ import annotations

import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILLER = (
    "Let me work through the options one by one, checking each against the numbers given in the question. "
    "The format asks for a line FINAL: A or FINAL: B, so I will end with one. "
)


def write_run(folder: Path, size: int) -> None:
    folder.mkdir(parents=True)
    with open(folder / "suite.jsonl", "w") as suite, open(folder / "samples.jsonl", "w") as samples:
        for i in range(size):
            task_id = f"t{i:06d}"
            options = [f"{100 + i % 7 + k}" for k in range(4)]
            suite.write(
                json.dumps(
                    {"id": task_id, "type": "mcq", "question": f"What is {i} + {i % 7}?", "options": options,
                     "answer": "B", "category": f"cat{i % 5}"}
                ) + "\n"
            )  # fmt: skip
            letter = "ABCD"[i % 4]
            samples.write(
                json.dumps(
                    {"task_id": task_id, "content": FILLER * 8 + f"\nFINAL: {letter}", "reasoning": FILLER * 4,
                     "finish_reason": "stop", "model": "m", "latency_s": 1.0}
                ) + "\n"
            )  # fmt: skip


def peak_rss_mb(args: list[str]) -> tuple[float, float]:
    """Peak resident memory of a child process in MB (Linux reports ru_maxrss in KB), and its seconds."""
    code = (
        "import resource, subprocess, sys, time;"
        "t = time.perf_counter();"
        "r = subprocess.run(sys.argv[1:], capture_output=True);"
        "assert r.returncode == 0, r.stderr;"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    kb, seconds = out.stdout.split()
    return int(kb) / 1024, float(seconds)


def main(sizes: list[int]) -> None:
    print(f"Python {platform.python_version()} on {platform.machine()}; ocllm rescore of a run directory")
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            run = Path(tmp) / f"run{size}"
            started = time.perf_counter()
            write_run(run, size)
            written = time.perf_counter() - started
            samples_mb = (run / "samples.jsonl").stat().st_size / 1e6
            out = Path(tmp) / f"out{size}.json"
            mb, seconds = peak_rss_mb([sys.executable, "-m", "ocllm", "rescore", str(run), "-o", str(out)])
            print(
                f"{size:>7,} tasks: samples.jsonl {samples_mb:6.1f} MB, output {out.stat().st_size / 1e6:6.1f} MB, "
                f"rescore {seconds:6.1f} s, peak memory {mb:6.1f} MB (written in {written:.1f} s)"
            )
            out.unlink()


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [5000, 20000, 50000])
