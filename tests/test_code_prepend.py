"""What the chosen block takes from earlier blocks (docs/scoring/code.md, C3): the imports, defs, classes and
constants it uses, transitively, and only those whose taking runs nothing of the model's. The answers are shaped as
models write them: a helper in one block and the function in the next, a REPL transcript of the helper, a usage
block between, a class of the model's own.

Taking runs nothing: the taken code (our own test text, not a model's) is executed here with a canary that any
statement running at definition time would call, and the function is then called to show the helpers it needs came
along."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from ocllm.models import Policy, Sample
from ocllm.scoring.code.decide import decide_code
from ocllm.scoring.code.extract import Extraction, extract_code
from ocllm.scoring.code.fields import CodeTask

PREFIX = 'def f(s: str) -> str:\n    """ Return s cleaned.\n    >>> f("aXb")\n    \'ab\'\n    """\n'


def task(prefix: str | None = None) -> CodeTask:
    return CodeTask(id="t", question="q", entry_point="f", test="def check(candidate):\n    pass\n", code_prefix=prefix)


def read(content: str, prefix: str | None = None) -> Extraction:
    return extract_code(task(prefix), Sample(task_id="t", content=content), Policy())


def taken(found: Extraction) -> list[tuple[int, list[str]]]:
    return [(item.block, item.names) for item in found.prepended]


def left(found: Extraction) -> list[tuple[int, str]]:
    return [(item.block, item.name) for item in found.left_out]


def run_taken(found: Extraction) -> tuple[dict[str, Any], list[str]]:
    """Execute the program (our own test text) with a canary, and return its namespace and the canary's calls."""
    calls: list[str] = []
    namespace: dict[str, Any] = {"CANARY": calls.append}
    assert found.program is not None, found.why
    exec(compile(found.program, "solution.py", "exec"), namespace)
    return namespace, calls


def block(code: str, label: str = "python") -> str:
    return f"```{label}\n{code}\n```\n"


HELPER = "import re\n\ndef clean(s):\n    return re.sub('[A-Z]', '', s)"
ENTRY = "def f(s):\n    return clean(s)"


# --- item: which helpers are taken ------------------------------------------------------------------------------


def test_a_helper_used_only_inside_the_functions_body() -> None:
    found = read("First a helper:\n" + block(HELPER) + "Then the function:\n" + block(ENTRY))
    assert taken(found) == [(0, ["import re", "def clean"])]
    namespace, calls = run_taken(found)
    assert namespace["f"]("aXb") == "ab" and calls == []


def test_a_helper_two_blocks_back_with_a_usage_block_between() -> None:
    content = block(HELPER) + "Usage:\n" + block("print(clean('aXb'))") + block(ENTRY)
    found = read(content)
    assert (found.chosen, taken(found)) == (2, [(0, ["import re", "def clean"])])
    assert "print(" not in (found.code or "")
    assert run_taken(found)[0]["f"]("QaXb") == "ab"


def test_helpers_used_by_a_decorator_and_by_a_default() -> None:
    content = (block("import functools\n\ndef traced(g):\n    return functools.wraps(g)(lambda *a: g(*a))\n\nSEP = '-'")
               + block("@traced\ndef f(s, sep=SEP):\n    return sep.join(s)"))  # fmt: skip
    found = read(content)
    assert taken(found) == [(0, ["import functools", "def traced", "SEP ="])]
    assert run_taken(found)[0]["f"]("ab") == "a-b"


def test_a_helper_whose_own_block_does_not_parse_is_taken_from_its_piece() -> None:
    """Models paste a REPL session: the helper, then `>>> clean('aXb')` and its output. The block does not parse,
    so its helper was never offered; now each definition of it is parsed alone."""
    repl = HELPER + "\n\n>>> clean('aXb')\n'ab'\nMOD = 10 ** 9 + 7\n>>> print(MOD"
    found = read(block(repl) + block("def f(s):\n    return clean(s) + str(MOD % 10)"))
    assert not found.blocks[0].parses
    assert taken(found) == [(0, ["import re", "def clean", "MOD ="])]
    assert run_taken(found)[0]["f"]("aXb") == "ab7"


