"""Does a slow scorer throttle what `ocllm run` measures? A symbolic-heavy math suite against a zero-cost server
(issue 45, item 1).

    PYTHONPATH=src .venv/bin/python bench/bench_scoring_off_the_request_path.py [N_TASKS] [--concurrency C]
                                                                                 [--repeats R]

Defaults: 1,000 tasks, concurrency 64, best of 3. Each task's gold is `(x+k)^2` (k = 1..N) and the server
(bench/loopback.py, in its own process) answers every request at once with one fixed visible answer,
`\\boxed{x^2+2x+1}`: every decision needs the math scorer's symbolic step, in its guarded child (one task's gold
equals it; the others are wrong, decided the same costly way). Against it, each in its own process:

  (a) bare: a plain aiohttp loop posting the bodies `ocllm run` would send, at the same concurrency, timed around
      the loop: the server's requests/s as a client without a scorer sees it;
  (b) run: `python -m ocllm run ... --concurrency C`; its serving figures read from its metrics.json (requests/s
      over the time requests were in flight) and the scoring that went on after the last response
      (`scoring_tail_s`), beside the process's own wall time.

The goal: (b)'s serving requests/s within 10% of (a)'s, the scoring tail reported apart. Before requests stopped
waiting for decisions, (b)'s requests/s was the scorer's speed (2.37/s on the issue's machine).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_runner_ratio import MODEL, bare_main, child_env  # the same bare loop, the same child environment
from loopback import machine, start_loopback

ANSWER = "\\boxed{x^2+2x+1}"


def write_suite(path: Path, n: int) -> None:
    with path.open("w") as fh:
        for k in range(1, n + 1):
            row = {"id": f"sq{k:05d}", "type": "math", "question": f"Expand (x+{k})^2.", "answer": f"(x+{k})^2",
                   "category": "bench"}  # fmt: skip
            fh.write(json.dumps(row) + "\n")


def bare_requests_per_s(base: str, suite: Path, concurrency: int, n: int) -> float:
    out = subprocess.run(
        [sys.executable, __file__, "--bare", base, str(suite), "--concurrency", str(concurrency)],
        capture_output=True, text=True, check=True, env=child_env(),
    )  # fmt: skip
    return n / float(out.stdout.split()[-1])


def ocllm_run(base: str, suite: Path, out: Path, concurrency: int) -> tuple[float, float, float, int]:
    """(serving requests/s, scoring tail s, the process's wall s, the tasks it got right)."""
    command = [
        sys.executable, "-m", "ocllm", "run", "--base-url", base, "--model", MODEL, "--suite", str(suite), "--out",
        str(out), "--concurrency", str(concurrency), "--preflight", "off",
    ]  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=child_env())
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"ocllm run exited {proc.returncode}: {proc.stderr[-2000:]}")
    serving = json.loads((out / "metrics.json").read_text())["summary"]["serving"]
    correct = json.loads((out / "metrics.json").read_text())["summary"]["correct"]
    return serving["requests_per_s"], serving.get("scoring_tail_s") or 0.0, wall, correct


def main(n: int, concurrency: int, repeats: int) -> None:
    print(machine())
    print(f"{n:,} math tasks (gold (x+k)^2, answer {ANSWER}: the symbolic step decides each), c={concurrency}")
    proc, base = start_loopback(MODEL, reasoning_chars=0, final=ANSWER)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            suite = Path(tmp) / "symbolic.jsonl"
            write_suite(suite, n)
            rounds = []
            for i in range(repeats):
                bare = bare_requests_per_s(base, suite, concurrency, n)
                rate, tail, wall, correct = ocllm_run(base, suite, Path(tmp) / f"run{i}", concurrency)
                rounds.append((bare, rate, tail, wall))
                print(
                    f"  round {i + 1}: bare {bare:8,.0f} requests/s   ocllm run serving {rate:8,.0f} requests/s "
                    f"(ratio {rate / bare:.2f}); scoring finished {tail:.1f} s after the last response; "
                    f"process {wall:.1f} s; {correct} right"
                )
            bare, rate = max(r[0] for r in rounds), max(r[1] for r in rounds)
            print(f"best of {repeats}: bare {bare:,.0f} requests/s, ocllm run serving {rate:,.0f} requests/s, "
                  f"ratio {rate / bare:.2f} (goal: at least 0.9)")  # fmt: skip
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("tasks", nargs="?", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bare", nargs=2, metavar=("BASE_URL", "SUITE"), help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.bare:
        bare_main(ns.bare[0], ns.bare[1], ns.concurrency)
    else:
        main(ns.tasks, ns.concurrency, ns.repeats)
