"""How fast the scorer decides MCQ records. Run: `make bench` or `python bench/bench_scoring.py [N]`.

Builds N MCQ records of realistic shapes (a native-reasoning lane's long reasoning with format examples,
think tags in the content, LaTeX boxes, conflicts, truncation) and times `decide` over all of them.
Prints records per second and the time per 10,000 records; docs/performance.md records the result.
"""

from __future__ import annotations

import platform
import random
import sys
import time

from ocllm.models import Policy, Sample, Task
from ocllm.scoring import SCORER_VERSION, decide

LETTERS = "ABCDEFGHIJ"
FILLER = (
    "We need to compute the value step by step. First consider the units, then the magnitude. "
    "Checking each option against the computed value rules out most of them. "
)


def make_records(n: int, seed: int = 7) -> list[tuple[Task, Sample]]:
    rng = random.Random(seed)
    records = []
    for i in range(n):
        n_opts = rng.choice((4, 4, 10))
        gold = LETTERS[rng.randrange(n_opts)]
        pick = gold if rng.random() < 0.85 else LETTERS[rng.randrange(n_opts)]
        reasoning = FILLER * rng.randint(2, 12)
        shape = rng.randrange(6)
        if shape == 0:
            content = f"FINAL: {pick}"
            reasoning += f"The answer must be like FINAL: A or FINAL: B. The correct answer is {pick}."
        elif shape == 1:
            content = f"<think>{FILLER * 3}Maybe FINAL: A?</think>\n\nThe answer is ({pick})."
        elif shape == 2:
            content = f"{FILLER}\n\n**Final Answer:** \\boxed{{{pick}}}"
        elif shape == 3:
            content = f"FINAL: {LETTERS[rng.randrange(n_opts)]}\n\nOn reflection:\n\nFINAL: {pick}"
        elif shape == 4:
            content = None
        else:
            content = f"{FILLER}Answer: {pick}. {rng.randint(1, 999)}"
        task = Task(id=f"t{i}", type="mcq", options=[str(k) for k in range(n_opts)], answer=gold, category="bench")
        sample = Sample(
            task_id=task.id, content=content, reasoning=reasoning, finish_reason="length" if content is None else "stop"
        )
        records.append((task, sample))
    return records


# Long outputs of the shapes that make naive scanners quadratic: unclosed boxes, thousands of markers on
# one line, enumerations, runaway think tags. Each should take time proportional to its length.
LONG_OUTPUTS = {
    "unclosed boxes": "\\boxed{" * 20_000,
    "FINAL: repeated": "FINAL: " * 40_000,
    "enumeration labels": "answer: (a) x " * 20_000,
    "sub-part letters": "The answer is (B) 1" + ", (C) 2" * 30_000,
    "values after markers": "Answer: 12 apples " * 20_000,
    "option claims": "Option C is correct. " * 20_000,
    "think openers": "<think>" * 30_000,
    "markers on new lines": "Answer:\n" * 30_000,
}


def long_outputs() -> None:
    task = Task(id="long", type="mcq", options=["1", "2", "3", "4"], answer="C", category="bench")
    for name, text in LONG_OUTPUTS.items():
        start = time.perf_counter()
        decide(task, Sample(task_id="long", content=text, reasoning=text))
        print(f"  {name:<22} {len(text) * 2:>9,} chars (content + reasoning): {time.perf_counter() - start:.3f} s")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    records = make_records(n)
    policy = Policy()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for task, sample in records:
            decide(task, sample, policy)
        best = min(best, time.perf_counter() - start)
    print(
        f"scorer {SCORER_VERSION}; Python {platform.python_version()} on {platform.machine()}, "
        f"{platform.processor() or 'unknown CPU'}"
    )
    print(
        f"{n} MCQ records: best of 3 runs {best:.3f} s = {n / best:,.0f} records/s = "
        f"{best / n * 10_000:.3f} s per 10,000 records"
    )
    print("long outputs:")
    long_outputs()


if __name__ == "__main__":
    main()
