"""The default code prompt (docs/scoring/code.md, "Tasks"; issue 41): a function task's code prefix, its signature
and docstring, is shown once, then the request for the whole function. A request to leave the docstring out was
measured on a real server and made a small model repeat it more (docs/performance.md, "The code prompt"), so the
request is the one every function task gets."""

from __future__ import annotations

from ocllm.scoring.code.datasets import PREFIX_QUESTION
from ocllm.scoring.code.fields import DEFAULT_TEMPLATE, CodeTask, prompt
from ocllm.scoring.task_type import PromptSettings

# HumanEval/2's prompt, as `ocllm import humaneval` keeps it: the code prefix.
PREFIX = (
    "\n\ndef truncate_number(number: float) -> float:\n"
    '    """ Given a positive floating point number, it can be decomposed into\n'
    "    and integer part (largest integer smaller than given number) and decimals\n"
    "    (leftover part always smaller than 1).\n\n"
    "    Return the decimal part of the number.\n"
    "    >>> truncate_number(3.5)\n"
    "    0.5\n"
    '    """\n'
)
TEST = "def check(candidate):\n    assert candidate(3.5) == 0.5\n"


def _user(task: CodeTask) -> str:
    (message,) = prompt(task, PromptSettings(template=DEFAULT_TEMPLATE))
    return message["content"]


def test_the_prefix_is_shown_once_then_the_request() -> None:
    task = CodeTask(id="HumanEval/2", question=PREFIX_QUESTION.format(entry_point="truncate_number"),
                    code_prefix=PREFIX, entry_point="truncate_number", test=TEST)  # fmt: skip
    said = _user(task)
    assert said.count("Return the decimal part of the number.") == 1
    assert said.count("def truncate_number(number: float) -> float:") == 1
    assert said.endswith("```\n\nWrite the whole function `truncate_number` in one ```python code block.")


def test_a_task_without_a_prefix_is_asked_for_the_whole_function() -> None:
    task = CodeTask(id="mbpp/2", question="Write a function to add two numbers.", entry_point="add", test=TEST)
    assert _user(task) == (
        "Write a function to add two numbers.\n\nWrite the whole function `add` in one ```python code block."
    )
