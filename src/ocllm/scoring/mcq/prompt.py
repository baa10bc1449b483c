"""An MCQ task's prompt: the question, its lettered options, and how to state the letter."""

from __future__ import annotations

from ocllm.scoring.mcq.fields import McqTask
from ocllm.scoring.mcq.option_letters import option_letter
from ocllm.scoring.task_type import Message, PromptSettings, chat

DEFAULT_TEMPLATE = "{question}\n\n{options}\n\nThink it through, then end with a line of the form FINAL: <letter>."
PLACEHOLDERS = ("question", "options", "letters")
REQUIRED_PLACEHOLDERS = ("question", "options")  # what a lane's template must use


def format_options(options: list[str]) -> str:
    return "\n".join(f"{option_letter(i)}. {text}" for i, text in enumerate(options))


def user_text(task: McqTask, template: str) -> str:
    """The user message: the task through the lane's template."""
    options = task.options or []
    return template.format(
        question=task.question, options=format_options(options), letters=f"A-{option_letter(len(options) - 1)}"
    )


def prompt(task: McqTask, settings: PromptSettings) -> list[Message]:
    return chat(settings, user_text(task, settings.template))
