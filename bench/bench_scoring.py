"""How fast the scorer decides MCQ records. Run: `make bench` or `python bench/bench_scoring.py [N]`.

Builds N MCQ records of realistic shapes (a native-reasoning lane's long reasoning with format examples,
think tags in the content, LaTeX boxes, conflicts, truncation) and times `decide` over all of them.
Prints records per second and the time per 10,000 records; docs/performance.md records the result.
With `--rules`, also what each rule costs: the bench mix is timed again with that rule's code switched off
(its function replaced by one that finds nothing), and the difference is the rule's share.
"""

from __future__ import annotations

import platform
import random
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType

import msgspec

from ocllm.models import Policy, Sample, Task
from ocllm.scoring import SCORER_VERSION, decide
from ocllm.scoring.mcq import candidates, statements
from ocllm.scoring.mcq import decide as mcq
from ocllm.scoring.mcq.fields import McqTask

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
        task = McqTask(id=f"t{i}", options=[str(k) for k in range(n_opts)], answer=gold, category="bench")
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
    "values after a letter": "The answer is (B).\n" + "The answer is 999 cm^3.\n" * 20_000,
}


def long_outputs() -> None:
    task = McqTask(id="long", options=["1", "2", "3", "4"], answer="C", category="bench")
    for name, text in LONG_OUTPUTS.items():
        start = time.perf_counter()
        decide(task, Sample(task_id="long", content=text, reasoning=text))
        print(f"  {name:<22} {len(text) * 2:>9,} chars (content + reasoning): {time.perf_counter() - start:.3f} s")


def _nothing(*_args: object, **_kw: object) -> None:
    return None


def _empty(*_args: object, **_kw: object) -> list[object]:
    return []


def _false(*_args: object, **_kw: object) -> bool:
    return False


# Each rule of docs/scoring/mcq.md, and the functions that are its whole cost: (module, name, stand-in).
RULES: dict[str, list[tuple[ModuleType, str, Callable[..., object]]]] = {
    "the reasoning region scanned for the audit (rule 6)": [],  # handled in _without: reasoning=None
    "R3b statements taken back": [(mcq, "withdraw", _nothing)],
    "R3c one letter per sub-part": [(statements, "_sub_part_letters", lambda _t, letters, end: (letters, end))],
    "R3d hypothetical statements": [(statements, "hypothetical", _false)],
    "R3d code blocks": [(candidates, "inside_code_block", _false)],
    "R3e/R3f invented and other questions": [
        (mcq, "_keep_own_question", _false),
        (mcq, "_drop_invented_questions", _nothing),
        (mcq, "mark_other_questions", _empty),
    ],
    "R4 option lines and option claims": [(mcq, "find_option_lines", _empty), (mcq, "find_option_claims", _empty)],
    "R8 values matched to option texts": [(statements, "_stated_value", _nothing)],
    "R8b values that are no option": [(statements, "_value_of_no_option", _nothing)],
    "R8c restated values": [(statements, "restated_contradiction", _nothing)],
    'negated statements ("the wrong answer is")': [(statements, "_negated", _false)],
}


@contextmanager
def _without(rule: str) -> Iterator[None]:
    saved = [(module, name, getattr(module, name)) for module, name, _ in RULES[rule]]
    for module, name, stand_in in RULES[rule]:
        setattr(module, name, stand_in)
    try:
        yield
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def best_of_three(records: list[tuple[Task, Sample]], policy: Policy) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for task, sample in records:
            decide(task, sample, policy)
        best = min(best, time.perf_counter() - start)
    return best


def rule_costs(records: list[tuple[Task, Sample]], policy: Policy, whole: float) -> None:
    """Each rule's share of the time: the mix again with the rule switched off. Rules interact (a rule
    switched off can make another find more), so the shares are approximate and do not add up exactly."""
    n = len(records)
    print(f"what each rule costs (of {whole / n * 1e6:.1f} µs per record):")
    for rule in RULES:
        if not RULES[rule]:
            visible_only = [(t, msgspec.structs.replace(s, reasoning=None)) for t, s in records]
            without = best_of_three(visible_only, policy)
        else:
            with _without(rule):
                without = best_of_three(records, policy)
        share = (whole - without) / n * 1e6
        print(f"  {rule:<55} {share:6.1f} µs per record ({(whole - without) / whole:5.1%})")


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    n = int(args[0]) if args else 100_000
    records = make_records(n)
    policy = Policy()
    best = best_of_three(records, policy)
    print(
        f"scorer {SCORER_VERSION}; Python {platform.python_version()} on {platform.machine()}, "
        f"{platform.processor() or 'unknown CPU'}"
    )
    print(
        f"{n} MCQ records: best of 3 runs {best:.3f} s = {n / best:,.0f} records/s = "
        f"{best / n * 10_000:.3f} s per 10,000 records"
    )
    if "--rules" in sys.argv:
        rule_costs(records, policy, best)
    print("long outputs:")
    long_outputs()


if __name__ == "__main__":
    main()
