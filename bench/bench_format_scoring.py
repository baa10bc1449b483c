"""How fast instructions and json answers are decided, and how the checks bear answers a model should not write.

    .venv/bin/python bench/bench_format_scoring.py [N]      (default: 5000)

Draws N answers to the tasks of the shipped `demo-formats` suite the way the simulator writes them (IFEval-like
instructions, one to two per task, right and wrong; JSON answers fitting their schema or not), each with its
reasoning, and times `decide` over them (best of three; the first language detection, which loads langdetect's
profiles, is done before timing). Then times one decision each of degenerate answers of about 1 MB (a run of
dots, blank lines, a line of brackets, one-line prose) against the instructions that read them, to show no check
is quadratic. Prints decisions per second per type and the machine; docs/performance.md records the result.
"""

from __future__ import annotations

import os
import platform
import random
import sys
import time

from ocllm.sim.instruction_answers import instructions_answer
from ocllm.sim.json_answers import json_answer

from ocllm.models import Policy, Sample, Task
from ocllm.scoring import decide
from ocllm.suites import load_suite

DEGENERATE = {
    "a run of dots": "Thinking" + "." * 1_000_000 + "done",
    "blank lines": "intro\n" + "\n" * 1_000_000 + "* x",
    "a line of brackets": "[" * 1_000_000,
    "one-line prose": "Word one, word two. " * 50_000,
}
READERS = [
    {"id": "length_constraints:number_sentences", "kwargs": {"num_sentences": 3, "relation": "at least"}},
    {"id": "detectable_format:number_bullet_lists", "kwargs": {"num_bullets": 1}},
    {"id": "detectable_content:number_placeholders", "kwargs": {"num_placeholders": 1}},
    {"id": "length_constraints:number_words", "kwargs": {"num_words": 10, "relation": "at least"}},
    {"id": "punctuation:no_comma", "kwargs": {}},
]


def main(n: int) -> None:
    rng = random.Random(0)
    tasks = load_suite("demo-formats").tasks
    drawn: list[tuple[Task, Sample]] = []
    for i in range(n):
        task = tasks[i % len(tasks)]
        draw = json_answer if task.type == "json" else instructions_answer
        content, reasoning = draw(rng, task, correct=rng.random() < 0.8, reasoning=rng.random() < 0.5)
        drawn.append((task, Sample(task_id=task.id, content=content, reasoning=reasoning)))
    policy = Policy()
    decide(*drawn[tasks.index(next(t for t in tasks if t.id == "if_german"))], policy)  # langdetect's profiles
    print(f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} cpus")  # fmt: skip
    for kind in ("instructions", "json"):
        mix = [(t, s) for t, s in drawn if t.type == kind]
        best = min(_timed(mix, policy) for _ in range(3))
        print(f"{kind}: {len(mix)} decisions in {best:.2f} s: {len(mix) / best:,.0f} decisions/s")
    reader = Task(id="d", type="instructions", question="Write.", instructions=READERS, category="c")
    for name, text in DEGENERATE.items():
        start = time.perf_counter()
        decision = decide(reader, Sample(task_id="d", content=text), policy)
        took = time.perf_counter() - start
        print(f"{name} ({len(text) / 1e6:.1f} MB), {len(READERS)} instructions each with its loose variants: "
              f"{took:.2f} s ({sum(decision.instructions_followed)} followed)")  # fmt: skip


def _timed(mix: list[tuple[Task, Sample]], policy: Policy) -> float:
    start = time.perf_counter()
    for task, sample in mix:
        decide(task, sample, policy)
    return time.perf_counter() - start


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000)
