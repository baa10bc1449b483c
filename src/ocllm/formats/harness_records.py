"""What the readers of other tools' files share: the rooms' mappings of their records (scoring/other_harnesses.py),
found in the registry, and what a reader yields for a record it cannot score or a sample the tool recorded as
failed.

Which records are a room's, and what their fields mean for its task and for the tool's extracted answer, is the
room's; a reader here reads the tool's file and names no task type."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ocllm.documents import UnscorableRecord
from ocllm.errors import InputError
from ocllm.models import Sample
from ocllm.scoring import task_types
from ocllm.scoring.other_harnesses import HarnessMapping, LmEvalMapping, NotScorable


def lm_eval_mappings() -> list[LmEvalMapping]:
    """The rooms' mappings of lm-eval's docs, in the registry's order."""
    return [t.lm_eval for t in task_types.TASK_TYPES.values() if t.lm_eval is not None]


def tool_mapping(tool: str) -> HarnessMapping:
    """The mapping of the room whose tasks a tool's records are (the first in the registry's order)."""
    for task_type in task_types.TASK_TYPES.values():
        if tool in task_type.harness_records:
            return task_type.harness_records[tool]
    raise InputError(f"no task type reads {tool} records")


def untyped_claimed(record: Mapping[str, Any]) -> str | None:
    """The type of an old-harness record that names none: the first room's (in the registry's order) whose rule
    claims it; None when no room does."""
    return next((t.name for t in task_types.TASK_TYPES.values() if t.claims_untyped(record)), None)


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


def failed_sample(task_id: str, reason: str, index: int = 0) -> Sample:
    """A sample the tool recorded as failed (sample `index` of its task): an error here too, never a wrong
    answer."""
    return Sample(task_id=task_id, sample=index, error=reason)