def test_an_untagged_block_gives_helpers_and_another_language_does_not() -> None:
    found = read(block(HELPER, "") + block(ENTRY))
    assert taken(found) == [(0, ["import re", "def clean"])]
    other = read(block("def clean(s):\n    return s", "text") + block(ENTRY))
    assert taken(other) == [] and not other.blocks[0].python


def test_names_used_through_an_attribute() -> None:
    content = (block("import collections\n\nclass Util:\n    @staticmethod\n    def top(s):\n"
                     "        return collections.Counter(s).most_common(1)[0][0]")
               + block("def f(s):\n    return Util.top(s)"))  # fmt: skip
    found = read(content)
    assert taken(found) == [(0, ["import collections", "class Util"])]
    assert run_taken(found)[0]["f"]("abb") == "b"


def test_an_indented_body_block_gets_its_helpers() -> None:
    """GigaChat and others answer with the body alone; its helper in an earlier block was never taken (only a block
    that parses by itself had anything prepended)."""
    found = read(block(HELPER) + "And the body:\n" + block("    return clean(s)"), PREFIX)
    assert (found.method, found.entry_point_from) == ("fenced_last", "answer_body")
    assert taken(found) == [(0, ["import re", "def clean"])]
    program = found.program or ""
    assert program.index("def clean") < program.index("def f(s: str)") < program.index("    return clean(s)")
    assert run_taken(found)[0]["f"]("aXb") == "ab"


def test_a_lambda_constant_is_taken_and_so_is_what_its_body_calls() -> None:
    """A lambda's body does not run when the lambda is made: `sq = lambda x: helper(x)` runs nothing."""
    found = read(block("strip_upper = lambda s: clean(s)\n\n" + HELPER) + block("def f(s):\n    return strip_upper(s)"))
    assert taken(found) == [(0, ["strip_upper =", "import re", "def clean"])]
    assert run_taken(found)[0]["f"]("aXb") == "ab"


def test_a_helpers_own_needs_come_from_another_block_and_the_latest_definition_wins() -> None:
    content = (block("def clean(s):\n    return s") + block("import re")
               + block("def clean(s):\n    return re.sub('[A-Z]', '', s)") + block(ENTRY))  # fmt: skip
    found = read(content)
    assert taken(found) == [(1, ["import re"]), (2, ["def clean"])]
    assert run_taken(found)[0]["f"]("aXb") == "ab"


def test_the_entry_point_is_never_taken_from_an_earlier_block() -> None:
    """A usage block calling f after a stub of f: the stub is never put before it."""
    content = block('def f(s):\n    """Clean s."""') + block("print(f('aXb'))")
    found = read(content)
    assert taken(found) == [] and "def f" not in (found.code or "")


# --- item: nothing runs by being taken --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("helper", "name", "why"),
    [
        ("class Cleaner:\n    CANARY('class body')\n    def run(self, s):\n        return s", "class Cleaner",
         "class body runs a statement"),
        ("class Cleaner:\n    table = CANARY('class attribute')\n    def run(self, s):\n        return s",
         "class Cleaner", "class body calls code"),
        ("def clean(s, marks=CANARY('default')):\n    return s", "def clean", "default value"),
        ("def clean(s: CANARY('annotation')) -> str:\n    return s", "def clean", "annotation"),
        ("def log(g):\n    CANARY('decorator')\n    return g\n\n@log\ndef clean(s):\n    return s", "def clean",
         "decorator @log is not one of the standard library's"),
        ("def lru_cache(g):\n    CANARY('fake lru_cache')\n    return g\n\n@lru_cache\ndef clean(s):\n    return s",
         "def clean", "is the model's own def lru_cache"),
        ("class Meta(type):\n    def __new__(m, *a):\n        CANARY('metaclass')\n        return type.__new__(m, *a)"
         "\n\nclass Cleaner(metaclass=Meta):\n    def run(self, s):\n        return s", "class Cleaner", "metaclass"),
        ("class Base:\n    def __init_subclass__(cls):\n        CANARY('subclass hook')\n\n"
         "class Cleaner(Base):\n    def run(self, s):\n        return s", "class Base", "__init_subclass__"),
        ("from dataclasses import dataclass, field\n\n@dataclass\nclass Cleaner:\n"
         "    marks: list = field(default_factory=lambda: CANARY('field') or [])\n\n"
         "    def run(self, s):\n        return s", "class Cleaner", "class body calls code"),
        ("SEEN = set(CANARY('constant') or [])", "SEEN =", "value calls code"),
    ],
    ids=["class-body-statement", "class-attribute-call", "default", "annotation", "model-decorator",
         "model-lru-cache", "metaclass", "init-subclass", "dataclass-field", "constant-call"],
)  # fmt: skip
def test_a_definition_whose_taking_would_run_code_is_left_out(helper: str, name: str, why: str) -> None:
    uses = "Cleaner().run(s)" if "Cleaner" in helper else "clean(s)" if "clean" in helper else "str(len(SEEN)) + s"
    found = read(block(helper) + block(f"def f(s):\n    return {uses}"))
    assert name in [label for _, label in left(found)], found.why
    assert why in next(item.why for item in found.left_out if item.name == name)
    assert "left out, since taking them would run code" in found.why
    calls: list[str] = []
    try:  # (a class taken whose base was left out fails at its definition, for want of that name)
        exec(compile(found.program or "", "solution.py", "exec"), {"CANARY": calls.append})
    except NameError as exc:
        assert "Base" in str(exc)
    assert calls == []  # nothing of the helpers' ran


