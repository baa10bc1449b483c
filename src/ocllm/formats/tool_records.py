"""What the readers of other tools' files share: their extracted answers as letters, options read off a
prompt, and the checks every task they build must pass.

Another tool's decision is kept under `previous`, never trusted: its extracted answer becomes a letter only
when the value is a letter and nothing else, so that `previous.extracted_final_answer` says what the tool
took, and the raw value stands beside it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ocllm.documents import UnscorableRecord
from ocllm.errors import InputError
from ocllm.models import Sample, Task
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.mcq.option_letters import MAX_OPTIONS, MIN_OPTIONS, option_letter

# A value that is one letter, perhaps in brackets and with a closing full stop: "B", "(B)", "[B]", "B.".
_LONE_LETTER = re.compile(r"\s*[\(\[]?\s*([A-Za-z])\s*[\)\]]?\s*\.?\s*")
# An option line of a prompt: "A. text", "(A) text", "A) text", "A: text".
_OPTION_LINE = re.compile(r"^[ \t]*(?:\(([A-Z])\)|([A-Z])[.):])[ \t]+(\S.*?)[ \t]*$", re.MULTILINE)


class NotScorable(InputError):
    """A record this scorer cannot score, though the file is of the right kind: the reader reports it
    (`unscorable`) and goes on with the next. Raised to a caller that does not, it is a one-line error."""

    def __init__(self, task_id: str, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.task_id = task_id
        self.where = where
        self.reason = reason


def unscorable(exc: NotScorable, path: Path) -> UnscorableRecord:
    """What a reader yields for a record it cannot turn into a task."""
    where = exc.where.removeprefix(f"{path}: ")
    return UnscorableRecord(task_id=exc.task_id, file=str(path), where=where, reason=exc.reason)


def not_expected(path: Path, expected: str, exc: InputError) -> InputError:
    """A file that cannot be read as a tool's JSON file (not JSON, not text at all): what was expected, then
    why not."""
    reason = str(exc).removeprefix(f"{path}: ")
    if reason.startswith(f"not {expected}"):
        return exc  # already says so
    return InputError(f"{path}: not {expected} ({reason})")


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


def verdict_of(value: Any) -> bool | None:
    """A tool's per-task score as correct (True), incorrect (False), or neither: 1 and 0 (int, float or bool);
    a fractional score is not a verdict on one answer."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if value == 1:
            return True
        if value == 0:
            return False
    return None


def failed_sample(task_id: str, reason: str, index: int = 0) -> Sample:
    """A sample the tool recorded as failed (sample `index` of its task): an error here too, never a wrong
    answer."""
    return Sample(task_id=task_id, sample=index, error=reason)


def first_item(value: Any) -> Any:
    """The first element, through lists of lists (lm-eval's `resps` is [[text]], `filtered_resps` [text] or
    [[text]]); None for an empty list."""
    while isinstance(value, list):
        if not value:
            return None
        value = value[0]
    return value
