"""Peak memory and time of `ocllm import` on the hostile dataset files of issue 29, and on a large honest one.

    .venv/bin/python bench/bench_import_bounds.py [--src SRC] [--cases NAME,...]

Builds each file in a temporary folder (as tests/test_import_bounds.py builds the small ones), runs
`python -m ocllm import ...` in a child process (with SRC first on PYTHONPATH: another checkout's `src` to
measure it before a change) and prints its exit code, the error's last line, peak resident memory (ru_maxrss)
and seconds. A child that runs past `--timeout` (default 120 s) is killed and said so.

Cases: `value` (one 800 MB question, zstd: 26 KB on disk), `value-among` (the same question among 1,000
rows), `rows` (5,000,000 dictionary-encoded rows, 37 KB), `honest` (200,000 gsm8k rows of 250 bytes, imported
whole and with --limit 100).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MB = 1 << 20


def build(case: str, folder: Path) -> list[list[str]]:
    """The file of `case` in `folder`, and the import arguments (one list per run) that read it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / f"{case}.parquet"
    if case == "value":
        pq.write_table(pa.table({"question": ["x" * (800 * MB)], "answer": ["#### 1"]}), path, compression="zstd")
    elif case == "value-among":
        questions = pa.array([f"q {i}" for i in range(999)] + ["x" * (800 * MB)], pa.large_string())
        pq.write_table(pa.table({"question": questions, "answer": ["#### 1"] * 1000}), path, compression="zstd")
    elif case == "rows":
        indices = pa.array([0] * 5_000_000, pa.int32())
        columns = {name: pa.DictionaryArray.from_arrays(indices, pa.array([text]))
                   for name, text in (("question", "What is 1 + 1?"), ("answer", "#### 2"))}  # fmt: skip
        pq.write_table(pa.table(columns), path, compression="zstd")
    elif case == "honest":
        n = 200_000
        questions = [f"What is {i} + 1? " + "word " * 40 for i in range(n)]
        pq.write_table(pa.table({"question": questions, "answer": [f"so #### {i + 1}" for i in range(n)]}), path)
        return [["gsm8k", str(path)], ["gsm8k", str(path), "--limit", "100"]]
    else:
        raise SystemExit(f"unknown case {case!r}")
    return [["gsm8k", str(path)]]


def measure(src: Path, arguments: list[str], out: Path, timeout: float) -> tuple[str, str, float, float]:
    """Exit code (or "killed"), the error's last line, peak MB and seconds of one import in a child of a child
    (so that RUSAGE_CHILDREN holds that one process only)."""
    probe = (
        "import resource, subprocess, sys\n"
        "try:\n"
        "    done = subprocess.run(sys.argv[2:], capture_output=True, text=True, timeout=float(sys.argv[1]))\n"
        "    code, err = done.returncode, done.stderr\n"
        "except subprocess.TimeoutExpired:\n"
        "    code, err = 'killed', 'past the timeout'\n"
        "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print((err.strip().splitlines() or [''])[-1])\n"
    )
    command = [sys.executable, "-m", "ocllm", "import", *arguments, "-o", str(out), "--force"]
    env = {**os.environ, "PYTHONPATH": str(src)}
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", probe, str(timeout), *command], capture_output=True, text=True,
                          env=env, check=True)  # fmt: skip
    seconds = time.perf_counter() - start
    first, said = [*done.stdout.splitlines(), "", ""][:2]
    code, peak_kb = first.split()
    return code, said, int(peak_kb) / 1024, seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parent.parent / "src")
    parser.add_argument("--cases", default="value,value-among,rows,honest")
    parser.add_argument("--timeout", type=float, default=120.0)
    options = parser.parse_args()
    machine = platform.processor() or platform.machine()
    print(f"# {machine}, {os.cpu_count()} CPUs, Python {platform.python_version()}, src {options.src}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for case in options.cases.split(","):
            for arguments in build(case, folder):
                size = Path(arguments[1]).stat().st_size
                code, said, peak, seconds = measure(options.src, arguments, folder / "suite.jsonl", options.timeout)
                extra = " ".join(arguments[2:])
                print(f"{case} {extra} ({size / 1024:,.0f} KB): exit {code}, {peak:,.0f} MB, {seconds:.1f} s: {said}")


if __name__ == "__main__":
    main()
