"""The simulator's answer to a code task: a program, written the ways models write one (`TaskType.simulated_answer`).

A code task has no gold answer to draw a right answer from, so the right programs are written here, for the tasks
of the shipped `demo-code` suite (`_KNOWN`, by task id; the entry point, or the task's kind, must agree). Each known
task has one right program and one wrong one, each written in a fixed shape, so that every run of the suite shows
every shape the extraction rules read (docs/scoring/code.md, C1-C5) and every outcome the wrong ones lead to:

- shapes: "prose_fence" (a sentence, a ```python block, a sentence), "py_tag" (a ```py block), "usage_after" (the
  function's block, then a block calling it: the defining block runs), "unclosed" (a ```python block that never
  closes), "bare" (the code alone, no fence), "body" (an indented body in a fence, continuing the code prefix as a
  HumanEval completion does), "two_drafts" (a first draft, a sentence on what is wrong with it, the final version:
  the last block runs), "prose" (no code at all);
- wrong programs: a wrong result (failed_assertion), a method that does not exist (exception), a wrong line printed
  (wrong_output), an exception on the input (exception), an answer cut mid-statement (syntax_error), an
  explanation instead of code (no_code), and two slow ones: gcd by subtraction, which never ends when one number is
  0, and Fibonacci by plain recursion (timeout).

Which one is written: the right program when the draw is right (`SimulatedRequest.correct`), else the wrong one;
two tasks are `hard` (their wrong program whatever the draw), so that a run shows a syntax error and an answer
without code whatever the seed. The expected outcome of every known task, right and wrong, is written out in
tests/test_code_simulated.py.

A code task not in the table (an imported suite, a README line): for a function task, a function of its entry
point's name that returns None (the simulator cannot write it, right or wrong); for a standard-input task drawn
right, a program that prints each test's expected output for its input (the simulator knows the tests as it knows
other rooms' gold), when the tests are small enough to write out, and otherwise (and drawn wrong) a program that
prints its input back.

Hostile programs, for tests of the sandbox only: a code task whose question holds the marker
`[ocllm-sim:hostile:<kind>]` (`HOSTILE`: fork_bomb, write_home, loopback_socket:<port>, huge_memory, huge_output,
infinite_loop) is answered with that program, whatever the draw. No shipped suite holds a marker, and a real model
is never asked one: it is how a test puts a hostile program through the simulator, the runner and the decision.

Every random choice (the sentences around the code) comes from the `random.Random` handed in; a prompt the
simulator does not know gets no answer from this room, and nothing is drawn for it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ocllm.scoring.code.fields import CodeTask
from ocllm.scoring.simulated import SimulatedAnswer, SimulatedRequest, snippet

SHAPES = ("prose_fence", "py_tag", "usage_after", "unclosed", "bare", "body", "two_drafts", "prose")
# Tests of a standard-input task the simulator writes out as a table when drawn right (characters of every input and
# output together): more would make a program far longer than any model writes.
MAX_TABLE_CHARS = 20_000
# The file the hostile `write_home` program tries to write in every home folder it can name.
HOSTILE_FILE = "ocllm-sim-hostile-write.txt"
_MARKER = re.compile(r"\[ocllm-sim:hostile:([a-z_]+)(?::(\d{1,5}))?\]")


@dataclass(frozen=True)
class Written:
    """A program and how the answer writes it: `shape` one of SHAPES; `extra` the other block of "usage_after" (the
    call) and of "two_drafts" (the first draft); for "prose", `code` is the whole answer."""

    shape: str
    code: str
    extra: str = ""


@dataclass(frozen=True)
class Known:
    """A demo-code task: what the function is called (None for a standard-input task), its right and wrong answers,
    and whether the simulated model gets it wrong whatever the draw (`right` None)."""

    entry_point: str | None
    right: Written | None
    wrong: Written


def simulated_answer(request: SimulatedRequest) -> SimulatedAnswer | None:
    """The room's hook: an answer to a code task; no answer (and no draw) for a prompt the simulator does not know."""
    task = request.task
    if not isinstance(task, CodeTask):
        return None
    rng = request.rng
    hostile = _MARKER.search(task.question)
    if hostile is not None:
        written = Written("prose_fence", hostile_program(hostile.group(1), hostile.group(2)))
    else:
        known = _KNOWN.get(task.id)
        if known is not None and known.entry_point == task.entry_point:
            written = known.right if request.correct and known.right is not None else known.wrong
        else:
            written = _unknown(task, correct=request.correct)
    content = _answer_text(rng, written, stdin=task.kind == "stdin")
    thinking = _thinking(rng, task) if request.reasoning else None
    return SimulatedAnswer(content, thinking)


# --- what the answer looks like -----------------------------------------------------------------------------------

_INTROS = ("Here is the function:", "Here is a solution:", "This does it:", "Sure, here is the code:")
_STDIN_INTROS = ("Here is the program:", "This reads standard input and prints the answer:", "A complete program:")
_OUTROS = ("It handles the empty case too.", "It runs in linear time.", "The examples above pass with it.")