def test_what_runs_nothing_is_taken_and_runs_nothing() -> None:
    """A class of defs, a docstring, constants and a property; a def with literal defaults; the standard library's
    decorators (lru_cache with constant arguments, dataclass with plain defaults, staticmethod, property)."""
    helpers = (
        "from functools import lru_cache\nfrom dataclasses import dataclass\n\n"
        "LIMIT = 10 ** 2\nVOWELS = frozenset\n\n"
        "class Node:\n    '''A node.'''\n    kind = 'leaf'\n    count: int = 0\n\n"
        "    def __init__(self, value=None, marks=()):\n        self.value = value\n\n"
        "    @property\n    def text(self):\n        return str(self.value)\n\n"
        "    @text.setter\n    def text(self, v):\n        self.value = v\n\n"
        "    @staticmethod\n    def make(v):\n        CANARY('only when called')\n        return Node(v)\n\n"
        "@lru_cache(maxsize=None)\ndef fib(n, memo={}):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n\n"
        "@dataclass(frozen=True)\nclass Pair:\n    a: int = 0\n    b: int = 1\n"
    )
    found = read(block(helpers) + block("def f(s):\n    return Node.make(fib(10) + Pair().b + LIMIT).text + s"))
    assert found.left_out == ()
    assert taken(found) == [(0, ["from functools import lru_cache", "from dataclasses import dataclass", "LIMIT =",
                                 "class Node", "def fib", "class Pair"])]  # fmt: skip
    namespace, calls = run_taken(found)
    assert calls == []
    assert namespace["f"]("!") == "156!" and calls == ["only when called"]  # 55 + 1 + 100


# --- the decision, with the program run in the sandbox ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed: no program can run")
def test_the_decision_records_what_was_left_out_and_the_program_runs_without_it() -> None:
    """A class whose body prints is left out: the model's function then raises NameError (its own exception), and
    the class body's print never happens; a helper that runs nothing is taken and the answer passes."""
    check = "def check(candidate):\n    assert candidate('aXb') == 'ab'\n"
    task = CodeTask(id="t", question="q", entry_point="f", test=check, code_prefix=PREFIX)
    noisy = block("class Cleaner:\n    print('class body ran')\n    def run(self, s):\n        return clean(s)")
    content = block(HELPER) + noisy + block("def f(s):\n    return Cleaner().run(s)")
    decision = decide_code(task, Sample(task_id="t", content=content, finish_reason="stop"), Policy())
    assert decision.outcome == "exception" and "NameError" in decision.reason, decision.reason
    assert [(item.block, item.name) for item in decision.left_out] == [(1, "class Cleaner")]
    assert decision.entry_point_from == "answer" and not decision.prefix_stub_left_out
    assert all("class body ran" not in run.stdout_head for run in decision.runs)
    clean = decide_code(task, Sample(task_id="t", content=block(HELPER) + block(ENTRY), finish_reason="stop"), Policy())
    assert (clean.outcome, clean.left_out, [p.names for p in clean.prepended]) == (
        "passed", [], [["import re", "def clean"]],
    )  # fmt: skip
