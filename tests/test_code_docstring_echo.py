"""Whether an answer wrote the prompt's docstring again (docs/scoring/code.md, "What the answer spent"): the figure a
lane's template is judged by, since a small model may spend its tokens re-writing the prefix (issue 41)."""

from __future__ import annotations

from ocllm.scoring.code.docstring_echo import prefix_docstring, repeated_docstring
from ocllm.scoring.code.fields import CodeTask

PREFIX = (
    "from typing import List\n\n\ndef has_close_elements(numbers: List[float], threshold: float) -> bool:\n"
    '    """ Check if in given list of numbers, are any two numbers closer to each other than\n'
    "    given threshold.\n    >>> has_close_elements([1.0, 2.0, 3.0], 0.5)\n    False\n    \"\"\"\n"
)
TASK = CodeTask(id="HumanEval/0", question="Complete it.", entry_point="has_close_elements", code_prefix=PREFIX,
                test="def check(candidate):\n    pass\n")  # fmt: skip


def test_the_docstring_again_in_other_indentation_is_a_repeat_and_the_body_alone_is_not() -> None:
    said = prefix_docstring(TASK)
    assert said is not None and len(said) == 60  # its first 60 characters, the leading space dropped
    assert said.startswith("Check if in given list of numbers, are any two numbers")
    again = (
        "def has_close_elements(numbers, threshold):\n"
        '  """Check if in given list of numbers, are any two\n  numbers closer to each other than given threshold."""\n'
        "  return any(abs(a - b) < threshold for a in numbers for b in numbers if a is not b)\n"
    )
    assert repeated_docstring(TASK, again) is True
    body = "def has_close_elements(numbers, threshold):\n    return False\n"
    assert repeated_docstring(TASK, body) is False
    assert repeated_docstring(TASK, None) is None  # no code taken: nothing spent on code


def test_a_task_without_a_docstring_long_enough_to_tell_has_no_figure() -> None:
    short = CodeTask(id="a", question="Add.", entry_point="add", code_prefix='def add(a, b):\n    """Add."""\n',
                     test="def check(candidate):\n    pass\n")  # fmt: skip
    assert prefix_docstring(short) is None and repeated_docstring(short, 'def add(a, b):\n    """Add."""\n') is None
    bare = CodeTask(id="b", question="Add.", entry_point="add", test="def check(candidate):\n    pass\n")
    assert repeated_docstring(bare, "def add(a, b): return a + b") is None
    broken = CodeTask(id="c", question="x", entry_point="f", code_prefix="def f(:\n", test="x")
    assert prefix_docstring(broken) is None