def _answer_text(rng: random.Random, written: Written, *, stdin: bool) -> str:
    # Both sentences are drawn whatever the shape, so that the shape moves no other draw.
    intro = rng.choice(_STDIN_INTROS if stdin else _INTROS)
    outro = rng.choice(_OUTROS)
    code = written.code.rstrip("\n")
    if written.shape == "prose_fence":
        return f"{intro}\n\n```python\n{code}\n```\n\n{outro}"
    if written.shape == "py_tag":
        return f"```py\n{code}\n```"
    if written.shape == "usage_after":
        return f"{intro}\n\n```python\n{code}\n```\n\nFor example:\n\n```python\n{written.extra.rstrip()}\n```"
    if written.shape == "unclosed":
        return f"{intro}\n\n```python\n{code}\n"
    if written.shape == "bare":
        return code + "\n"
    if written.shape == "body":
        return f"The body of the function:\n\n```python\n{code}\n```"
    if written.shape == "two_drafts":
        first = written.extra.rstrip("\n")
        return (
            f"A first attempt:\n\n```python\n{first}\n```\n\nThat is wrong: it never reaches a base case quickly "
            f"enough. The corrected version:\n\n```python\n{code}\n```\n\n{outro}"
        )
    if written.shape == "prose":
        return written.code
    raise ValueError(f"unknown answer shape {written.shape!r}")


def _thinking(rng: random.Random, task: CodeTask) -> str:
    # Prose only: the reasoning is never read for code (C1), and holds nothing that looks like it.
    asked = snippet(task.question, 16)
    what = f"a function named {task.entry_point}" if task.kind == "function" else "a program that reads standard input"
    plan = rng.choice(
        [
            "I will handle the edge cases first, then the general case.",
            "I will go through the examples by hand before writing it.",
        ]
    )
    return f'The task asks: "{asked}". I need {what}. {plan}'


# --- tasks the table does not know --------------------------------------------------------------------------------


def _unknown(task: CodeTask, *, correct: bool) -> Written:
    if task.kind == "function":
        return Written("prose_fence", f"def {task.entry_point}(*args, **kwargs):\n    return None\n")
    tests = task.io_tests or []
    if correct and sum(len(t.input) + len(t.output) for t in tests) <= MAX_TABLE_CHARS:
        table = "".join(f"    {t.input!r}: {t.output!r},\n" for t in tests)
        return Written(
            "prose_fence",
            f"import sys\n\nANSWERS = {{\n{table}}}\nsys.stdout.write(ANSWERS.get(sys.stdin.read(), ''))\n",
        )
    return Written("prose_fence", "import sys\n\nsys.stdout.write(sys.stdin.read())\n")


# --- hostile programs (tests only) --------------------------------------------------------------------------------

HOSTILE = ("fork_bomb", "write_home", "loopback_socket", "huge_memory", "huge_output", "infinite_loop")


def hostile_program(kind: str, port: str | None = None) -> str:
    """The program a question's hostile marker asks for (`HOSTILE`); an unknown kind is answered with a harmless
    program that says so."""
    if kind == "fork_bomb":
        return "import os\n\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    if kind == "write_home":
        return (
            "import os\n\n"
            "done = []\n"
            'for folder in (os.path.expanduser("~"), os.environ.get("HOME", ""), "/root", "/home"):\n'
            "    try:\n"
            f'        with open(os.path.join(folder, "{HOSTILE_FILE}"), "w") as fh:\n'
            '            fh.write("written from inside the sandbox")\n'
            '        done.append(f"wrote {folder}")\n'
            "    except OSError as exc:\n"
            '        done.append(f"refused {folder}: {type(exc).__name__}")\n'
            'print("; ".join(done))\n'
        )
    if kind == "loopback_socket":
        return (
            "import socket\n\n"
            "try:\n"
            f'    socket.create_connection(("127.0.0.1", {int(port or 80)}), timeout=2).close()\n'
            '    print("connected")\n'
            "except OSError as exc:\n"
            '    print("blocked:", type(exc).__name__)\n'
        )
    if kind == "huge_memory":
        return "chunks = []\nwhile True:\n    chunks.append(bytes(256 * 1024 * 1024))\n"
    if kind == "huge_output":
        return "import sys\n\nwhile True:\n    sys.stdout.write('y' * 65536)\n"
    if kind == "infinite_loop":
        return "while True:\n    pass\n"
    return f"print('no hostile program is called {kind}')\n"


# --- the demo-code suite's programs -------------------------------------------------------------------------------

