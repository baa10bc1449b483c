"""How reports put a required-substrings record in words: what must appear, and what was missing."""

from __future__ import annotations

from ocllm.scoring.scored import Scored
from ocllm.scoring.substrings.decision import SubstringsDecision
from ocllm.scoring.substrings.fields import SubstringsTask
from ocllm.scoring.task_view import TaskView

Substrings = Scored[SubstringsTask, SubstringsDecision]


def expected_text(scored: Substrings) -> str:
    subs = scored.task.required_substrings if scored.task is not None else None
    return "contains " + ", ".join(f"“{s}”" for s in subs) if subs else "—"


def extracted_text(scored: Substrings) -> str:
    if scored.decision is None:  # a failed request, or an input's record of its own: no substring was looked for
        return "—"
    missing = scored.decision.missing_substrings
    if missing:
        return "missing " + ", ".join(f"“{s}”" for s in missing)
    return "all present" if missing is not None else "—"


def task_view(scored: Substrings) -> TaskView:
    """The substrings the answer lacked, among the task's facts."""
    missing = scored.decision.missing_substrings if scored.decision is not None else None
    return TaskView(facts=[("missing substrings", ", ".join(missing))] if missing else [])
