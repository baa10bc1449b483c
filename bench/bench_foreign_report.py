"""Sizes of what `rescore --from mmlu-pro`, `report` and `compare` write for a large MMLU-Pro-shaped run, and
how long the HTML report takes to open in headless chromium.

    .venv/bin/python bench/bench_foreign_report.py [--tasks 12000] [--no-browser] [--keep DIR]

Writes an MMLU-Pro result folder (14 categories, `<category>_result.json` as the scripts write them: a JSON
list of questions, 10 options each, the script's `pred` and a ~1.6 KB chain-of-thought `model_outputs`, a few
cut off or without an answer), seeded so every run writes the same bytes. Then runs, each in a child process
(`ocllm` from this venv):

    ocllm rescore --from mmlu-pro FOLDER -o out.json        the rescored document: its size against the input's
    ocllm report out.json -o report                          report.md and report.html: their sizes
    ocllm compare --from mmlu-pro FOLDER FOLDER2             comparison.html: its size

and opens report.html in Debian's chromium (playwright, as tests/test_report_browser.py launches it): the
time until the load event, and until the task list is drawn. Prints one table."""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CATEGORIES = (
    "biology", "business", "chemistry", "computer science", "economics", "engineering", "health", "history",
    "law", "math", "other", "philosophy", "physics", "psychology",
)  # fmt: skip
LETTERS = "ABCDEFGHIJ"
STEPS = (
    "First, recall the definition the question relies on and what each quantity stands for.",
    "Option {x} can be ruled out at once: it contradicts the condition stated in the question.",
    "Computing step by step: the first term gives {n}, and the second adds a factor of {m}.",
    "Checking the units, the result must be expressed per unit of time, which matches option {y}.",
    "A common mistake here is to forget the sign; taking it into account changes the total.",
    "Comparing the remaining options, only one agrees with every figure computed above.",
)


def write_mmlu_pro(folder: Path, tasks: int, seed: int, accuracy: float) -> None:
    """One `<category>_result.json` per category, `tasks` questions in all."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    per_category: dict[str, list[dict[str, object]]] = {c: [] for c in CATEGORIES}
    for i in range(tasks):
        category = CATEGORIES[i % len(CATEGORIES)]
        q = random.Random(i)  # the question itself is the same in every folder; the answer depends on `seed`
        answer = LETTERS[q.randrange(10)]
        options = [f"{q.randint(1, 999)}.{q.randint(0, 99):02d} units of the quantity asked" for _ in LETTERS]
        picked = answer if rng.random() < accuracy else LETTERS[rng.randrange(10)]
        steps = [s.format(x=LETTERS[rng.randrange(10)], y=picked, n=rng.randint(2, 99), m=rng.randint(2, 9))
                 for s in STEPS]  # fmt: skip
        body = " ".join(steps * 2)
        if rng.random() < 0.5:  # a thinking model: the thinking left in the output, letters weighed in it
            weighed = [f"So the answer is ({LETTERS[rng.randrange(10)]}). Wait, let me check that again."
                       for _ in range(6)]  # fmt: skip
            body = f"<think>\n{body} {' '.join(weighed)} {body}\n</think>\n\n{' '.join(steps[:3])}"
        roll = rng.random()
        if roll < 0.01:  # cut off mid-thought: no answer, the script's pred null
            output, pred = body[: len(body) // 2], None
        elif roll < 0.05:  # the script's regex misses a bolded answer this scorer reads
            output, pred = f"Let's think step by step. {body}\n\n**Answer: ({picked})**", None
        else:
            output, pred = f"Let's think step by step. {body} The answer is ({picked}).", picked
        per_category[category].append(
            {
                "question_id": 70000 + i,
                "question": f"Question {i}: given the figures in the passage, which value is closest to the "
                "quantity asked for, after accounting for the losses described in the second paragraph?",
                "options": options,
                "answer": answer,
                "answer_index": LETTERS.index(answer),
                "cot_content": "",
                "category": category,
                "src": f"ori_mmlu-{category.replace(' ', '_')}",
                "pred": pred,
                "model_outputs": output,
            }
        )
    for category, rows in per_category.items():
        (folder / f"{category}_result.json").write_text(json.dumps(rows), encoding="utf-8")


def size_of(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*")) if path.is_dir() else path.stat().st_size


def ocllm(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ocllm", *args], check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def open_in_chromium(html: Path) -> tuple[float, float]:
    """Seconds until the load event, and until the page's script has drawn the task list."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        args = ["--headless=new", "--no-sandbox", "--disable-gpu"]  # as tests/test_report_browser.py, in short
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=args)
        page = browser.new_page()
        started = time.perf_counter()
        page.goto(html.as_uri(), wait_until="load")
        loaded = time.perf_counter() - started
        page.wait_for_selector("#task-count:not(:empty)")
        drawn = time.perf_counter() - started
        browser.close()
    return loaded, drawn


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=12000)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--keep", type=Path, help="Write here and keep the files (default: a temporary folder).")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="ocllm-bench-foreign-"))
    try:
        a, b = work / "qwen3-think-4k", work / "qwen3-think-16k"
        write_mmlu_pro(a, args.tasks, seed=1, accuracy=0.70)
        write_mmlu_pro(b, args.tasks, seed=2, accuracy=0.74)
        out = work / "out.json"
        rows = [("input (MMLU-Pro folder)", size_of(a), None)]
        seconds = ocllm("rescore", "--from", "mmlu-pro", str(a), "-o", str(out))
        rows.append(("rescored document", size_of(out), seconds))
        seconds = ocllm("report", str(out), "-o", str(work / "report"))
        rows.append(("report.md", size_of(work / "report" / "report.md"), None))
        rows.append(("report.html", size_of(work / "report" / "report.html"), seconds))
        seconds = ocllm("compare", "--from", "mmlu-pro", str(a), str(b), "-o", str(work / "cmp"))
        rows.append(("comparison.html", size_of(work / "cmp" / "comparison.html"), seconds))
        print(f"{args.tasks} tasks in {work}")
        print(f"{'file':<26} {'bytes':>13} {'per task':>9} {'x input':>8} {'command s':>10}")
        for name, size, took in rows:
            ratio = size / rows[0][1]
            took_text = f"{took:.1f}" if took is not None else ""
            print(f"{name:<26} {size:>13,} {size / args.tasks:>9,.0f} {ratio:>8.2f} {took_text:>10}")
        if not args.no_browser:
            loaded, drawn = open_in_chromium(work / "report" / "report.html")
            print(f"report.html in chromium: load event after {loaded:.2f} s, task list drawn after {drawn:.2f} s")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