_KNOWN: dict[str, Known] = {
    "code_sum_evens": Known(
        "sum_of_evens",
        right=Written(
            "prose_fence",
            "def sum_of_evens(numbers: list[int]) -> int:\n    return sum(n for n in numbers if n % 2 == 0)\n",
        ),
        wrong=Written(  # the odd numbers summed: failed_assertion
            "prose_fence",
            "def sum_of_evens(numbers: list[int]) -> int:\n    return sum(n for n in numbers if n % 2 == 1)\n",
        ),
    ),
    "code_palindrome": Known(
        "is_palindrome",
        right=Written(
            "py_tag",
            "def is_palindrome(text: str) -> bool:\n"
            "    kept = [c.lower() for c in text if c.isalnum()]\n"
            "    return kept == kept[::-1]\n",
        ),
        wrong=Written(  # str has no lowercase(): AttributeError under the tests, exception
            "py_tag",
            "def is_palindrome(text: str) -> bool:\n"
            '    kept = "".join(c for c in text.lowercase() if c.isalnum())\n'
            "    return kept == kept[::-1]\n",
        ),
    ),
    "code_fizzbuzz": Known(
        "fizzbuzz",
        right=Written(
            "usage_after",
            "def fizzbuzz(n: int) -> list[str]:\n"
            "    out = []\n"
            "    for i in range(1, n + 1):\n"
            "        if i % 15 == 0:\n"
            '            out.append("FizzBuzz")\n'
            "        elif i % 3 == 0:\n"
            '            out.append("Fizz")\n'
            "        elif i % 5 == 0:\n"
            '            out.append("Buzz")\n'
            "        else:\n"
            "            out.append(str(i))\n"
            "    return out\n",
            extra="print(fizzbuzz(15))\n",
        ),
        wrong=Written(  # one short: failed_assertion
            "prose_fence",
            "def fizzbuzz(n: int) -> list[str]:\n"
            "    out = []\n"
            "    for i in range(1, n):\n"
            '        out.append("FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 '
            "else str(i))\n"
            "    return out\n",
        ),
    ),
    "code_running_max": Known(
        "running_max",
        right=None,
        wrong=Written(  # cut mid-statement, its fence never closed: syntax_error
            "unclosed",
            "def running_max(numbers: list[int]) -> list[int]:\n"
            "    result = []\n"
            "    best = None\n"
            "    for x in numbers:\n"
            "        best = x if best is None else max(best,\n",
        ),
    ),
    "code_count_vowels": Known(
        "count_vowels",
        right=None,
        wrong=Written(  # an explanation, no code: no_code
            "prose",
            "To count the vowels, go through the text one letter at a time, lower-case each letter, and add one "
            "whenever it is a, e, i, o or u. The count at the end is the answer; an empty text has none.",
        ),
    ),
    "code_dedupe": Known(
        "dedupe",
        right=Written(
            "body",
            "    seen = set()\n"
            "    result = []\n"
            "    for item in items:\n"
            "        if item not in seen:\n"
            "            seen.add(item)\n"
            "            result.append(item)\n"
            "    return result\n",
        ),
        wrong=Written("body", "    return sorted(set(items))\n"),  # the order lost: failed_assertion
    ),
    "code_gcd": Known(
        "gcd",
        right=Written(
            "two_drafts",
            "def gcd(a: int, b: int) -> int:\n    while b:\n        a, b = b, a % b\n    return a\n",
            extra="def gcd(a: int, b: int) -> int:\n    return gcd(b, a % b)\n",
        ),
        wrong=Written(  # by subtraction: gcd(0, 5) never ends, timeout
            "prose_fence",
            "def gcd(a: int, b: int) -> int:\n"
            "    while a != b:\n"
            "        if a > b:\n"
            "            a -= b\n"
            "        else:\n"
            "            b -= a\n"
            "    return a\n",
        ),
    ),
    "code_stdin_sum": Known(
        None,
        right=Written("bare", "a, b = map(int, input().split())\nprint(a + b)\n"),
        wrong=Written("prose_fence", "a, b = input().split()\nprint(a + b)\n"),  # "23" for 2 3: wrong_output
    ),
    "code_stdin_reverse_words": Known(
        None,
        right=Written(
            "prose_fence", 'import sys\n\nfor line in sys.stdin:\n    print(" ".join(reversed(line.split())))\n'
        ),
        wrong=Written(  # the letters reversed, not the words: wrong_output
            "py_tag", 'import sys\n\nfor line in sys.stdin:\n    print(line.rstrip("\\n")[::-1])\n'
        ),
    ),
    "code_stdin_fibonacci": Known(
        None,
        right=Written(
            "two_drafts",
            "n = int(input())\na, b = 0, 1\nfor _ in range(n):\n    a, b = b, a + b\nprint(a)\n",
            extra="def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n\nprint(fib(int(input())))\n",
        ),
        wrong=Written(  # plain recursion: F(90) never finishes, timeout
            "prose_fence",
            "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n\nprint(fib(int(input())))\n",
        ),
    ),
    "code_stdin_max": Known(
        None,
        right=Written(
            "unclosed", "n = int(input())\nnumbers = list(map(int, input().split()))\nprint(max(numbers[:n]))\n"
        ),
        wrong=Written(  # split on commas: ValueError on the first test, exception
            "prose_fence",
            'n = int(input())\nnumbers = [int(x) for x in input().split(",")]\nprint(max(numbers))\n',
        ),
    ),
}
