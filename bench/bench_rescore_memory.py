"""Peak memory of `ocllm rescore` on saved runs of growing size: does it stay flat?

    .venv/bin/python bench/bench_rescore_memory.py [--metrics-file | --lm-eval] [SIZES...]
                                                                 (default: 5000 20000 50000)

For each size, writes a run directory (a suite of MCQ tasks and samples.jsonl with ~2.2 KB of realistic
output per task, a third of it reasoning), or with --metrics-file one metrics file of the old harness (one
JSON object, its `tasks` list first and its summary after, the same outputs in records of the old
harness's fields), or with --lm-eval an lm-eval samples file (two filters per doc, so two lines per task, a
filter's lines all before the next filter's, as lm-eval writes them; read with `--from lm-eval`), then runs
`ocllm rescore INPUT -o OUT.json` in a child process and reads its peak resident memory (ru_maxrss). The
output file grows with the run; the memory should not.
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


def write_metrics_file(path: Path, size: int) -> None:
    """The old harness's metrics file, written a record at a time (as json.dump(indent=2) lays it out)."""
    with open(path, "w") as out:
        out.write('{\n  "run_id": "bench",\n  "lane": "B_native_reasoning",\n  "tasks": [')
        for i in range(size):
            letter = "ABCD"[i % 4]
            record = {
                "task_id": f"t{i:06d}", "category": f"cat{i % 5}", "subset": "bench", "task_type": "mcq",
                "prompt": f"What is {i} + {i % 7}?", "options": [f"{100 + i % 7 + k}" for k in range(4)],
                "expected_answer": "B", "required_substrings": None,
                "raw_content": FILLER * 8 + f"\nFINAL: {letter}", "raw_reasoning": FILLER * 4,
                "finish_reason": "stop", "latency_s": 1.0, "usage": {"prompt_tokens": 120, "completion_tokens": 600},
                "extracted_final_answer": letter, "extraction_method": "final_colon_letter", "ambiguity_flag": True,
                "scoring_decision": {"correct": letter == "B", "required_substrings": None}, "correct": letter == "B",
            }  # fmt: skip
            text = json.dumps(record, indent=2).replace("\n", "\n    ")
            out.write((",\n    " if i else "\n    ") + text)
        out.write(f'\n  ],\n  "summary": {{"total": {size}, "correct": {size // 4}}}\n}}\n')


def write_lm_eval(path: Path, size: int) -> None:
    """An lm-eval samples file of a GPQA-like task with two filters: every doc's strict-match line, then
    every doc's flexible-extract line, each with the doc, the chat prompt and the whole response."""
    with open(path, "w") as out:
        for filter_name in ("strict-match", "flexible-extract"):
            for i in range(size):
                letter = "ABCD"[i % 4]
                choices = {f"choice{k + 1}": f"{100 + i % 7 + k}" for k in range(4)}
                prompt = json.dumps([{"role": "user", "content": f"What is {i} + {i % 7}?\n(A) 100\n(B) 101"}])
                line = {
                    "doc_id": i, "doc": {"Question": f"What is {i} + {i % 7}?", **choices, "answer": "(B)"},
                    "target": "(B)", "arguments": {"gen_args_0": {"arg_0": [prompt], "arg_1": {"until": []}}},
                    "resps": [[FILLER * 8 + f"\nFINAL: {letter}"]],
                    "filtered_resps": ["[invalid]" if filter_name == "strict-match" else f"({letter})"],
                    "filter": filter_name, "metrics": ["exact_match"], "doc_hash": "0" * 64,
                    "prompt_hash": "0" * 64, "target_hash": "0" * 64,
                    "exact_match": float(filter_name != "strict-match" and letter == "B"),
                }  # fmt: skip
                out.write(json.dumps(line) + "\n")


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


def main(sizes: list[int], kind: str) -> None:
    import ijson

    print(
        f"Python {platform.python_version()} on {platform.machine()}, ijson {ijson.__version__} "
        f"({ijson.backend_name} backend); ocllm rescore of {kind}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            started = time.perf_counter()
            extra: list[str] = []
            if kind == "a metrics file":
                source = read = Path(tmp) / f"metrics{size}.json"
                write_metrics_file(source, size)
            elif kind == "an lm-eval samples file":
                source = read = Path(tmp) / f"samples_bench_2025-05-19T06-53-12.737541_{size}.jsonl"
                write_lm_eval(source, size)
                extra = ["--from", "lm-eval"]
            else:
                source = Path(tmp) / f"run{size}"
                write_run(source, size)
                read = source / "samples.jsonl"
            written = time.perf_counter() - started
            out = Path(tmp) / f"out{size}.json"
            mb, seconds = peak_rss_mb([sys.executable, "-m", "ocllm", "rescore", *extra, str(source), "-o", str(out)])
            print(
                f"{size:>7,} tasks: {read.name} {read.stat().st_size / 1e6:6.1f} MB, "
                f"output {out.stat().st_size / 1e6:6.1f} MB, rescore {seconds:6.1f} s, peak memory {mb:6.1f} MB "
                f"(written in {written:.1f} s)"
            )
            out.unlink()
            read.unlink()


if __name__ == "__main__":
    args = sys.argv[1:]
    kinds = {"--metrics-file": "a metrics file", "--lm-eval": "an lm-eval samples file"}
    chosen = [kinds[a] for a in args if a in kinds]
    main([int(a) for a in args if a not in kinds] or [5000, 20000, 50000], chosen[0] if chosen else "a run directory")
