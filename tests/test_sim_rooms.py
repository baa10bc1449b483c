"""The simulator asks the rooms (`TaskType.simulated_answer`, `ocllm.scoring.simulated`): a type registered in a test
is answered by its own hook, a type without one gets the plain sentence, and a prompt the simulator does not know is
answered by the first room that claims it (tools offered: calls; lettered options: a letter)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from ocllm.models import Task
from ocllm.scoring import mcq, task_types
from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.simulated import SimulatedAnswer, SimulatedRequest
from ocllm.scoring.task_type import TaskType
from ocllm.sim import SIM_LABEL, SimConfig
from ocllm.sim.requests import ChatRequest
from ocllm.sim.simulator import Completion, Simulator

TOOL = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}


def toy_answer(request: SimulatedRequest) -> SimulatedAnswer | None:
    if request.task is None:
        return None
    return SimulatedAnswer(f"TOY {request.rng.randint(0, 9)} {'right' if request.correct else 'wrong'}", None)


class ToyTask(McqTask, tag="toy"):
    """A task of the toy type: an MCQ task's fields under its own tag."""


class ToySilentTask(McqTask, tag="toy_silent"):
    """A task of the silent toy type."""


@pytest.fixture
def toy_types() -> Iterator[None]:
    """Two types registered for the test only: one with a simulated answer of its own, one without."""
    added: list[TaskType] = [
        replace(mcq.TASK_TYPE, name="toy", task_struct=ToyTask, simulated_answer=toy_answer),
        replace(mcq.TASK_TYPE, name="toy_silent", task_struct=ToySilentTask, simulated_answer=None),
    ]
    for task_type in added:
        task_types.register(task_type)
    try:
        yield
    finally:
        for task_type in added:
            task_types.unregister(task_type.name)


def ask(tasks: list[Task], prompt: str, **fields: Any) -> Completion:
    simulator = Simulator(SimConfig(models={"m": 1.0}, tasks=tuple(tasks), truncation_rate=0.0))
    messages = [{"role": "user", "content": prompt}]
    return simulator.complete(ChatRequest("m", messages, False, None, False, False, **fields))


def test_a_type_registered_in_a_test_is_answered_by_its_own_hook(toy_types: None) -> None:
    task = ToyTask(id="t1", question="Which toy is best?")
    first, again = ask([task], "Which toy is best?"), ask([task], "Which toy is best?")
    assert first.content is not None and first.content.startswith("TOY ") and first.content.endswith(" right")
    assert first.content == again.content  # the hook's draws come from the request's seeded generator


def test_a_type_without_the_hook_gets_the_plain_sentence(toy_types: None) -> None:
    task = ToySilentTask(id="t2", question="Which toy is quiet?", options=["a", "b"], answer="A")
    completion = ask([task], "Which toy is quiet?\n\nA. a\nB. b")
    assert completion.content is not None and SIM_LABEL in completion.content


def test_a_math_task_without_gold_gets_the_plain_sentence() -> None:
    task = MathTask(id="m1", question="What is the sum of nothing at all?")
    completion = ask([task], "What is the sum of nothing at all?")
    assert completion.content is not None and SIM_LABEL in completion.content


def test_unknown_prompts_are_answered_by_the_room_that_claims_them() -> None:
    options = "Which is heavier?\n\nA. a feather\nB. a brick"
    assert (ask([], options).content or "").endswith(("FINAL: A", "FINAL: B"))  # lettered options: a letter
    with_tools = ask([], options, tools=(TOOL,))  # tools offered: a call, before a letter
    assert with_tools.tool_calls is not None and with_tools.tool_calls[0]["function"]["name"] == "get_time"
    plain = ask([], "Tell me something.")  # no room claims it
    assert plain.content is not None and SIM_LABEL in plain.content
