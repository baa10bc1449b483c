"""The simulator's answer to a required-substrings task: every required item listed, or, drawn wrong, one left
out (or written as a near miss without its last character). Every random choice comes from the `random.Random`
handed in.
"""

from __future__ import annotations

import random

from ocllm.scoring.simulated import SimulatedAnswer, SimulatedRequest, snippet
from ocllm.scoring.substrings.fields import SubstringsTask


def simulated_answer(request: SimulatedRequest) -> SimulatedAnswer | None:
    """The room's hook (`TaskType.simulated_answer`): an answer to a task of this room; no answer to a prompt the
    simulator does not know."""
    if not isinstance(request.task, SubstringsTask):
        return None  # a prompt it does not know (no task), or another room's task, which its own room answers
    return _substrings_answer(request.rng, request.task, correct=request.correct, reasoning=request.reasoning)


def _substrings_answer(rng: random.Random, task: SubstringsTask, *, correct: bool, reasoning: bool) -> SimulatedAnswer:
    required = list(task.required_substrings or [])
    missing: int | None = None
    if not correct:
        # Omit one that no other required item contains, otherwise writing the others would include it.
        omittable = [
            i
            for i, item in enumerate(required)
            if item and not any(item.casefold() in other.casefold() for j, other in enumerate(required) if j != i)
        ]
        if omittable:
            missing = rng.choice(omittable)
    lines = []
    for i, item in enumerate(required):
        if i != missing:
            lines.append(f"- {item}")
        elif len(item) > 1:
            lines.append(f"- {item[:-1]}")  # a near miss: the item without its last character
    intro = rng.choice(["Here is my answer, point by point:", "Sure. The response covers these points:"])
    content = "\n".join([intro, *lines])
    if missing is not None and required[missing].casefold() in content.casefold():
        # The near miss or the wording still spelled it out; fall back to the bare list of the others.
        content = "\n".join(item for i, item in enumerate(required) if i != missing)
    thinking = None
    if reasoning:
        thinking = (
            f'The task: "{snippet(task.question)}". The answer has to mention {len(required)} specific '
            "things. I will list each one explicitly so that none is left out."
        )
    return SimulatedAnswer(content, thinking)
