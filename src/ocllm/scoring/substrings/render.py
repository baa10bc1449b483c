"""How reports put a required-substrings record in words: what must appear, and what was missing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ocllm.scoring.task_view import TaskView


def expected_text(record: Mapping[str, Any]) -> str:
    subs = record.get("required_substrings")
    return "contains " + ", ".join(f"“{s}”" for s in subs) if subs else "—"


def extracted_text(record: Mapping[str, Any]) -> str:
    if record.get("error") is None:
        missing = record.get("missing_substrings")
        if missing:
            return "missing " + ", ".join(f"“{s}”" for s in missing)
        if missing is not None:
            return "all present"
    return "—"


def task_view(record: Mapping[str, Any]) -> TaskView:
    """The substrings the answer lacked, among the task's facts."""
    missing = record.get("missing_substrings")
    return TaskView(facts=[("missing substrings", ", ".join(map(str, missing)))] if missing else [])
