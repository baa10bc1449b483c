"""A code task's own fields: what the program starts with, and how it is tested (docs/scoring/code.md, "Tasks").

Two kinds of task, told apart by their fields:
- a function task (HumanEval, MBPP, their evalplus versions) names its `entry_point` and gives `test`, Python that
  defines `check(candidate)`; `code_prefix` is the code the program starts with (HumanEval's prompt), if any;
- a standard-input task (LiveCodeBench, contest problems) gives `io_tests`, each an input fed to the program and the
  output it must print.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ocllm.errors import InputError
from ocllm.models import Task
from ocllm.scoring.task_type import Message, PromptSettings, chat

# Bounds on a code task (docs/lanes.md, "Bounds on suites"): a suite line is read whole, and every test's input is
# written into the sandbox, so none may be unbounded. HumanEval's largest test is 6 KB, evalplus's plus tests reach
# a few MB, LiveCodeBench's inputs a few MB each.
MAX_CODE_CHARS = 1_000_000  # code_prefix
MAX_TEST_CHARS = 16_000_000  # test
MAX_IO_TESTS = 1_000
MAX_IO_CHARS = 16_000_000  # one io test's input or output
_IDENTIFIER_HELP = "a Python identifier (the function the tests call)"


class IoTest(msgspec.Struct, kw_only=True):
    """One standard-input test: the text fed to the program, and what it must print (docs/scoring/code.md, C6)."""

    input: str
    output: str


class CodeTask(Task, tag="code", kw_only=True):
    """A code task: a function task (`entry_point` and `test`, with an optional `code_prefix`) or a standard-input
    task (`io_tests`). `answer` is not used: the tests are the gold."""

    code_prefix: str | None = None
    entry_point: str | None = None
    test: str | None = None
    io_tests: list[IoTest] | None = None
    # The text the answer was prefilled with (lm-eval's *_instruct `gen_prefix`), which the response continues: a
    # prefill that leaves a fence open means the response starts inside it (docs/scoring/code.md, C2).
    prefill: str | None = None

    @property
    def kind(self) -> str:
        """ "function" or "stdin"."""
        return "stdin" if self.io_tests else "function"


# The prompt: the question, and for a function task the code the answer continues from.
DEFAULT_TEMPLATE = "{question}"
PLACEHOLDERS = ("question", "code_prefix", "entry_point")
REQUIRED_PLACEHOLDERS = ("question",)  # what a lane's template must use


def task_fields_problem(row: dict[str, Any]) -> str | None:
    """What is wrong with a code task's own fields (as a suite line or a saved record gives them), naming the field,
    or None. A function task needs `entry_point` and `test`; a standard-input task `io_tests`; never both."""
    io_tests = row.get("io_tests")
    entry, test, prefix = row.get("entry_point"), row.get("test"), row.get("code_prefix")
    if prefix is not None and (not isinstance(prefix, str) or len(prefix) > MAX_CODE_CHARS):
        return f"field 'code_prefix': not text of at most {MAX_CODE_CHARS:,} characters"
    if io_tests is not None:
        if entry is not None or test is not None:
            return "a code task has either io_tests (a standard-input task) or entry_point and test, not both"
        return _io_tests_problem(io_tests)
    if not isinstance(entry, str) or not entry.isidentifier():
        return f"field 'entry_point': a code task needs io_tests, or entry_point ({_IDENTIFIER_HELP}) and test"
    if not isinstance(test, str) or not test.strip():
        return "field 'test': a function task needs Python that defines check(candidate)"
    if len(test) > MAX_TEST_CHARS:
        return f"field 'test': {len(test):,} characters, more than the {MAX_TEST_CHARS:,} a task may hold"
    if "def check" not in test:
        return "field 'test': it does not define check(candidate)"
    try:  # compiled, never run: a task whose tests cannot compile would fail every answer
        compile(test, "tests.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        return f"field 'test': it does not compile ({type(exc).__name__}: {getattr(exc, 'msg', exc)})"
    return None


def _io_tests_problem(value: object) -> str | None:
    if not isinstance(value, list) or not value:
        return 'field \'io_tests\': a non-empty list of {"input": ..., "output": ...}'
    if len(value) > MAX_IO_TESTS:
        return f"field 'io_tests': {len(value):,} tests, more than the {MAX_IO_TESTS:,} a task may hold"
    for number, item in enumerate(value, start=1):
        if not isinstance(item, dict) or not all(isinstance(item.get(key), str) for key in ("input", "output")):
            return f'field \'io_tests\': test {number} is not an object with text "input" and "output"'
        if max(len(item["input"]), len(item["output"])) > MAX_IO_CHARS:
            return f"field 'io_tests': test {number} is longer than the {MAX_IO_CHARS:,} characters a test may hold"
    return None


def check_suite_line(where: str, row: dict[str, Any]) -> None:
    if (problem := task_fields_problem(row)) is not None:
        raise InputError(f"{where}: {problem}")
    if row.get("prefill") is not None and not isinstance(row["prefill"], str):
        raise InputError(f"{where}: field 'prefill': not text")
    for key in ("code_prefix", "entry_point", "test", "io_tests", "prefill"):
        if row.get(key) is None:
            row.pop(key, None)


def saved_task_fields(where: str, row: dict[str, Any]) -> dict[str, Any]:
    """A saved record's code fields (the old harness's metrics format with task_type "code", and every rescore)."""
    if (problem := task_fields_problem(row)) is not None:
        raise InputError(f"{where} is a code task that cannot be run: {problem}")
    io_tests = row.get("io_tests")
    return {
        "code_prefix": row.get("code_prefix"),
        "entry_point": row.get("entry_point"),
        "test": row.get("test"),
        "io_tests": None if io_tests is None else [IoTest(input=t["input"], output=t["output"]) for t in io_tests],
        "prefill": row.get("prefill") if isinstance(row.get("prefill"), str) else None,
    }


def record_fields(task: CodeTask) -> dict[str, Any]:
    io_tests = None if task.io_tests is None else [{"input": t.input, "output": t.output} for t in task.io_tests]
    return {"code_prefix": task.code_prefix, "entry_point": task.entry_point, "test": task.test, "io_tests": io_tests,
            "prefill": task.prefill}  # fmt: skip


# The default prompt's request for a function task. Asking, after the prefix, for the def line and the body "without
# repeating its docstring" was tried (issue 41) and measured on a real server (bench/bench_code_prompt.py,
# docs/performance.md "The code prompt"): SmolLM2-135M repeated the docstring in 25 of 40 HumanEval answers against
# 15 with this request, and no other wording tried did better; so the request stays, one constant each, for the next
# measurement on a larger model.
FUNCTION_REQUEST = "Write the whole function `{entry_point}` in one ```python code block."
FUNCTION_REQUEST_AFTER_PREFIX = FUNCTION_REQUEST


def user_text(task: CodeTask, template: str) -> str:
    """The user message. The default shows a function task's code prefix once, in a fenced block after the question,
    and asks for the function (FUNCTION_REQUEST_AFTER_PREFIX) in one Python block, as the peers' chat prompts do; a
    lane's template may place them itself."""
    if template != DEFAULT_TEMPLATE:
        prefix, entry = task.code_prefix or "", task.entry_point or ""
        return template.format(question=task.question, code_prefix=prefix, entry_point=entry)
    parts = [task.question.strip()]
    if task.kind == "function":
        request = FUNCTION_REQUEST
        if task.code_prefix:
            parts.append(f"Complete this Python code:\n```python\n{task.code_prefix.rstrip()}\n```")
            request = FUNCTION_REQUEST_AFTER_PREFIX
        parts.append(request.format(entry_point=task.entry_point))
    else:
        parts.append(
            "Write a complete Python program that reads standard input and prints the answer, in one ```python code "
            "block."
        )
    return "\n\n".join(part for part in parts if part)


def prompt(task: CodeTask, settings: PromptSettings) -> list[Message]:
    return chat(settings, user_text(task, settings.template))


def gold(task: Task) -> None:
    """No expected answer to show: the tests are the gold."""
    return None
