"""An MCQ task's own fields: its options (2 to 26) and the gold letter among them."""

from __future__ import annotations

from typing import Any

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring.mcq.option_letters import MAX_OPTIONS, MIN_OPTIONS, option_letter


class McqTask(Task, tag="mcq", kw_only=True):
    """An MCQ task: its options (2 to 26), and the gold letter among them in `answer`."""

    options: list[str] | None = None


def check_suite_line(where: str, row: dict[str, Any]) -> None:
    options = row.get("options")
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise InputError(f"{where}: field 'options': an MCQ task needs a list of option texts")
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise InputError(f"{where}: field 'options': {len(options)} options; 2 to 26 are allowed")
    last = option_letter(len(options) - 1)
    answer = row.get("answer")
    if not isinstance(answer, str) or len(answer) != 1 or not "A" <= answer <= last:
        raise InputError(f"{where}: field 'answer': {answer!r} is not one of the option letters A-{last}")


def saved_task_fields(where: str, row: dict[str, Any]) -> dict[str, Any]:
    """A saved record's options and gold letter (`expected_answer`, any case, spaces around it)."""
    options = row.get("options")
    expected = row.get("expected_answer")
    if not isinstance(options, list) or not options:
        raise InputError(f"{where} is an MCQ task without options")
    if not MIN_OPTIONS <= len(options) <= MAX_OPTIONS:
        raise InputError(f"{where} has {len(options)} option(s); an MCQ task needs 2 to 26 (A-Z)")
    last = option_letter(len(options) - 1)
    if not isinstance(expected, str) or len(expected.strip()) != 1 or not ("A" <= expected.strip().upper() <= last):
        raise InputError(f"{where} expects answer {expected!r}, which is not one of its options A-{last}")
    return {"options": [str(o) for o in options], "answer": expected.strip().upper()}


def record_fields(task: McqTask) -> dict[str, Any]:
    # The same keys a required-substrings record has, as every record had them before task types were rooms.
    return {"options": task.options, "required_substrings": None, "case_sensitive": False}


def gold(task: McqTask) -> str | None:
    return (task.answer or "").upper() or None


def option_count(task: McqTask) -> int | None:
    return len(task.options or []) or None
