"""What the default code prompt's request costs a small real model: before issue 41 it asked for "the whole function"
after showing the code prefix, and small models wrote the prompt's docstring again before any code; now it asks for
the def line and the body without the docstring (scoring/code/fields.py, FUNCTION_REQUEST_AFTER_PREFIX).

A real llama.cpp `llama-server` (the binary and model `make test-real-server` caches) answers the first N HumanEval
tasks twice, greedy, through `ocllm run`: once with the old request (a lane template that writes it), once with the
default. Per lane: the characters and an estimate of the tokens (characters / 4) the answers spend before their
function's def line, how many answers repeat the docstring, and ocllm's pass count.

    .venv/bin/python bench/bench_code_prompt.py --server PATH --model PATH [--tasks 20] [--threads 2]

docs/performance.md, "The code prompt", records a run with the command and the machine.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HUMANEVAL = Path(__file__).parent.parent / "tests" / "data" / "code" / "datasets" / "full" / "HumanEval.jsonl.gz"
# The request sentence the default prompt ended with before issue 41, as a lane template writes it.
PREFIX_SHOWN = "{question}\n\nComplete this Python code:\n```python\n{code_prefix}\n```\n\n"
OLD_TEMPLATE = PREFIX_SHOWN + "Write the whole function `{entry_point}` in one ```python code block."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(binary: str, model: str, threads: int) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    command = [binary, "-m", model, "--jinja", "--alias", "m", "-c", "4096", "-np", "1", "-t", str(threads),
               "--host", "127.0.0.1", "--port", str(port)]  # fmt: skip
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    base = f"http://127.0.0.1:{port}/v1"
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=5) as resp:
                if resp.status == 200:
                    return proc, base
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("llama-server did not start")


def suite(path: Path, count: int) -> None:
    with gzip.open(HUMANEVAL, "rt", encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines][:count]
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            task = {"id": row["task_id"], "type": "code", "category": "humaneval",
                    "question": f"Complete the function {row['entry_point']}.", "code_prefix": row["prompt"],
                    "entry_point": row["entry_point"], "test": row["test"]}  # fmt: skip
            out.write(json.dumps(task) + "\n")


def lanes(path: Path, base: str, variants: dict[str, str]) -> None:
    """The lanes file: the old request, the default, and each variant request sentence (after the same prefix)."""
    text = f'[defaults]\nbase_url = "{base}"\nmodel = "m"\ntemperature = 0.0\nmax_tokens = 384\nconcurrency = 1\n\n'
    templates = {"old-request": OLD_TEMPLATE, **{name: PREFIX_SHOWN + sentence for name, sentence in variants.items()}}
    for name, template in templates.items():
        text += f"[lanes.{name}]\ntemplates = {{ code = {json.dumps(template)} }}\n\n"
    path.write_text(text + "[lanes.new-request]\n")


def measure(run_dir: Path, suite_path: Path) -> dict[str, float]:
    tasks = {t["id"]: t for t in map(json.loads, suite_path.read_text().splitlines())}
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    before, lengths, repeats, passed = [], [], 0, 0
    for sample in samples:
        task = tasks[sample["task_id"]]
        content = sample.get("content") or ""
        at = re.search(rf"def\s+{re.escape(task['entry_point'])}\s*\(", content)
        before.append(at.start() if at else len(content))
        lengths.append(len(content))
        docstring = re.search(r'"""(.+?)"""', task["code_prefix"], re.S)
        if docstring and docstring.group(1).strip()[:60] in content:
            repeats += 1
    metrics = json.loads((run_dir / "metrics.json").read_text())
    passed = int(metrics.get("summary", {}).get("correct") or 0)
    return {"answers": len(samples), "chars_before_def_median": statistics.median(before),
            "tokens_before_def_median_est": statistics.median(before) / 4,
            "answer_chars_median": statistics.median(lengths), "docstring_repeated": repeats,
            "passed": passed}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--variant", action="append", default=[], metavar="NAME=SENTENCE",
                        help="another request sentence to measure (after the prefix), e.g. a candidate default")
    args = parser.parse_args()
    proc, base = start_server(args.server, args.model, args.threads)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            suite(folder / "suite.jsonl", args.tasks)
            variants = dict(v.split("=", 1) for v in args.variant)
            lanes(folder / "lanes.toml", base, variants)
            for lane in ("old-request", *variants, "new-request"):
                out = folder / lane
                ran = subprocess.run([sys.executable, "-m", "ocllm", "run", "--config", str(folder / "lanes.toml"),
                                      "--lane", lane, "--suite", str(folder / "suite.jsonl"), "--out", str(out)],
                                     capture_output=True, text=True)  # fmt: skip
                if ran.returncode != 0:
                    raise SystemExit(f"ocllm run {lane}: {ran.stderr.strip() or ran.stdout.strip()}")
                print(lane, json.dumps(measure(out, folder / "suite.jsonl")))
    finally:
        proc.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
