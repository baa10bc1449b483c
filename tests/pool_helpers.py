"""Deciders for decision-pool workers in tests: module-level, so that they pickle into the workers."""

from __future__ import annotations

from ocllm.models import Decision, Policy, Sample, Task


def hold_the_interpreter(task: Task, sample: Sample, policy: Policy) -> Decision:
    """Never returns in a test's time: big-integer powers, each seconds of one C call that holds the interpreter
    (no other thread of the process runs meanwhile)."""
    while True:
        _ = 3**20_000_000
