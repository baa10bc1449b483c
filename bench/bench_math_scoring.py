"""How fast the math scorer decides, with and without the symbolic step.

    .venv/bin/python bench/bench_math_scoring.py [N_PLAIN] [N_SYMBOLIC]     (default: 20000 1000)

Builds two mixes of math answers in the shapes models write (gpt-oss "**Answer: $26**", Qwen3's "### Final
Answer" over a display box, DeepSeek-R1's think block then "The final answer is $\\boxed{…}$", GSM8K's
"#### 1,234", conflicts, format examples, truncated output, 300-2,000 characters of reasoning each):
- plain: golds and answers that the string, number, tolerance and structure comparators decide (GSM8K-like
  numbers, fractions against decimals, lists), so the symbolic step never runs;
- symbolic: answers that only the symbolic step decides (expressions, sets, intervals, tuples, matrices).
Times `decide_math` over each mix (best of three for the plain one; the symbolic child started and warmed
before timing, its start-up timed apart; the symbolic mix once with its cache emptied before each decision, then
once as the scorer runs, with its cache) and prints decisions per second, the comparators that decided and the
machine. docs/performance.md records the result.
"""

from __future__ import annotations

import os
import platform
import random
import sys
import time
from collections import Counter

from ocllm.models import Policy, Sample, Task
from ocllm.scoring.math import symbolic
from ocllm.scoring.math.decide import decide_math
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.math.symbolic import check

FILLER = (
    "Let me set up the quantities first and then combine them step by step, checking the units as I go. "
    "The problem asks for the final answer within \\boxed{}, so I will box it at the end. "
)
SHAPES = (
    "So the total is {a}.\n\n**Answer: ${a}**",
    "Adding the parts.\n\n### Final Answer\n\n$$\n\\boxed{{{a}}}\n$$",
    "<think>\n{filler}Maybe \\boxed{{{w}}}? No, recheck.\n</think>\n\nThe final answer is $\\boxed{{{a}}}$.",
    "Natalia sold {a} clips in all.\n#### {a}",
    "First \\boxed{{{w}}}.\n\nOn reflection the count is \\boxed{{{a}}}.",
    "I will write it in the form \\boxed{{42}}. The answer is {a}.",
    "{filler}So the answer is",  # truncated: no statement
    "**Answer:** $\\boxed{{{a}}}$",
)
PLAIN = (  # (gold, answer as written): decided without the symbolic step
    ("1234", "1,234"), ("26", "26.00"), ("18", "18"), ("0.75", "\\frac{3}{4}"), ("\\frac{1}{3}", "0.333"),
    ("9901", "9\\,901"), ("5", "x = 5"), ("3, 5, 7", "357"), ("\\frac{5}{2}", "2\\frac{1}{2}"), ("90", "90^\\circ"),
    ("50", "50\\%"), ("12", "\\$12"), ("7", "8"), ("-3", "-3"), ("[1,2)", "[1,2]"),
)  # fmt: skip
SYMBOLIC = (  # decided by the symbolic step
    ("x^2+2x+1", "(x+1)^2"), ("\\frac{\\sqrt{2}}{2}", "\\frac{1}{\\sqrt{2}}"), ("\\{1,2,3\\}", "\\{3,2,1\\}"),
    ("(1,2)", "(2,1)"), ("(-\\infty,2]", "(-\\infty, 2]"), ("2\\sqrt{3}", "\\sqrt{12}"),
    ("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}", "\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}"),
    ("\\frac{1}{2004!}", "\\frac{1}{2006!}"), ("1-\\frac{1}{e}", "1+\\frac{1}{e}"),
    ("\\frac{\\pi}{2}", "\\frac{1}{2}\\pi"),
    ("y=2x+3", "y=3+2x"), ("\\frac{x+2}{7}", "h^{-1}(x)=\\frac{x+2}{7}"),
)  # fmt: skip


def make_records(pairs: tuple[tuple[str, str], ...], n: int, seed: int) -> list[tuple[Task, Sample]]:
    rng = random.Random(seed)
    records = []
    for i in range(n):
        gold, answer = pairs[rng.randrange(len(pairs))]
        shape = SHAPES[rng.randrange(len(SHAPES))]
        content = shape.format(a=answer, w=rng.randint(2, 99), filler=FILLER * rng.randint(1, 3))
        reasoning = FILLER * rng.randint(2, 12) + f"so it should be \\boxed{{{answer}}}."
        finish = "length" if shape.endswith("the answer is") else "stop"
        task = MathTask(id=f"m{i:06d}", question="q", answer=gold)
        records.append((task, Sample(task_id=task.id, content=content, reasoning=reasoning, finish_reason=finish)))
    return records


def time_mix(records: list[tuple[Task, Sample]], rounds: int, *, cold: bool = False) -> tuple[float, Counter[str]]:
    """The best time over `rounds`; `cold`: the cache of symbolic checks emptied before each decision, so that every
    check is sent to the child."""
    policy = Policy()
    best = float("inf")
    comparators: Counter[str] = Counter()
    for _ in range(rounds):
        comparators.clear()
        start = time.perf_counter()
        for task, sample in records:
            if cold:
                symbolic.clear_cache()
            comparators[decide_math(task, sample, policy).comparator] += 1
        best = min(best, time.perf_counter() - start)
    return best, comparators


def main(argv: list[str]) -> None:
    n_plain = int(argv[0]) if argv else 20000
    n_symbolic = int(argv[1]) if len(argv) > 1 else 1000
    print(f"command: {sys.executable} bench/bench_math_scoring.py {n_plain} {n_symbolic}")
    print(f"machine: {os.cpu_count()} cores ({platform.machine()}, {platform.processor() or 'unknown cpu'}), "
          f"Python {platform.python_version()}")  # fmt: skip

    plain = make_records(PLAIN, n_plain, seed=7)
    seconds, comparators = time_mix(plain, rounds=3)
    assert "symbolic" not in comparators, comparators  # this mix measures the scorer without the worker
    print(f"without the symbolic step: {n_plain} decisions in {seconds:.3f} s: {n_plain / seconds:,.0f} decisions/s "
          f"({dict(comparators)})")  # fmt: skip

    start = time.perf_counter()
    check("x", "x+0")  # starts the guarded child: math-verify imported and warmed up in it
    print(f"symbolic child start-up (start, import math-verify, warm-up): {time.perf_counter() - start:.2f} s")
    mix = make_records(SYMBOLIC, n_symbolic, seed=11)
    seconds, comparators = time_mix(mix, rounds=1, cold=True)
    print(f"with the symbolic step, every check sent to the child: {n_symbolic} decisions in {seconds:.3f} s: "
          f"{n_symbolic / seconds:,.0f} decisions/s ({dict(comparators)})")  # fmt: skip
    symbolic.clear_cache()
    hits = symbolic.counts["cache_hits"]
    seconds, comparators = time_mix(mix, rounds=1)
    hits = symbolic.counts["cache_hits"] - hits
    print(f"with the symbolic step and its cache ({hits:,} checks answered from it): {n_symbolic} "
          f"decisions in {seconds:.3f} s: {n_symbolic / seconds:,.0f} decisions/s ({dict(comparators)})")  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1:])
