"""A task type defined in the tests: multiple choice asked as a few-shot chat (a system message of the room's own,
a worked example as a user turn and an assistant turn, then the question). It shows that a room's prompt is a list
of messages the runner sends as they are (issue 31, item 4). Module-level, so that decision-pool workers (started
by a forkserver) can import it and register the room there too (`decide_registered`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ocllm.models import Decision, Policy, Sample, Task
from ocllm.scoring import decide, mcq, task_types
from ocllm.scoring.mcq import prompt as mcq_prompt
from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.task_type import Message, PromptSettings, TaskType

SYSTEM = "You answer multiple-choice questions with one letter."
EXAMPLE_QUESTION = "Which is a prime number?\n\nA. 4\nB. 7\nC. 9"
EXAMPLE_ANSWER = "7 is prime.\n\nFINAL: B"


def fewshot_prompt(task: Task, settings: PromptSettings) -> list[Message]:
    """The lane's system prompt if it has one, else the room's own; one worked example; the question through the
    lane's template."""
    return [
        {"role": "system", "content": settings.system_prompt or SYSTEM},
        {"role": "user", "content": EXAMPLE_QUESTION},
        {"role": "assistant", "content": EXAMPLE_ANSWER},
        {"role": "user", "content": mcq_prompt.user_text(task, settings.template)},
    ]


class FewshotTask(McqTask, tag="fewshot_mcq"):
    """An MCQ task of the few-shot room: the same fields under the room's own tag."""


FEWSHOT = TaskType(
    name="fewshot_mcq",
    label="few-shot multiple choice",
    task_struct=FewshotTask,
    decision_type=mcq.TASK_TYPE.decision_type,
    decide=mcq.TASK_TYPE.decide,
    check_suite_line=mcq.TASK_TYPE.check_suite_line,
    saved_task_fields=mcq.TASK_TYPE.saved_task_fields,
    record_fields=mcq.TASK_TYPE.record_fields,
    gold=mcq.TASK_TYPE.gold,
    default_template="{question}\n\n{options}\n\nEnd with a line of the form FINAL: <letter>.",
    template_placeholders=mcq_prompt.PLACEHOLDERS,
    required_placeholders=("question", "options"),
    prompt=fewshot_prompt,
    option_count=mcq.TASK_TYPE.option_count,
    simulated_answer=mcq.TASK_TYPE.simulated_answer,  # the simulator answers it as it answers mcq tasks
)


@contextmanager
def registered() -> Iterator[TaskType]:
    """The room in the registry for the block's time (this process only)."""
    task_types.register(FEWSHOT)
    try:
        yield FEWSHOT
    finally:
        task_types.unregister(FEWSHOT.name)


def decide_registered(task: Task, sample: Sample, policy: Policy) -> Decision:
    """`scoring.decide` in a decision worker, with the room registered there (workers import this module)."""
    task_types.TASK_TYPES.setdefault(FEWSHOT.name, FEWSHOT)
    return decide(task, sample, policy)
