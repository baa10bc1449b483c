"""MCQ tasks from other tools' records (scoring/other_harnesses.py says the split): the options and gold letter a tool
wrote, checked; its extracted answer as a letter; the MMLU-Pro scripts' results and inspect_ai's samples, whose
records are all MCQ tasks; and the rule that claims an old-harness record without a task_type.

Another tool's decision is kept under `previous`, never trusted: its extracted answer becomes a letter only when
the value is a letter and nothing else, so that `previous.extracted_final_answer` says what the tool took, and the
raw value stands beside it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ocllm.models import Task
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.mcq.option_letters import MAX_OPTIONS, MIN_OPTIONS, option_letter
from ocllm.scoring.other_harnesses import HarnessMapping, HarnessRecord, NotScorable

# A value that is one letter, perhaps in brackets and with a closing full stop: "B", "(B)", "[B]", "B.".
_LONE_LETTER = re.compile(r"\s*[\(\[]?\s*([A-Za-z])\s*[\)\]]?\s*\.?\s*")
# An option line of a prompt: "A. text", "(A) text", "A) text", "A: text".
_OPTION_LINE = re.compile(r"^[ \t]*(?:\(([A-Z])\)|([A-Z])[.):])[ \t]+(\S.*?)[ \t]*$", re.MULTILINE)


def lone_letter(value: Any) -> str | None:
    """The letter a tool extracted, when its value is a letter alone; None for "[invalid]", an empty value,
    or text that is more than a letter (the raw value is kept beside it, so nothing is lost)."""
    if not isinstance(value, str):
        return None
    match = _LONE_LETTER.fullmatch(value)
    return match.group(1).upper() if match else None


def options_in_prompt(prompt: str) -> list[str]:
    """The options of the question a prompt asks: its last run of option lines lettered A, B, C... in order.
    Few-shot prompts list earlier examples' options first; the question asked comes last."""
    runs: list[list[str]] = []
    for match in _OPTION_LINE.finditer(prompt):
        letter = match.group(1) or match.group(2)
        text = match.group(3)
        if letter == "A":
            runs.append([text])
        elif runs and letter == option_letter(len(runs[-1])):
            runs[-1].append(text)
    complete = [run for run in runs if len(run) >= MIN_OPTIONS]
    return complete[-1] if complete else []


def mcq_task(
    where: str,
    task_id: str,
    options: Any,
    answer: Any,
    *,
    question: str = "",
    category: str = "uncategorized",
    subset: str | None = None,
    prompt: str | None = None,
) -> Task:
    """An MCQ task from another tool's record, or NotScorable saying what is wrong with it."""
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise NotScorable(task_id, where, "no list of option texts")
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise NotScorable(task_id, where, f"{len(options)} option(s); an MCQ task needs 2 to 26 (A-Z)")
    last = option_letter(len(options) - 1)
    gold = lone_letter(answer)
    if gold is None or not "A" <= gold <= last:
        raise NotScorable(task_id, where, f"the answer {answer!r} is not one of its options A-{last}")
    return McqTask(
        id=task_id,
        question=question,
        options=options,
        answer=gold,
        category=category or "uncategorized",
        subset=subset,
        prompt=prompt,
    )


def _mmlu_pro_task(record: HarnessRecord) -> Task:
    """An MMLU-Pro script's result: `options`, and the gold `answer` letter (else its `answer_index`)."""
    answer = record.fields.get("answer")
    if answer is None and isinstance(record.fields.get("answer_index"), int):
        answer = chr(ord("A") + record.fields["answer_index"])
    return mcq_task(record.where, record.task_id, record.fields.get("options"), answer, question=record.question,
                    category=record.category, subset=record.subset)  # fmt: skip


def _inspect_task(record: HarnessRecord) -> Task:
    """An inspect_ai sample: its `choices` and its one target letter."""
    return mcq_task(record.where, record.task_id, record.fields.get("choices"), record.gold,
                    question=record.question, category=record.category, prompt=record.prompt)  # fmt: skip


HARNESS_RECORDS = {
    "mmlu-pro": HarnessMapping(task=_mmlu_pro_task, extracted=lone_letter, marks=("options",)),
    "inspect": HarnessMapping(task=_inspect_task, extracted=lone_letter),
}


def claims_untyped(record: Mapping[str, Any]) -> bool:
    """The old harness wrote only MCQ records before records named their task_type: one with options is one."""
    return bool(record.get("options"))
