"""A math task's prompt: the question, and where to put the answer (a lane's `templates.math` replaces it)."""

from __future__ import annotations

from ocllm.scoring.math.fields import MathTask
from ocllm.scoring.task_type import Message, PromptSettings, chat

# The instruction lm-eval's minerva_math, lighteval and NeMo-Skills give reasoning models: a box is the
# strongest statement the scorer reads (docs/scoring/math.md, rule M2).
DEFAULT_TEMPLATE = "{question}\n\nPut your final answer within \\boxed{{}}."
PLACEHOLDERS = ("question",)
REQUIRED_PLACEHOLDERS = ("question",)  # what a lane's template must use


def user_text(task: MathTask, template: str) -> str:
    """The user message: the task through the lane's template."""
    return template.format(question=task.question)


def prompt(task: MathTask, settings: PromptSettings) -> list[Message]:
    return chat(settings, user_text(task, settings.template))
