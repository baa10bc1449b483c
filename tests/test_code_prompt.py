"""The default code prompt (docs/scoring/code.md, "Tasks"; issue 41): a function task's code prefix, its signature
and docstring, is shown once, and the request asks for the function's def line and body without its docstring, since
asked for "the whole function" small models spent their tokens writing the prompt's docstring again. A task without a
prefix (MBPP) is asked for the whole function, as before."""

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


def test_the_prefix_is_shown_once_and_the_request_leaves_the_docstring_out() -> None:
    task = CodeTask(id="HumanEval/2", question=PREFIX_QUESTION.format(entry_point="truncate_number"),
                    code_prefix=PREFIX, entry_point="truncate_number", test=TEST)  # fmt: skip
    said = _user(task)
    assert said.count("Return the decimal part of the number.") == 1
    assert said.count("def truncate_number(number: float) -> float:") == 1
    assert "whole function" not in said  # the words that invited the prefix written again
    assert said.endswith(
        "Write the function `truncate_number` in one ```python code block: its def line and its body, without "
        "repeating its docstring or the code above it."
    )


def test_a_task_without_a_prefix_is_asked_for_the_whole_function() -> None:
    task = CodeTask(id="mbpp/2", question="Write a function to add two numbers.", entry_point="add", test=TEST)
    assert _user(task) == (
        "Write a function to add two numbers.\n\nWrite the whole function `add` in one ```python code block."
    )
