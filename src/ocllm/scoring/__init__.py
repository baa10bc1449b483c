"""The scorer: `decide(task, sample, policy) -> Decision`, a pure function.

It does no I/O, reads no globals and never calls a model. Each task type decides by its own rules (its room:
scoring/<type>/, registered in task_types.py); docs/scoring.md and docs/scoring/<type>.md state every rule.
"""

from __future__ import annotations

from ocllm.models import Decision, NextTurn, Policy, Sample, Task
from ocllm.scoring import task_types

# Bump on any change that can alter a decision; it is recorded beside every scored run.
SCORER_VERSION = "1.11.0"

__all__ = ["SCORER_VERSION", "Policy", "decide", "is_conversation", "next_turn"]


def decide(task: Task, sample: Sample, policy: Policy | None = None) -> Decision:
    """Score one sample of one task under a policy (the default policy when None)."""
    policy = policy or Policy()
    if sample.error is not None:
        return _error_decision(task, sample)
    return task_types.of(task.type).decide(task, sample, policy)


def next_turn(task: Task, episode: Sample, policy: Policy | None = None) -> NextTurn:
    """What a conversation sends after its last reply, or that it has ended (`TaskType.next_turn`): pure, as `decide`
    is. A task whose room holds no conversation has ended after its one request."""
    hook = task_types.of(task.type).next_turn
    if hook is None:
        return NextTurn(end="one_request")
    return hook(task, episode, policy or Policy())


def is_conversation(task: Task) -> bool:
    """Whether the task's room continues a conversation after its first reply."""
    return task_types.of(task.type).next_turn is not None


def _error_decision(task: Task, sample: Sample) -> Decision:
    # A failed request is not a wrong answer: it is counted apart and never scored.
    return Decision(
        task_id=task.id,
        task_type=task.type,
        category=task.category,
        expected_answer=task_types.of(task.type).gold(task),
        extracted_final_answer=None,
        extraction_source="none",
        extraction_method="none",
        ambiguity="none",
        correct=None,
        rule="request_error",
        reason=f"the request failed: {sample.error}",
        error=sample.error,
    )
