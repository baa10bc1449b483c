"""How fast, and in how much memory, `ocllm rescore --from lm-eval` reads a GSM8K samples file (issue 45, item 4).

    PYTHONPATH=src .venv/bin/python bench/bench_rescore_speed.py [LINES...] [--samples K] [--profile FILE.prof]

Default sizes: 10,000 and 100,000 lines. Each file is written as lm-eval 0.4 writes gsm8k with --log_samples (the
fields of tests/test_rescore_from_math.py: doc_id, doc, target, arguments, resps, filtered_resps, filter, metrics,
the hashes, exact_match), its docs' lines of the strict-match filter first, then flexible-extract's; the responses
cycle through a handful of GSM8K-style answers (with and without "####", right and wrong). With --samples K each
line's resps hold K answers (repeats). For each size, `ocllm rescore FILE --from lm-eval -o OUT` runs in a child
process; printed: its CPU time (user + system, the whole process), records (lines) per CPU-second, wall time and
peak resident memory (ru_maxrss). The goal: at least 10,000 records per CPU-second, and peak memory within 10%
between 10k and 100k lines (and between one sample and eight).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The ocllm rescored with: this checkout's, or another's (OCLLM_BENCH_SRC: a "before" figure).
SRC = Path(os.environ.get("OCLLM_BENCH_SRC") or Path(__file__).resolve().parents[1] / "src")
# (response, the number it ends on, the gold's number): answers a 7B model gives, some right, some wrong.
ANSWERS = (
    ("She earned 0.2 x 50 = 10 dollars, plus 1,000: the answer is $1,010.", "1,010", "1,010"),
    ("Betty still needs 100 - 95 = 5 dollars.\n#### 5", "5", "5"),
    ("Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 eggs.\nShe makes 9 * 2 = $<<9*2=18>>18.\n#### 18", "18", "18"),
    ("The robe takes 2 + 2 / 2 = 3 bolts in all.\n#### 4", "4", "3"),
    ("Total cost: 80,000 + 50,000 = 130,000; value 80,000 * 2.5 = 200,000; profit 70,000.", "70,000", "70000"),
)


def lines(n_docs: int, samples: int) -> list[str]:
    out = []
    for filter_name in ("strict-match", "flexible-extract"):
        for doc_id in range(n_docs):
            response, last, gold = ANSWERS[doc_id % len(ANSWERS)]
            doc = {"question": f"Question {doc_id}: how much does she make?", "answer": f"Working.\n#### {gold}"}
            strict = last if "####" in response else "[invalid]"
            filtered = strict if filter_name == "strict-match" else last
            prompt = json.dumps([{"role": "user", "content": f"Question: {doc['question']}"}])
            row = {
                "doc_id": doc_id, "doc": doc, "target": doc["answer"],
                "arguments": {"gen_args_0": {"arg_0": [prompt], "arg_1": {"until": ["Question:"], "do_sample": False}}},
                "resps": [[response] * samples], "filtered_resps": [filtered] * samples if samples > 1 else [filtered],
                "filter": filter_name, "metrics": ["exact_match"], "doc_hash": "0" * 64, "prompt_hash": "1" * 64,
                "target_hash": "2" * 64, "exact_match": float(filtered.replace(",", "") == gold.replace(",", "")),
            }  # fmt: skip
            out.append(json.dumps(row))
    return out


def measure(path: Path, out: Path, profile: Path | None) -> tuple[float, float, float]:
    """(CPU s, wall s, peak MB) of one `ocllm rescore` child, from its own resource usage (os.wait4): RUSAGE_CHILDREN's
    peak is the largest of every child so far, and a child started by vfork is charged this process's peak at its
    exec, which is why the file is written by a child of its own (`write_file`)."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    head = ["-m", "cProfile", "-o", str(profile)] if profile is not None else []
    command = [sys.executable, *head, "-m", "ocllm", "rescore", str(path), "--from", "lm-eval", "-o", str(out)]
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    assert child.stderr is not None
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if child.returncode not in (0, 1):
        raise RuntimeError(stderr[-2000:].decode(errors="replace"))
    return usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024


def write_file(path: Path, size: int, samples: int) -> None:
    """The samples file, written by a child process (see `measure`)."""
    code = (
        "import sys; from pathlib import Path; from bench_rescore_speed import lines; "
        "Path(sys.argv[1]).write_text(chr(10).join(lines(int(sys.argv[2]) // 2, int(sys.argv[3]))) + chr(10))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), str(SRC)])}
    subprocess.run([sys.executable, "-c", code, str(path), str(size), str(samples)], check=True, env=env)


def main(sizes: list[int], samples: int, profile: Path | None) -> None:
    print(f"{os.cpu_count()} CPUs, Python {platform.python_version()}, {platform.platform()}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            path = Path(tmp) / f"samples_gsm8k_{size}.jsonl"
            write_file(path, size, samples)
            cpu, wall, peak = measure(path, Path(tmp) / f"out{size}.json", profile)
            mb = path.stat().st_size / 1e6
            print(
                f"{size:>8,} lines ({mb:,.1f} MB, {samples} sample(s) a line): {cpu:6.2f} s CPU, "
                f"{size / cpu:8,.0f} records per CPU-second, {wall:6.2f} s wall, peak {peak:6.1f} MB"
            )
            path.unlink()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000, 100_000])
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--profile", type=Path, help="profile the (last) rescore with cProfile into this file")
    ns = parser.parse_args()
    main(ns.sizes, ns.samples, ns.profile)
