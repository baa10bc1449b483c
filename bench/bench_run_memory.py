"""Peak memory of `ocllm run` on suites of growing size: does it stay flat in the run size? (issue 11)

    PYTHONPATH=src .venv/bin/python bench/bench_run_memory.py [SIZES...] [--concurrency C] [--samples K]

Defaults: 2,000 and 10,000 tasks, concurrency 64, one sample a task (`--samples K` asks each task K times,
round by round). For each size, writes an MCQ suite of that many tasks
and runs `python -m ocllm run --base-url ... --reasoning native` in a child process against the zero-cost
loopback server (bench/loopback.py, in its own process), whose answers are ~2 KB each: ~600 characters of
working ending "FINAL: <letter>" (A-D in turn) and ~1,400 characters of reasoning quoting ten format
examples. Prints the wall time of the `ocllm run` process (spawn to exit) and its peak resident memory
(ru_maxrss, read as bench_rescore_memory.py reads it). The child uses this checkout's src/ (PYTHONPATH).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from bench_rescore_memory import peak_rss_mb
from bench_runner import write_suite
from loopback import answer_document, answers, machine, start_loopback

MODEL = "loopback-model"
REASONING_CHARS = 1400
CONTENT_CHARS = 600
SRC = Path(__file__).resolve().parents[1] / "src"


def main(sizes: list[int], concurrency: int, samples: int = 1) -> None:
    # peak_rss_mb runs its children with this process's environment: this checkout's src/ first.
    os.environ["PYTHONPATH"] = str(SRC)
    message = answer_document(answers(MODEL, REASONING_CHARS, CONTENT_CHARS, 4)[0])["choices"][0]["message"]
    print(machine())
    print(
        f"ocllm run, concurrency {concurrency}, {samples} sample(s) a task, zero-cost loopback server in its own "
        "process; each answer "
        f"{len(message['content'])} chars of content + {len(message['reasoning_content'])} of reasoning"
    )
    proc, base = start_loopback(MODEL, reasoning_chars=REASONING_CHARS, content_chars=CONTENT_CHARS, variants=4)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for size in sizes:
                suite = Path(tmp) / f"suite{size}.jsonl"
                write_suite(suite, size)
                out = Path(tmp) / f"run{size}"
                command = [
                    sys.executable, "-m", "ocllm", "run", "--base-url", base, "--model", MODEL, "--suite", str(suite),
                    "--out", str(out), "--concurrency", str(concurrency), "--reasoning", "native",
                    "--samples", str(samples),
                ]  # fmt: skip
                mb, seconds = peak_rss_mb(command)
                samples_mb = (out / "samples.jsonl").stat().st_size / 1e6
                print(
                    f"{size:>7,} tasks x {samples}: samples.jsonl {samples_mb:6.1f} MB, ocllm run {seconds:6.1f} s "
                    f"({size * samples / seconds:,.0f} samples/s), peak memory {mb:6.1f} MB"
                )
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[2000, 10000])
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--samples", type=int, default=1)
    ns = parser.parse_args()
    main(ns.sizes, ns.concurrency, ns.samples)
