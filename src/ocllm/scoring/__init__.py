"""The scorer: `decide(task, sample, policy) -> Decision`, a pure function.

It does no I/O, reads no globals and never calls a model. docs/scoring.md states every rule.
"""

from __future__ import annotations

from ocllm.models import Decision, Policy, Sample, Task
from ocllm.scoring.mcq.decide import decide_mcq
from ocllm.scoring.substrings.decide import decide_substrings

# Bump on any change that can alter a decision; it is recorded beside every scored run.
SCORER_VERSION = "1.7.0"

__all__ = ["SCORER_VERSION", "Policy", "decide"]


def decide(task: Task, sample: Sample, policy: Policy | None = None) -> Decision:
    """Score one sample of one task under a policy (the default policy when None)."""
    policy = policy or Policy()
    if sample.error is not None:
        return _error_decision(task, sample)
    if task.type == "mcq":
        return decide_mcq(task, sample, policy)
    return decide_substrings(task, sample, policy)


def _error_decision(task: Task, sample: Sample) -> Decision:
    # A failed request is not a wrong answer: it is counted apart and never scored.
    return Decision(
        task_id=task.id,
        task_type=task.type,
        category=task.category,
        expected_answer=(task.answer or "").upper() or None,
        extracted_final_answer=None,
        extraction_source="none",
        extraction_method="none",
        ambiguity="none",
        correct=None,
        rule="request_error",
        reason=f"the request failed: {sample.error}",
        error=sample.error,
    )
